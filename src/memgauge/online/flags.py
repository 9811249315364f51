"""Feature flags for A/B evaluation (seed 002 section 4.3): a flag rolls a memory change out to
a share of identities, shadows a share of queries while it is tested, and feeds that shadow data
to its sequential A/B test, which, on graduating, rolls the flag out to 100%. Flag, shadow
experiment and A/B test share one name.

Bucketing is deterministic: an identity's (or query id's) bucket is the first 8 bytes of
SHA-256(salt + id) as a fraction of 2^64 (`shadow.bucket`), the same in every process, host and
Python version (never `hash()`, which is salted per process). The salt is the flag's name and
the purpose (`NAME:rollout`, `NAME:shadow`): the rollout and shadow shares of one flag, and the
shares of two flags, are independent.

    flags = Flags("postgresql://...")                    # once per process; refreshed every 5 s
    if flags.is_enabled("SPECKIT_MULTI_VECTOR", user_id):
        ...
    runner = flags.shadow_runner("SPECKIT_MULTI_VECTOR", control, treatment)
    served = runner.search(query_id, text, intent=intent, session_id=session)

The SDK answers from memory (`is_enabled`, `should_shadow` hash the id and compare: no I/O); an
unknown flag is off. A background thread re-reads the flags every `refresh_s` seconds.
"""

from __future__ import annotations

import itertools
import math
import threading
from collections.abc import Mapping
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memgauge._util.numbers import ALPHA, BETA, MDE
from memgauge.errors import UsageError, argument, check_name, check_number, on_command_line
from memgauge.online import ab
from memgauge.online.shadow import Search, ShadowRunner, bucket
from memgauge.stats.sequential import DEFAULT_GRADUATION, PROB_THRESHOLD, SPRTState
from memgauge.store.ab_tests import ABTestStore
from memgauge.store.flags import FLAG_FIELDS, FlagStore
from memgauge.store.seed_rows import metric_family
from memgauge.store.shadow import ShadowStore
from memgauge.store.url import StoreURL, store_given_as, store_url

__all__ = [
    "FeatureFlag",
    "Flags",
    "create_flag",
    "feed_from_shadow",
    "list_flags",
    "set_flag",
]

#: seed 002's EVAL_FLAGS defaults
DEFAULTS: dict[str, Any] = {
    "rollout_percent": 0.0,
    "shadow_enabled": False,
    "shadow_percent": 10.0,
    "min_samples": DEFAULT_GRADUATION.min_samples,
    "graduation_threshold": DEFAULT_GRADUATION.improvement,
    "feed_ab": False,
}


@dataclass(frozen=True)
class FeatureFlag:
    """One flag as the SDK holds it (seed 002's `EvalFeatureFlag`)."""

    name: str
    rollout_percent: float = 0.0
    shadow_enabled: bool = False
    shadow_percent: float = 10.0
    min_samples: int = DEFAULT_GRADUATION.min_samples
    graduation_threshold: float = DEFAULT_GRADUATION.improvement
    feed_ab: bool = False

    def is_enabled(self, identity: str) -> bool:
        """Whether the flag is on for `identity` (its bucket below the rollout share)."""
        return bucket(identity, f"{self.name}:rollout") < self.rollout_percent / 100

    def should_shadow(self, query_id: str) -> bool:
        """Whether query `query_id` is shadowed (shadowing on, its bucket in the share)."""
        return self.shadow_enabled and (
            bucket(query_id, f"{self.name}:shadow") < self.shadow_percent / 100
        )


