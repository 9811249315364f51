"""Several systems compared on the same queries, as IR papers report them.

For each measure, pairs of systems (every pair, or the baseline, the first system, against each
other one) are compared on the queries both scored, with one of:

- `fisher`: Fisher's randomization test, paired (each query's difference keeps or flips its
  sign with probability 1/2; `randomization_test`), the test Smucker, Allan & Carterette (2007)
  recommend for IR and ranx calls `fisher`;
- `student`: the paired t-test;
- `wilcoxon`: the Wilcoxon signed-rank test;
- `tukey`: Tukey's HSD over all the systems of the measure, queries as blocks
  (`tukey_hsd_blocked`), which controls the family-wise error over every pair by itself.

Every pair also carries its delta (b - a) with a paired bootstrap CI. The p-values of the
pairwise tests are adjusted by `correction` (Holm by default, Bonferroni, or none) over a
family: `table`, every comparison of the table (each pair on each measure), or `measure`, the
comparisons of one measure (the family Tukey's HSD controls, and the one PyTerrier's
`Experiment(correction=...)` uses). Tukey's p-values already cover the pairs of a measure:
with family `measure` they are final; with family `table` Bonferroni across the measures
makes them cover the table (Holm's step-down does not extend over families of pairs, so
`tukey` refuses `holm`).

A system beats another on a measure when their comparison is significant (adjusted p <
alpha) and its paired delta favours it: every measure here is higher-is-better.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, get_args

import numpy as np
import numpy.typing as npt

from memgauge._util.numbers import ALPHA, N_RESAMPLES, fmean
from memgauge.stats.multiple import Correction, adjust
from memgauge.stats.paired import PairedComparison, paired_compare_many
from memgauge.stats.tukey import tukey_hsd_blocked

__all__ = [
    "FAMILIES",
    "PAIRINGS",
    "TESTS",
    "TEST_NAMES",
    "Family",
    "PairResult",
    "Pairing",
    "SystemTest",
    "SystemsComparison",
    "compare_systems",
    "resolve_correction",
]

SystemTest = Literal["fisher", "student", "wilcoxon", "tukey"]
Family = Literal["table", "measure"]
Pairing = Literal["all", "baseline"]
TESTS: tuple[SystemTest, ...] = get_args(SystemTest)
FAMILIES: tuple[Family, ...] = get_args(Family)
PAIRINGS: tuple[Pairing, ...] = get_args(Pairing)

TEST_NAMES: dict[SystemTest, str] = {
    "fisher": "Fisher's randomization test",
    "student": "paired Student's t-test",
    "wilcoxon": "Wilcoxon signed-rank test",
    "tukey": "Tukey's HSD test (queries as blocks)",
}
_RAW_P = {"fisher": "p_randomization", "student": "p_t", "wilcoxon": "p_wilcoxon"}


@dataclass(frozen=True)
class PairResult:
    """System `b` against system `a` (indices into `SystemsComparison.systems`) on a measure."""

    measure: str
    a: int
    b: int
    paired: PairedComparison
    """Means, delta = b - a with its bootstrap CI, every raw p, n and n_dropped."""
    p_value: float | None
    """The chosen test's p (Tukey's: already over the measure's pairs)."""
    p_adjusted: float | None
    """After the correction over the family."""
    significant: bool
    """p_adjusted < alpha."""

    @property
    def winner(self) -> int | None:
        """The index of the system that is significantly better, if one is."""
        delta = self.paired.delta
        if not self.significant or delta is None or delta == 0:
            return None
        return self.b if delta > 0 else self.a


