"""People's review labels (`memgauge view --review`): read them, calibrate the machine against
them, and turn graded hits into a dataset's judgments or the query log's golden set."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from memgauge._util.files import atomic_write_text
from memgauge.api._store import Where, read_store, require_store, resolve_resume
from memgauge.data.review import LABEL_KINDS, ReviewLabel
from memgauge.data.trec import write_qrels
from memgauge.errors import UsageError, argument, check_path
from memgauge.store.querylog import import_annotations, unknown_query_ids
from memgauge.store.review import ReviewStore, current_labels
from memgauge.store.run_pages import RunReader
from memgauge.track.review import (
    LabelCalibration,
    calibrate_labels,
    labels_as_judgments,
    make_label,
    override_memories,
)

__all__ = [
    "add_review_label",
    "calibrate_review",
    "fill_annotation_pool",
    "learn_from_review",
    "review_judgments",
    "review_labels",
    "review_to_golden",
    "write_judgments",
]


def add_review_label(
    store: Where,
    subject: str,
    task: str,
    item: str,
    *,
    run: str | None = None,
    reviewer: str,
    kind: str,
    target: str = "",
    grade: int | None = None,
    action: str | None = None,
    label: str | None = None,
    note: str = "",
) -> ReviewLabel:
    """Add `reviewer`'s label to `store`, as `memgauge view --review` does: a hit's `grade`,
    a verdict's `action` (confirm or override), a fact's (correct, incorrect) or an operation
    decision's (right, wrong) `label`; recorded with what the machine said of it then. The item
    is read from the run (`run`: its id or the first characters of it; None: the newest run,
    as the review queue opens on); a UsageError for an item, target or value that is not there
    or does not fit."""
    url = require_store(store)
    with RunReader(url) as runs:
        if run is None:
            newest = runs.runs_overview()
            if not newest:
                raise UsageError(f"no run in {url} to label")
            run_id = str(newest[0]["run_id"])
        else:
            run_id = str(resolve_resume(runs, run))
        found = runs.item(run_id, subject, task, item)
    if found is None:
        raise UsageError(f"run {run_id} has no item {item!r} of subject {subject!r}, task {task!r}")
    made = make_label(
        found,
        run_id,
        reviewer,
        kind=kind,
        target=target,
        grade=grade,
        action=action,
        label=label,
        note=note,
    )
    with ReviewStore(url) as opened:
        return opened.add(made)


def review_labels(
    store: Where = None,
    *,
    run: str | None = None,
    kind: str | None = None,
    reviewer: str | None = None,
    target: str | None = None,
    history: bool = False,
) -> list[ReviewLabel]:
    """The labels people gave in `store` (read as it is, never migrated): each reviewer's
    current one per target, or with `history` every one given, oldest first; of run `run` (its
    id or the first characters of it), `kind`, `reviewer` and `target` (a verdict's evaluator,
    a hit's memory id) when given."""
    if kind is not None and kind not in LABEL_KINDS:
        raise UsageError(f"{argument('kind')}: one of {', '.join(LABEL_KINDS)}; got {kind!r}")
    url = require_store(store)
    run_ids = None
    if run is not None:
        with read_store(url) as runs:
            run_ids = [str(resolve_resume(runs, run))]
    with ReviewStore(url, read_only=True) as opened:
        labels = opened.labels(run_ids=run_ids, kind=kind, reviewer=reviewer)
    if target is not None:
        labels = [lab for lab in labels if lab.target == target]
    return labels if history else current_labels(labels)


def calibrate_review(
    store: Where = None,
    *,
    kind: str = "verdict",
    run: str | None = None,
    target: str | None = None,
) -> LabelCalibration:
    """The machine against people's labels of `kind` in `store`: per reviewer a confusion
    matrix, accuracy with its Wilson interval and Cohen's kappa; between each pair of reviewers
    Cohen's kappa on what both labelled (no LLM is called: the judge's verdict is the stored
    one)."""
    return calibrate_labels(review_labels(store, run=run, kind=kind, target=target), kind)


def review_judgments(
    store: Where = None, *, run: str | None = None, reviewer: str | None = None
) -> tuple[list[dict[str, Any]], int]:
    """The graded hits in `store` as a retrieval dataset's `judgments.jsonl` rows and the count
    of pairs reviewers graded differently (see `track.review.labels_as_judgments`)."""
    labels = review_labels(store, run=run, kind="hit", reviewer=reviewer, history=True)
    return labels_as_judgments(labels, reviewer)


def review_to_golden(
    db: Where, rows: Sequence[dict[str, Any]], annotator: str = "review"
) -> tuple[int, int]:
    """Store judgment rows (`review_judgments`) of the queries logged in query log `db` as its
    manual judgments, the golden set's (a pair already judged manually takes the new grade), as
    `memgauge logs import-annotations` stores a pool's; a row of a query never logged there is
    left out and counted, as that command refuses one. Returns (stored, not logged)."""
    url = require_store(db)
    unknown = unknown_query_ids(url, [str(r["query_id"]) for r in rows])
    by_query: dict[str, list[dict[str, Any]]] = {}
    skipped = 0
    for row in rows:
        if str(row["query_id"]) in unknown:
            skipped += 1
            continue
        by_query.setdefault(str(row["query_id"]), []).append(
            {"memory_id": row["memory_id"], "grade": row["grade"]}
        )
    graded = [{"query_id": q, "candidates": c} for q, c in by_query.items()]
    return import_annotations(url, graded, annotator), skipped


def write_judgments(
    rows: Sequence[dict[str, Any]], out: str | Path, fmt: str = "judgments"
) -> None:
    """Write judgment rows to `out`, atomically: `judgments` a retrieval dataset's
    `judgments.jsonl` (under another name, as `records_text` writes records: a `.json` file
    holds their JSON list), `qrels` a TREC qrels file (a UsageError for an id a qrels line
    cannot hold: empty, or with white space)."""
    from memgauge.data.jsonio import records_text

    check_path("out", out)
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    if fmt == "judgments":
        atomic_write_text(out, records_text(out, [json.dumps(r, sort_keys=True) for r in rows]))
        return
    qrels: dict[str, dict[str, int]] = {}
    for r in rows:
        ids = (str(r["query_id"]), str(r["memory_id"]))
        if any(not v or any(c.isspace() for c in v) for v in ids):
            raise UsageError(
                f"query {ids[0]!r} / memory {ids[1]!r}: a qrels id is one word; export"
                " --format judgments instead"
            )
        qrels.setdefault(ids[0], {})[ids[1]] = int(r["grade"])
    write_qrels(out, qrels)


def fill_annotation_pool(
    pool: str | Path, rows: Sequence[dict[str, Any]], out: str | Path
) -> tuple[int, int]:
    """Write annotation pool `pool` (as `memgauge logs annotate` wrote it) to `out` with each
    candidate that has no grade yet given the reviewed grade of its (query, memory) in `rows`
    (`review_judgments`); a grade already in the pool is kept. Returns (filled, still
    ungraded): `memgauge logs import-annotations` then stores the filled pool."""
    from memgauge.data.jsonio import read_records, records_text
    from memgauge.online.annotations import GradedQuery

    check_path("pool", pool)
    check_path("out", out)
    out = Path(out)
    graded = {(str(r["query_id"]), str(r["memory_id"])): int(r["grade"]) for r in rows}
    records = read_records(pool, GradedQuery)
    filled = left = 0
    for record in records:
        for c in record.candidates:
            if c.grade is None:
                c.grade = graded.get((record.query_id, str(c.memory_id)))
                filled += c.grade is not None
            left += c.grade is None
    out.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(out, records_text(out, [r.model_dump_json() for r in records]))
    return filled, left


def learn_from_review(
    store: Where = None,
    *,
    run: str | None = None,
    learnings: str | Path | None = None,
    learn_into: str | None = None,
) -> tuple[int, int]:
    """Store each current override in `store` (a reviewer who said otherwise than a verdict,
    the extraction scorer or the operation checks) as a learning in the learnings memory, where
    `memgauge gate` stores its failure memories (`learnings`: its file, default
    MEMGAUGE_HOME/learnings.db; `learn_into`: another memory, as `--learn-into` takes it).
    Returns (stored now, held already)."""
    from memgauge.subjects.learnings import opened_learnings

    memories = override_memories(review_labels(store, run=run))
    if not memories:
        return 0, 0
    with opened_learnings(Path(learnings) if learnings else None, learn_into) as memory:
        known = {m.id for m in memory.dump()}
        fresh = [m for m in memories if m.id not in known]
        if fresh:
            memory.ingest(fresh)
    return len(fresh), len(memories) - len(fresh)
