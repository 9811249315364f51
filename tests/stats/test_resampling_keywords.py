"""The bootstrap's keywords are declared once (`Resampling`, and `PairedOptions` with the
randomization test's) for the one-row functions that hand them on, and they name exactly the
keywords of the functions they reach: a keyword added there and not here fails mypy at the
call and this test."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import numpy as np

from memgauge.stats.bootstrap import Resampling, bootstrap_ci, bootstrap_cis
from memgauge.stats.breakdown import breakdown, breakdowns
from memgauge.stats.paired import PairedOptions, paired_compare, paired_compare_many


def _keywords(f: Callable[..., Any]) -> set[str]:
    params = inspect.signature(f).parameters.values()
    return {p.name for p in params if p.kind is p.KEYWORD_ONLY}


def test_the_bundles_name_the_keywords_of_the_functions_they_reach() -> None:
    assert Resampling.__optional_keys__ == _keywords(bootstrap_cis) == _keywords(breakdowns)
    assert PairedOptions.__optional_keys__ == _keywords(paired_compare_many)


def test_keywords_handed_on_are_those_given() -> None:
    a, b = np.linspace(0, 1, 30), np.linspace(0, 1, 30) ** 2
    kept: PairedOptions = {"n_resamples": 200, "confidence": 0.9, "seed": 5, "n_permutations": 50}
    assert paired_compare(a, b, **kept) == paired_compare_many([(a, b)], **kept)[0]
    resampling: Resampling = {"n_resamples": 200, "confidence": 0.9, "seed": 5}
    ci = bootstrap_ci(b, **resampling)
    assert (ci.n_resamples, ci.confidence) == (200, 0.9)
    assert ci == bootstrap_cis(b[None, :], **resampling)[0]
    groups = ["x", "y"] * 15
    assert breakdown(b, groups, **resampling) == breakdowns(b[None, :], groups, **resampling)[0]
