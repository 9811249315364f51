"""The types of the numeric options: every integer bounded on both sides, every decimal finite.

click's `INT` and `IntRange(min=...)` take any integer, and its `FLOAT` and `FloatRange` take
NaN and infinity (NaN even passes every range check: no comparison with it is true). What they
let through went on to where it cannot go: a store's INTEGER column (2^31 - 1 on PostgreSQL),
a SQL LIMIT (64 bits), NumPy's and Optuna's seeding (0 to 2^32 - 1), an array as long as
`--resamples`, `time.sleep`; each was an OverflowError or a ValueError (exit 70), or a NaN
stored as a setting. Every numeric option takes one of these types instead, with its own range
(`tests/cli/test_numeric_options.py` checks every option of every command), so a number out of
range is a usage error naming the option: exit 2.

Standard library and click only: `memgauge view` imports this without the rest of the CLI.
"""

from __future__ import annotations

import math
from typing import Any

import click

from memgauge._util.numbers import (
    INT32_MAX,
    MAX_K,
    MAX_RESAMPLES,
    MIN_RESAMPLES,
    N_RESAMPLES,
    SEED_MAX,
)

__all__ = [
    "COUNT_MAX",
    "MAX_K",
    "MAX_RESAMPLES",
    "MIN_RESAMPLES",
    "N_RESAMPLES",
    "SEED",
    "Integer",
    "Number",
    "integer",
    "number",
]

#: the largest count an option takes unless it says less: what the store's INTEGER columns hold
#: on PostgreSQL, and far beyond anything one command counts
COUNT_MAX = INT32_MAX

#: bounds shown by name in `--help` and in errors, rather than as ten-digit numbers
_NAMED = {INT32_MAX: "2^31-1", SEED_MAX: "2^32-1"}


class Integer(click.IntRange):
    """An integer in [min, max], both given."""

    def _describe_range(self) -> str:
        low, high = (_NAMED.get(b, str(b)) if b is not None else "" for b in (self.min, self.max))
        return f"{low}<=x<={high}"


class Number(click.FloatRange):
    """A finite decimal, optionally within bounds."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if self.min is None and self.max is None:
            self.name = "float"  # shown as FLOAT, as before, not FLOAT RANGE

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        rv = click.FLOAT.convert(value, param, ctx)
        if not math.isfinite(rv):
            self.fail(f"{value!r} is not a finite number.", param, ctx)
        return super().convert(rv, param, ctx)

    def _describe_range(self) -> str:
        if self.min is None and self.max is None:
            return ""  # nothing to show in --help; a non-finite value says so itself
        return super()._describe_range()


def integer(min: int, max: int = COUNT_MAX) -> Integer:
    """An integer option's type: `min` to `max` (default `COUNT_MAX`)."""
    return Integer(min, max)


def number(
    min: float | None = None,
    max: float | None = None,
    *,
    min_open: bool = False,
    max_open: bool = False,
) -> Number:
    """A decimal option's type: finite, within the bounds given (as `click.FloatRange`)."""
    return Number(min, max, min_open=min_open, max_open=max_open)


#: `--seed`: what NumPy's legacy seeding and Optuna's samplers take (a larger or negative seed
#: was their ValueError)
SEED = integer(0, SEED_MAX)
