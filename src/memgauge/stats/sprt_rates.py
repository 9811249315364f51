"""The SPRT's error rates under each choice of bounds, by simulation (seed 002 section 4.2):
what `memgauge ab simulate` prints and the README shows.

For each bounds (`stats.sequential.SPRT_BOUNDS`) and each cell (effect delta, standard deviation
of the paired differences), `n_sims` tests run on normal differences with mean 0 (H0: the share
that stops for the treatment is the type I error, to hold at alpha) and with mean delta (H1:
the share that stops for the treatment is the power, to hold at 1 - beta), each with the
test's plug-in variance and `min_samples`, by `simulate_sprt` (vectorized). The Monte Carlo
standard error of a rate p is sqrt(p (1 - p) / n_sims).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from memgauge._util.numbers import ALPHA, BETA
from memgauge.stats.sequential import SPRT, SPRT_BOUNDS, Bounds, simulate_sprt

__all__ = ["CELLS", "BoundsRate", "bounds_rates", "rates_markdown"]

#: (effect delta, sd of the paired differences): seed 002's 0.05 MRR at sd 0.15, and two more
CELLS: tuple[tuple[float, float], ...] = ((0.2, 1.0), (0.05, 0.15), (0.03, 0.2))


@dataclass(frozen=True)
class BoundsRate:
    """One cell's simulated rates under one choice of bounds."""

    bounds: Bounds
    delta: float
    sd: float
    alpha: float
    beta: float
    type_one: float  # share of H0 tests that stopped for the treatment
    power: float  # share of H1 tests that stopped for the treatment
    mean_pairs_h0: float
    mean_pairs_h1: float
    n_sims: int

    @property
    def mc_error(self) -> float:
        """Three Monte Carlo standard errors of a rate at alpha."""
        return 3 * math.sqrt(self.alpha * (1 - self.alpha) / self.n_sims)


def bounds_rates(
    n_sims: int,
    *,
    cells: Sequence[tuple[float, float]] = CELLS,
    alpha: float = ALPHA,
    beta: float = BETA,
    min_samples: int = 30,
    seed: int = 0,
    horizon: int = 3000,
) -> list[BoundsRate]:
    """Each bounds' type I error and power per cell (the same draws for both bounds)."""
    out = []
    for delta, sd in cells:
        for bounds in SPRT_BOUNDS:
            test = SPRT(delta=delta, alpha=alpha, beta=beta, min_samples=min_samples, bounds=bounds)
            h0 = simulate_sprt(test, 0.0, sd, n_sims, seed=seed + 1, horizon=horizon)
            h1 = simulate_sprt(test, delta, sd, n_sims, seed=seed + 2, horizon=horizon)
            out.append(
                BoundsRate(
                    bounds,
                    delta,
                    sd,
                    alpha,
                    beta,
                    h0["treatment_better"],
                    h1["treatment_better"],
                    h0["mean_pairs"],
                    h1["mean_pairs"],
                    n_sims,
                )
            )
    return out


def rates_markdown(rates: Sequence[BoundsRate]) -> str:
    """The rates as a Markdown table."""
    lines = [
        "| bounds | upper / lower | effect / sd | type I error | power | mean pairs (H0)"
        " | mean pairs (H1) |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    for r in rates:
        test = SPRT(delta=r.delta, alpha=r.alpha, beta=r.beta, bounds=r.bounds)
        lines.append(
            f"| {r.bounds} | {test.upper:.3f} / {test.lower:.3f} | {r.delta / r.sd:.2f}"
            f" | {r.type_one:.4f} | {r.power:.4f} | {r.mean_pairs_h0:.0f}"
            f" | {r.mean_pairs_h1:.0f} |"
        )
    return "\n".join(lines) + "\n"
