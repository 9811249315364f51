"""`memgauge logs`: maintain and use production query logs (seed 002)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import click
from pydantic import BaseModel, ConfigDict, Field, StrictInt, StrictStr

from memgauge import api
from memgauge._util.files import atomic_write_text
from memgauge._util.jsonout import dumps_strict
from memgauge.data.jsonio import read_records
from memgauge.data.models import Memory
from memgauge.errors import DataError, MemgaugeError, Problem, SubjectError, UsageError
from memgauge.store.querylog import (
    annotation_pool,
    apply_retention,
    bootstrap_judgments,
    harvest,
    import_annotations,
    unknown_query_ids,
)

__all__ = ["logs"]


def _existing(_ctx: click.Context, _param: click.Parameter, value: str) -> api.StoreURL:
    return api.existing_store(value)


#: the store the logs are in: a path, sqlite:///PATH or postgresql://... (it must exist)
db_argument = click.argument("db", metavar="STORE", callback=_existing)


@click.group()
def logs() -> None:
    """Production query logs written by `memgauge.online.querylog.QueryLog`."""


@logs.command()
@db_argument
@click.option(
    "--archive", "archive_dir", type=click.Path(file_okay=False, path_type=Path), required=True
)
def retain(db: api.StoreURL, archive_dir: Path) -> None:
    """Apply the retention policy: queries and feedback 90 days (queries archived to JSON
    lines first), shadow runs 30 days."""
    click.echo(dumps_strict(apply_retention(db, archive_dir)))


@logs.command()
@db_argument
def judgments(db: api.StoreURL) -> None:
    """Turn logged feedback into graded judgments (validated useful 3, selected 2, shown but
    never selected 1, validated not useful 0)."""
    click.echo(dumps_strict(bootstrap_judgments(db)))


@logs.command("harvest")
@db_argument
@click.option("-n", "n", type=click.IntRange(1), default=100, show_default=True)
@click.option("--seed", type=int, default=0, show_default=True)
def harvest_cmd(db: api.StoreURL, n: int, seed: int) -> None:
    """Pick up to N logged queries for the golden set: deduplicated, stratified by intent and
    category, marked as eval corpus."""
    picked = harvest(db, n, seed=seed)
    click.echo(dumps_strict({"harvested": len(picked)}))


@logs.command()
@db_argument
@click.option("--out", "out_path", type=click.Path(dir_okay=False, path_type=Path), required=True)
@click.option("-k", "k", type=click.IntRange(1, 100), default=20, show_default=True)
def annotate(db: api.StoreURL, out_path: Path, k: int) -> None:
    """Write the harvested queries with their pooled top-K results for people to grade 0-3
    (fill in each `grade`, then `memgauge logs import-annotations`)."""
    pool = annotation_pool(db, k=k)
    atomic_write_text(out_path, "".join(json.dumps(p) + "\n" for p in pool))
    click.echo(
        dumps_strict({"queries": len(pool), "candidates": sum(len(p["candidates"]) for p in pool)})
    )


class GradedCandidate(BaseModel):
    """One pooled memory and its grade (None: not graded, skipped)."""

    model_config = ConfigDict(extra="allow")

    memory_id: StrictStr | StrictInt
    grade: Annotated[StrictInt, Field(ge=0, le=3)] | None = None


class GradedQuery(BaseModel):
    """One query of an annotation file, as `memgauge logs annotate` wrote it."""

    model_config = ConfigDict(extra="allow")

    query_id: StrictStr
    candidates: list[GradedCandidate]


@logs.command("import-annotations")
@db_argument
@click.argument("graded", type=click.Path(exists=True, dir_okay=False, path_type=Path))
def import_annotations_cmd(db: api.StoreURL, graded: Path) -> None:
    """Store the grades (integers 0-3) of an annotation file as manual judgments."""
    records = read_records(graded, GradedQuery)
    _refuse_repeated_grades(graded, records)
    unknown = unknown_query_ids(db, [r.query_id for r in records])
    if unknown:
        where = [i + 1 for i, r in enumerate(records) if r.query_id in unknown]
        raise UsageError(
            f"{graded}: record {where[0]}: query_id {sorted(unknown)[0]!r} is not a logged query"
            f" in {db} ({len(unknown)} unknown); annotate the pool `memgauge logs annotate` wrote"
            " for this database"
        )
    n = import_annotations(db, [r.model_dump() for r in records])
    click.echo(dumps_strict({"judgments": n}))


def _refuse_repeated_grades(graded: Path, records: list[GradedQuery]) -> None:
    """A (query, memory) graded twice in one file: the store would keep whichever came last."""
    seen: dict[tuple[str, str], int] = {}
    problems = []
    for i, record in enumerate(records, 1):
        for c in record.candidates:
            if c.grade is None:
                continue
            key = (record.query_id, str(c.memory_id))
            if key in seen:
                problems.append(
                    Problem(
                        str(graded),
                        None,
                        f"record {i}",
                        f"memory {key[1]!r} of query {key[0]!r} is graded again (first in record"
                        f" {seen[key]}); keep one grade",
                    )
                )
            seen.setdefault(key, i)
    if problems:
        raise DataError(problems)


@logs.command("re-search")
@db_argument
@click.option("--threshold", type=click.FloatRange(0, 1), default=0.8, show_default=True)
@click.option(
    "--window",
    "window_s",
    type=click.FloatRange(0),
    default=300.0,
    show_default=True,
    help="Seconds.",
)
def re_search(db: api.StoreURL, threshold: float, window_s: float) -> None:
    """Record re-searches: a query followed in its session, within the window, by a similar one
    (MiniLM cosine at or above the threshold)."""
    from memgauge.embed import load_embedder
    from memgauge.online.harvest import detect_re_searches

    added = detect_re_searches(db, load_embedder("minilm"), threshold=threshold, window_s=window_s)
    click.echo(dumps_strict({"re_searches": added}))


@logs.command("export")
@db_argument
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path), required=True)
@click.option(
    "--memories",
    "memories_file",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="The memory system's memories (JSONL of Memory) to include.",
)
@click.option(
    "--dump-from",
    "dump_from",
    default=None,
    metavar="SYSTEM",
    help="Take the memories from this system's dump (any `memgauge evaluate -s` value, e.g."
    " http://127.0.0.1:8080 or a spec file); it is only read.",
)
def export_cmd(
    db: api.StoreURL, out_dir: Path, memories_file: Path | None, dump_from: str | None
) -> None:
    """Write the golden set (harvested queries, best judgments) as a retrieval dataset in OUT.
    With --memories or --dump-from it is complete: `memgauge evaluate OUT -s SYSTEM` scores
    configurations on it offline, and `--no-ingest` scores the live system as it stands."""
    from memgauge.online.harvest import export_golden_set

    if memories_file is not None and dump_from is not None:
        raise UsageError("give --memories or --dump-from, not both")
    memories = None
    if memories_file is not None:
        memories = read_records(memories_file, Memory)
    elif dump_from is not None:
        memories = _dump(dump_from)
    counts = export_golden_set(db, out_dir, memories)
    click.echo(dumps_strict({**counts, "dataset": str(out_dir)}))


def _dump(system: str) -> list[Memory]:
    from memgauge.api import one_spec
    from memgauge.subjects.specs import build_subject

    subject = build_subject(one_spec(system, "--dump-from"))
    try:
        memories = list(subject.dump())
    except MemgaugeError:
        raise
    except Exception as exc:
        raise SubjectError(
            f"--dump-from {system}: dump failed: {type(exc).__name__}: {exc}"
        ) from None
    finally:
        close = getattr(subject, "close", None)
        if callable(close):
            close()
    if not memories:
        raise SubjectError(
            f"--dump-from {system}: the system dumped no memories (does it implement dump?);"
            " give --memories FILE instead"
        )
    return memories
