"""The viewer's `/watch` page: the watches (`memgauge watch`) of the viewed store, read from
their state files (those under MEMGAUGE_HOME/watch whose configuration names this store, and
the ones `memgauge view --watch-state FILE` names). Per watch: its filters, sample rate and
rule, its cursor and last pass, each measure's windows as a trend with its CIs and a table,
the alerts fired and not delivered yet, and the webhook failures (the webhook's origin only,
as the state keeps it: a path often holds its secret).

Read-only: a state file is only read. One that cannot be read as a watch state is shown as an
error row, never a 500 (a watch may be writing its next state beside it; a file may be
anything). Every text is escaped (the template autoescapes; the chart escapes its own)."""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from memgauge.data.environment import memgauge_home
from memgauge.errors import UsageError
from memgauge.online.watch import STATE_VERSION, WatchState
from memgauge.store.url import StoreURL
from memgauge.view import charts
from memgauge.view.render import render

__all__ = ["WatchEntry", "WatchViews", "watch_entries"]

Handler = Callable[[Request], Awaitable[Response]]

#: bytes of a state file read at most (the state keeps its lists short: a bigger file is
#: not one a watch wrote)
MAX_STATE_BYTES = 16 * 1024 * 1024
#: a URL in an error text, cut to its origin (its path may hold the webhook's secret)
_URL = re.compile(r"(https?://[^/\s'\"]+)[^\s'\"]*")


@dataclass
class WatchEntry:
    """One state file: the state, or the error it could not be read with; and per measure
    its trend chart and window rows."""

    path: Path
    state: WatchState | None = None
    error: str | None = None
    measures: list[dict[str, Any]] = field(default_factory=list)
    fired: list[dict[str, Any]] = field(default_factory=list)
    filters: list[tuple[str, str]] = field(default_factory=list)


def _same_store(named: Any, store: StoreURL) -> bool:
    if not isinstance(named, str):
        return False
    if store.path is not None:
        try:
            return Path(named).expanduser().resolve() == store.path.expanduser().resolve()
        except (OSError, ValueError):
            return False
    return named == str(store)


def _load(path: Path) -> WatchState:
    """The state at `path`, as the watch reads it but under whichever configuration it has
    (ValueError naming what is wrong)."""
    if path.stat().st_size > MAX_STATE_BYTES:
        raise ValueError(f"{path.stat().st_size:,} bytes: larger than a watch state")
    return WatchState.read(path)


def _origin(value: Any) -> str:
    """A webhook's scheme, host and port only, whatever the state holds (an older or hand-made
    state may hold a whole URL)."""
    try:
        parts = urlsplit(str(value))
        if not parts.hostname:
            return str(value).split("/", 1)[0][:80]
        return f"{parts.scheme}://{parts.hostname}" + (f":{parts.port}" if parts.port else "")
    except ValueError:
        return "?"


def _num(v: Any) -> float | None:
    return float(v) if isinstance(v, int | float) and not isinstance(v, bool) else None


def _span(rows: Any) -> str:
    """A window's query-log rows, `first-last`."""
    if isinstance(rows, list) and len(rows) == 2:
        return f"{rows[0]}-{rows[1]}"
    return ""


def _fired(state: WatchState) -> list[dict[str, Any]]:
    """The alerts fired, newest first, their numbers as numbers (a hand-edited state may hold
    anything)."""
    return [
        {
            **a,
            **{k: _num(a.get(k)) for k in ("value", "baseline", "drop", "threshold")},
        }
        for a in reversed(state.fired)
    ]


def _filters(state: WatchState) -> list[tuple[str, str]]:
    """The filters that take only some searches (name, values), as text."""
    out = []
    for name, value in (state.config.get("filters") or {}).items():
        if isinstance(value, list) and value:
            out.append((str(name), ", ".join(map(str, value))))
        elif value not in (None, [], ""):
            out.append((str(name), str(value)))
    return out


def _measures(state: WatchState) -> list[dict[str, Any]]:
    """Per measure of the configuration: its windows (oldest first) and their trend chart."""
    names = [m for m in state.config.get("measures", []) if isinstance(m, str)]
    windows = [w for w in state.windows if isinstance(w, dict)]
    out = []
    for name in names:
        rows = []
        for w in windows:
            m = (w.get("measures") or {}).get(name)
            if isinstance(m, dict):
                rows.append(
                    {
                        "at": str(w.get("at", "")),
                        "rows": _span(w.get("rows")),
                        "value": _num(m.get("value")),
                        "ci_low": _num(m.get("ci_low")),
                        "ci_high": _num(m.get("ci_high")),
                        "n": m.get("n"),
                        "note": m.get("note"),
                        "fired": m.get("fired") is True,
                    }
                )
        # month, day and time: a whole ISO time does not fit under a point
        labels = [str(r["at"])[5:16].replace("T", " ") for r in rows]
        chart = charts.line_chart(
            f"{name} per window",
            labels,
            [
                charts.Line(
                    "value (band: 95% CI)",
                    [_num(r.get("value")) for r in rows],
                    [_num(r.get("ci_low")) for r in rows],
                    [_num(r.get("ci_high")) for r in rows],
                )
            ],
            width=640,
            height=200,
        )
        out.append({"name": name, "rows": rows, "chart": chart})
    return out


def watch_entries(store: StoreURL, extra: Sequence[Path] = ()) -> list[WatchEntry]:
    """The watches of `store`: its state files under MEMGAUGE_HOME/watch, then `extra` (shown
    whichever store they name), each once."""
    found: list[Path] = []
    home = memgauge_home() / "watch"
    if home.is_dir():
        for path in sorted(home.glob("*.json")):
            try:
                raw = json.loads(path.read_text(encoding="utf-8"))
                named = raw.get("config", {}).get("store") if isinstance(raw, dict) else None
            except (OSError, ValueError, AttributeError):
                continue  # not known to be this store's: another store's viewer may show it
            if _same_store(named, store):
                found.append(path)
    seen = {p.resolve() for p in found}
    for path in extra:
        if path.resolve() not in seen:
            seen.add(path.resolve())
            found.append(path)
    entries = []
    for path in found:
        try:
            state = _load(path)
        except Exception as exc:  # any unreadable file (even JSON nested past recursion) is a row
            entries.append(WatchEntry(path, error=f"{type(exc).__name__}: {exc}"[:500]))
            continue
        for f in state.failures:
            f["webhook"] = _origin(f.get("webhook"))
            f["error"] = _URL.sub(r"\1", str(f.get("error", "")))
        entries.append(
            WatchEntry(
                path,
                state=state,
                measures=_measures(state),
                fired=_fired(state),
                filters=_filters(state),
            )
        )
    return entries


class WatchViews:
    """The `/watch` route, bound to one store and the extra state files."""

    def __init__(
        self,
        store: StoreURL,
        extra: Sequence[str | Path],
        *,
        page: Callable[[str], Response],
        base: Callable[..., dict[str, Any]],
    ) -> None:
        self.store = store
        self.extra = [Path(p) for p in extra]
        self._page = page
        self._base = base

    def routes(self, guard: Callable[[Handler], Handler]) -> list[Route]:
        return [Route("/watch", guard(self.watches))]

    async def watches(self, request: Request) -> Response:
        try:
            entries = watch_entries(self.store, self.extra)
        except UsageError as exc:  # MEMGAUGE_HOME is no directory: named, not "internal error"
            raise HTTPException(500, str(exc)) from None
        return self._page(
            render(
                "watch.html",
                entries=entries,
                store=str(self.store),
                state_version=STATE_VERSION,
                **self._base(request),
            )
        )
