"""`memgauge view`: a local web viewer of the results store (runs, a run's grid, its items,
comparisons, trends, A/B tests and shadow runs), and the templates `memgauge report` renders
into one self-contained file. Read-only by construction: see `memgauge.view.app`. The viewer
stands above the reports (`memgauge.report`): it uses their formatting, they never import it.

The names below load on first use, and `serve` loads the web stack only when called: `memgauge
report --out FILE.html` renders the templates without uvicorn."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from memgauge._util.lazy import lazy_table
from memgauge.errors import UnavailableError, UsageError

if TYPE_CHECKING:
    import socket
    from collections.abc import Callable, Sequence

    from memgauge.store.url import StoreURL
    from memgauge.view.render import render_run_report, report_from_store
    from memgauge.view.render import root_path as view_root

__all__ = [
    "LOCAL_HOSTS",
    "render_run_report",
    "report_from_store",
    "review_name",
    "serve",
    "view_root",
]

_LAZY = {
    "render_run_report": "memgauge.view.render",
    "report_from_store": "memgauge.view.render",
    "view_root": "memgauge.view.render:root_path",
}

#: hosts that only this machine reaches; binding elsewhere shows the store to the network
LOCAL_HOSTS = ("127.0.0.1", "localhost", "::1")


lazy_table(globals(), _LAZY)


def review_name(given: str | None) -> str:
    """The reviewer review mode labels as: `given`, else MEMGAUGE_REVIEWER, else the login
    name; a UsageError for an empty or over-long one."""
    import getpass
    import os

    from memgauge.data.review import MAX_REVIEWER

    name = (given if given is not None else os.environ.get("MEMGAUGE_REVIEWER") or "").strip()
    if not name and given is None:
        try:
            name = getpass.getuser()
        except (KeyError, OSError):  # no login name (a container's bare uid)
            name = ""
    if not name or len(name) > MAX_REVIEWER:
        raise UsageError(
            f"--reviewer: give a name of 1-{MAX_REVIEWER} characters (or set MEMGAUGE_REVIEWER)"
        )
    return name


def serve(
    store: str | Path | StoreURL,
    *,
    host: str = "127.0.0.1",
    port: int = 8765,
    reviewer: str | None = None,
    watch_states: Sequence[str | Path] = (),
    announce: Callable[[int], None] | None = None,
    root: str | None = None,
    reviewer_header: str | None = None,
    ask_reviewer: bool = False,
    access_log: bool = False,
) -> None:
    """Serve `memgauge view` over the store at `store` on host:port until interrupted (the
    store is checked, and refused when this memgauge cannot read it, before the port is
    bound); with `reviewer`, in review mode (`memgauge.view.review`); `watch_states`: watch
    state files `/watch` shows besides the store's own; `announce` is called with the port
    bound (the one the system chose for port 0) once the store is accepted and the port is
    bound, before serving (the command's address line: none for a refused store);
    `root`: the path a proxy serves it under (`--root-path`); `reviewer_header`: review mode
    with each request's reviewer read from that header (`--reviewer-header`); `ask_reviewer`:
    review mode with each browser giving its reviewer's name (`--ask-reviewer`); `access_log`:
    a line on stdout per request (`--access-log`)."""
    import logging

    import uvicorn  # the web stack, only when serving

    from memgauge.view.app import create_app

    app = create_app(
        store,
        reviewer=reviewer,
        watch_states=watch_states,
        root=root,
        reviewer_header=reviewer_header,
        ask_reviewer=ask_reviewer,
    )
    sock = _listening(host, port)  # before the address line: one that is not served is none
    if announce is not None:
        announce(sock.getsockname()[1])  # port 0: the one the system chose, not 0
    config = uvicorn.Config(app, host=host, port=port, log_level="warning", access_log=access_log)
    if access_log:  # its lines, without uvicorn's start-up chatter (info too)
        logging.getLogger("uvicorn.access").setLevel(logging.INFO)
    uvicorn.Server(config).run(sockets=[sock])


def _listening(host: str, port: int) -> socket.socket:
    """A socket bound to host:port, as uvicorn binds one; an UnavailableError (exit 3) saying
    what to do when the port is taken or the host is not this machine's (uvicorn logged the
    OSError and exited after the command had announced its address)."""
    import errno
    import socket

    sock = socket.socket(family=socket.AF_INET6 if ":" in host else socket.AF_INET)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRINUSE:
            raise UnavailableError(
                f"port {port} on {host} is in use (another `memgauge view`?): stop what holds"
                " it, or pass another --port"
            ) from None
        raise UnavailableError(
            f"cannot listen on {host} port {port}: {exc.strerror or exc}: pass an address of"
            " this machine as --host (127.0.0.1, 0.0.0.0) or another --port"
        ) from None
    sock.set_inheritable(True)
    return sock
