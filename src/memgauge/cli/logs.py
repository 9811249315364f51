"""`memgauge logs`: maintain and use production query logs (seed 002)."""

from __future__ import annotations

from pathlib import Path

import click

from memgauge import api
from memgauge._util.jsonout import dumps_strict

__all__ = ["logs"]


def _existing(_ctx: click.Context, _param: click.Parameter, value: str) -> api.StoreURL:
    return api.require_store(value)


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
    click.echo(dumps_strict(api.apply_retention(db, archive_dir)))


@logs.command()
@db_argument
def judgments(db: api.StoreURL) -> None:
    """Turn logged feedback into graded judgments (validated useful 3, selected 2, shown but
    never selected 1, validated not useful 0)."""
    click.echo(dumps_strict(api.bootstrap_judgments(db)))


@logs.command("harvest")
@db_argument
@click.option("-n", "n", type=click.IntRange(1), default=100, show_default=True)
@click.option("--seed", type=int, default=0, show_default=True)
def harvest_cmd(db: api.StoreURL, n: int, seed: int) -> None:
    """Pick up to N logged queries for the golden set: deduplicated, stratified by intent and
    category, marked as eval corpus."""
    picked = api.harvest_queries(db, n, seed=seed)
    click.echo(dumps_strict({"harvested": len(picked)}))


@logs.command()
@db_argument
@click.option("--out", "out_path", type=click.Path(dir_okay=False, path_type=Path), required=True)
@click.option("-k", "k", type=click.IntRange(1, 100), default=20, show_default=True)
def annotate(db: api.StoreURL, out_path: Path, k: int) -> None:
    """Write the harvested queries with their pooled top-K results for people to grade 0-3
    (fill in each `grade`, then `memgauge logs import-annotations`)."""
    queries, candidates = api.write_annotation_pool(db, out_path, k=k)
    click.echo(dumps_strict({"queries": queries, "candidates": candidates}))


@logs.command("import-annotations")
@db_argument
@click.argument("graded", type=click.Path(exists=True, dir_okay=False, path_type=Path))
def import_annotations_cmd(db: api.StoreURL, graded: Path) -> None:
    """Store the grades (integers 0-3) of an annotation file as manual judgments."""
    n = api.import_graded(db, graded)
    click.echo(dumps_strict({"judgments": n}))


@logs.command("import-spans")
@click.argument("spans", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "--store",
    "store_path",
    default=None,
    metavar="STORE",
    help="The store whose query log gets the searches: a path, sqlite:///PATH or"
    " postgresql://... (default: MEMGAUGE_STORE, else MEMGAUGE_HOME/results.db; created if"
    " need be).",
)
def import_spans_cmd(spans: Path, store_path: str | None) -> None:
    """Log the searches of OpenInference retriever spans (Phoenix, OTel) into the query log.

    SPANS is an OTLP-JSON export (resourceSpans / scopeSpans / spans, attributes as key/value
    lists; one object or one per line) or flattened spans as JSON lines, as Phoenix exports
    them. A RETRIEVER span's `input.value` is the query, `retrieval.documents.{i}.document.id`
    its ranked results, `session.id` its session; other spans are skipped. Prints the counts of
    what was read, logged, skipped and dropped.
    """
    report = api.import_spans(spans, store=store_path)
    click.echo(dumps_strict({**report.counts, "notes": report.notes}))


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
    added = api.detect_re_searches(db, threshold=threshold, window_s=window_s)
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
    counts = api.export_golden_set(db, out_dir, memories_file=memories_file, dump_from=dump_from)
    click.echo(dumps_strict({**counts, "dataset": str(out_dir)}))
