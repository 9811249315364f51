"""`memgauge sample-size`: how many judged queries a comparison needs (seed 002 section 2.3)."""

from __future__ import annotations

from collections.abc import Callable

import click

from memgauge import api
from memgauge._util.numbers import ALPHA, MDE, POWER
from memgauge.cli._common import Command
from memgauge.cli._numbers import integer, number

__all__ = ["sample_size"]


def _number(name: str, default: float, about: str) -> Callable[[Command], Command]:
    return click.option(name, type=number(), default=default, help=about)


@click.command("sample-size")
@_number("--delta", MDE, "Smallest mean difference worth detecting (e.g. 0.05 MRR).")
@_number("--sigma", 0.15, "Standard deviation of per-query differences.")
@_number("--alpha", ALPHA, "Significance level.")
@_number("--power", POWER, "Power, 1 - beta.")
@click.option("--one-sided", is_flag=True, help="One-sided test.")
@click.option(
    "--per-group",
    type=integer(min=2),
    default=None,
    help="Also print the effect this many queries (e.g. per category) can detect.",
)
def sample_size(
    delta: float, sigma: float, alpha: float, power: float, one_sided: bool, per_group: int | None
) -> None:
    """Queries needed for a paired comparison to detect --delta at --sigma.

    Seed 002 section 2.3 says 0.05 MRR at sigma 0.15 needs n >= 72 queries (paired t); the
    paired t gives 73 and its normal approximation 71.
    """
    s = api.sample_size(delta, sigma, alpha=alpha, power=power, two_sided=not one_sided)
    # both figures before either is printed: an error is the whole answer
    mde = per_group and api.minimum_detectable_effect(
        per_group, sigma, alpha=alpha, power=power, two_sided=not one_sided
    )
    click.echo(
        f"to detect a difference of {delta} at sigma {sigma} (alpha {alpha}, power {power}, "
        f"{'one' if one_sided else 'two'}-sided): {s.n_t} queries (paired t; normal "
        f"approximation {s.n_normal})"
    )
    if per_group:
        click.echo(f"{per_group} queries per group detect differences of about {mde:.3g}")