def _check(values: Mapping[str, Any]) -> None:
    """UsageError naming an unknown setting or the first one out of its range."""
    unknown = sorted(set(values) - set(FLAG_FIELDS))
    if unknown:
        raise UsageError(f"unknown flag setting(s) {unknown}; one of {list(FLAG_FIELDS)}")
    for key in ("rollout_percent", "shadow_percent", "min_samples", "graduation_threshold"):
        if values.get(key) is not None:  # from Python: `rollout_percent="10"`
            check_number(key, values[key], whole=key == "min_samples")
    # named as the caller gave them: `--rollout 150` in a command, `rollout_percent=150` in
    # the settings `create_flag` and `set_flag` take from Python
    for key, flag in (("rollout_percent", "--rollout"), ("shadow_percent", "--shadow-percent")):
        v = values.get(key)
        if v is not None and not (math.isfinite(v) and 0 <= v <= 100):
            raise UsageError(f"{argument(key, f'{v:g}', flag=flag)}: a percentage from 0 to 100")
    n = values.get("min_samples")
    if n is not None and n < 2:
        raise UsageError(f"{argument('min_samples', n)}: at least 2 pairs")
    g = values.get("graduation_threshold")
    if g is not None and not math.isfinite(g):
        raise UsageError(f"{argument('graduation_threshold', g)}: a finite improvement (e.g. 0.03)")


#: the flag's settings its A/B test holds too, with the test's name for them
_TEST_KEYS = {"min_samples": "min_samples", "graduation_threshold": "improvement"}


def _test_settings(
    name: str, test: Mapping[str, Any] | None, given: Mapping[str, Any], asked: Mapping[str, Any]
) -> dict[str, Any]:
    """The settings a flag created over an existing A/B test takes from it (so the two agree);
    a UsageError when `given` (the flag's settings) or `asked` (the test's: metric, delta...)
    sets one of them otherwise (the test would decide on its own)."""
    if test is None:
        return {}
    held = {k: test["config"][v] for k, v in _TEST_KEYS.items()}
    for key, value in held.items():
        if key in given and given[key] != value:
            # named as the caller gave them: a command's flags, or `create_flag`'s settings
            then = (
                f"`memgauge flags set {name} {argument(key, given[key])}`"
                if on_command_line()
                else f"`set_flag({name!r}, {{{key!r}: {given[key]!r}}})`"
            )
            raise UsageError(
                f"A/B test {name!r} exists with {argument(key)} {value}, not {given[key]}:"
                f" create the flag without {argument(key)} (it takes the test's), then {then}"
                " to change both"
            )
    has = {"metric": test["metric"], "allow_unmeasured": False, **test["config"]}
    for key, value in asked.items():
        if has.get(key, value) != value:
            raise UsageError(
                f"A/B test {name!r} exists with {key} {has[key]}, not {value}: create the flag"
                f" without {argument(key)} (it takes the test's), or pick another name"
            )
    return held


def _unknown(name: str) -> UsageError:
    how = f"memgauge flags create {name}" if on_command_line() else f"create_flag({name!r})"
    return UsageError(f"no feature flag {name!r}; create it with `{how}`")


#: the A/B test a flag creates, unless the caller says otherwise (seed 002's SPRT)
TEST_DEFAULTS: dict[str, Any] = {
    "metric": "MRR",
    "delta": MDE,
    "alpha": ALPHA,
    "beta": BETA,
    "max_latency_increase": DEFAULT_GRADUATION.max_latency_increase,
    "rule": "sprt",
    "prob_threshold": PROB_THRESHOLD,
    "allow_unmeasured": False,
}


