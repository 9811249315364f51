"""Feature flags and the workflow they drive (seed 002 section 4.3): a flag, its shadow
experiment and its A/B test share one name; shadow data feeds the test; graduation rolls the
flag out to 100%."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from memgauge.api._store import Where, require_store, results_store
from memgauge.online import flags as _flags
from memgauge.online.ab import check_settings
from memgauge.stats.sequential import SPRTState
from memgauge.store.url import FLAGS

__all__ = ["add_ab_from_shadow", "create_flag", "feature_flags", "set_flag"]


def create_flag(
    name: str,
    settings: Mapping[str, Any] | None = None,
    *,
    metric: str | None = None,
    delta: float | None = None,
    alpha: float | None = None,
    beta: float | None = None,
    max_latency_increase: float | None = None,
    allow_unmeasured: bool = False,
    store: Where = None,
) -> dict[str, Any]:
    """Create flag `name` with `settings` (any of `rollout_percent`, `shadow_enabled`,
    `shadow_percent`, `min_samples`, `graduation_threshold`, `feed_ab`; those missing or None
    take seed 002's defaults: rollout 0%, shadowing off at 10%, 100 samples, threshold 0.03,
    not feeding its test by itself) and its A/B test on `metric` (an SPRT for `delta` at
    `alpha`, `beta`; see `create_ab_test`; None: seed 002's MRR, delta 0.05, alpha 0.05, beta 0.20), unless a
    test of that name exists: the flag then takes its settings. A flag of that name with the
    same settings is kept (a setup run again). A UsageError for a setting out of range, a
    name taken by a flag of other settings, or a test setting given that the test has not."""
    test = {
        "metric": metric,
        "delta": delta,
        "alpha": alpha,
        "beta": beta,
        "max_latency_increase": max_latency_increase,
        "allow_unmeasured": allow_unmeasured,
    }
    return flag_created(name, settings, test, store)[0]


def flag_created(
    name: str, settings: Mapping[str, Any] | None, test: Mapping[str, Any], store: Where
) -> tuple[dict[str, Any], bool]:
    """`create_flag`'s flag, and whether it was created (False: kept, as it was)."""
    # before the store is made; a setting not given as the test will have it, so that a
    # `delta=nan` alone meets the SPRT check (with the existing test's, `_flags` checks again)
    given = {k: v for k, v in test.items() if v is not None}
    check_settings({**_flags.TEST_DEFAULTS, **given})
    return _flags.create_flag(results_store(store), name, settings or {}, test)


def set_flag(name: str, settings: Mapping[str, Any], *, store: Where = None) -> dict[str, Any]:
    """Change flag `name`'s `settings` (the keys `create_flag` takes; None: unchanged); a
    UsageError for an unknown flag, an unknown setting or one out of range."""
    return _flags.set_flag(require_store(store, FLAGS), name, settings)


def feature_flags(name: str | None = None, *, store: Where = None) -> list[dict[str, Any]]:
    """Every flag (or only `name`), each with its A/B test's state (`test`)."""
    return _flags.list_flags(require_store(store, FLAGS), name)


def add_ab_from_shadow(
    name: str, *, store: Where = None
) -> tuple[int, int, SPRTState | None, dict[str, Any]]:
    """Feed A/B test `name` the judged shadow comparisons of experiment `name` not fed yet:
    (pairs fed, comparisons without judgments left out, SPRT state or None, the report)."""
    return _flags.feed_from_shadow(require_store(store), name)
