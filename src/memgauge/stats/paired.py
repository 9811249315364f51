"""Paired comparison of two systems over the same queries.

Tests: paired t-test (scipy.stats.ttest_rel), Wilcoxon signed-rank (scipy.stats.wilcoxon's p,
zero_method "wilcox": zero differences dropped; counted by `signed_rank` where SciPy would
enumerate sign flips), and Fisher's randomization (sign-flip permutation) test, which Smucker,
Allan & Carterette (2007, "A comparison of statistical significance tests for information
retrieval evaluation", CIKM) recommend for IR. Effect size: Cohen's d_z = mean(d) / sd(d). Holm
(1979) step-down correction across measures.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import nullcontext
from dataclasses import dataclass, replace
from typing import Literal, Unpack

import numpy as np
import numpy.typing as npt

from memgauge._util.blas import one_blas_thread
from memgauge._util.numbers import ALPHA, CONFIDENCE, N_RESAMPLES, fmean
from memgauge.stats.bootstrap import Resampling, resample_means
from memgauge.stats.draws import coin_bytes
from memgauge.stats.multiple import holm
from memgauge.stats.signed_rank import wilcoxon_p

__all__ = [
    "PairedComparison",
    "PairedOptions",
    "compare_many",
    "holm",
    "paired_compare",
    "paired_compare_many",
    "randomization_test",
    "randomization_tests",
    "significance_mark",
]

#: products of at least this many sign-columns run on one BLAS thread (OpenBLAS splits only
#: large products; a small one would pay threadpoolctl's few hundred microseconds for nothing)
_THREADED = 10_000_000
#: a randomization test of at least this many signs runs beside the bootstrap, in a thread
_TWO_THREADS = 50_000_000


@dataclass(frozen=True)
class PairedComparison:
    """The outcome of comparing system b against baseline a on paired per-query values."""

    n: int
    n_dropped: int
    mean_a: float | None = None
    mean_b: float | None = None
    delta: float | None = None
    delta_ci_low: float | None = None
    delta_ci_high: float | None = None
    p_t: float | None = None
    p_wilcoxon: float | None = None
    p_randomization: float | None = None
    effect_size: float | None = None
    p_value: float | None = None
    p_holm: float | None = None
    mark: str = ""
    note: str | None = None


def randomization_test(
    diffs: npt.NDArray[np.float64], n_permutations: int = 10_000, seed: int = 0
) -> float:
    """Two-sided paired randomization test of mean(diffs) = 0.

    Under H0 each difference's sign is exchangeable: p = (1 + #{b : |mean(s_b * d)| >=
    |mean(d)|}) / (1 + B) with s_b uniform random signs (the +1 counts the observed
    assignment, so p > 0). Vectorised in chunks. All-zero diffs give p = 1.
    """
    d = np.asarray(diffs, dtype=np.float64)
    if d.size == 0 or not np.any(d):
        return 1.0
    return randomization_tests(d[None, :], n_permutations, seed)[0]


def randomization_tests(
    diffs: npt.NDArray[np.float64], n_permutations: int = 10_000, seed: int = 0
) -> list[float]:
    """`randomization_test` of each row of `diffs` (rows of as many differences, none all
    zero): the same signs flip every row, drawn once (the draw is most of the test's cost)."""
    d = np.asarray(diffs, dtype=np.float64)
    rows, n = d.shape
    rng = np.random.default_rng(seed)
    observed = np.abs(d.mean(axis=1))
    hits = np.zeros(rows, dtype=np.int64)
    step = max(1, 2_000_000 // n)
    tol = 1e-12 * np.maximum(1.0, observed)
    # a zero difference adds nothing whatever its sign: only the other columns are multiplied
    # (two runs that differ on a few items of 100,000: a few hundred columns, not 100,000)
    nonzero = np.flatnonzero(np.any(d != 0, axis=0))
    some = nonzero.size < n
    if some:
        d = d[:, nonzero]
    # one BLAS thread: a product split over threads is many times slower on a busy machine,
    # and its last bits would depend on the machine's number of cores
    with one_blas_thread() if nonzero.size * n_permutations >= _THREADED else nullcontext():
        for start in range(0, n_permutations, step):
            size = min(step, n_permutations - start)
            # every sign is drawn, as `integers` draws them, so the kept columns' are as they were
            drawn = coin_bytes(rng, (size, n))
            kept = drawn[:, nonzero] if some else drawn
            signs = (kept >> np.uint8(7)).view(np.int8) * np.int8(2) - np.int8(1)
            # one row: the product as it always was (a matrix-vector product)
            product = (signs @ d[0])[:, None] if rows == 1 else signs @ d.T
            means = np.abs(product) / n
            hits += np.count_nonzero(means >= observed - tol, axis=0)
    return [(int(h) + 1) / (n_permutations + 1) for h in hits]


def significance_mark(p: float | None, alpha: float = ALPHA) -> str:
    """'**' when p < alpha/5 (0.01 at the default), '*' when p < alpha, '' otherwise."""
    if p is None:
        return ""
    if p < alpha / 5:
        return "**"
    return "*" if p < alpha else ""


class PairedOptions(Resampling, total=False):
    """`paired_compare`'s keywords: the bootstrap's, and the randomization test's sign flips
    (default 10,000)."""

    n_permutations: int


def paired_compare(
    a: npt.ArrayLike, b: npt.ArrayLike, **options: Unpack[PairedOptions]
) -> PairedComparison:
    """Compare per-query values `b` against baseline `a` (same queries, same order).

    Pairs where either side is NaN are dropped and counted. delta = mean(b - a) with a paired
    bootstrap CI. With fewer than 2 pairs the tests are None; with all differences zero every
    p is 1.0 and the note says so. `n_permutations=0` skips the randomization test (its p is
    None).
    """
    (out,) = paired_compare_many([(a, b)], **options)
    return out


def paired_compare_many(
    pairs: Sequence[tuple[npt.ArrayLike, npt.ArrayLike]],
    *,
    seed: int = 0,
    n_permutations: int = 10_000,
    n_resamples: int = N_RESAMPLES,
    confidence: float = CONFIDENCE,
) -> list[PairedComparison]:
    """`paired_compare` of each (a, b) of `pairs`, the same numbers: every pair's resamples and
    sign flips are drawn from a generator seeded by `seed` and depend only on the number of
    pairs kept, so the pairs with as many are drawn for once (a two-run comparison's measures
    at 100,000 items: one draw of 10^8 bootstrap indices and of 10^9 signs, not one a measure).
    """
    from scipy import stats  # scipy loads in ~0.5 s: only when used

    out: list[PairedComparison | None] = []
    pending: dict[int, list[tuple[int, npt.NDArray[np.float64], npt.NDArray[np.float64]]]] = {}
    dropped: dict[int, int] = {}
    for a, b in pairs:
        xa = np.asarray(a, dtype=np.float64)
        xb = np.asarray(b, dtype=np.float64)
        if xa.shape != xb.shape:
            raise ValueError(
                f"paired values must have the same shape, got {xa.shape} and {xb.shape}"
            )
        keep = ~(np.isnan(xa) | np.isnan(xb))
        xa, xb = xa[keep], xb[keep]
        n, n_dropped = int(xa.size), int((~keep).sum())
        early = _without_resampling(xa, xb, n_dropped)
        out.append(early)
        if early is None:
            dropped[len(out) - 1] = n_dropped
            pending.setdefault(n, []).append((len(out) - 1, xa, xb))
    for n, group in pending.items():
        diffs = np.stack([xb - xa for _, xa, xb in group])
        means, found = _resampled(diffs, n_resamples, n_permutations, seed)
        tail = (1 - confidence) / 2 * 100
        # n_permutations=0: the caller reads another test's p and skips the costliest one
        p_rs: list[float | None] = list(found) if found is not None else [None] * len(group)
        for row, (at, xa, xb) in enumerate(group):
            d = diffs[row]
            delta = fmean(d)
            lo, hi = np.percentile(means[row], [tail, 100 - tail])
            sd = float(d.std(ddof=1))
            if sd <= 1e-12 * max(1.0, abs(delta)):
                # Every pair moved by the same amount: the t statistic is unbounded, p -> 0.
                sd = 0.0
                p_t = 0.0
            else:
                p_t = float(stats.ttest_rel(xb, xa).pvalue)
            p_w = wilcoxon_p(d)
            out[at] = PairedComparison(
                mean_a=fmean(xa),
                mean_b=fmean(xb),
                delta=delta,
                delta_ci_low=float(lo),
                delta_ci_high=float(hi),
                p_t=p_t,
                p_wilcoxon=p_w,
                p_randomization=p_rs[row],
                effect_size=(delta / sd) if sd > 0 else None,
                n=n,
                n_dropped=dropped[at],
            )
    return [c for c in out if c is not None]


def _resampled(
    diffs: npt.NDArray[np.float64], n_resamples: int, n_permutations: int, seed: int
) -> tuple[npt.NDArray[np.float64], list[float] | None]:
    """The bootstrap's resample means of each row of `diffs` and its randomization test's p
    (None without permutations). Each draws from its own generator seeded by `seed`, so a big
    test runs in a second thread while the bootstrap runs in this one (NumPy's draws, gathers
    and products leave the GIL): two cores answer in about the time of the longer one."""
    n = diffs.shape[1]
    if n_permutations <= 0:
        return resample_means(diffs, n_resamples, np.random.default_rng(seed)), None
    if n * n_permutations < _TWO_THREADS:
        means = resample_means(diffs, n_resamples, np.random.default_rng(seed))
        return means, randomization_tests(diffs, n_permutations, seed)
    # the limit is set here, in the caller's thread: OpenBLAS (0.3.31) ignores one set from a
    # second thread once the main thread has set one, and the test's own `one_blas_thread`
    # inside the worker then only joins this one
    with (
        one_blas_thread(),
        ThreadPoolExecutor(max_workers=1, thread_name_prefix="memgauge-signs") as pool,
    ):
        test = pool.submit(randomization_tests, diffs, n_permutations, seed)
        means = resample_means(diffs, n_resamples, np.random.default_rng(seed))
        return means, test.result()


def _without_resampling(
    xa: npt.NDArray[np.float64], xb: npt.NDArray[np.float64], dropped: int
) -> PairedComparison | None:
    """The comparison of pairs that need no resampling (none, one, or no difference); None
    for the rest."""
    n = int(xa.size)
    if n == 0:
        return PairedComparison(n=0, n_dropped=dropped, note="no paired values")
    d = xb - xa
    if n < 2:
        return PairedComparison(
            n=n,
            n_dropped=dropped,
            mean_a=fmean(xa),
            mean_b=fmean(xb),
            delta=fmean(d),
            note="fewer than 2 pairs",
        )
    if not np.any(d):
        # its interval is 0 without resampling (n = 100,000: a second per measure)
        return PairedComparison(
            n=n,
            n_dropped=dropped,
            mean_a=fmean(xa),
            mean_b=fmean(xb),
            delta=0.0,
            delta_ci_low=0.0,
            delta_ci_high=0.0,
            p_t=1.0,
            p_wilcoxon=1.0,
            p_randomization=1.0,
            note="all differences are zero",
        )
    return None


def compare_many(
    a: Mapping[str, npt.ArrayLike],
    b: Mapping[str, npt.ArrayLike],
    *,
    primary_test: Literal["randomization", "t", "wilcoxon"] = "randomization",
    seed: int = 0,
    alpha: float = ALPHA,
    n_permutations: int = 10_000,
    n_resamples: int = N_RESAMPLES,
) -> dict[str, PairedComparison]:
    """`paired_compare` per measure, Holm-corrected across measures on the primary test's p."""
    out: dict[str, PairedComparison] = {}
    for name in a:
        if name in b:
            out[name] = paired_compare(
                a[name],
                b[name],
                seed=seed,
                n_permutations=n_permutations,
                n_resamples=n_resamples,
            )
    field = {"randomization": "p_randomization", "t": "p_t", "wilcoxon": "p_wilcoxon"}[primary_test]
    raw = [getattr(c, field) for c in out.values()]
    adjusted = holm(raw)
    return {
        name: replace(c, p_value=p, p_holm=adj, mark=significance_mark(adj, alpha))
        for (name, c), p, adj in zip(out.items(), raw, adjusted, strict=True)
    }
