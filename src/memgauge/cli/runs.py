"""`memgauge runs list|show|watch|export|compare`: look at suite runs in the store, from any
terminal, while they run or after."""

from __future__ import annotations

import csv
import io
import sys
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import click
from rich import box
from rich.console import Group
from rich.live import Live
from rich.table import Table
from rich.text import Text

from memgauge import api
from memgauge._util.jsonout import dumps_strict
from memgauge._util.listing import counted
from memgauge.cli._common import (
    EXISTING_FILE,
    FILE,
    console,
    json_option,
    open_suite_store,
    store_option,
)
from memgauge.cli._compare import (
    check_json,
    compare_options,
    headline_measures,
    print_systems,
    systems_options,
)
from memgauge.cli._numbers import integer, number
from memgauge.errors import UsageError
from memgauge.report import atomic_write_text
from memgauge.report.escape import csv_cell, term
from memgauge.report.item_table import flat_item, write_parquet
from memgauge.report.shapes import deltas_table
from memgauge.report.shapes_terminal import print_sections, print_shape
from memgauge.report.suite_run import (
    comparison_table,
    counts_line,
    failures_table,
    judge_notes,
    liveness,
    result_rows,
    summary_table,
)

__all__ = ["runs"]


@click.group()
def runs() -> None:
    """Suite runs in the results store: list, show, watch, export, compare, upgrade."""


@runs.command()
@store_option
def upgrade(store_path: str | None) -> None:
    """Bring the store to this memgauge's schema (what `memgauge view` and the commands that
    only read ask for when a store was written by an older version; any command that writes to
    a store does it too)."""
    applied = api.upgrade_store(store_path)
    where = api.results_store(store_path)
    if applied:
        click.echo(f"upgraded {where}: applied {', '.join(applied)}")
    else:
        click.echo(f"{where} is up to date")


@runs.command("list")
@store_option
@click.option("--suite", default=None, help="Only runs of this suite.")
@click.option("--limit", type=integer(1), default=20)
@json_option("Print JSON.")
def list_(store_path: str | None, suite: str | None, limit: int, as_json: bool) -> None:
    """The newest suite runs first, with what started each (kind: suite for `memgauge run`,
    else the command: evaluate, demo, extraction, operations, audit, bench-systems; optimize
    for the candidate runs of `memgauge optimize`)."""
    with open_suite_store(store_path) as store:
        rows = store.list_runs(limit, suite)
        for row in rows:
            if row["status"] == "running" and (run := store.get_run(row["run_id"])):
                row["warning"] = liveness(run.model_dump())
    if as_json:
        click.echo(dumps_strict(rows, sort_keys=True))
        return
    # 80 columns hold it: the run id whole on one line, to be copied (it starts with the time
    # the run was created, UTC, which --json gives in full), a status whole, no inner rules,
    # items done of all in one column; what still does not fit folds (cli._common.console)
    table = Table(
        title="Suite runs",
        title_justify="left",
        box=box.SIMPLE_HEAD,
        pad_edge=False,
        collapse_padding=True,
    )
    table.add_column(
        "run", no_wrap=True, min_width=max((len(r["run_id"]) for r in rows), default=3)
    )
    table.add_column("suite")
    table.add_column("kind")
    table.add_column("status", no_wrap=True)
    table.add_column("done", justify="right", no_wrap=True)
    table.add_column("failed", justify="right")
    for r in rows:
        # the owner's liveness: a dead process on this host, or silence from another host
        status = r["status"] + (" (owner gone?)" if r.get("warning") else "")
        done = f"{r['n_completed']}/{r['n_items']}"
        table.add_row(r["run_id"], r["suite"], r["kind"], status, done, str(r["n_failed"]))
    console().print(table if rows else "no suite runs yet; start one with `memgauge run SUITE`")


def _load(store: api.SuiteRunStore, given: str) -> dict[str, Any]:
    """The run as plain data for display, with its summary (for a run still going, or killed,
    the summary of the items recorded so far, and the spend recorded so far)."""
    run_id = api.resolve_run_id(store, given)
    run = store.get_run(run_id)
    assert run is not None
    view = run.model_dump()
    if run.summary is None or run.status not in api.ENDED:
        partial = api.interim_summary(run, store.item_records(run_id), store.usage(run_id))
        view["summary"] = partial.model_dump()
    return view


