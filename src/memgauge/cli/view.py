"""`memgauge view` (a local web viewer of the results store) and `memgauge report RUN_ID --out
FILE.html` (one run as a self-contained HTML file, drawn by the same templates)."""

from __future__ import annotations

import re
from pathlib import Path

import click

from memgauge import api
from memgauge.cli._common import EXISTING_FILE, FILE, store_option_with
from memgauge.cli._numbers import integer
from memgauge.cli._shared_options import reviewer_option
from memgauge.errors import UsageError
from memgauge.report import atomic_write_text
from memgauge.view import LOCAL_HOSTS, report_from_store, review_name, serve, view_root

__all__ = ["report", "view"]

#: a header's name (RFC 9110's token)
_HEADER = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")

#: `--store` as every command takes it (MEMGAUGE_STORE by default), opened read-only
store_option = store_option_with(
    "Results store: a path, sqlite:///PATH or postgresql://... (default: MEMGAUGE_STORE,"
    " else MEMGAUGE_HOME/results.db); opened read-only."
)


@click.command()
@store_option
@click.option("--port", type=integer(0, 65535), default=8765)
@click.option(
    "--host",
    default="127.0.0.1",
    help="Interface to bind; anything but 127.0.0.1 shows the store to the network.",
)
@click.option(
    "--review",
    is_flag=True,
    help="Review mode: grade hits, confirm or override verdicts, label facts and decisions"
    " (stored as labels in the store; nothing else is written). Without it, read-only.",
)
@reviewer_option("Who labels in review mode (default: MEMGAUGE_REVIEWER, else your login name).")
@click.option(
    "--watch-state",
    "watch_states",
    type=EXISTING_FILE,
    multiple=True,
    help="A `memgauge watch` state file shown at /watch besides the store's own (those under"
    " MEMGAUGE_HOME/watch); repeatable.",
)
@click.option(
    "--root-path",
    default=None,
    metavar="PATH",
    help="The path a reverse proxy serves the viewer under (e.g. /memgauge for"
    " https://tools.example/memgauge/): every link, form and script is written under it;"
    " the proxy may pass that prefix on or cut it off.",
)
@click.option(
    "--reviewer-header",
    default=None,
    metavar="HEADER",
    help="Review mode for a team behind a proxy that signs people in: each request's reviewer"
    " is the name this header holds (e.g. X-Forwarded-User, Remote-User), as the proxy sets"
    " it; a request without it is refused. Only the proxy must reach the port.",
)
@click.option(
    "--ask-reviewer",
    is_flag=True,
    help="Review mode for a team: each browser gives its reviewer's name once (kept in a"
    " cookie) and labels under it. Anyone may give any name: behind a proxy that signs"
    " people in, use --reviewer-header.",
)
@click.option(
    "--access-log",
    is_flag=True,
    help="Log a line per request on stdout (client, request line, status; uvicorn's access"
    " log), the client as a trusted proxy's X-Forwarded-For names it. Without it, only"
    " warnings and errors (on stderr).",
)
def view(
    store_path: str | None,
    port: int,
    host: str,
    review: bool,
    reviewer: str | None,
    watch_states: tuple[Path, ...],
    root_path: str | None,
    reviewer_header: str | None,
    ask_reviewer: bool,
    access_log: bool,
) -> None:
    """Browse the results store in a web browser: runs, a run's grid, its items (filters,
    search, judge reasoning), comparisons, trends, A/B tests and shadow runs. Read-only; a run
    in progress refreshes by itself. Needs no network: everything it loads ships in memgauge.

    With --review, a person labels what the runs recorded at /review (a queue of a run's
    items, unlabelled and disputed ones first): each label is added with its reviewer and
    time to the store's review labels, never replacing another reviewer's; `memgauge judge
    calibrate --from-store` and `memgauge review export` read them."""
    named = [
        option
        for option, given in (
            ("--reviewer", reviewer is not None),
            ("--reviewer-header", reviewer_header is not None),
            ("--ask-reviewer", ask_reviewer),
        )
        if given
    ]
    if named and not review:
        raise UsageError(f"{named[0]} names who labels in review mode: add --review")
    if len(named) > 1:
        raise UsageError(f"{' and '.join(named)}: give one way to name reviewers")
    if reviewer_header is not None and not _HEADER.fullmatch(reviewer_header):
        raise UsageError(
            f"--reviewer-header {reviewer_header!r}: give a header name, e.g. X-Forwarded-User"
        )
    if not host.strip():  # "" binds every interface: a `--host "$HOST"` whose HOST is unset
        raise UsageError(f"--host {host!r}: give an interface to bind, e.g. 127.0.0.1")
    each = reviewer_header is not None or ask_reviewer  # each person's own name
    who = review_name(reviewer) if review and not each else None
    store = api.viewer_store(store_path)
    if host not in LOCAL_HOSTS:
        what = "read every run, item and output in the store"
        if reviewer_header is not None:
            what += f" and add labels as anyone (by sending {reviewer_header} themselves)"
        elif ask_reviewer:
            what += " and add labels under any name"
        elif who:
            what += f" and add labels as {who}"
        click.echo(
            f"warning: binding {host}: anyone who can reach this machine on port {port} can {what}",
            err=True,
        )
    shown = f"[{host}]" if ":" in host else host
    if reviewer_header is not None:
        mode = f"review mode, each reviewer named by {reviewer_header}: /review"
    elif ask_reviewer:
        mode = "review mode, each browser giving its reviewer's name: /review"
    else:
        mode = "read-only" if who is None else f"review mode as {who}: /review"
    under = view_root(root_path)
    serve(
        store,
        host=host,
        port=port,
        reviewer=who,
        watch_states=watch_states,
        announce=lambda bound: click.echo(
            f"memgauge view: http://{shown}:{bound}{under}/ (store {store}, {mode}); Ctrl-C stops"
        ),
        root=under,
        reviewer_header=reviewer_header,
        ask_reviewer=ask_reviewer,
        access_log=access_log,
    )


@click.command()
@click.argument("run_id")
@click.option(
    "--out",
    "out",
    type=FILE,
    required=True,
    help="The file to write: Markdown when it ends in .md, else one HTML file.",
)
@store_option
def report(run_id: str, out: Path, store_path: str | None) -> None:
    """Write run RUN_ID (or the first characters of its id) as one self-contained HTML file:
    the viewer's run page and its items, no script, nothing loaded from the network (for CI
    artifacts and pull-request links); or, to a `.md` file, its measures and each aggregate's
    tables in Markdown."""
    store = api.viewer_store(store_path)
    whole, html = report_from_store(store, run_id, markdown=out.suffix.lower() == ".md")
    out.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(out, html)
    click.echo(f"wrote {out} (run {whole})")
