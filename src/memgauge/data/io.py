"""Reading and writing whole datasets: retrieval datasets (directory or one bundle file) and
conversation datasets (memaudit JSON / JSONL).

Directory form (what `save_retrieval_dataset` writes and `memgauge import` produces):

    dataset.yaml        name: <name>, protocol: {...}, synthetic: {...}
                        (optional; see DatasetProtocol, SyntheticOrigin)
    memories.jsonl      one Memory per line
    queries.jsonl       one EvalQuery per line
    judgments.jsonl     one Judgment per line   (or qrels.txt in TREC form)
    equivalence.jsonl   one EquivalenceClass per line      (optional)
    chains.jsonl        one CausalChain per line           (optional)

Bundle form: one JSON or YAML file holding a RetrievalDataset object.

memaudit: a JSON file holding one MemoryDataset `{id, conversations: [...]}` exactly as memaudit
reads it; JSONL holds one Conversation per line, and the dataset id is the file's stem.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from memgauge._util.files import atomic_write_text, temp_dir_beside
from memgauge.data.jsonio import (
    At,
    Records,
    existing,
    iter_jsonl,
    load_records,
    load_structured,
    problems_from_validation,
    validate_items,
    write_jsonl,
)
from memgauge.data.models import (
    CausalChain,
    Conversation,
    ConversationDataset,
    DatasetProtocol,
    EquivalenceClass,
    EvalQuery,
    ExtractionCase,
    Fact,
    JudgedOutput,
    Judgment,
    Memory,
    OperationCase,
    RetrievalDataset,
    SyntheticOrigin,
    TaskItem,
    Turn,
)
from memgauge.data.trec import qrels_lines, write_qrels
from memgauge.data.validate import retrieval_problems, validate_conversations
from memgauge.errors import DataError, Problem

M = TypeVar("M", bound=BaseModel)

__all__ = [
    "dataset_path_problem",
    "load_conversations",
    "load_items",
    "load_retrieval_dataset",
    "save_conversations",
    "save_retrieval_dataset",
]

#: a dataset's part -> (its file in directory form, its record model)
_PARTS: dict[str, tuple[str, type[BaseModel]]] = {
    "memories": ("memories.jsonl", Memory),
    "queries": ("queries.jsonl", EvalQuery),
    "judgments": ("judgments.jsonl", Judgment),
    "equivalence_classes": ("equivalence.jsonl", EquivalenceClass),
    "causal_chains": ("chains.jsonl", CausalChain),
}
FILES = {key: filename for key, (filename, _) in _PARTS.items()}


def _qrels_part(path: Path) -> Records[Judgment]:
    """A dataset directory's qrels.txt, read as its judgments part."""
    part = Records[Judgment](str(path))
    rows, part.problems = qrels_lines(
        path, max_grade=3, why="memgauge datasets grade 0-3", min_grade=0
    )
    part.valid = [
        (At(r.line), Judgment(query_id=r.qid, memory_id=r.docid, grade=r.grade)) for r in rows
    ]
    return part


