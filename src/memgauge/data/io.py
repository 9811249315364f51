"""Reading and writing whole datasets: retrieval datasets (directory or one bundle file) and
conversation datasets (memaudit JSON / JSONL).

Directory form (what `save_retrieval_dataset` writes and `memgauge import` produces):

    dataset.yaml        name: <name>, protocol: {...}      (optional; see DatasetProtocol)
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

import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ValidationError

from memgauge._util.files import atomic_write_text
from memgauge.data import traces
from memgauge.data.jsonio import (
    iter_jsonl,
    load_structured,
    problems_from_validation,
    read_records,
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
    JudgedOutput,
    Judgment,
    Memory,
    OperationCase,
    RetrievalDataset,
    TaskItem,
)
from memgauge.data.trec import read_qrels, write_qrels
from memgauge.data.validate import validate_conversations, validate_retrieval_dataset
from memgauge.errors import DataError, Problem

__all__ = [
    "load_conversations",
    "load_items",
    "load_retrieval_dataset",
    "save_conversations",
    "save_retrieval_dataset",
]

FILES = {
    "memories": "memories.jsonl",
    "queries": "queries.jsonl",
    "judgments": "judgments.jsonl",
    "equivalence_classes": "equivalence.jsonl",
    "causal_chains": "chains.jsonl",
}


def _load_dir(path: Path) -> RetrievalDataset:
    problems: list[Problem] = []
    name = path.name
    protocol: DatasetProtocol | None = None
    meta = path / "dataset.yaml"
    if meta.is_file():
        try:
            name, protocol = _dataset_meta(meta, name)
        except DataError as exc:
            problems.extend(exc.problems)
    parts: dict[str, list[Any]] = {}
    models: dict[str, type[BaseModel]] = {
        "memories": Memory,
        "queries": EvalQuery,
        "judgments": Judgment,
        "equivalence_classes": EquivalenceClass,
        "causal_chains": CausalChain,
    }
    for key, filename in FILES.items():
        f = path / filename
        if key == "judgments" and not f.is_file() and (path / "qrels.txt").is_file():
            try:
                qrels = read_qrels(
                    path / "qrels.txt", max_grade=3, why="memgauge datasets grade 0-3", min_grade=0
                )
            except DataError as exc:
                problems.extend(exc.problems)
                continue
            parts[key] = [
                Judgment(query_id=q, memory_id=d, grade=g)
                for q, docs in qrels.items()
                for d, g in docs.items()
            ]
            continue
        if not f.is_file():
            if key in ("memories", "queries", "judgments"):
                problems.append(
                    Problem(str(f), None, None, f"missing: a dataset directory needs {filename}")
                )
            continue
        try:
            parts[key] = list(read_records(f, models[key]))
        except DataError as exc:
            problems.extend(exc.problems)
    if problems:
        raise DataError(problems)
    ds = RetrievalDataset.model_validate({"name": name, "protocol": protocol, **parts})
    problems = validate_retrieval_dataset(ds, {k: str(path / v) for k, v in FILES.items()})
    if problems:
        raise DataError(problems)
    return ds


def _dataset_meta(meta: Path, default: str) -> tuple[str, DatasetProtocol | None]:
    """`name:` and `protocol:` of a dataset directory's dataset.yaml (optional, like the file
    itself), read with the bounded reader."""
    loaded = load_structured(meta, empty_ok=True)[0]
    if loaded is None:
        return default, None
    if not isinstance(loaded, dict):
        raise DataError(
            Problem(str(meta), None, None, "dataset.yaml is a mapping, e.g. `name: my-dataset`")
        )
    name = loaded.get("name", default)
    if name is None:
        name = default
    if not isinstance(name, str | int | float) or isinstance(name, bool):
        raise DataError(Problem(str(meta), None, "name", "the dataset's name is a string"))
    protocol = None
    if loaded.get("protocol") is not None:
        try:
            protocol = DatasetProtocol.model_validate(loaded["protocol"])
        except ValidationError as exc:
            raise DataError(problems_from_validation(exc, str(meta), None)) from None
    return str(name), protocol


def _load_bundle(path: Path) -> RetrievalDataset:
    file = str(path)
    value, _ = load_structured(path)
    if not isinstance(value, dict):
        raise DataError(
            Problem(file, None, None, f"expected a dataset object, got {type(value).__name__}")
        )
    try:
        ds = RetrievalDataset.model_validate(value)
    except ValidationError as exc:
        raise DataError(problems_from_validation(exc, file, None)) from None
    problems = validate_retrieval_dataset(ds, dict.fromkeys(FILES, file))
    if problems:
        raise DataError(problems)
    return ds


def load_retrieval_dataset(path: str | Path) -> RetrievalDataset:
    """Load a retrieval dataset from a directory or a bundle file; DataError lists every problem."""
    p = Path(path)
    if p.is_dir():
        return _load_dir(p)
    if not p.is_file():
        raise DataError(Problem(str(p), None, None, "no such file or directory"))
    return _load_bundle(p)


def save_retrieval_dataset(ds: RetrievalDataset, out_dir: str | Path) -> list[Path]:
    """Write `ds` in directory form. Files are written to a temporary directory first and moved
    into place, so a failure leaves nothing half-written."""
    out = Path(out_dir)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    try:
        meta: dict[str, Any] = {"name": ds.name}
        if ds.protocol is not None:
            meta["protocol"] = ds.protocol.model_dump()
        atomic_write_text(tmp / "dataset.yaml", yaml.safe_dump(meta, sort_keys=False))
        for key, filename in FILES.items():
            records = getattr(ds, key)
            if records or key in ("memories", "queries", "judgments"):
                write_jsonl(tmp / filename, records)
        out.mkdir(exist_ok=True)
        written = []
        for f in sorted(tmp.iterdir()):
            target = out / f.name
            f.replace(target)
            written.append(target)
        return written
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def load_conversations(path: str | Path) -> ConversationDataset:
    """Load memaudit conversations: JSON (one MemoryDataset) or JSONL (one Conversation a line)."""
    p = Path(path)
    file = str(p)
    if not p.is_file():
        raise DataError(Problem(file, None, None, "no such file"))
    if p.suffix.lower() == ".jsonl":
        problems: list[Problem] = []
        convs: list[Conversation] = []
        for line, obj in iter_jsonl(p, problems):
            try:
                convs.append(Conversation.model_validate(obj))
            except ValidationError as exc:
                problems.extend(problems_from_validation(exc, file, line))
        if not convs and not problems:
            problems.append(Problem(file, None, None, "file has no conversations"))
        if problems:
            raise DataError(problems)
        try:
            ds = ConversationDataset(id=p.stem, conversations=convs)
        except ValidationError as exc:
            raise DataError(problems_from_validation(exc, file, None)) from None
    else:
        value, _ = load_structured(p)
        try:
            ds = ConversationDataset.model_validate(value)
        except ValidationError as exc:
            found = problems_from_validation(exc, file, None)
            raise DataError([_with_ids(pr, value) for pr in found]) from None
    problems = validate_conversations(ds, file)
    if problems:
        raise DataError(problems)
    return ds


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


def _duplicate_ids(file: str, records: Sequence[Any], what: str) -> list[Problem]:
    seen: set[str] = set()
    problems = []
    for i, rec in enumerate(records):
        if rec.id in seen:
            problems.append(Problem(file, None, f"[{i}].id", f"duplicate {what} id {rec.id!r}"))
        seen.add(rec.id)
    return problems


def load_items(path: str | Path) -> list[TaskItem]:
    """Items of an expected-output or script task (JSONL, JSON or YAML list, or an object with
    `items`, or a CSV / TSV sheet: `data.importers.csv_items`); ids must be unique. DataError
    lists every problem with its line."""
    if Path(path).suffix.lower() in (".csv", ".tsv"):
        # imported here: the importers package reads other files through this module
        from memgauge.data.importers.csv_items import import_csv_items

        return import_csv_items(path)[0]
    items = read_records(path, TaskItem, key="items")
    problems = _duplicate_ids(str(path), items, "item")
    if problems:
        raise DataError(problems)
    return items


def load_extraction_cases(path: str | Path) -> list[ExtractionCase]:
    """Fact-extraction cases (JSON list or `{"cases": [...]}`, JSONL, YAML); ids unique."""
    cases = read_records(path, ExtractionCase, key="cases")
    problems = _duplicate_ids(str(path), cases, "case")
    if problems:
        raise DataError(problems)
    return cases


def load_operation_cases(path: str | Path) -> list[OperationCase]:
    """Memory-operation cases (seed 000; JSON list or `{"cases": [...]}`, JSONL, YAML); ids
    unique."""
    cases = read_records(path, OperationCase, key="cases")
    problems = _duplicate_ids(str(path), cases, "case")
    if problems:
        raise DataError(problems)
    return cases


def load_recorded(path: str | Path) -> dict[str, Any]:
    """Outputs recorded in production, one `{case_id (or id), output}` per line, or production
    traces that carry their own conversation (see `data.traces`): the seed's "online" phase
    scores them after the fact. Later lines win for a repeated id."""
    return traces.load_recorded(path)


def load_judged(path: str | Path, *, labels: bool = False) -> list[JudgedOutput]:
    """Frozen outputs to judge (a run export works); with `labels`, each needs a human label.
    Ids must be unique. DataError lists every problem with its line."""
    file = str(path)
    rows = read_records(path, JudgedOutput, key="items")
    problems = _duplicate_ids(file, rows, "output")
    for i, row in enumerate(rows):
        if labels and row.label is None:
            jsonl = file.endswith(".jsonl")
            problems.append(
                Problem(
                    file,
                    i + 1 if jsonl else None,
                    "label" if jsonl else f"[{i}].label",
                    "a human label is needed: pass or fail",
                )
            )
    if problems:
        raise DataError(problems)
    return rows


def save_conversations(ds: ConversationDataset, path: str | Path) -> None:
    """Write a conversation dataset as memaudit JSON, atomically."""
    atomic_write_text(path, ds.model_dump_json(indent=2, exclude_defaults=True) + "\n")


__all__ += [
    "FILES",
    "load_extraction_cases",
    "load_judged",
    "load_operation_cases",
    "load_recorded",
    "write_qrels",
]
