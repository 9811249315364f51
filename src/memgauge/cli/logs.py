"""`memgauge logs`: maintain and use production query logs (seed 002)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from memgauge import api
from memgauge._util.jsonout import dumps_strict
from memgauge._util.listing import counted
from memgauge.cli._common import (
    EXISTING_FILE,
    FILE,
    OUT_DIR,
    Command,
    db_argument,
    db_required_argument,
    distinct_outputs,
    json_option,
    refuse_together,
    store_option_with,
)
from memgauge.cli._numbers import SEED, integer, number
from memgauge.cli._shared_options import fraction_option, seconds_option

__all__ = ["logs"]


def memories_option(about: str, path: click.Path = EXISTING_FILE) -> Callable[[Command], Command]:
    """`--memories FILE` (the command's `memories_file`): a memory system's memories, JSONL of
    Memory; `about` its help."""
    return click.option("--memories", "memories_file", type=path, default=None, help=about)


def dump_from_option(about: str) -> Callable[[Command], Command]:
    """`--dump-from SYSTEM`: the memories read from that system's dump instead; `about` its
    help."""
    return click.option("--dump-from", "dump_from", default=None, metavar="SYSTEM", help=about)


@click.group()
def logs() -> None:
    """Production query logs written by `memgauge.online.querylog.QueryLog`.

    STORE is the store the log is in: a path, sqlite:///PATH or postgresql://...; left out,
    MEMGAUGE_STORE, else MEMGAUGE_HOME/results.db (as every command's --store)."""


@logs.command()
@db_argument
@click.option("--archive", "archive_dir", type=OUT_DIR, required=True)
def retain(db: api.StoreURL, archive_dir: Path) -> None:
    """Apply the retention policy: queries, feedback and agent outputs 90 days (queries
    archived to JSON lines first), shadow runs 30 days."""
    click.echo(dumps_strict(api.apply_retention(db, archive_dir)))


@logs.command()
@db_argument
def judgments(db: api.StoreURL) -> None:
    """Turn logged feedback into graded judgments (validated useful 3, selected 2, shown but
    never selected 1, validated not useful 0)."""
    click.echo(dumps_strict(api.bootstrap_judgments(db)))


@logs.command("harvest")
@db_argument
@click.option("-n", "n", type=integer(1), default=100)
@click.option("--seed", type=SEED, default=0)
def harvest_cmd(db: api.StoreURL, n: int, seed: int) -> None:
    """Pick up to N logged queries for the golden set: deduplicated, stratified by intent and
    category, marked as eval corpus."""
    picked = api.harvest_queries(db, n, seed=seed)
    click.echo(dumps_strict({"harvested": len(picked)}))


@logs.command()
@db_argument
@click.option("--out", "out_path", type=FILE, required=True)
@click.option("-k", "k", type=integer(1, 100), default=20)
@click.option(
    "--system",
    "system",
    default=None,
    metavar="SYSTEM",
    help="Search each query again on this system (any `memgauge evaluate -s` value); its top K"
    " lead the candidates, with each memory's text.",
)
@memories_option(
    "The memories (JSONL of Memory): their texts for the annotator; with --system, the"
    " system is filled with them first."
)
def annotate(db: api.StoreURL, out_path: Path, **given: Any) -> None:
    """Write the harvested queries with their pooled top-K results for people to grade 0-3
    (fill in each `grade`, then `memgauge logs import-annotations`). With --system the search
    is re-run there and each candidate carries its memory's text."""
    # given: -k, --system and --memories, as write_annotation_pool names them
    queries, candidates = api.write_annotation_pool(db, out_path, **given)
    click.echo(dumps_strict({"queries": queries, "candidates": candidates}))


@logs.command("import-annotations")
@db_required_argument
@click.argument("graded", type=EXISTING_FILE)
def import_annotations_cmd(db: api.StoreURL, graded: Path) -> None:
    """Store the grades (integers 0-3) of an annotation file as manual judgments."""
    n = api.import_graded(db, graded)
    click.echo(dumps_strict({"judgments": n}))


@logs.command("import-spans")
@click.argument("spans", type=EXISTING_FILE)
@store_option_with(
    "The store whose query log gets the searches: a path, sqlite:///PATH or"
    " postgresql://... (default: MEMGAUGE_STORE, else MEMGAUGE_HOME/results.db; created if"
    " need be)."
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


@logs.command("import-traces")
@click.argument("traces", type=EXISTING_FILE)
@click.option(
    "--log",
    "log",
    is_flag=True,
    help="Also log the traces' searches into the query log, as `import-spans` does (of --store,"
    " else the default store, where the traces are kept too).",
)
@store_option_with(
    "Keep the traces whole in this store (`memgauge view`'s Traces page): a path,"
    " sqlite:///PATH or postgresql://... (with --log alone: MEMGAUGE_STORE, else"
    " MEMGAUGE_HOME/results.db; created if need be). A trace imported again replaces its"
    " earlier copy."
)
@click.option(
    "--out",
    "out_path",
    type=FILE,
    default=None,
    help="Write the traces (spans, searches, tool calls, model calls, answers, sessions) here"
    " as JSON.",
)
@json_option("Print the report as JSON.")
def import_traces_cmd(
    traces: Path, log: bool, store_path: str | None, out_path: Path | None, as_json: bool
) -> None:
    """Read whole traces: OpenInference spans (an OTLP-JSON export, or Phoenix's span export)
    or LangSmith runs exported as JSON (run trees), grouped into traces and sessions with their
    searches, tool calls, model calls (model, tokens) and final answers.

    Prints the spans per kind, what the traces hold, and what was partial or dropped, per
    reason (a span whose parent is missing, a trace without a root or an answer, a retriever
    span whose search cannot be read...). A file that cannot be read exits 2 naming the file,
    line and field, and writes nothing. LangSmith runs tagged memory_extraction are read by
    `memgauge extraction --outputs FILE` as production trace lines.

    With --store (or --log) each trace is kept whole in the results store, its spans with
    their searches and hits, tool calls and model calls (texts past 8,192 characters cut);
    `memgauge view` shows them under Traces.
    """
    distinct_outputs({"--out": out_path})
    keep = log or store_path is not None
    _, report = api.import_traces(traces, log=log, keep=keep, store=store_path, out=out_path)
    if as_json:
        click.echo(dumps_strict(report.as_dict()))
        return
    counts = report.counts
    kinds = {k: v for k, v in counts.items() if k.endswith("_spans") and k.isidentifier()}
    held = ("traces", "sessions", "retrievals", "tool_calls", "llm_calls", "answers")
    tokens = ("prompt_tokens", "completion_tokens", "queries_logged", "extraction_lines")
    kept = ("traces_stored", "traces_replaced", "span_texts_cut")
    shown = {"spans", "documents", "otlp_exports", *kinds, *held, *tokens, *kept}
    click.echo(f"{traces} ({report.format}): {counted(counts.get('spans', 0), 'span')}")
    click.echo(
        "  by kind: " + ", ".join(f"{k.removesuffix('_spans')} {v}" for k, v in kinds.items())
    )
    click.echo("  " + ", ".join(f"{k} {counts.get(k, 0)}" for k in held))
    for key in (*tokens, *kept):
        if key in counts:
            click.echo(f"  {key}: {counts[key]}")
    partial = {k: v for k, v in counts.items() if k not in shown}
    if partial:
        click.echo("  partial or dropped, per reason:")
        for key, n in sorted(partial.items()):
            click.echo(f"    {key}: {n}")
    for note in report.notes:
        click.echo(f"  note: {note}")


@logs.command("re-search")
@db_argument
@fraction_option("--threshold", default=0.8, about=None)
@seconds_option("--window", "window_s", default=300.0, about="Seconds.")
def re_search(db: api.StoreURL, threshold: float, window_s: float) -> None:
    """Record re-searches: a query followed in its session, within the window, by a similar one
    (MiniLM cosine at or above the threshold)."""
    added = api.detect_re_searches(db, threshold=threshold, window_s=window_s)
    click.echo(dumps_strict({"re_searches": added}))


@logs.command("export")
@db_argument
@click.option("--out", "out_dir", type=OUT_DIR, required=True)
@memories_option("The memory system's memories (JSONL of Memory) to include.", FILE)
@dump_from_option(
    "Take the memories from this system's dump (any `memgauge evaluate -s` value, e.g."
    " http://127.0.0.1:8080 or a spec file); it is only read."
)
def export_cmd(
    db: api.StoreURL, out_dir: Path, memories_file: Path | None, dump_from: str | None
) -> None:
    """Write the golden set (harvested queries, best judgments) as a retrieval dataset in OUT.
    With --memories or --dump-from it is complete: `memgauge evaluate OUT -s SYSTEM` scores
    configurations on it offline, and `--no-ingest` scores the live system as it stands."""
    counts = api.export_golden_set(db, out_dir, memories_file=memories_file, dump_from=dump_from)
    click.echo(dumps_strict({**counts, "dataset": str(out_dir)}))


# --- sessions and outcomes (seed 002 sections 5.3, 5.4) ------------------------------------


@logs.command("sessions")
@db_argument
@click.option("--session", "sessions", multiple=True, help="Only this session (repeatable).")
def sessions_cmd(db: api.StoreURL, sessions: tuple[str, ...]) -> None:
    """Session summaries: searches, memories accessed, average MRR of the judged searches,
    re-search rate, duration, turns, outcomes and the memories still to validate; and the
    session-length signal (turns against searches per turn)."""
    click.echo(dumps_strict(api.session_report(db, sessions)))


@logs.command("outcome")
@db_argument
@click.option("--session", required=True, help="The session the task ran in.")
@click.option("--task", "task_id", default=None, help="The task's id.")
# two flags, not one --success/--failure: click lets the last of a pair win, and a task
# said to have both succeeded and failed is recorded as neither
@click.option("--success", is_flag=True, help="The task succeeded.")
@click.option("--failure", is_flag=True, help="The task failed.")
@click.option("--score", type=number(), default=None, help="Its score.")
def outcome_cmd(
    db: api.StoreURL,
    session: str,
    task_id: str | None,
    success: bool,
    failure: bool,
    score: float | None,
) -> None:
    """Record a task's outcome, linked to its session (what `QueryLog.outcome` does)."""
    if success and failure:
        refuse_together("--success", "--failure", "a task either succeeded or failed")
    said = True if success else False if failure else None
    api.record_outcome(db, session, task_id=task_id, success=said, score=score)
    click.echo(dumps_strict({"session": session, "task": task_id, "recorded": 1}))


@logs.command("outcomes")
@db_argument
def outcomes_cmd(db: api.StoreURL) -> None:
    """How retrieval quality goes with task outcomes: per session, the average MRR of its
    judged searches against its outcome (correlation with a 95% CI and n; n/a with too few
    sessions)."""
    click.echo(dumps_strict(api.outcome_correlation(db)))


@logs.command("validate")
@db_argument
@click.option("--session", required=True, help="The session whose task ended.")
@click.option("--task", "task_id", default=None, help="The task's id.")
@click.option("--useful", multiple=True, metavar="MEMORY", help="A memory that helped.")
@click.option(
    "--not-useful", "not_useful", multiple=True, metavar="MEMORY", help="One that did not."
)
def validate_cmd(db: api.StoreURL, session: str, **given: Any) -> None:
    """Batch validation after a task: `memory_validate` each memory named (`memgauge logs
    sessions` lists the accessed ones as `to_validate`)."""
    # given: --task, --useful and --not-useful, as batch_validate names them
    done = api.batch_validate(db, session, **given)
    click.echo(dumps_strict(done))


@logs.command("signals")
@db_argument
@memories_option("The memories (JSONL of Memory), whose texts copy/reference looks for.")
@dump_from_option("Or this system's dump.")
def signals_cmd(db: api.StoreURL, memories_file: Path | None, dump_from: str | None) -> None:
    """Derive implicit feedback from the logs: scroll-past (results above the deepest one the
    agent selected, skipped) and copy/reference (an agent output holding a verbatim span of a
    memory its session was shown; needs the memories' texts)."""
    click.echo(
        dumps_strict(api.derive_log_signals(db, memories_file=memories_file, dump_from=dump_from))
    )


@logs.command("channels")
@db_argument
@click.option("-k", "k", type=integer(1, 100), default=10)
def channels_cmd(db: api.StoreURL, k: int) -> None:
    """Channel contribution from the logs: per channel, the share of the top-K results it
    surfaced, and surfaced alone."""
    click.echo(dumps_strict(api.log_channel_contribution(db, k=k)))