def _load_dir(path: Path) -> RetrievalDataset:
    problems: list[Problem] = []
    name = path.name
    protocol: DatasetProtocol | None = None
    synthetic: SyntheticOrigin | None = None
    meta = path / "dataset.yaml"
    if meta.is_file():
        try:
            name, protocol, synthetic = _dataset_meta(meta, name)
        except DataError as exc:
            problems.extend(exc.problems)
    parts: dict[str, Records[Any]] = {}
    for key, (filename, model) in _PARTS.items():
        f = path / filename
        misnamed = path / f"{key}.jsonl"  # the bundle's key as a file name: never read
        if misnamed != f and misnamed.is_file():
            problems.append(
                Problem(
                    str(misnamed),
                    None,
                    None,
                    f"not read: a dataset directory's {key} are in {filename}; rename it",
                )
            )
        if key == "judgments" and not f.is_file() and (path / "qrels.txt").is_file():
            parts[key] = _qrels_part(path / "qrels.txt")
        elif f.is_file():
            try:
                parts[key] = load_records(f, model)
            except DataError as exc:  # not a list of records at all
                parts[key] = Records(str(f), problems=exc.problems, complete=False)
        elif f.exists():  # a directory, FIFO or device: never read (a FIFO would block)
            what = "a directory" if f.is_dir() else "a FIFO or device"
            problems.append(
                Problem(str(f), None, None, f"not a regular file ({what}): make it JSON lines")
            )
            parts[key] = Records(str(f), complete=False)
        else:
            required = key in ("memories", "queries", "judgments")
            if required:
                problems.append(
                    Problem(str(f), None, None, f"missing: a dataset directory needs {filename}")
                )
            parts[key] = Records(str(f), complete=not required)
        problems += parts[key].problems
    # the cross-record checks run on what did read, so one pass lists every problem
    problems += retrieval_problems(parts)
    if problems:
        raise DataError(problems)
    records = {key: part.records for key, part in parts.items()}
    return RetrievalDataset.model_validate(
        {"name": name, "protocol": protocol, "synthetic": synthetic, **records}
    )


def _dataset_meta(
    meta: Path, default: str
) -> tuple[str, DatasetProtocol | None, SyntheticOrigin | None]:
    """`name:`, `protocol:` and `synthetic:` of a dataset directory's dataset.yaml (optional,
    like the file itself), read with the bounded reader."""
    loaded = load_structured(meta, empty_ok=True)[0]
    if loaded is None:
        return default, None, None
    if not isinstance(loaded, dict):
        raise DataError(
            Problem(str(meta), None, None, "dataset.yaml is a mapping, e.g. `name: my-dataset`")
        )
    name = loaded.get("name", default)
    if name is None:
        name = default
    if not isinstance(name, str | int | float) or isinstance(name, bool):
        raise DataError(Problem(str(meta), None, "name", "the dataset's name is a string"))
    protocol = _meta_part(meta, loaded, "protocol", DatasetProtocol)
    synthetic = _meta_part(meta, loaded, "synthetic", SyntheticOrigin)
    return str(name), protocol, synthetic


def _meta_part(meta: Path, loaded: dict[str, Any], key: str, model: type[M]) -> M | None:
    if loaded.get(key) is None:
        return None
    try:
        return model.model_validate(loaded[key])
    except ValidationError as exc:
        raise DataError(problems_from_validation(exc, str(meta), None, key)) from None


def _load_bundle(path: Path) -> RetrievalDataset:
    file = str(path)
    value, _ = load_structured(path)
    if not isinstance(value, dict):
        raise DataError(
            Problem(file, None, None, f"expected a dataset object, got {type(value).__name__}")
        )
    if (said := _one_record(value)) is not None:
        raise DataError(Problem(file, None, None, said))
    try:
        ds: RetrievalDataset | None = RetrievalDataset.model_validate(value)
    except ValidationError as exc:
        ds, problems = None, problems_from_validation(exc, file, None)
    else:
        problems = []
    # each part's records one by one (their own problems are those above): the cross-record
    # checks run on the records that are valid, so one pass lists every problem
    parts: dict[str, Records[Any]] = {}
    for key, (_, model) in _PARTS.items():
        raw = value.get(key, [])
        items = raw if isinstance(raw, list) else []
        parts[key] = validate_items(
            ((At(None, f"{key}[{i}]"), item) for i, item in enumerate(items)), model, file
        )
        parts[key].complete &= isinstance(raw, list)
    problems += retrieval_problems(parts)
    if problems or ds is None:
        raise DataError(problems)
    return ds


#: the fields of one record of a part (and which), for a bundle file that holds one record
_RECORD_FIELDS = (
    (("id", "text"), "memory or query", "memories.jsonl or queries.jsonl"),
    (("query_id", "memory_id"), "judgment", "judgments.jsonl"),
)


