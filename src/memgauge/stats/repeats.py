"""What repeats of every item tell: pass@k and pass^k, and a mean's CI with items as clusters.

pass@k (Chen et al. 2021, "Evaluating Large Language Models Trained on Code", the Codex paper,
equation 1): the chance that at least one of k attempts drawn without replacement from an
item's n passes, c of which passed: 1 - C(n - c, k) / C(n, k), unbiased; averaged over items.

pass^k (Yao et al. 2024, "tau-bench", section 5): the chance that all k drawn attempts pass:
C(c, k) / C(n, k), unbiased; averaged over items. pass@1 = pass^1 = c / n.

Both need k <= n for every item: an item with fewer attempts than k (some of its repeats failed
to run) is left out of that k and counted.

`cluster_bootstrap_ci`: the repeats of one item are not independent draws (the same question
asked again), so the CI resamples items (clusters) with replacement, each with all its repeats
(Field & Welsh 2007, "Bootstrapping clustered data", JRSS-B 69(3)). Each item weighs one: its
value is the mean of its scored repeats (`data.records.mean_of_repeats`, what `runs compare`
and the viewer's compare page pair), and the run's mean is the mean of those, so an item whose
repeats partly failed counts as much as one whose every repeat was scored, and the number is the
same wherever it is shown. With one repeat per item it is the ordinary percentile bootstrap over
items.
"""

from __future__ import annotations

from collections.abc import Sequence
from math import comb

import numpy as np
import numpy.typing as npt

from memgauge._util.numbers import CONFIDENCE, N_RESAMPLES, fmean
from memgauge.data.records import mean_of_repeats
from memgauge.stats.bootstrap import ConfidenceInterval

__all__ = ["cluster_bootstrap_ci", "pass_at_k", "pass_hat_k", "pass_k_over_items"]


def pass_at_k(n: int, c: int, k: int) -> float:
    """1 - C(n - c, k) / C(n, k): at least one of k of the n attempts (c passed) passes."""
    _check(n, c, k)
    return 1.0 - comb(n - c, k) / comb(n, k)


def pass_hat_k(n: int, c: int, k: int) -> float:
    """C(c, k) / C(n, k): all k of k attempts drawn from the n (c passed) pass."""
    _check(n, c, k)
    return comb(c, k) / comb(n, k)


def _check(n: int, c: int, k: int) -> None:
    if not (0 <= c <= n and 1 <= k <= n):
        raise ValueError(f"need 0 <= c <= n and 1 <= k <= n, got n={n}, c={c}, k={k}")


def pass_k_over_items(
    outcomes: Sequence[Sequence[bool]], k: int
) -> tuple[float | None, float | None, int, int]:
    """(mean pass@k, mean pass^k, items counted, items left out for having fewer than k
    attempts) over items whose attempts' outcomes are `outcomes`; None: no item counted."""
    at, hat = [], []
    for attempts in outcomes:
        n = len(attempts)
        if n < k:
            continue
        c = sum(bool(a) for a in attempts)
        at.append(pass_at_k(n, c, k))
        hat.append(pass_hat_k(n, c, k))
    left_out = len(outcomes) - len(at)
    if not at:
        return None, None, 0, left_out
    return sum(at) / len(at), sum(hat) / len(hat), len(at), left_out


def cluster_bootstrap_ci(
    clusters: Sequence[Sequence[float]],
    *,
    n_resamples: int = N_RESAMPLES,
    confidence: float = CONFIDENCE,
    seed: int = 0,
) -> ConfidenceInterval:
    """The mean of the clusters' means (an item's repeats' values each; NaN is left out and
    counted) with a percentile CI that resamples clusters (module docstring); `n` is the number
    of clusters with a value."""
    if not 0.0 < confidence < 1.0:
        raise ValueError("confidence must be in (0, 1)")
    item_means, excluded = [], 0
    for values in clusters:
        scored = [float(v) for v in values if v == v]
        excluded += len(values) - len(scored)
        if scored:
            item_means.append(mean_of_repeats(scored))
    n = len(item_means)
    if n == 0:
        return ConfidenceInterval(
            None, None, None, 0, excluded, n_resamples, confidence, "cluster", "no scored items"
        )
    s = np.asarray(item_means, dtype=np.float64)
    mean = fmean(s)
    if n == 1:
        note = "one scored item: the interval is degenerate"
        return ConfidenceInterval(
            mean, mean, mean, 1, excluded, n_resamples, confidence, "cluster", note
        )
    rng = np.random.default_rng(seed)
    idx: npt.NDArray[np.intp] = rng.integers(0, n, size=(n_resamples, n), dtype=np.intp)
    means = s[idx].mean(axis=1)
    tail = (1.0 - confidence) / 2.0 * 100.0
    low, high = np.percentile(means, [tail, 100.0 - tail])
    return ConfidenceInterval(
        mean, float(low), float(high), n, excluded, n_resamples, confidence, "cluster"
    )