@dataclass(frozen=True)
class SystemsComparison:
    """Every system's mean per measure and the pairwise comparisons (see the module doc)."""

    systems: tuple[str, ...]
    measures: tuple[str, ...]
    means: dict[str, tuple[float | None, ...]]
    """measure -> each system's mean over the queries it scored (None: none scored)."""
    counts: dict[str, tuple[int, ...]]
    """measure -> how many queries each system scored."""
    pairs: tuple[PairResult, ...]
    test: SystemTest
    correction: Correction
    family: Family
    pairing: Pairing
    alpha: float
    n_permutations: int
    notes: dict[str, str]
    """measure -> what a reader should know (Tukey's queries, a measure without a test)."""

    @property
    def family_size(self) -> int:
        """The number of comparisons with a p-value: the table's family size."""
        return sum(p.p_value is not None for p in self.pairs)

    def beaten(self, measure: str, system: int) -> list[int]:
        """The systems `system` is significantly better than on `measure`, in order."""
        return sorted(
            (p.a if p.winner == p.b else p.b)
            for p in self.pairs
            if p.measure == measure and p.winner == system
        )

    def as_dict(self) -> dict[str, Any]:
        """Plain data for JSON: the settings, the means, the comparisons and who beats whom."""
        return {
            "systems": list(self.systems),
            "measures": list(self.measures),
            "test": self.test,
            "test_name": TEST_NAMES[self.test],
            "correction": self.correction,
            "family": self.family,
            "pairs": self.pairing,
            "alpha": self.alpha,
            "n_permutations": self.n_permutations if self.test == "fisher" else None,
            "means": {
                m: dict(zip(self.systems, self.means[m], strict=True)) for m in self.measures
            },
            "n_scored": {
                m: dict(zip(self.systems, self.counts[m], strict=True)) for m in self.measures
            },
            "beats": {
                m: {
                    s: [self.systems[j] for j in self.beaten(m, i)]
                    for i, s in enumerate(self.systems)
                }
                for m in self.measures
            },
            "comparisons": [_pair_dict(self.systems, p) for p in self.pairs],
            "notes": self.notes,
        }


def _pair_dict(systems: Sequence[str], p: PairResult) -> dict[str, Any]:
    c = p.paired
    return {
        "measure": p.measure,
        "a": systems[p.a],
        "b": systems[p.b],
        "mean_a": c.mean_a,
        "mean_b": c.mean_b,
        "delta": c.delta,
        "delta_ci_low": c.delta_ci_low,
        "delta_ci_high": c.delta_ci_high,
        "p_value": p.p_value,
        "p_adjusted": p.p_adjusted,
        "significant": p.significant,
        "winner": None if p.winner is None else systems[p.winner],
        "n": c.n,
        "n_dropped": c.n_dropped,
        "note": c.note,
    }


def resolve_correction(
    test: SystemTest, family: Family, correction: Correction | None
) -> Correction:
    """The correction to apply: the one given, or the default (holm; for `tukey`, bonferroni
    across measures with family `table`, none with family `measure`); a ValueError for a
    combination that would not control the error it claims to."""
    if test != "tukey":
        return correction or "holm"
    if correction is None:
        return "bonferroni" if family == "table" else "none"
    if correction == "holm":
        raise ValueError(
            "Tukey's HSD already adjusts over the pairs of each measure, and Holm's step-down "
            "does not extend over such families: use --correction bonferroni (across "
            "measures) or none"
        )
    if family == "measure" and correction != "none":
        raise ValueError(
            "Tukey's HSD is its own correction over the pairs of a measure: with --family "
            "measure use --correction none, or --family table to cover every measure"
        )
    return correction


def _pair_indices(m: int, pairing: Pairing) -> list[tuple[int, int]]:
    if pairing == "baseline":
        return [(0, j) for j in range(1, m)]
    return [(i, j) for i in range(m) for j in range(i + 1, m)]


def _means(x: npt.NDArray[np.float64]) -> tuple[tuple[float | None, ...], tuple[int, ...]]:
    scored = ~np.isnan(x)
    counts = scored.sum(axis=1)
    means = tuple(fmean(row[ok]) if ok.any() else None for row, ok in zip(x, scored, strict=True))
    return means, tuple(int(c) for c in counts)