def _one_record(value: dict[str, Any]) -> str | None:
    """What to write when a bundle file holds one record of a part (`{"id": "m1", "text":
    ...}`) instead of the parts: each of its fields was an unknown field of a bundle."""
    if set(value) & set(_PARTS):
        return None
    for fields, what, files in _RECORD_FIELDS:
        if set(fields) <= set(value):
            return (
                f"one object with {' and '.join(fields)}: it looks like one {what}, not a"
                f" dataset; write {files}, one such object a line, or a bundle"
                ' {"memories": [...], "queries": [...], "judgments": [...]}'
            )
    return None


def dataset_path_problem(path: Path) -> str | None:
    """What is wrong with `path` as a dataset's place (it is missing, or a FIFO or device that
    reading would block on, or a BEIR directory, which reads as a dataset directory with every
    file wrong), or None for a file or directory."""
    beir = path.is_dir() and (path / "corpus.jsonl").is_file()
    if beir and not (path / "memories.jsonl").exists():
        return (
            "a BEIR directory (corpus.jsonl, queries.jsonl, qrels/), not a memgauge dataset:"
            f" import it first (`memgauge import beir {path} --out DIR`) and give DIR"
        )
    if path.is_dir() and not (path / "memories.jsonl").exists():
        from memgauge.data.importers.beir import beir_parent

        if (said := beir_parent(path)) is not None:
            return said
    if path.is_dir() or path.is_file():
        return None
    if path.exists():
        return "not a regular file or directory (a FIFO or device); pass a dataset or bundle"
    return "no such file or directory"


def load_retrieval_dataset(path: str | Path) -> RetrievalDataset:
    """Load a retrieval dataset from a directory or a bundle file; DataError lists every problem."""
    p = Path(path)
    if (what := dataset_path_problem(p)) is not None:
        raise DataError(Problem(str(p), None, None, what))
    return _load_dir(p) if p.is_dir() else _load_bundle(p)


def save_retrieval_dataset(
    ds: RetrievalDataset, out_dir: str | Path, extras: Mapping[str, str] | None = None
) -> list[Path]:
    """Write `ds` in directory form, with `extras` ({file name: text}, e.g. a report of how
    it was made) beside it. Files are written to a temporary directory first and moved into
    place, so a failure leaves nothing half-written."""
    out = Path(out_dir)
    out.parent.mkdir(parents=True, exist_ok=True)
    # a temporary directory a killed write left beside `out` is swept here (temp_dir_beside)
    with temp_dir_beside(out) as tmp:
        meta: dict[str, Any] = {"name": ds.name}
        if ds.protocol is not None:
            meta["protocol"] = ds.protocol.model_dump()
        if ds.synthetic is not None:
            meta["synthetic"] = ds.synthetic.model_dump(mode="json", exclude_defaults=True)
        atomic_write_text(tmp / "dataset.yaml", yaml.safe_dump(meta, sort_keys=False))
        for filename, text in (extras or {}).items():
            atomic_write_text(tmp / filename, text)
        for key, filename in FILES.items():
            records = getattr(ds, key)
            if records or key in ("memories", "queries", "judgments"):
                write_jsonl(tmp / filename, records)
        out.mkdir(exist_ok=True)
        # Path.replace returns the path the file now has
        return [f.replace(out / f.name) for f in sorted(tmp.iterdir())]


