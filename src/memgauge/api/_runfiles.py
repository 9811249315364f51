"""A retrieval run's rankings as run files other IR tools read: TREC (`qid Q0 docid rank score
tag`, for trec_eval) and the JSON dict `{qid: {docid: score}}` (ranx's `Run.from_dict`,
ir_measures, pytrec_eval).

One file per system: a run file holds one ranking per query, and trec_eval would merge two
systems' lines for one query into a single ranking. With one system the file is written where
asked; with several, each system's file is the path with `.<label>` before its suffix
(`runs.trec` -> `runs.lexical.trec`, `runs.hybrid.trec`). The TREC tag is the label.

Scores: memgauge scores the ranking as the system returned it, in list order; trec_eval, ranx
and ir_measures re-sort by score (ties by doc id). A system's own scores may tie or be absent,
so the files carry scores made from the rank, `n + 1 - rank` for a query with n hits: every
tool then reads exactly the ranking memgauge scored, and the same measures agree to the last
digit (tested against pytrec_eval). The system's own scores stay in `memgauge runs export`.

Left out, and counted: a query whose search failed (no ranking to write; memgauge counts it as
failed, never as a 0), a query given no hit (TREC has no line for it), and a document repeated
within one ranking after its first place (a run file holds a document once per query).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from memgauge._util.files import atomic_write_text
from memgauge._util.jsonout import dumps_strict
from memgauge.aggregates.hits import hits_of
from memgauge.data.records import ItemRecord
from memgauge.data.trec import check_trec_ids, write_run

__all__ = ["RunFile", "retrieval_runs", "write_run_files"]

RunFormat = Literal["trec", "json"]
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


@dataclass
class RunFile:
    """One system's run file: where it went, what it holds, and what was left out."""

    subject: str
    path: Path
    queries: int = 0
    results: int = 0
    left_out: Counter[str] = field(default_factory=Counter)


def retrieval_runs(
    items: Iterable[ItemRecord],
) -> tuple[dict[str, dict[str, dict[str, float]]], dict[str, Counter[str]]]:
    """`{system: {qid: {docid: score}}}` from a retrieval run's item records (systems in the
    order they first appear), with the rank-made scores of the module docstring; and per
    system, the counts of what was left out (`failed_searches`, `empty_rankings`,
    `repeated_documents`). A run with repeats gives its first repeat's rankings: a TREC run
    file has one ranking per query."""
    runs: dict[str, dict[str, dict[str, float]]] = {}
    left_out: dict[str, Counter[str]] = {}
    for record in items:
        if record.repeat:
            continue
        run = runs.setdefault(record.subject, {})
        dropped = left_out.setdefault(record.subject, Counter())
        if record.status == "queued":
            continue  # never asked (a run that stopped): nothing to write, nothing failed
        hits = hits_of(record.output) if record.status == "completed" else None
        if hits is None:
            dropped["failed_searches"] += 1
            continue
        ids = [str(h["id"]) for h in hits]
        unique = list(dict.fromkeys(ids))
        dropped["repeated_documents"] += len(ids) - len(unique)
        if not unique:
            dropped["empty_rankings"] += 1
            continue
        n = len(unique)
        run[record.item_id] = {doc: float(n - i) for i, doc in enumerate(unique)}
    return runs, left_out


def _path_for(path: Path, subject: str, several: bool) -> Path:
    if not several:
        return path
    label = _UNSAFE.sub("_", subject).strip("._") or "system"
    return path.with_name(f"{path.stem}.{label}{path.suffix}")


def write_run_files(items: Iterable[ItemRecord], path: Path, fmt: RunFormat) -> list[RunFile]:
    """Write each system's ranking to a run file of `fmt` (see the module docstring for the
    names, the scores and what is left out); what was written, per system."""
    runs, left_out = retrieval_runs(items)
    if fmt == "trec":  # every system's ids checked before any file is written
        for subject, run in runs.items():
            check_trec_ids(_path_for(path, subject, len(runs) > 1), run)
    written: list[RunFile] = []
    for subject, run in runs.items():
        target = _path_for(path, subject, len(runs) > 1)
        if any(w.path == target for w in written):  # two labels that differ only in symbols
            target = target.with_name(f"{target.stem}.{len(written) + 1}{target.suffix}")
        target.parent.mkdir(parents=True, exist_ok=True)
        if fmt == "trec":
            write_run(target, run, tag=_UNSAFE.sub("_", subject) or "memgauge")
        else:
            atomic_write_text(target, dumps_strict(run, sort_keys=True, indent=1) + "\n")
        results = sum(len(docs) for docs in run.values())
        written.append(RunFile(subject, target, len(run), results, +left_out[subject]))
    return written