def create_flag(
    where: str | Path | StoreURL | None,
    name: str,
    values: Mapping[str, Any],
    test: Mapping[str, Any],
) -> tuple[dict[str, Any], bool]:
    """Create flag `name` (missing `values` take seed 002's defaults) and, unless one exists,
    its A/B test, whose pairs and threshold are the flag's (`test`: the rest of the test's
    configuration, as `ab.create_test` takes it, and its metric; missing or None: an existing
    test's, else TEST_DEFAULTS). The flag as `list_flags` gives it, and whether it was
    created: a flag of that name with the same settings is kept (a setup script run again);
    a UsageError when it has others, or when `test` differs from an existing test's."""
    check_name("name", name)
    if not name.strip():
        raise UsageError("a flag needs a name")
    given = {k: v for k, v in values.items() if v is not None}
    _check(given)
    asked = {k: v for k, v in test.items() if v is not None and v is not False}
    ab.check_settings(asked)  # before the flag is stored: never a flag without its test
    with ABTestStore(where) as tests:
        existing = tests.get(name)
    full = {**DEFAULTS, **_test_settings(name, existing, given, asked), **given}
    with FlagStore(where) as flags:
        if not flags.create(name, full):
            row = list_flags(where, name)[0]
            if all(row[k] == full[k] for k in FLAG_FIELDS):
                return row, False
            how = "`memgauge flags set`" if on_command_line() else "`set_flag`"
            other = next(k for k in FLAG_FIELDS if row[k] != full[k])
            raise UsageError(
                f"a feature flag called {name!r} exists with {other} {row[other]}, not"
                f" {full[other]}; change it with {how}"
            )
    with ABTestStore(where) as tests:
        if tests.get(name) is None:
            config = {**TEST_DEFAULTS, **asked, **{v: full[k] for k, v in _TEST_KEYS.items()}}
            metric = config.pop("metric")
            # `ab create NAME` from another process may create it since `get` read none: the
            # flag is stored already, and that test is the flag's test
            ab.create_test(tests, name, metric, config, exist_ok=True)
    return list_flags(where, name)[0], True


def set_flag(
    where: str | Path | StoreURL | None, name: str, values: Mapping[str, Any]
) -> dict[str, Any]:
    """Change some of flag `name`'s settings (None: unchanged); its A/B test takes the new
    min_samples and threshold. The flag as `list_flags` gives it."""
    changes = {k: v for k, v in values.items() if v is not None}
    _check(changes)
    config = {v: changes[k] for k, v in _TEST_KEYS.items() if k in changes}
    with FlagStore(where) as flags:
        if not flags.update(name, changes, config):
            raise _unknown(name)
    return list_flags(where, name)[0]


def list_flags(
    where: str | Path | StoreURL | None, name: str | None = None
) -> list[dict[str, Any]]:
    """Every flag (or only `name`: a UsageError when there is none), with its test's state;
    the store is read as it is (a missing one is a UsageError, see `engine.open_read_only`)."""
    with FlagStore(where, read_only=True) as flags:
        found = flags.flags(name)
    if name is not None and not found:
        raise _unknown(name)
    return found


def feed_from_shadow(
    where: str | Path | StoreURL | None, name: str, *, while_open: bool = False
) -> tuple[int, int, SPRTState | None, dict[str, Any]]:
    """Feed A/B test `name` the shadow comparisons of experiment `name` it has not taken yet,
    one pair per judged comparison (each arm's RR for an MRR / RR test, nDCG for an nDCG test,
    both latencies; constitutional surfacing is not measured by a shadow run). Returns (pairs
    fed, comparisons left out for want of judgments, the SPRT's state or None when nothing was
    fed, the test's report). A graduated test takes no more pairs and a paused one none until
    it resumes: a UsageError, or with `while_open` (a flag's runner feeding it in the
    background) nothing fed (a paused test's comparisons wait for it, unfed)."""
    with ABTestStore(where) as tests:
        test = tests.get(name)
        if test is None:
            raise UsageError(
                f"no A/B test {name!r}; create it (`memgauge ab create {name}` or"
                f" `memgauge flags create {name}`) before feeding it shadow data"
            )
        if while_open and _closed(tests, name):
            return 0, 0, None, ab.ab_report(tests, name)
        family = metric_family(str(test["metric"]))
        if family is None:
            raise UsageError(
                f"A/B test {name!r} is on {test['metric']}: shadow runs measure MRR (RR@k) and"
                " nDCG@k only; feed it pairs from a file instead"
            )
        after = tests.last_shadow_run(name)
        with ShadowStore(where) as shadow:
            rows = shadow.shadow_pairs(name, after)
        judged = [r for r in rows if r[f"control_{family}"] is not None]
        pairs = [
            ab.Pair(
                query_id=r["query_id"],
                control=r[f"control_{family}"],
                treatment=r[f"treatment_{family}"],
                control_latency_ms=r["control_latency_ms"],
                treatment_latency_ms=r["treatment_latency_ms"],
            )
            for r in judged
        ]
        if not pairs:
            return 0, len(rows), None, ab.ab_report(tests, name)
        try:
            added, state, report = ab.add_pairs(tests, name, pairs, [r["id"] for r in judged])
        except UsageError:
            if while_open and _closed(tests, name):  # graduated or paused meanwhile
                return 0, 0, None, ab.ab_report(tests, name)
            raise
    return added, len(rows) - len(judged), state, report