def _salvage(obj: Any) -> tuple[Conversation | None, list[str], bool]:
    """The turns and facts of a conversation that is not valid that are valid on their own,
    for the checks across conversations (their own problems are reported already); the ids of
    its facts that are not; and whether every fact's id was read."""
    if not isinstance(obj, dict):
        return None, [], False
    cid, turns, facts = obj.get("id"), obj.get("turns"), obj.get("facts", [])
    if not isinstance(facts, list):
        return None, [], False
    good: list[Fact] = []
    others: list[str] = []
    complete = True
    for raw in facts:
        try:
            good.append(Fact.model_validate(raw))
        except ValidationError:
            fid = raw.get("id") if isinstance(raw, dict) else None
            if isinstance(fid, str):
                others.append(fid)
            else:
                complete = False
    if not isinstance(cid, str) or not cid:
        return None, [*others, *(f.id for f in good)], complete
    kept: list[Turn] = []
    for raw in turns if isinstance(turns, list) else []:
        with contextlib.suppress(ValidationError):
            kept.append(Turn.model_validate(raw))
    return Conversation.model_construct(id=cid, turns=kept, facts=good), others, complete


def _conversations(
    items: list[tuple[At, Any]], file: str, problems: list[Problem] | None
) -> tuple[list[tuple[At, Conversation]], list[str], bool]:
    """Each conversation validated on its own (what is valid of one that is not, salvaged), the
    ids of the facts that are not valid, and whether every fact's id was read. Problems go to
    `problems` (None: they were reported already)."""
    valid: list[tuple[At, Conversation]] = []
    others: list[str] = []
    complete = True
    for at, obj in items:
        try:
            valid.append((at, Conversation.model_validate(obj)))
        except ValidationError as exc:
            if problems is not None:
                problems.extend(problems_from_validation(exc, file, at.line, at.place))
            conv, ids, whole = _salvage(obj)
            if conv is not None:
                valid.append((at, conv))
            others += ids
            complete &= whole
    return valid, others, complete


def load_conversations(path: str | Path) -> ConversationDataset:
    """Load memaudit conversations: JSON (one MemoryDataset), JSONL (one Conversation a line)
    or a list of conversations (JSON lines under a `.json` name, a JSON or YAML list, as
    `detect` takes them). DataError lists every problem: of each conversation, and of the
    checks across them (fact ids, `supersedes`) on the conversations that are valid."""
    p, file = existing(path)
    problems: list[Problem] = []
    ds: ConversationDataset | None = None
    items: list[tuple[At, Any]] | None = None
    unread = False
    if p.suffix.lower() == ".jsonl":
        items = [(At(line), obj) for line, obj in iter_jsonl(p, problems)]
        unread = bool(problems)  # lines that are not JSON: their facts are unknown
    else:
        value, lines = load_structured(p)
        if isinstance(value, list):  # a conversation a record: each named by its line or place
            items = [
                (At(lines.get(i), "" if i in lines else f"[{i}]"), c) for i, c in enumerate(value)
            ]
    if items is not None:
        if not items and not problems:
            problems.append(Problem(file, None, None, "file has no conversations"))
        valid, others, complete = _conversations(items, file, problems)
        complete &= not unread
        problems += _repeated_conversations(file, items)
        if not problems:
            ds = ConversationDataset(id=p.stem, conversations=[c for _, c in valid])
    else:
        try:
            ds = ConversationDataset.model_validate(value)
        except ValidationError as exc:
            found = problems_from_validation(exc, file, None)
            problems += [_with_ids(pr, value) for pr in found]
        if ds is not None:
            valid, others, complete = [(At(None), c) for c in ds.conversations], [], True
        else:  # each conversation on its own, for the checks across them
            raw = value.get("conversations") if isinstance(value, dict) else None
            items = [(At(None), c) for c in raw] if isinstance(raw, list) else []
            valid, others, complete = _conversations(items, file, None)
            complete &= isinstance(raw, list)
    problems += validate_conversations(valid, file, other_facts=others, complete=complete)
    if problems or ds is None:
        raise DataError(problems)
    return ds


def _repeated_conversations(file: str, items: list[tuple[At, Any]]) -> list[Problem]:
    """A problem at each repeat of a conversation id among the lines of a JSONL file."""
    first: dict[str, At] = {}
    out = []
    for at, obj in items:
        cid = obj.get("id") if isinstance(obj, dict) else None
        if not isinstance(cid, str):
            continue
        if cid in first:
            out.append(
                Problem(
                    file,
                    at.line,
                    "id",
                    f"duplicate conversation id {cid!r} (first at {first[cid].name()})",
                )
            )
        else:
            first[cid] = at
    return out


