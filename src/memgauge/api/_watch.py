"""`memgauge watch`: continuous online evaluation of the query log.

A pass reads the searches logged after the state's cursor (up to `batch`), keeps those that
pass the filters and fall in the sample, computes the window's measures
(`online.watch.window_measures`), and applies the gate's rule to each
(`track.gate.check_measure`: a relative drop of at least `threshold` against the mean of the
measure in the last `window` windows that did not fire). When it fires, one JSON alert per
measure is POSTed to the webhook, retried with backoff; an alert that still fails is recorded
in the state and sent again first at the next pass. The cursor and the baseline are written
once the pass is done, atomically, so a watch killed mid-pass evaluates that window again and
never one twice.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from memgauge._util.files import exclusive_lock
from memgauge.aggregates.targets import By
from memgauge.api._store import memgauge_home
from memgauge.errors import UsageError, argument
from memgauge.online.watch import (
    ALERT_EVENT,
    MEASURES,
    WatchFilter,
    WatchState,
    WindowMeasure,
    in_sample,
    parse_time,
    resolved_store,
    window_measures,
)
from memgauge.store.url import StoreURL
from memgauge.store.watch_rows import LoggedSearch, read_searches_after, search_signals, shadowed_by
from memgauge.track.gate import MetricCheck, check_measure

__all__ = ["WatchConfig", "WatchPass", "deliver_alert", "watch_pass"]

#: example searches an alert names
EXAMPLES = 5


@dataclass(frozen=True)
class WatchConfig:
    """How a watch reads, samples, decides and alerts (the `memgauge watch` options).

    Attributes:
        store: the results store whose query log is read.
        state: the state file (cursor, baseline, undelivered alerts).
        filters: which searches are evaluated.
        rate: the share sampled, in (0, 1], by a hash of the query id.
        measures: the measures the rule is applied to (of `online.watch.MEASURES`).
        window: earlier windows in the rolling baseline (the gate's `--window`).
        threshold: the relative drop that fires (the gate's default 15%).
        by: `point` or `ci-upper`, as the gate.
        min_samples: a measure computed over fewer searches is shown, not decided.
        batch: searches read per pass at most (the rest wait for the next pass).
        settle: seconds a search waits before it is read, so that its feedback and
            judgments can arrive first.
        webhook: the URL alerts are POSTed to (None: printed only).
        retries: retries of a failed POST (with exponential backoff from `retry_delay`).
        retry_delay: the first backoff, in seconds.
        timeout: seconds one POST may take.
    """

    store: StoreURL
    state: Path
    filters: WatchFilter = field(default_factory=WatchFilter)
    rate: float = 1.0
    measures: tuple[str, ...] = MEASURES
    window: int = 5
    threshold: float = 0.15
    by: By = "point"
    min_samples: int = 20
    batch: int = 10_000
    settle: float = 0.0
    webhook: str | None = None
    retries: int = 3
    retry_delay: float = 1.0
    timeout: float = 10.0

    def __post_init__(self) -> None:
        # each named as its caller wrote it: the command's flag, or this field from Python
        if not 0 < self.rate <= 1:
            rate = argument("rate", self.rate, flag="--sample")
            raise UsageError(f"{rate}: give a share in (0, 1]")
        unknown = [m for m in self.measures if m not in MEASURES]
        if unknown or not self.measures:
            given = argument("measures", ", ".join(unknown) or "(none)", flag="--measure")
            raise UsageError(f"{given}: choose from {', '.join(MEASURES)}")
        if self.webhook is not None:
            webhook = argument("webhook", repr(self.webhook))
            try:  # a bracket left open, a port past 65535: ValueError, when first read
                parts = urlsplit(self.webhook)
                scheme, _port = parts.scheme, parts.port
            except ValueError as exc:
                raise UsageError(f"{webhook}: not a URL ({exc})") from None
            if scheme not in ("http", "https"):
                raise UsageError(f"{webhook}: give an http:// or https:// URL")

    def key(self) -> dict[str, Any]:
        """What the state is bound to: the store (a SQLite file by its resolved path: the
        same relative path from another directory is another store), the filters, the sample
        rate and the measures."""
        path = self.store.path
        key = {
            "store": str(self.store if path is None else path.resolve()),
            "filters": self.filters.as_dict(),
            "rate": self.rate,
            "measures": list(self.measures),
        }
        # as the state file holds it (tuples read back as lists), so the two compare equal
        loaded: dict[str, Any] = json.loads(json.dumps(key))
        return loaded

    def default_state(self) -> Path:
        """One state file per store and configuration under MEMGAUGE_HOME/watch, so that two
        watches over other filters never share a cursor or a baseline; the one of before the
        configuration held the store's resolved path (named by the store as typed) while it
        is this store's."""
        key = self.key()
        path = _state_of(key)
        before = _state_of({**key, "store": str(self.store)})
        if path.exists() or not before.is_file():
            return path
        try:
            held = resolved_store(WatchState.read(before).config)
        except (OSError, ValueError, RecursionError):
            return path
        return before if held == key else path


def _state_of(key: dict[str, Any]) -> Path:
    digest = hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:16]
    return memgauge_home() / "watch" / f"{digest}.json"


@dataclass
class WatchPass:
    """What one pass did. `status`: `fired` (the rule fired on a measure), `pass` (it was
    applied and did not fire), `idle` (no measure had enough searches to decide)."""

    read: int
    matched: int
    evaluated: int
    cursor: tuple[int, int]
    window: dict[str, Any]
    checks: list[dict[str, Any]]
    status: str
    alerts: list[dict[str, Any]] = field(default_factory=list)
    delivered: int = 0
    undelivered: int = 0
    failures: list[dict[str, Any]] = field(default_factory=list)

    @property
    def exit_code(self) -> int:
        """The README's table: 3 an alert could not be delivered (the webhook is unavailable),
        else 1 the rule fired, else 0."""
        if self.undelivered:
            return 3
        return 1 if self.status == "fired" else 0

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return {**self.__dict__, "cursor": list(self.cursor), "exit_code": self.exit_code}


def _now() -> datetime:
    return datetime.now(UTC)


def _settled(rows: list[LoggedSearch], settle: float, now: datetime) -> list[LoggedSearch]:
    """The rows up to the first logged less than `settle` seconds ago (kept for the next pass,
    with every row after it, so the cursor never skips one)."""
    if settle <= 0:
        return rows
    cutoff = now - timedelta(seconds=settle)
    for i, row in enumerate(rows):
        try:
            at = parse_time(row.created_at, "created_at")
        except UsageError:
            continue
        if at > cutoff:
            return rows[:i]
    return rows


def _origin(url: str) -> str:
    """A webhook named without its path or query (which often hold its secret)."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.hostname}" + (f":{parts.port}" if parts.port else "")


def deliver_alert(cfg: WatchConfig, alert: dict[str, Any]) -> dict[str, Any] | None:
    """POST `alert` to the webhook, retried with backoff; None when delivered, else the failure
    (time, webhook origin, measure, attempts, error) to record."""
    import httpx

    from memgauge._util.retry import RetriesExhausted, send_with_retries

    assert cfg.webhook is not None
    url = cfg.webhook
    attempts = cfg.retries + 1
    error: str
    try:
        with httpx.Client(timeout=cfg.timeout) as client:
            response = send_with_retries(
                lambda: client.post(url, json=alert),
                max_retries=cfg.retries,
                base_delay=cfg.retry_delay,
                max_delay=max(cfg.retry_delay, 60.0),
            )
        if response.is_success:
            return None
        attempts = 1
        error = f"status {response.status_code}"
    except RetriesExhausted as exc:
        error = str(exc) if exc.error is None else f"{exc} ({exc.error})"
    except httpx.HTTPError as exc:  # a URL httpx cannot send to
        attempts, error = 1, f"{type(exc).__name__}: {exc}"
    return {
        "at": _now().isoformat(timespec="seconds"),
        "webhook": _origin(url),
        "measure": alert.get("measure"),
        "attempts": attempts,
        "error": error,
    }


def _alert(
    cfg: WatchConfig,
    check: MetricCheck,
    examples: Sequence[str],
    window: dict[str, Any],
    baseline_windows: int,
) -> dict[str, Any]:
    return {
        "event": ALERT_EVENT,
        "rule": (
            f"gate: a drop of {check.threshold:.0%} or more against the mean of the last"
            f" {baseline_windows} window(s) (by {cfg.by})"
        ),
        "measure": check.evaluator,
        "value": check.current,
        "ci": None if check.ci is None else list(check.ci),
        "baseline": check.baseline,
        "drop": check.drop,
        "threshold": check.threshold,
        "note": check.note,
        "window": window,
        "sample_count": check.n_scored,
        "sample_rate": cfg.rate,
        "filters": cfg.filters.as_dict(),
        "examples": list(examples),
    }


def _send(
    cfg: WatchConfig, state: WatchState, alerts: list[dict[str, Any]], out: WatchPass
) -> None:
    """Deliver the state's pending alerts, then this pass's; what fails stays pending."""
    if cfg.webhook is None:
        return
    queue, state.pending = [*state.pending, *alerts], []
    for alert in queue:
        failure = deliver_alert(cfg, alert)
        if failure is None:
            out.delivered += 1
            state.alerts_sent += 1
        else:
            out.undelivered += 1
            out.failures.append(failure)
            state.failures.append(failure)
            state.pending.append(alert)
    state.pending = state.pending[-100:]


def _record(
    cfg: WatchConfig,
    state: WatchState,
    out: WatchPass,
    measures: dict[str, WindowMeasure],
    at: datetime,
) -> None:
    """Keep what the viewer shows of this pass: the rule, its time, the window's measures with
    their CIs (a pass that evaluated nothing has no window) and the alerts fired."""
    stamp = at.isoformat(timespec="seconds")
    state.rule = {k: getattr(cfg, k) for k in ("window", "threshold", "by", "min_samples")}
    state.last_pass = stamp
    if measures:
        fired = {a["measure"] for a in out.alerts}
        state.windows.append(
            {
                "at": stamp,
                "rows": out.window["rows"],
                "evaluated": out.evaluated,
                "measures": {
                    name: {
                        "value": wm.value.value,
                        "ci_low": wm.value.ci_low,
                        "ci_high": wm.value.ci_high,
                        "n": wm.value.n_scored,
                        "note": wm.value.note,
                        "fired": name in fired,
                    }
                    for name, wm in measures.items()
                    if name in cfg.measures
                },
            }
        )
    state.fired.extend(
        {k: a[k] for k in ("measure", "value", "baseline", "drop", "threshold", "note")}
        | {"at": stamp}
        for a in out.alerts
    )


def watch_pass(cfg: WatchConfig, *, now: datetime | None = None) -> WatchPass:
    """Run one pass (see the module docstring); the state file is updated at its end. One
    pass at a time holds a state (a lock beside it, `STATE.lock`): a second pass started
    meanwhile (cron's next while this one still delivers) waits for it, then reads from its
    cursor, so no search is evaluated twice and no alert sent twice."""
    with exclusive_lock(cfg.state.with_name(cfg.state.name + ".lock")):
        return _pass(cfg, now)


def _pass(cfg: WatchConfig, now: datetime | None) -> WatchPass:
    state = WatchState.load(cfg.state, cfg.key())
    rows = _settled(
        read_searches_after(cfg.store, state.cursor, cfg.batch), cfg.settle, now or _now()
    )
    matched = [r for r in rows if cfg.filters.matches(r)]
    if cfg.filters.feature is not None and matched:
        shadowed = shadowed_by(cfg.store, cfg.filters.feature, [r.query_id for r in matched])
        matched = [r for r in matched if r.query_id in shadowed]
    sample = [r for r in matched if in_sample(r.query_id, cfg.rate)]
    if sample:
        search_signals(cfg.store, sample)
    before = state.cursor
    after = rows[-1].row_id if rows else before
    window = {
        "rows": [before + 1, after] if rows else None,
        "from": sample[0].created_at if sample else None,
        "to": sample[-1].created_at if sample else None,
    }
    measures = window_measures(sample) if sample else {}
    checks: list[dict[str, Any]] = []
    alerts: list[dict[str, Any]] = []
    decided = False
    for name in cfg.measures:
        wm = measures.get(name)
        if wm is None:
            continue
        history = state.history.get(name, [])[-cfg.window :] if cfg.window > 0 else []
        if wm.value.value is None or wm.value.n_scored < cfg.min_samples:
            checks.append(
                {
                    "measure": name,
                    "value": wm.value.value,
                    "n": wm.value.n_scored,
                    "decided": False,
                    "note": f"{wm.value.n_scored} search(es) have it, under --min-samples"
                    f" {cfg.min_samples}: shown, not decided",
                }
            )
            continue
        decided = True
        check, _warning = check_measure(wm.value, history, cfg.threshold, by=cfg.by, unit="window")
        checks.append(
            {
                **check.as_dict(),
                "measure": name,
                "value": check.current,
                "n": wm.value.n_scored,
                "decided": True,
            }
        )
        if check.regressed:
            alerts.append(_alert(cfg, check, wm.worst(EXAMPLES), window, len(history)))
        else:
            assert wm.value.value is not None
            state.history[name] = [*history, float(wm.value.value)][-max(cfg.window, 1) :]
    out = WatchPass(
        read=len(rows),
        matched=len(matched),
        evaluated=len(sample),
        cursor=(before, after),
        window=window,
        checks=checks,
        status="fired" if alerts else ("pass" if decided else "idle"),
        alerts=alerts,
    )
    _send(cfg, state, alerts, out)
    _record(cfg, state, out, measures, now or _now())
    state.cursor = after
    state.passes += 1
    state.save(cfg.state)
    return out
