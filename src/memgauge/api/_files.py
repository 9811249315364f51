"""Dataset files: imported from LoCoMo, LongMemEval, memaudit, BEIR and CSV sheets into
memgauge's own files, and checked, whatever their kind, with every problem named by file, line and field."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from memgauge._util.files import atomic_write_text
from memgauge._util.jsonout import dumps_strict
from memgauge._util.listing import counted
from memgauge.data.detect import KINDS, also_fits, detect_kind
from memgauge.errors import DataError, Problem, UsageError, argument, check_path

if TYPE_CHECKING:
    from memgauge.data.importers import BeirGrades, ImportReport

# `memgauge validate` must start fast (tests/cli/test_startup.py): each check imports its own
# reader, so a qrels file loads neither pydantic's dataset models nor the importers (NLTK,
# regex), and only a suite or subject file loads the registries (the LLM and embedding stacks).

__all__ = ["FILE_KINDS", "Imported", "dataset_files", "import_dataset", "validate_file"]

#: every kind of file `validate_file` knows (what `--kind` accepts)
FILE_KINDS: tuple[str, ...] = KINDS


@dataclass(frozen=True)
class Imported:
    """What `import_dataset` wrote: the report, and the files (the report's own last)."""

    report: ImportReport
    files: list[Path]

    @property
    def report_path(self) -> Path:
        """import_report.json: every count, and everything normalised or dropped."""
        return self.files[-1]


def import_dataset(
    kind: Literal["locomo", "longmemeval", "memaudit", "beir", "csv-items"],
    src: str | Path,
    out_dir: str | Path,
    *,
    granularity: Literal["turn", "session"] = "turn",
    protocol: Literal["paper", "all-turns"] = "paper",
    split: str = "test",
    grades: BeirGrades = "shift",
) -> Imported:
    """Convert `src` into native files under `out_dir`: a retrieval dataset (memories, queries,
    judgments) from LoCoMo, LongMemEval (its `granularity` and `protocol`) or a BEIR directory
    (its qrels `split`, and how its `grades` map), conversations.json from memaudit,
    items.jsonl from a CSV sheet of task items; and import_report.json beside them."""
    from memgauge.data.importers import (  # the importers, only when importing
        import_beir,
        import_csv_items,
        import_locomo,
        import_longmemeval,
        import_memaudit,
        require_evaluable,
    )
    from memgauge.data.io import FILES, save_conversations, save_retrieval_dataset
    from memgauge.data.jsonio import write_jsonl

    check_path("src", src)
    check_path("out_dir", out_dir)
    src, out_dir = Path(src), Path(out_dir)
    if kind == "beir" and not src.is_dir():
        raise DataError(Problem(str(src), None, None, "a BEIR dataset is a directory"))
    if kind != "beir" and src.is_dir():
        raise DataError(Problem(str(src), None, None, f"is a directory; {kind} imports a file"))
    names = (*(_IMPORT_FILES.get(kind) or ("dataset.yaml", *FILES.values())), "import_report.json")
    refuse_replacing_src(src, out_dir, names, "the import")
    report: ImportReport
    if kind == "memaudit":
        conv, report = import_memaudit(src)
        out_dir.mkdir(parents=True, exist_ok=True)
        save_conversations(conv, out_dir / "conversations.json")
        written = [out_dir / "conversations.json"]
    elif kind == "csv-items":
        items, report = import_csv_items(src)
        out_dir.mkdir(parents=True, exist_ok=True)
        write_jsonl(out_dir / "items.jsonl", items)
        written = [out_dir / "items.jsonl"]
    else:
        if kind == "locomo":
            ds, report = import_locomo(src)
        elif kind == "beir":
            ds, report = import_beir(src, split=split, grades=grades)
        else:
            ds, report = import_longmemeval(src, granularity, protocol)
        require_evaluable(ds, report, str(src))
        written = save_retrieval_dataset(ds, out_dir)
    report_path = out_dir / "import_report.json"
    atomic_write_text(report_path, dumps_strict(report.as_dict(), indent=2) + "\n")
    return Imported(report, [*written, report_path])


#: the files an import writes under --out besides import_report.json, by kind (else a
#: retrieval dataset's: dataset.yaml and every part's file, whichever it has)
_IMPORT_FILES = {"memaudit": ("conversations.json",), "csv-items": ("items.jsonl",)}


def dataset_files(path: str | Path) -> list[Path]:
    """The files a retrieval dataset at `path` is read from: a directory's dataset.yaml, each
    part's file and qrels.txt, those there (never its other files: the reports a run wrote
    beside them); a file, itself."""
    from memgauge.data.io import FILES

    path = Path(path)
    if not path.is_dir():
        return [path]
    names = ("dataset.yaml", *FILES.values(), "qrels.txt")
    return [path / name for name in names if (path / name).is_file()]


def refuse_replacing_src(src: Path, out_dir: Path, names: Sequence[str], what: str) -> None:
    """A DataError when a file `what` would write under `out_dir` (`names`) is `src` itself, or
    a file of the directory `src` (`import memaudit d/conversations.json --out d`: the user's
    file replaced by its conversion; `synth d --out d`: a dataset's own queries and judgments
    by synthetic ones). A directory is read from its own files (a BEIR one's qrels/ too,
    whose .tsv files nothing here writes): one under it (`import beir D --out D/native`, run
    again) holds none of them."""
    for name in names:
        target = out_dir / name
        try:
            if not target.is_file():
                continue
            same = (
                target.resolve().parent == src.resolve() if src.is_dir() else target.samefile(src)
            )
        except OSError:
            continue
        if same:
            raise DataError(
                Problem(
                    str(src),
                    None,
                    None,
                    f"{argument('out_dir', out_dir, flag='--out')} would replace {target} with"
                    f" {what}, and it is what {what} reads: give another"
                    f" {argument('out_dir', flag='--out')}",
                )
            )


def _count_dataset(path: Path) -> str:
    from memgauge.data.io import load_retrieval_dataset

    ds = load_retrieval_dataset(path)
    return f"{counted(len(ds.memories), 'memory', 'memories')}, {counted(len(ds.queries), 'query', 'queries')}, {counted(len(ds.judgments), 'judgment')}"


def _records(model: str, key: str) -> Callable[[Path], str]:
    """The check of a file of `model` records (a name in `data.models`, loaded when used):
    every bad record and every repeated id, in one pass."""

    def check(path: Path) -> str:
        from memgauge.data import models
        from memgauge.data.jsonio import load_records

        loaded = load_records(path, getattr(models, model), key=key)
        problems = loaded.problems + loaded.duplicate_ids()
        if problems:
            raise DataError(problems)
        return f"{counted(len(loaded.valid), 'record')}"

    return check


def _qrels(path: Path) -> str:
    from memgauge.data.trec import read_qrels

    q = read_qrels(path)
    return f"{counted(len(q), 'query', 'queries')}, {counted(sum(len(v) for v in q.values()), 'judgment')}"


def _run(path: Path) -> str:
    from memgauge.data.trec import read_run

    r = read_run(path)
    return f"{counted(len(r), 'query', 'queries')}, {counted(sum(len(v) for v in r.values()), 'result')}"


def _conversations(path: Path) -> str:
    from memgauge.data.io import load_conversations

    c = load_conversations(path)
    return f"{counted(len(c.conversations), 'conversation')}, {counted(sum(len(x.facts) for x in c.conversations), 'fact')}"


def _subject(path: Path) -> str:
    from memgauge.subjects.parse import parse_system

    try:
        parsed = parse_system(str(path))
    except UsageError as exc:
        message = str(exc).removeprefix(f"{path}: ")  # the Problem names the file already
        raise DataError(Problem(str(path), None, None, message)) from None
    return ", ".join(f"{label} ({next(iter(spec))})" for label, spec in parsed)


def _labels(path: Path) -> str:
    from memgauge.data.io import load_judged

    rows = load_judged(path, labels=True)
    n_pass = sum(r.label == "pass" for r in rows)
    return f"{counted(len(rows), 'labelled output')} ({n_pass} pass, {len(rows) - n_pass} fail)"


def _extraction(path: Path) -> str:
    from memgauge.data.io import load_extraction_cases

    cases = load_extraction_cases(path)
    facts = sum(len(c.expected_facts) for c in cases)
    return f"{counted(len(cases), 'extraction case')}, {counted(facts, 'expected fact')}"


def _operations(path: Path) -> str:
    from memgauge.data.io import load_operation_cases

    return counted(len(load_operation_cases(path)), "memory-operation case")


def _items(path: Path) -> str:
    from memgauge.data.io import load_items

    return f"{counted(len(load_items(path)), 'item')}"


def _trace(path: Path) -> str:
    from memgauge.data.traces import trace_summary

    return trace_summary(path)


def _pairs(path: Path) -> str:
    from memgauge.data.vectors import pairs_summary

    return pairs_summary(path)


def _vectors(path: Path) -> str:
    from memgauge.data.vectors import vectors_summary

    return vectors_summary(path)


def _suite(path: Path) -> str:
    from memgauge.runs.suite import load_suite

    s = load_suite(path)
    subjects, tasks = len(s.subjects), len(s.tasks)
    return f"suite {s.name!r}: {counted(subjects, 'subject')}, {counted(tasks, 'task')}"


def _imported(kind: str) -> Callable[[Path], str]:
    def check(path: Path) -> str:
        from memgauge.data.importers import import_locomo, import_longmemeval
        from memgauge.data.importers.common import evaluable

        if kind == "locomo":
            ds, report = import_locomo(path)
        else:
            ds, report = import_longmemeval(path)
        changed = f", {counted(len(report.changed), 'record')} changed" if report.changed else ""
        dropped = f", {counted(len(report.dropped), 'item')} dropped" if report.dropped else ""
        held = (
            f"{counted(len(ds.memories), 'memory', 'memories')}, {counted(len(ds.queries), 'query', 'queries')}, {len(ds.judgments)} "
            f"judgments{changed}{dropped}"
        )
        if not evaluable(ds):  # import and evaluate refuse it (`require_evaluable`)
            return (
                f"{held}; nothing to evaluate: `import` and `evaluate` refuse it, `audit` reads it"
            )
        return f"{held}; import with `memgauge import {kind}` (its import_report.json lists them)"

    return check


#: kind -> the check: reads the whole file, raises DataError with every problem, and returns a
#: one-line account of what it holds
CHECKS: dict[str, Callable[[Path], str]] = {
    "dataset-dir": _count_dataset,
    "bundle": _count_dataset,
    "memories": _records("Memory", "memories"),
    "queries": _records("EvalQuery", "queries"),
    "judgments": _records("Judgment", "judgments"),
    "equivalence": _records("EquivalenceClass", "equivalence_classes"),
    "chains": _records("CausalChain", "causal_chains"),
    "qrels": _qrels,
    "run": _run,
    "conversations": _conversations,
    "suite": _suite,
    "subject": _subject,
    "labels": _labels,
    "extraction": _extraction,
    "operations": _operations,
    "trace": _trace,
    "pairs": _pairs,
    "vectors": _vectors,
    "items": _items,
    "locomo": _imported("locomo"),
    "longmemeval": _imported("longmemeval"),
}


def validate_file(path: str | Path, kind: str | None = None) -> tuple[str, str]:
    """Check `path` as a file of `kind` (default: the kind its name and first records show):
    the kind and a one-line account of what it holds, or a DataError naming every problem's
    file, line and field."""
    if kind is not None and kind not in CHECKS:
        raise UsageError(f"kind {kind!r}: use one of {', '.join(KINDS)}")
    check_path("path", path)
    path = Path(path)
    if not path.exists():
        raise DataError(Problem(str(path), None, None, "no such file or directory"))
    found = kind or detect_kind(path)
    if found is None:
        raise DataError(
            Problem(
                str(path),
                None,
                None,
                "cannot tell what kind of file this is; name it memories.jsonl, queries.jsonl, "
                f"judgments.jsonl, qrels.txt, ... or pass --kind ({', '.join(KINDS)})",
            )
        )
    summary = CHECKS[found](path)
    others = () if kind else also_fits(path, found)
    if others:  # a tie the name did not break: say it, and how to read the file the other way
        summary += (
            f"; it fits {' or '.join(others)} as well: {argument('kind', others[0])} or a name like"
            f" {others[0]}{path.suffix.lower()} reads it so"
        )
    return found, summary
