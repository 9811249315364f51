"""`memgauge bench`: `bench SUBJECT` (or `bench search SUBJECT`), search latency and throughput
under N concurrent clients; `bench systems`, every memory system installed here benchmarked on
LoCoMo and LongMemEval-format data (`cli.bench_systems`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
from rich.table import Table

from memgauge import api
from memgauge._util.jsonout import dumps_strict
from memgauge._util.listing import counted
from memgauge.cli._common import PATH, DefaultGroup, console, json_option
from memgauge.cli._numbers import MAX_K, integer, number
from memgauge.cli._shared_options import no_ingest_option
from memgauge.cli.bench_systems import systems
from memgauge.report.escape import term
from memgauge.report.fmt import fmt_num, fmt_signed

__all__ = ["bench"]


# `bench SUBJECT ...` is `bench search SUBJECT ...`, as it was before `bench systems`
@click.group(cls=DefaultGroup, default="search")
def bench() -> None:
    """Benchmark memory systems: `bench SUBJECT`, search latency under concurrent clients;
    `bench systems`, every installed system ranked on LoCoMo / LongMemEval with CIs, tokens
    and latency.

    \b
    memgauge bench SUBJECT [-c N ...] [--duration S | --requests N]   (= bench search)
        search latency and throughput under concurrent clients
    memgauge bench systems [--locomo PATH] [--longmemeval PATH] [--dataset PATH] [-s SPEC ...]
        every memory system installed here (and any named) ranked on each dataset, with CIs,
        context tokens and latency
    """


@bench.command("search")
@click.argument("subject")
@click.option(
    "--dataset",
    type=PATH,
    default=None,
    help="Retrieval dataset whose memories are ingested and whose queries are sent "
    "(default: the built-in demo dataset).",
)
@no_ingest_option("Do not reset or fill the subject (it is already full).")
@click.option(
    "--clients",
    "-c",
    type=integer(1, api.MAX_CLIENTS),
    multiple=True,
    default=(8,),
    help="Concurrent clients; repeat to test several levels (-c 1 -c 10 -c 100).",
)
@click.option("--duration", type=number(0.1, 86_400), default=None, help="Seconds per level.")
@click.option("--requests", type=integer(1), default=None, help="Requests per level.")
@click.option("-k", "k", type=integer(1, MAX_K), default=10)
@click.option(
    "--baseline",
    default=None,
    metavar="SUBJECT",
    help="Also bench this subject (written as SUBJECT is: e.g. the same memory without its"
    " session boost) and report it against SUBJECT, level by level (seed 002's baseline"
    " against boosted).",
)
@json_option("Print the results as JSON.")
def search(
    subject: str,
    dataset: Path | None,
    no_ingest: bool,
    clients: tuple[int, ...],
    duration: float | None,
    requests: int | None,
    k: int,
    baseline: str | None,
    as_json: bool,
) -> None:
    """Drive SUBJECT's search with concurrent clients; report p50/p95/p99 latency (ms),
    throughput and errors.

    SUBJECT is written as for `memgauge evaluate --system`: lexical, hybrid,
    python:pkg.mod:factory, http://host:port, mcp:COMMAND, subprocess:COMMAND or a spec file.
    Stops after --duration seconds (default 10) or --requests requests per level.

    The stages the subject times itself get their own percentiles, checked against seed 002's
    component targets (p95: boost < 10 ms, causal < 20 ms, hook < 5 ms). With --baseline, both
    are benched and reported side by side.
    """
    if duration is not None and requests is not None:
        raise click.UsageError("give --duration or --requests, not both")
    if duration is None and requests is None:
        duration = 10.0
    ds = api.load_dataset(dataset) if dataset else api.demo_dataset()
    if not ds.queries:
        raise click.UsageError(f"{dataset} has no queries to send")
    out = console(stderr=as_json)

    def run(which: str) -> list[tuple[str, api.LoadResult]]:
        return api.bench_search(
            which,
            ds,
            clients=clients,
            k=k,
            duration=duration,
            requests=requests,
            ingest=not no_ingest,
            on_level=lambda label, n: out.print(f"{label}: {counted(n, 'client')} ..."),
        )

    base_levels = run(baseline) if baseline is not None else []
    levels = run(subject)
    results: list[dict[str, object]] = [
        {"subject": label, **res.as_dict()} for label, res in levels
    ]
    versus = api.bench_versus(base_levels, levels) if baseline is not None else []
    if as_json:
        if baseline is None:
            click.echo(dumps_strict(results, sort_keys=True))
            return
        based = [{"subject": label, **res.as_dict()} for label, res in base_levels]
        doc = {"baseline": based, "boosted": results, "versus_baseline": versus}
        click.echo(dumps_strict(doc, sort_keys=True))
        return
    every = [*base_levels, *levels]
    out.print(_table(every))
    for label, res in every:
        for sample in res.error_samples:
            out.print(term(f"{label} error:", "red"), sample)
    out.print(_targets_table(every))
    if versus:
        out.print(_versus_table(versus))


def _table(levels: list[tuple[str, api.LoadResult]]) -> Table:
    table = Table(
        title="Search latency under load (ms, as the client sees it)", title_justify="left"
    )
    table.add_column("subject")
    for col in ("clients", "requests", "errors", "req/s", "p50", "p95", "p99", "max"):
        table.add_column(col, justify="right")
    table.add_column("note")
    for label, res in levels:
        table.add_row(
            label,
            str(res.clients),
            str(res.requests),
            str(res.errors),
            f"{res.throughput:.0f}",
            fmt_num(res.p50, 2),
            fmt_num(res.p95, 2),
            fmt_num(res.p99, 2),
            fmt_num(res.max, 2),
            "one call at a time (not thread-safe)" if res.serialized else "",
        )
    return table


def _targets_table(levels: list[tuple[str, api.LoadResult]]) -> Table:
    table = Table(
        title="Component latency targets (seed 002: p95 of the stages the subject timed)",
        title_justify="left",
    )
    for col in ("subject", "clients", "component", "p95 ms", "target", "status"):
        table.add_column(col, justify="right" if col in ("clients", "p95 ms") else "left")
    for label, res in levels:
        for t in res.targets:
            status = t["status"] if t["note"] is None else f"{t['status']}: {t['note']}"
            table.add_row(
                label,
                str(res.clients),
                t["component"],
                fmt_num(t["p95_ms"], 2),
                f"< {t['target_p95_ms']:g} ms",
                status,
            )
    return table


def _versus_table(rows: list[dict[str, Any]]) -> Table:
    table = Table(
        title="Baseline against boosted (ms, as the client sees it)", title_justify="left"
    )
    for col in (
        "clients",
        "baseline",
        "boosted",
        "p50 base / boosted",
        "p95 base / boosted",
        "p95 change",
        "req/s base / boosted",
    ):
        table.add_column(col, justify="left" if col in ("baseline", "boosted") else "right")
    for r in rows:
        p50, p95, tput = r["p50_ms"], r["p95_ms"], r["throughput"]
        change = r["p95_change_ms"]
        share = r["p95_change"]
        table.add_row(
            str(r["clients"]),
            str(r["baseline"]),
            str(r["boosted"]),
            f"{fmt_num(p50[0], 2)} / {fmt_num(p50[1], 2)}",
            f"{fmt_num(p95[0], 2)} / {fmt_num(p95[1], 2)}",
            "n/a"
            if change is None
            else fmt_signed(change, 2) + ("" if share is None else f" ({share:+z.0%})"),
            f"{tput[0]:.0f} / {tput[1]:.0f}",
        )
    return table


bench.add_command(systems)