def _closed(tests: ABTestStore, name: str) -> bool:
    """Whether A/B test `name` takes no pairs now: graduated (decided) or paused."""
    test = tests.get(name)
    return test is not None and test["status"] in ("graduated", "paused")


class Flags:
    """The flags of one store, held in memory for the hot path and re-read every
    `refresh_s` seconds by a background thread (0: only on `refresh()`)."""

    def __init__(self, where: str | Path | StoreURL | None = None, *, refresh_s: float = 5.0):
        self.where = None if where is None else store_url(where)
        self._flags: dict[str, FeatureFlag] = {}
        self._stop = threading.Event()
        self._feed_lock = threading.Lock()
        # a store not there yet is to be given as this caller gives it: Flags(PATH) from Python
        with nullcontext() if on_command_line() else store_given_as("as Flags(PATH)"):
            self.refresh()
        self._thread: threading.Thread | None = None
        if refresh_s > 0:
            self._thread = threading.Thread(
                target=self._loop, args=(refresh_s,), name="memgauge-flags", daemon=True
            )
            self._thread.start()

    def refresh(self) -> None:
        """Re-read every flag now."""
        rows = list_flags(self.where)
        keys = ("name", *FLAG_FIELDS)
        self._flags = {r["name"]: FeatureFlag(**{k: r[k] for k in keys}) for r in rows}

    def _loop(self, every: float) -> None:
        while not self._stop.wait(every):
            try:
                self.refresh()
            except Exception:  # a store down for a while: keep the flags last read
                continue

    def get(self, flag: str) -> FeatureFlag | None:
        """The flag as last read, or None."""
        return self._flags.get(flag)

    def is_enabled(self, flag: str, identity: str) -> bool:
        """Whether `flag` is on for `identity` (an unknown flag is off)."""
        f = self._flags.get(flag)
        return f is not None and f.is_enabled(identity)

    def should_shadow(self, flag: str, query_id: str) -> bool:
        """Whether `flag` shadows query `query_id` (an unknown flag does not)."""
        f = self._flags.get(flag)
        return f is not None and f.should_shadow(query_id)

    def shadow_runner(
        self,
        flag: str,
        control: Search,
        treatment: Search,
        *,
        feed_every: int = 50,
        **options: Any,
    ) -> ShadowRunner:
        """A `ShadowRunner` for `flag`'s experiment, recording into this store, shadowing the
        queries `should_shadow` picks (the flag as currently read). When the flag's `feed_ab`
        is on, a worker feeds its A/B test every `feed_every` recorded comparisons, and
        closing the runner feeds the rest."""
        if flag not in self._flags:
            raise _unknown(flag)
        recorded = itertools.count(1)  # next() is atomic: workers may record at once

        def feeds() -> bool:
            f = self._flags.get(flag)
            return f is not None and f.feed_ab

        def after_record() -> None:
            if next(recorded) % feed_every == 0 and feeds():
                self.feed(flag)

        def on_close() -> None:
            if feeds():
                self.feed(flag)

        return ShadowRunner(
            flag,
            control,
            treatment,
            ShadowStore(self.where),
            should_shadow=lambda qid: self.should_shadow(flag, qid),
            after_record=after_record,
            on_close=on_close,
            close_recorder=True,
            **options,
        )

    def feed(self, flag: str) -> int:
        """Feed `flag`'s A/B test its new shadow comparisons now (one feeder at a time in this
        process); the pairs fed (none once the test has graduated: it is decided; none while
        it is paused: they wait for `ab resume`)."""
        with self._feed_lock:
            return feed_from_shadow(self.where, flag, while_open=True)[0]

    def close(self) -> None:
        """Stop the refresh thread."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