def _note_unended(store: api.SuiteRunStore, ids: Sequence[str]) -> None:
    """Say on stderr which of the runs compared has not completed (`api.unended_note`)."""
    for run_id in ids:
        run = store.get_run(run_id, summary=False)
        said = None if run is None else api.unended_note(run, store)
        if said is not None:
            click.echo(f"note: {said}", err=True)


def _state(run: Mapping[str, Any]) -> Text:
    line = term(
        f"run {run['run_id']} of suite {run['suite_name']!r}: {run['status']}; "
        f"{counts_line(run['summary'])}"
    )
    warning = liveness(run)
    if warning:
        line.append(f"\nwarning: {warning}", style="yellow")
    if run.get("reason"):
        line.append(f"\nreason: {run['reason']}")
    return line


@runs.command()
@click.argument("run_id")
@store_option
@json_option("Print the run as one JSON object.")
@click.option("--failures", "n_failures", type=integer(0), default=20)
def show(run_id: str, store_path: str | None, as_json: bool, n_failures: int) -> None:
    """A run's status, provenance, results and failures."""
    with open_suite_store(store_path) as store:
        run = _load(store, run_id)
        failures = store.failures(run["run_id"], limit=n_failures)
        subjects = store.subjects(run["run_id"])
        tasks = store.tasks(run["run_id"])
    if as_json:
        out = {k: v for k, v in run.items() if k != "suite"}
        out["warning"] = liveness(run)
        out["results"] = result_rows(run["summary"])
        out["subjects"] = subjects
        out["tasks"] = [{k: v for k, v in t.items() if k != "spec"} for t in tasks]
        out["failures"] = failures
        out["pipeline"] = _pipelines(run)
        click.echo(dumps_strict(out, sort_keys=True))
        return
    con = console()
    con.print(_state(run))
    prov = run["provenance"]
    con.print(
        f"memgauge {prov['memgauge_version']}, Python {prov['python']}, seed {prov['seed']}, "
        f"suite sha256 {run['suite_sha256'][:12]}"
        + (
            f", suite git commit {prov['suite_git_commit'][:12]}"
            if prov.get("suite_git_commit")
            else ""
        )
    )
    for t in tasks:
        digest = f", dataset sha256 {t['dataset_sha256'][:12]}" if t["dataset_sha256"] else ""
        con.print(f"task {t['task']} ({t['kind']}): {_task_items(t)}{digest}")
    for task, p in _pipelines(run).items():
        feature = f", feature {p['feature_id']}" if p.get("feature_id") else ""
        con.print(
            f"task {task}: run type {p['run_type']}{feature}, sampling rate"
            f" {p['sampling_rate']:g} ({p['n_asked']} of {p['n_judged']} judged queries asked)",
            highlight=False,
        )
    con.print(summary_table(run["summary"]))
    for line in judge_notes(run["summary"]):
        con.print(line)
    if run["summary"]:
        print_sections(con, run["summary"])
    if failures:
        con.print(failures_table(failures, run["summary"]["n_failed"]))


def _task_items(task: Mapping[str, Any]) -> str:
    """The task's items, the dataset's; with `repeat: N` how often each was asked, and the
    item-repeats that makes (what the run's progress counts, per subject)."""
    n, times = task["n_items"], (task["spec"] or {}).get("repeat") or 1
    items = f"{n} item" if n == 1 else f"{n} items"
    return items if times == 1 else f"{items} x {times} repeats ({n * times} item-repeats)"


