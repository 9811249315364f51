"""The paired SPRT's error rates and sample sizes, by simulation, against Wald's textbook
boundaries with the same plug-in variance and against a fixed-sample paired test.

    python benchmarks/bench_sprt.py [--sims 20000]
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np
from scipy import stats as sps

from memgauge.stats.sequential import (
    SPRT,
    simulate_sprt,
    simulate_sprt_draws,
    sparse_differences,
)


def ties_counted(test: SPRT, draw: object, n_sims: int, seed: int, horizon: int) -> float:
    """Power of the earlier rule, which counted tied pairs (d = 0) towards min_samples."""
    rng = np.random.default_rng(seed)
    d = draw(rng, n_sims, horizon)  # type: ignore[operator]
    n = np.arange(1, horizon + 1, dtype=np.float64)
    s, ss = np.cumsum(d, axis=1), np.cumsum(d * d, axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        var = np.maximum((ss - s * s / n) / np.maximum(n - 1, 1), test.sd_floor**2)
        llr = (test.delta * s - n * test.delta**2 / 2) / var
    active = n >= test.min_samples
    up, down = (llr >= test.upper) & active, (llr <= test.lower) & active
    first_up = np.where(up.any(axis=1), up.argmax(axis=1), horizon)
    first_down = np.where(down.any(axis=1), down.argmax(axis=1), horizon)
    return float((first_up < first_down).mean())


def fixed_n(effect: float, alpha: float, beta: float) -> int:
    """Pairs a one-sided fixed-sample z-test needs for the same alpha and power."""
    z = sps.norm.ppf(1 - alpha) + sps.norm.ppf(1 - beta)
    return math.ceil((z / effect) ** 2)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--sims", type=int, default=20_000)
    args = ap.parse_args()
    print(f"{args.sims:,} simulated tests per cell; alpha 0.05, beta 0.20; differences normal\n")
    print(
        "| test | effect / sd | type I error | power | mean pairs (H0) | mean pairs (H1) | fixed-sample pairs | seconds |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for delta, sd in ((0.2, 1.0), (0.05, 0.15), (0.03, 0.2)):
        for name, bounds in (
            ("memgauge (Ville bounds)", "ville"),
            ("Wald bounds, same plug-in", "wald"),
        ):
            test = SPRT(delta=delta, bounds=bounds)  # type: ignore[arg-type]
            t = time.perf_counter()
            h0 = simulate_sprt(test, 0.0, sd, args.sims, seed=1, horizon=3000)
            h1 = simulate_sprt(test, delta, sd, args.sims, seed=2, horizon=3000)
            print(
                f"| {name} | {delta / sd:.2f} | {h0['treatment_better']:.4f} | {h1['treatment_better']:.4f} "
                f"| {h0['mean_pairs']:.0f} | {h1['mean_pairs']:.0f} | {fixed_n(delta / sd, 0.05, 0.2)} "
                f"| {time.perf_counter() - t:.1f} |"
            )
    print(
        "\nSparse, discrete, MRR-like differences: 0 (a tie) except on a share of the queries,"
        " where a reciprocal-rank step (1, 1/2, 1/3, 1/4) up or down\n"
    )
    print(
        "| informative pairs | effect | type I error | power | mean pairs (H0) | mean pairs (H1) | power when ties counted | seconds |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---:|")
    for p_inf, delta in ((0.3, 0.05), (0.1, 0.03), (0.05, 0.02)):
        test = SPRT(delta=delta)
        t = time.perf_counter()
        h0 = simulate_sprt_draws(
            test, sparse_differences(0.0, p_inf), args.sims, seed=1, horizon=8000
        )
        h1 = simulate_sprt_draws(
            test, sparse_differences(delta, p_inf), args.sims, seed=2, horizon=8000
        )
        old = ties_counted(test, sparse_differences(delta, p_inf), min(args.sims, 2000), 2, 8000)
        print(
            f"| {p_inf:.0%} | {delta} | {h0['treatment_better']:.4f} | {h1['treatment_better']:.4f} "
            f"| {h0['mean_pairs']:.0f} | {h1['mean_pairs']:.0f} | {old:.4f} "
            f"| {time.perf_counter() - t:.1f} |"
        )


if __name__ == "__main__":
    main()
