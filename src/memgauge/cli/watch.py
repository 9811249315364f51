"""`memgauge watch`: evaluate new query-log searches continuously and alert through a webhook
when the gate's rule fires (`memgauge.api._watch`)."""

from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import click

from memgauge import api
from memgauge._util.jsonout import dumps_strict
from memgauge.cli._common import FILE, db_argument, json_option
from memgauge.cli._numbers import COUNT_MAX, integer
from memgauge.cli._shared_options import (
    by_option,
    drop_option,
    min_samples_option,
    seconds_option,
    share_option,
    window_option,
)

__all__ = ["watch"]


def _line(p: api.WatchPass) -> str:
    head = (
        f"rows {p.cursor[0] + 1}-{p.cursor[1]}: " if p.read else "no new rows: "
    ) + f"{p.read} read, {p.matched} matched, {p.evaluated} evaluated; {p.status}"
    parts = [head]
    for c in p.checks:
        value = "n/a" if c["value"] is None else f"{c['value']:.3f}"
        parts.append(f"  {c['measure']} {value} (n={c['n']}): {c['note']}")
    if p.alerts or p.delivered or p.undelivered:
        parts.append(
            f"  alerts: {len(p.alerts)} fired, {p.delivered} delivered, {p.undelivered} not"
            " delivered (kept in the state, sent again next pass)"
        )
    parts.extend(
        f"  webhook failed: {f['webhook']} {f['measure']}: {f['error']}" for f in p.failures
    )
    return "\n".join(parts)


@click.command()
@db_argument
@click.option("--webhook", default=None, metavar="URL", help="POST each alert here as JSON.")
@click.option("--once", is_flag=True, help="Run one pass and exit (for cron and tests).")
@seconds_option("--interval", default=60.0, about="Seconds between passes.")
@click.option(
    "--passes",
    type=integer(1),
    default=None,
    help="Stop after this many passes (default: run until interrupted).",
)
@click.option(
    "--state",
    "state_path",
    type=FILE,
    default=None,
    help="The state file (cursor, baseline, undelivered alerts). Default: one per store and"
    " configuration under MEMGAUGE_HOME/watch.",
)
@share_option(
    "--sample",
    "rate",
    about="Share of the matching searches evaluated, picked by a hash of the query id.",
)
@click.option(
    "--intent", "intents", multiple=True, help="Only searches of this intent (repeatable)."
)
@click.option(
    "--mode", "modes", multiple=True, help="Only searches in this search mode (repeatable)."
)
@click.option(
    "--tool", "tools", multiple=True, help="Only searches served by this tool (repeatable)."
)
@click.option(
    "--category", "categories", multiple=True, help="Only this query category (repeatable)."
)
@click.option(
    "--feature", default=None, help="Only searches a shadow run of this feature flag replayed."
)
@click.option(
    "--since",
    default=None,
    metavar="TIME",
    help="Only searches logged at or after TIME (ISO 8601).",
)
@click.option(
    "--measure",
    "measures",
    multiple=True,
    type=click.Choice(["quality_proxy", "MRR@10", "selection_rate"]),
    help="A measure the rule is applied to (repeatable; default all three).",
)
@window_option("windows", COUNT_MAX)
@drop_option("an alert", zero=False)
@by_option("The gate's rule.")
@min_samples_option(1, 20, "A measure over fewer searches is shown, not decided.")
@seconds_option(
    "--settle",
    default=0.0,
    about="Seconds a search waits before it is read (its feedback can arrive first).",
)
@click.option("--batch", type=integer(1), default=10_000, help="Rows read per pass.")
@click.option("--retries", type=integer(0, 20), default=3, help="Retries of a failed POST.")
@seconds_option(
    "--retry-delay", default=1.0, about="The first backoff in seconds (doubled per retry)."
)
@json_option("Print each pass as one line of JSON.")
def watch(
    db: api.StoreURL,
    once: bool,
    interval: float,
    passes: int | None,
    state_path: Path | None,
    intents: tuple[str, ...],
    modes: tuple[str, ...],
    tools: tuple[str, ...],
    categories: tuple[str, ...],
    feature: str | None,
    since: str | None,
    measures: tuple[str, ...],
    by: str,
    as_json: bool,
    **given: Any,
) -> None:
    """Evaluate the searches logged into STORE's query log since the last pass, and alert
    through a webhook when the gate's rule fires. STORE left out: MEMGAUGE_STORE, else
    MEMGAUGE_HOME/results.db.

    Each pass reads the searches after the state's cursor, keeps those that pass the filters
    (--intent, --mode, --tool, --category, --feature, --since) and fall in the --sample,
    computes quality_proxy, MRR@10 (judged searches) and selection_rate with their 95% CIs, and
    applies the gate's rule to each: a drop of --threshold or more against the mean of the
    measure in the last --window windows that did not fire. When it fires, one JSON alert per
    measure (rule, measure, value, CI, baseline, threshold, window, sample count, example query
    ids) is POSTed to --webhook, retried with backoff; one still failing is recorded in the
    state and sent again next pass. The loop never stops on a failed pass; Ctrl-C exits 130.

    Exit (with --once or --passes): 0 the rule did not fire, 1 it fired (alerts delivered),
    3 an alert could not be delivered, 2 bad options or an unreadable store or state file.
    """
    filters = api.WatchFilter(
        intents=intents,
        modes=modes,
        tools=tools,
        categories=categories,
        feature=feature,
        since=None if since is None else api.WatchFilter.time(since),
    )
    # given: --webhook, --sample (rate), --window, --threshold, --min-samples, --batch,
    # --settle, --retries and --retry-delay, as WatchConfig names them
    cfg = api.WatchConfig(
        store=db,
        state=Path(),
        filters=filters,
        measures=measures or ("quality_proxy", "MRR@10", "selection_rate"),
        by="ci-upper" if by == "ci-upper" else "point",
        **given,
    )
    cfg = replace(cfg, state=state_path or cfg.default_state())
    # a state file of another configuration is bad input (2) before any pass, loop or not
    api.WatchState.load(cfg.state, cfg.key())
    limit = 1 if once else passes
    done, worst = 0, 0
    while True:
        result = _one_pass(cfg, looping=limit is None)
        if result is not None:
            click.echo(dumps_strict(result.as_dict()) if as_json else _line(result))
            worst = max(worst, result.exit_code, key=_rank)
        done += 1
        if limit is not None and done >= limit:
            break
        time.sleep(interval)
    if worst:
        raise click.exceptions.Exit(worst)


def _rank(code: int) -> int:
    """The README's precedence of exit codes: 2 > 3 > 4 > 1 > 0."""
    return {0: 0, 1: 1, 4: 2, 3: 3, 2: 4}.get(code, 0)


def _one_pass(cfg: api.WatchConfig, *, looping: bool) -> api.WatchPass | None:
    """One pass; in the endless loop a failed pass (a locked, unreachable or broken store, or
    anything else a pass raises but an interrupt) is reported with its kind and the loop goes
    on, while with --once or --passes it ends the command with its code."""
    if not looping:
        return api.watch_pass(cfg)
    try:
        return api.watch_pass(cfg)
    except Exception as exc:  # a watch outlives any one pass: the next may succeed
        click.echo(
            f"pass failed (the next pass tries again): {type(exc).__name__}: {exc}", err=True
        )
        return None