def _with_ids(problem: Problem, value: Any) -> Problem:
    """`conversations.1.facts.0.x` -> `conversations[c2].facts[f1].x`: ids, not positions."""
    parts = (problem.field or "").split(".")
    if len(parts) < 2 or parts[0] != "conversations" or not parts[1].isdigit():
        return problem
    try:
        conv = value["conversations"][int(parts[1])]
        out = [f"conversations[{conv['id']}]"]
        rest = parts[2:]
        if len(rest) >= 2 and rest[0] in ("facts", "turns") and rest[1].isdigit():
            item = conv[rest[0]][int(rest[1])]
            key = item.get("id", rest[1]) if rest[0] == "facts" else rest[1]
            out.append(f"{rest[0]}[{key}]")
            rest = rest[2:]
    except (KeyError, IndexError, TypeError, AttributeError):
        return problem
    return Problem(problem.file, problem.line, ".".join(out + rest), problem.message)


def _unique(path: str | Path, model: type[M], key: str, what: str) -> list[M]:
    """Records of `model` whose ids are unique: every bad record and every repeated id (a bad
    record's too) in one DataError."""
    loaded = load_records(path, model, key=key)
    problems = loaded.problems + loaded.duplicate_ids(what)
    if problems:
        raise DataError(problems)
    return loaded.records


def load_items(path: str | Path) -> list[TaskItem]:
    """Items of an expected-output or script task (JSONL, JSON or YAML list, or an object with
    `items`, or a CSV / TSV sheet: `data.importers.csv_items`); ids must be unique. DataError
    lists every problem with its line."""
    if Path(path).suffix.lower() in (".csv", ".tsv"):
        # imported here: the importers package reads other files through this module
        from memgauge.data.importers.csv_items import import_csv_items

        return import_csv_items(path)[0]
    return _unique(path, TaskItem, "items", "item")


def load_memories_file(path: str | Path) -> list[Memory]:
    """A memories file (JSONL, JSON list or `{"memories": [...]}`, YAML); ids unique: two
    memories under one id would be graded as one. DataError lists every problem with its
    line."""
    return _unique(path, Memory, "memories", "memory")


def load_extraction_cases(path: str | Path) -> list[ExtractionCase]:
    """Fact-extraction cases (JSON list or `{"cases": [...]}`, JSONL, YAML); ids unique."""
    return _unique(path, ExtractionCase, "cases", "case")


def load_operation_cases(path: str | Path) -> list[OperationCase]:
    """Memory-operation cases (seed 000; JSON list or `{"cases": [...]}`, JSONL, YAML); ids
    unique."""
    return _unique(path, OperationCase, "cases", "case")


def load_judged(path: str | Path, *, labels: bool = False) -> list[JudgedOutput]:
    """Frozen outputs to judge (a run export works); with `labels`, each needs a human label.
    Ids must be unique. DataError lists every problem with its line."""
    loaded = load_records(path, JudgedOutput, key="items")
    problems = loaded.problems + loaded.duplicate_ids("output")
    if labels:
        problems += [
            Problem(
                loaded.file, at.line, at.field("label"), "a human label is needed: pass or fail"
            )
            for at, row in loaded.valid
            if row.label is None
        ]
    if problems:
        raise DataError(problems)
    return loaded.records


def save_conversations(ds: ConversationDataset, path: str | Path) -> None:
    """Write a conversation dataset as memaudit JSON, atomically."""
    atomic_write_text(path, ds.model_dump_json(indent=2, exclude_defaults=True) + "\n")


__all__ += [
    "FILES",
    "load_extraction_cases",
    "load_judged",
    "load_memories_file",
    "load_operation_cases",
    "write_qrels",
]