def _pipelines(run: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """Per retrieval task, seed 002's EvalPipelineConfig the run had (sampling rate, feature,
    run type), where `evaluate` was given one."""
    # here, not at the top: the typed facts import the aggregates, which `runs list` need not
    from memgauge.report.retrieval import pipelines

    return pipelines((run.get("summary") or {}).get("aggregates") or [])


@runs.command()
@click.argument("run_id")
@store_option
@click.option("--interval", type=number(0.1, 3600), default=1.0)
def watch(run_id: str, store_path: str | None, interval: float) -> None:
    """Follow a run from another terminal until it ends.

    It stops early only when the run's owner is gone: its process died on this host, or, on
    another host, its heartbeat went silent. A live owner on this host is followed to the end,
    however long an item takes."""
    with open_suite_store(store_path) as store:
        run = _load(store, run_id)
        con = console()
        with Live(console=con, auto_refresh=False, transient=False) as live:
            while True:
                live.update(Group(_state(run), summary_table(run["summary"])), refresh=True)
                if run["status"] in api.ENDED or liveness(run):
                    break
                time.sleep(interval)
                run = _load(store, run["run_id"])


def _csv(records: Iterable[Mapping[str, Any]]) -> str:
    """One row per item; every text cell (headers included: evaluator names are the user's)
    neutralized against formula injection (`report.escape.csv_cell`)."""
    flat = [flat_item(r) for r in records]
    columns: list[str] = []
    for row in flat:
        columns.extend(c for c in row if c not in columns)
    buf = io.StringIO()
    # RFC 4180's CRLF: with "\n" alone, Python < 3.12 leaves a bare "\r" in a cell unquoted,
    # and every reader starts a new row there
    writer = csv.writer(buf, lineterminator="\r\n")
    writer.writerow([csv_cell(c) for c in columns])
    writer.writerows([csv_cell(row.get(c)) for c in columns] for row in flat)
    return buf.getvalue()


def _jsonl(records: Iterable[Mapping[str, Any]]) -> Iterator[str]:
    for r in records:
        yield dumps_strict(r, sort_keys=True) + "\n"


@runs.command()
@click.argument("run_id")
@store_option
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["json", "jsonl", "csv", "parquet", "bundle"]),
    default="jsonl",
    help="bundle: the whole run, to `memgauge runs import` into another store or to gate"
    " against (`memgauge gate --baseline FILE`); parquet: the csv's table with typed columns"
    " (needs --out and `pip install 'memgauge[parquet]'`).",
)
@click.option("--out", type=FILE, default=None, help="Write to this file (default: stdout).")
def export(run_id: str, store_path: str | None, fmt: str, out: Path | None) -> None:
    """Every item of a run: input, expected, output, latency, scores with reasons.

    jsonl: one item per line; json: {run, items}; csv: one row per item, a column per
    evaluator (value, passed, reason), for spreadsheets: a text a spreadsheet would run as a
    formula (first `=`, `+`, `-`, `@`, a tab or CR; not a number) is written behind a `'`;
    parquet: the same table with typed columns (a missing value is null), every text as
    stored, and the run in the file's metadata; bundle: the run as it is stored (once it has
    ended: completed, failed or cancelled).
    With `repeat: N` each repeat is a row: `item_id` as stored (`ID#rR`), `source_id` the
    dataset's id and `repeat` the index (0 the first).
    """
    if fmt == "parquet" and out is None:
        raise click.UsageError("--format parquet writes a binary file: give --out FILE.parquet")
    if fmt == "bundle":
        text = dumps_strict(api.export_runs([run_id], store=store_path), sort_keys=True) + "\n"
        if out is None:
            sys.stdout.write(text)
        else:
            atomic_write_text(out, text)
            click.echo(f"wrote {out}", err=True)
        return
    with open_suite_store(store_path) as store:
        run = _load(store, run_id)
        records = api.export_items(
            store, run["run_id"], lambda note: click.echo(f"note: {note}", err=True)
        )
        if fmt == "parquet":
            assert out is not None
            n = write_parquet(records, out, run)
            click.echo(f"wrote {out} ({counted(n, 'item')})", err=True)
            return
        if fmt == "jsonl":
            chunks: Iterable[str] = _jsonl(records)
        elif fmt == "csv":
            chunks = [_csv(records)]
        else:
            meta = {k: v for k, v in run.items() if k != "suite"}
            chunks = [dumps_strict({"run": meta, "items": list(records)}, sort_keys=True) + "\n"]
        if out is None:
            for chunk in chunks:
                sys.stdout.write(chunk)
        else:
            atomic_write_text(out, "".join(chunks))
            click.echo(f"wrote {out}", err=True)