def compare_systems(
    systems: Sequence[str],
    values: Mapping[str, npt.ArrayLike],
    *,
    test: SystemTest = "fisher",
    correction: Correction | None = None,
    family: Family = "table",
    pairing: Pairing = "all",
    alpha: float = ALPHA,
    seed: int = 0,
    n_permutations: int = 10_000,
    n_resamples: int = N_RESAMPLES,
) -> SystemsComparison:
    """Compare `systems` on each measure of `values` (measure -> a (systems, queries) matrix,
    the same queries in the same column; NaN where a system has no value for a query).

    See the module docstring for the tests, pairs, family and correction. One system gives its
    means and no comparison. A ValueError for no system, a matrix of the wrong shape or a
    correction `tukey` cannot take.
    """
    if test not in TESTS:
        raise ValueError(f"unknown test {test!r}; use one of {', '.join(TESTS)}")
    if not systems:
        raise ValueError("no systems to compare")
    corr = resolve_correction(test, family, correction)
    index = _pair_indices(len(systems), pairing)
    means: dict[str, tuple[float | None, ...]] = {}
    counts: dict[str, tuple[int, ...]] = {}
    notes: dict[str, str] = {}
    raw: list[tuple[str, int, int, PairedComparison, float | None]] = []
    todo: list[tuple[str, int, int, float | None]] = []
    columns: list[tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]] = []
    for measure, given in values.items():
        x = np.asarray(given, dtype=np.float64)
        if x.ndim != 2 or x.shape[0] != len(systems):
            raise ValueError(
                f"{measure}: expected a ({len(systems)}, queries) matrix, got shape {x.shape}"
            )
        means[measure], counts[measure] = _means(x)
        tukey = tukey_hsd_blocked(x) if test == "tukey" else None
        if tukey is not None and tukey.n_dropped:
            notes[measure] = (
                f"Tukey's HSD on the {tukey.n} queries every system scored "
                f"({tukey.n_dropped} left out)"
            )
        for a, b in index:
            hsd = None
            if tukey is not None:
                found = float(tukey.pvalue[a, b])
                hsd = None if np.isnan(found) else found
            todo.append((measure, a, b, hsd))
            columns.append((x[a], x[b]))
    # every pair at once: those of as many queries share their resamples and sign flips
    compared = paired_compare_many(
        columns,
        seed=seed,
        n_permutations=n_permutations if test == "fisher" else 0,
        n_resamples=n_resamples,
    )
    for (measure, a, b, hsd), paired in zip(todo, compared, strict=True):
        p = hsd if test == "tukey" else getattr(paired, _RAW_P[test])
        raw.append((measure, a, b, paired, p))
    adjusted = _adjust([r[4] for r in raw], [r[0] for r in raw], test, family, corr)
    pairs = tuple(
        PairResult(
            measure=measure,
            a=a,
            b=b,
            paired=paired,
            p_value=p,
            p_adjusted=adj,
            significant=adj is not None and adj < alpha,
        )
        for (measure, a, b, paired, p), adj in zip(raw, adjusted, strict=True)
    )
    return SystemsComparison(
        systems=tuple(systems),
        measures=tuple(values),
        means=means,
        counts=counts,
        pairs=pairs,
        test=test,
        correction=corr,
        family=family,
        pairing=pairing,
        alpha=alpha,
        n_permutations=n_permutations,
        notes=notes,
    )


def _adjust(
    pvalues: list[float | None],
    measures: list[str],
    test: SystemTest,
    family: Family,
    correction: Correction,
) -> list[float | None]:
    if test == "tukey":
        if correction == "none":
            return list(pvalues)
        # Bonferroni over the measures: each measure's Tukey family at alpha / k
        k = len({m for m, p in zip(measures, pvalues, strict=True) if p is not None})
        return [None if p is None else min(1.0, k * p) for p in pvalues]
    if family == "table":
        return adjust(pvalues, correction)
    out: list[float | None] = [None] * len(pvalues)
    for measure in dict.fromkeys(measures):
        where = [i for i, m in enumerate(measures) if m == measure]
        for i, adj in zip(where, adjust([pvalues[i] for i in where], correction), strict=True):
            out[i] = adj
    return out
