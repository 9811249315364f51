"""Continuous online evaluation (`memgauge watch`): which logged searches a pass evaluates
(filters, a deterministic sample), the numbers it computes over them, and the state a watch
keeps between passes (its cursor and each measure's recent values, the gate's baseline).

The measures of a window of searches, each with its 95% CI and its count (n/a with its count,
never 0, when the window has none to compute it from):

- `quality_proxy`: the mean of the searches' `quality_proxy_score` (the host's, or seed 002's
  formula the log writer computed); percentile bootstrap CI (seeded).
- `MRR@10`: the mean RR@10 of the searches that have judgments (manual, validated or
  bootstrapped from feedback; the implicit "shown" grade is no judgment); bootstrap CI.
- `selection_rate`: the share of searches one of whose results the agent read or referenced
  (feedback `read_after_search` / `reference`); Wilson CI.

Sampling is by hash, not by chance: a search is evaluated when the first 8 bytes of
sha256(query id) / 2**64 fall under the rate, so the same rows are picked on every pass, on
every host, and a rerun of the same window evaluates the same sample.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from memgauge._util.files import atomic_write_text
from memgauge.data.records import MeasureValue
from memgauge.errors import UsageError
from memgauge.store.watch_rows import LoggedSearch

__all__ = [
    "ALERT_EVENT",
    "MEASURES",
    "STATE_VERSION",
    "WatchFilter",
    "WatchState",
    "WindowMeasure",
    "in_sample",
    "parse_time",
    "window_measures",
]

MEASURES = ("quality_proxy", "MRR@10", "selection_rate")
STATE_VERSION = 1
#: webhook failures a state file keeps (the newest), so that it stays small
MAX_FAILURES = 100
#: windows (each pass's measures) and fired alerts a state file keeps (the newest), for the
#: viewer's trend: the baseline itself is `history`
MAX_WINDOWS = 200
_SUBJECT = "query-log"


def parse_time(text: str, what: str) -> datetime:
    """An ISO 8601 time (a date, or a date and time; UTC when it names no zone)."""
    try:
        at = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise UsageError(
            f"{what} {text!r}: give an ISO 8601 time, e.g. 2026-01-31T12:00Z"
        ) from None
    return at if at.tzinfo else at.replace(tzinfo=UTC)


def in_sample(query_id: str, rate: float) -> bool:
    """Whether the search `query_id` is in a sample of share `rate` (see the module docstring)."""
    if rate >= 1.0:
        return True
    digest = hashlib.sha256(query_id.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") / 2**64 < rate


@dataclass(frozen=True)
class WatchFilter:
    """Which searches a watch evaluates; an empty tuple takes every value. `feature`: only
    searches a shadow run of that flag replayed (seed 002's featureId); `modes` and `tools`
    name the search configuration and the tool that served it (what the query log knows of the
    subject); `since`: only searches logged at or after it."""

    intents: tuple[str, ...] = ()
    modes: tuple[str, ...] = ()
    tools: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    feature: str | None = None
    since: datetime | None = None

    @staticmethod
    def time(text: str, what: str = "--since") -> datetime:
        """`parse_time`, for a caller that holds only the filter's type (the CLI)."""
        return parse_time(text, what)

    def matches(self, s: LoggedSearch) -> bool:
        """Whether search `s` passes every filter but `feature` (the store tells that one)."""
        if self.intents and s.intent not in self.intents:
            return False
        if self.modes and s.mode not in self.modes:
            return False
        if self.tools and s.tool_name not in self.tools:
            return False
        if self.categories and s.category not in self.categories:
            return False
        if self.since is not None:
            try:
                at = parse_time(s.created_at, "created_at")
            except UsageError:
                return False  # a row whose time cannot be read is not known to be recent
            return at >= self.since
        return True

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        d = asdict(self)
        d["since"] = None if self.since is None else self.since.isoformat()
        return d


@dataclass(frozen=True)
class WindowMeasure:
    """One measure of a window: the run-level number the gate's rule reads, and the value of
    each search it was computed from (query id -> value; what an alert's examples come from)."""

    value: MeasureValue
    per_search: dict[str, float]

    def worst(self, n: int) -> list[str]:
        """The ids of the `n` searches that pulled it most towards worse, worst first."""
        sign = 1.0 if self.value.higher_is_better else -1.0
        return sorted(self.per_search, key=lambda q: (sign * self.per_search[q], q))[:n]


def _mean_measure(name: str, values: Sequence[float], n_failed: int) -> MeasureValue:
    from memgauge.stats.bootstrap import bootstrap_cis

    if not values:
        return MeasureValue(
            subject=_SUBJECT,
            task="watch",
            name=name,
            value=None,
            n_failed=n_failed,
            source="watch",
            note="no search in the window has it",
        )
    [ci] = bootstrap_cis([list(values)], seed=0)
    return MeasureValue(
        subject=_SUBJECT,
        task="watch",
        name=name,
        value=ci.mean,
        ci_low=ci.low if len(values) > 1 else None,
        ci_high=ci.high if len(values) > 1 else None,
        n_scored=len(values),
        n_failed=n_failed,
        source="watch",
    )


def window_measures(searches: Sequence[LoggedSearch]) -> dict[str, WindowMeasure]:
    """Each of `MEASURES` over `searches` (their signals filled)."""
    from memgauge.metrics.ir import evaluate_ranked
    from memgauge.stats.proportion import wilson_ci

    # a proxy that is not a finite number (a host's division by zero logs inf) has no place in
    # a mean: it made the window's inf, and a baseline no later window could be compared with
    proxies = {
        s.query_id: s.quality_proxy
        for s in searches
        if s.quality_proxy is not None and math.isfinite(s.quality_proxy)
    }
    judged = {s.query_id: s for s in searches if s.grades}
    rr: dict[str, float] = {}
    if judged:
        ev = evaluate_ranked(
            {q: s.grades for q, s in judged.items()},
            {q: s.result_ids for q, s in judged.items()},
            ["RR@10"],
        )
        rr = dict(zip(ev.query_ids, (float(v) for v in ev.per_query["RR@10"]), strict=True))
    n = len(searches)
    k = sum(s.selected for s in searches)
    ci = wilson_ci(k, n)
    selection = MeasureValue(
        subject=_SUBJECT,
        task="watch",
        name="selection_rate",
        value=k / n if n else None,
        ci_low=None if ci is None else ci[0],
        ci_high=None if ci is None else ci[1],
        n_scored=n,
        source="watch",
        note=None if n else "no search in the window",
    )
    return {
        "quality_proxy": WindowMeasure(
            _mean_measure("quality_proxy", list(proxies.values()), n - len(proxies)), proxies
        ),
        "MRR@10": WindowMeasure(_mean_measure("MRR@10", list(rr.values()), n - len(rr)), rr),
        "selection_rate": WindowMeasure(
            selection, {s.query_id: float(s.selected) for s in searches}
        ),
    }


def _number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)


