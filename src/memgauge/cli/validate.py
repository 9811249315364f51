"""`memgauge validate`: check dataset files and report every problem with file, line and field."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from pathlib import Path

import click
from pydantic import BaseModel

from memgauge.api import pairs_summary, parse_system, trace_summary, vectors_summary
from memgauge.data.detect import KINDS, detect_kind
from memgauge.data.importers import import_locomo, import_longmemeval
from memgauge.data.io import (
    load_conversations,
    load_extraction_cases,
    load_items,
    load_judged,
    load_operation_cases,
    load_retrieval_dataset,
)
from memgauge.data.jsonio import read_records
from memgauge.data.models import CausalChain, EquivalenceClass, EvalQuery, Judgment, Memory
from memgauge.data.trec import read_qrels, read_run
from memgauge.errors import DataError, Problem, UsageError
from memgauge.runs.suite import load_suite

__all__ = ["validate"]


def _count_dataset(path: Path) -> str:
    ds = load_retrieval_dataset(path)
    return f"{len(ds.memories)} memories, {len(ds.queries)} queries, {len(ds.judgments)} judgments"


def _records(model: type[BaseModel], key: str) -> Callable[[Path], str]:
    def check(path: Path) -> str:
        recs = read_records(path, model, key=key)
        counts = Counter(getattr(r, "id", None) for r in recs)
        dupes = sorted(i for i, n in counts.items() if i is not None and n > 1)
        if dupes:
            raise DataError([Problem(str(path), None, "id", f"duplicate id {d!r}") for d in dupes])
        return f"{len(recs)} records"

    return check


def _qrels(path: Path) -> str:
    q = read_qrels(path)
    return f"{len(q)} queries, {sum(len(v) for v in q.values())} judgments"


def _run(path: Path) -> str:
    r = read_run(path)
    return f"{len(r)} queries, {sum(len(v) for v in r.values())} results"


def _conversations(path: Path) -> str:
    c = load_conversations(path)
    return (
        f"{len(c.conversations)} conversations, {sum(len(x.facts) for x in c.conversations)} facts"
    )


def _subject(path: Path) -> str:
    try:
        parsed = parse_system(str(path))
    except UsageError as exc:
        message = str(exc).removeprefix(f"{path}: ")  # the Problem names the file already
        raise DataError(Problem(str(path), None, None, message)) from None
    return ", ".join(f"{label} ({next(iter(spec))})" for label, spec in parsed)


def _labels(path: Path) -> str:
    rows = load_judged(path, labels=True)
    n_pass = sum(r.label == "pass" for r in rows)
    return f"{len(rows)} labelled outputs ({n_pass} pass, {len(rows) - n_pass} fail)"


def _extraction(path: Path) -> str:
    cases = load_extraction_cases(path)
    facts = sum(len(c.expected_facts) for c in cases)
    return f"{len(cases)} extraction cases, {facts} expected facts"


def _operations(path: Path) -> str:
    return f"{len(load_operation_cases(path))} memory-operation cases"


def _items(path: Path) -> str:
    return f"{len(load_items(path))} items"


def _suite(path: Path) -> str:
    s = load_suite(path)
    return f"suite {s.name!r}: {len(s.subjects)} subjects, {len(s.tasks)} tasks"


def _imported(kind: str) -> Callable[[Path], str]:
    def check(path: Path) -> str:
        if kind == "locomo":
            ds, report = import_locomo(path)
        else:
            ds, report = import_longmemeval(path)
        dropped = (
            f", {len(report.dropped)} evidence items normalised away or dropped"
            if (report.dropped)
            else ""
        )
        return (
            f"{len(ds.memories)} memories, {len(ds.queries)} queries, {len(ds.judgments)} "
            f"judgments{dropped}; import with `memgauge import {kind}`"
        )

    return check


CHECKS: dict[str, Callable[[Path], str]] = {
    "dataset-dir": _count_dataset,
    "bundle": _count_dataset,
    "memories": _records(Memory, "memories"),
    "queries": _records(EvalQuery, "queries"),
    "judgments": _records(Judgment, "judgments"),
    "equivalence": _records(EquivalenceClass, "equivalence_classes"),
    "chains": _records(CausalChain, "causal_chains"),
    "qrels": _qrels,
    "run": _run,
    "conversations": _conversations,
    "suite": _suite,
    "subject": _subject,
    "labels": _labels,
    "extraction": _extraction,
    "operations": _operations,
    "trace": trace_summary,
    "pairs": pairs_summary,
    "vectors": vectors_summary,
    "items": _items,
    "locomo": _imported("locomo"),
    "longmemeval": _imported("longmemeval"),
}


@click.command()
@click.argument("files", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--kind", type=click.Choice(KINDS), help="Force the kind instead of detecting it.")
def validate(files: tuple[Path, ...], kind: str | None) -> None:
    """Check dataset FILES (or dataset directories) and report every problem.

    Kinds: a dataset directory or bundle, memories, queries, judgments, equivalence classes,
    causal chains (JSONL/JSON/YAML), TREC qrels and run files, memaudit conversations, LoCoMo
    and LongMemEval files, suite files, subject spec files (subject*.yaml), extraction cases
    (seed 001), memory-operation cases (seed 000), recorded outputs and production traces,
    embedding pairs and stored vectors,
    task items and audit probes. Exits 0
    when every file is valid and 2 otherwise, naming file, line and field of each problem.
    """
    problems: list[Problem] = []
    for path in files:
        if not path.exists():
            problems.append(Problem(str(path), None, None, "no such file or directory"))
            continue
        k = kind or detect_kind(path)
        if k is None:
            problems.append(
                Problem(
                    str(path),
                    None,
                    None,
                    "cannot tell what kind of file this is; name it memories.jsonl, queries.jsonl, "
                    f"judgments.jsonl, qrels.txt, ... or pass --kind ({', '.join(KINDS)})",
                )
            )
            continue
        try:
            summary = CHECKS[k](path)
        except DataError as exc:
            problems.extend(exc.problems)
            continue
        click.echo(f"ok  {path}  ({k}: {summary})")
    if problems:
        raise DataError(problems)