@runs.command("import")
@click.argument("bundle", type=EXISTING_FILE)
@store_option
def import_(bundle: Path, store_path: str | None) -> None:
    """Record the runs of a bundle (`memgauge runs export ID --format bundle`) in this store,
    as they were made."""
    ids = api.import_runs(bundle, store=store_path)
    click.echo(f"imported {len(ids)} run(s) into {api.results_store(store_path)}: {', '.join(ids)}")


@runs.command()
@click.argument("run_ids", nargs=-1, required=True, metavar="RUN...")
@store_option
@json_option("Print the comparison as JSON.")
@click.option(
    "--baseline",
    default=None,
    metavar="SYSTEM",
    help="The system to put first (the baseline of --pairs baseline): a subject's name when "
    "comparing one run's subjects (default order: by name).",
)
@compare_options
def compare(
    run_ids: tuple[str, ...],
    store_path: str | None,
    as_json: bool,
    baseline: str | None,
    **given: Any,
) -> None:
    """Suite runs compared item by item, with paired significance tests.

    Two runs (RUN_A RUN_B): RUN_A is the baseline; per subject, task and evaluator, B's delta
    against A (B - A) with its bootstrap CI and the test's corrected p; then the aggregates'
    measures the gate decides on (an audit's rates, tiers' pass rates, pass@k, a cost), A's and
    B's with their own CI and count, and B - A (`--json`: every one, in `measures`). One run:
    its subjects compared with each other;
    several runs, or --format markdown|latex: a table of every system's means per (task,
    evaluator), the best in bold, with superscripts naming the systems each is significantly
    better than, ready for a paper; then (but for LaTeX) each system's aggregate measures the
    gate decides on, as `runs show` gives them (`--json`: every one, in
    `aggregate_measures`)."""
    check_json(as_json, given["fmt"])
    options = systems_options(given)
    with open_suite_store(store_path) as store:
        if len(run_ids) != 2 or given["fmt"] != "table":
            ids, cmp, measures = api.compare_stored_runs(
                store, run_ids, baseline=baseline, **options
            )
            _note_unended(store, ids)
            print_systems(
                cmp,
                fmt=given["fmt"],
                digits=given["digits"],
                as_json=as_json,
                extra={"runs": ids},
                notes=[],
                measures=measures,
            )
            return
        if baseline is not None:
            raise UsageError(
                "--baseline orders a table of systems; two runs' delta table is B against A: "
                "give the baseline run first"
            )
        a, b = api.resolve_run_ids(store, run_ids)
        _note_unended(store, [a, b])
        # every option but the systems table's --pairs: two runs pair item by item
        pair_options = {k: v for k, v in options.items() if k != "pairing"}
        rows = api.compare_runs(store.item_records(a), store.item_records(b), **pair_options)
        # each run's mean as it reports it, where the row pairs every item it scored
        run_a, run_b = store.get_run(a), store.get_run(b)
        summaries = (run_a.summary if run_a else None, run_b.summary if run_b else None)
        rows = api.reported_means(rows, *summaries)
        measures = api.measure_deltas(*summaries)
    correction = api.resolve_correction(options["test"], options["family"], options["correction"])
    settings = {
        "test": options["test"],
        "correction": correction,
        "family": options["family"],
        "alpha": options["alpha"],
    }
    if as_json:
        doc = {"a": a, "b": b, "baseline": a, "rows": rows, "measures": measures, **settings}
        click.echo(dumps_strict(doc, sort_keys=True))
        return
    con = console()
    if rows:
        con.print(comparison_table(rows, a, b, **settings))
        for line in api.unpaired_notes(rows):
            con.print(line, markup=False, highlight=False)
    else:
        con.print(f"runs {a} and {b} share no subject, task and evaluator to compare")
    shown, more = headline_measures(measures)
    if shown:
        print_shape(con, deltas_table(shown, a, b))
    if more:
        con.print(more)