def _objects(v: Any) -> bool:
    return isinstance(v, list) and all(isinstance(x, dict) for x in v)


def _count(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


#: what every alert a watch fires says it is (the webhook's payload `event`)
ALERT_EVENT = "memgauge.watch.alert"


def _pending_problem(pending: list[dict[str, Any]]) -> str | None:
    """What is wrong with the first alert of `pending` a watch did not write, if one is: a
    pass would POST it to the webhook as an alert."""
    for i, alert in enumerate(pending):
        if alert.get("event") != ALERT_EVENT:
            return f"pending[{i}]: not an alert a watch wrote (its event is not {ALERT_EVENT!r})"
        if not isinstance(alert.get("measure"), str):
            return f"pending[{i}]: measure: not a measure's name"
    return None


def resolved_store(config: dict[str, Any]) -> dict[str, Any]:
    """A state's configuration with its SQLite store by its resolved path: a state written
    before it was (`"store": "watched.db"`, as typed) is read from where it is run, as then."""
    store = config.get("store")
    if isinstance(store, str) and "://" not in store and not Path(store).is_absolute():
        return {**config, "store": str(Path(store).resolve())}
    return config


#: each field of a state file: the test its value passes, and what it is when it does not
_STATE_FIELDS: dict[str, tuple[Callable[[Any], bool], str]] = {
    "config": (
        lambda v: isinstance(v, dict) and isinstance(v.get("filters", {}), dict),
        "not an object (with an object of filters)",
    ),
    "cursor": (_count, "not a whole number"),
    "passes": (_count, "not a whole number"),
    "alerts_sent": (_count, "not a whole number"),
    "history": (
        lambda v: (
            isinstance(v, dict)
            and all(isinstance(x, list) and all(map(_number, x)) for x in v.values())
        ),
        "not an object of lists of numbers",
    ),
    "pending": (_objects, "not a list of objects"),
    "failures": (_objects, "not a list of objects"),
    "windows": (_objects, "not a list of objects"),
    "fired": (_objects, "not a list of objects"),
    "rule": (lambda v: isinstance(v, dict), "not an object"),
    "last_pass": (lambda v: v is None or isinstance(v, str), "not a time"),
}


@dataclass
class WatchState:
    """What a watch keeps between passes, in one small JSON file written atomically.

    `cursor`: the last query-log row read (a restarted watch starts after it); `config`: the
    filters, sample rate and measures it was written under (another configuration is refused:
    its baseline would compare other searches); `history`: per measure its values in the
    latest windows that did not fire (the gate's rolling baseline leaves failed runs out);
    `pending`: alerts not delivered yet, sent again first on the next pass; `failures`: each
    failed delivery attempt series (newest `MAX_FAILURES`). What the viewer's /watch page
    shows besides: `rule` (window, threshold, by, min samples of the latest pass), `last_pass`
    (its time), `windows` (each pass's measures with their CIs and counts) and `fired` (the
    alerts fired), newest `MAX_WINDOWS` each; a state written before them reads them empty."""

    config: dict[str, Any]
    cursor: int = 0
    passes: int = 0
    alerts_sent: int = 0
    history: dict[str, list[float]] = field(default_factory=dict)
    pending: list[dict[str, Any]] = field(default_factory=list)
    failures: list[dict[str, Any]] = field(default_factory=list)
    rule: dict[str, Any] = field(default_factory=dict)
    last_pass: str | None = None
    windows: list[dict[str, Any]] = field(default_factory=list)
    fired: list[dict[str, Any]] = field(default_factory=list)

    @classmethod
    def load(cls, path: Path, config: dict[str, Any]) -> WatchState:
        """The state at `path` (a new one when there is no file). A file that is not a watch
        state, or one written under another configuration, is a UsageError naming it."""
        if not path.exists():
            return cls(config=config)
        try:
            state = cls.read(path)
        except (OSError, ValueError, RecursionError) as exc:
            raise UsageError(
                f"{path}: not a memgauge watch state file ({exc}); give another --state"
            ) from None
        state.config = resolved_store(state.config)
        if state.config != config:
            raise UsageError(
                f"{path}: written by a watch of another store, or with other filters, sample"
                " rate or measures"
                f" ({json.dumps(state.config, sort_keys=True)}); its baseline would compare"
                " other searches: give another --state, or delete it to start over"
            )
        return state

    @classmethod
    def read(cls, path: Path) -> WatchState:
        """The state at `path` under whichever configuration it was written; ValueError
        naming what is wrong: not JSON, another schema version, a field unknown or of the
        wrong type (a hand-edited state: a pass would fail at its end, or read from a cursor
        that is no row)."""
        if not path.is_file():  # a FIFO would block the read until something writes to it
            raise ValueError("not a regular file (a directory, FIFO or device)")
        raw = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(raw, dict):
            raise ValueError("not a JSON object")
        if raw.pop("schema_version", None) != STATE_VERSION:
            raise ValueError(f"schema_version: not {STATE_VERSION}")
        unknown = sorted(set(raw) - set(_STATE_FIELDS))
        if unknown:
            raise ValueError(f"unknown field {unknown[0]!r}")
        if "config" not in raw:
            raise ValueError("config: missing")
        wrong = [
            f"{name}: {said}"
            for name, (test, said) in _STATE_FIELDS.items()
            if name in raw and not test(raw[name])
        ]
        if wrong:
            raise ValueError("; ".join(wrong))
        pending = _pending_problem(raw.get("pending", []))
        if pending:
            raise ValueError(f"{pending}: remove it from pending")
        return cls(**raw)

    def save(self, path: Path) -> None:
        """Write the state atomically (a watch killed mid-write leaves the previous state)."""
        raw = {"schema_version": STATE_VERSION, **asdict(self)}
        raw["failures"] = raw["failures"][-MAX_FAILURES:]
        raw["windows"] = raw["windows"][-MAX_WINDOWS:]
        raw["fired"] = raw["fired"][-MAX_WINDOWS:]
        atomic_write_text(path, json.dumps(raw, indent=1, sort_keys=True) + "\n")
