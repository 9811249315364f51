"""The three conventions where trec_eval and seed 002 disagree, as options spelled the same in
every command that scores retrieval (`metrics`, `evaluate`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import click

from memgauge import api
from memgauge.cli._common import choice_option
from memgauge.cli._numbers import integer

if TYPE_CHECKING:
    from click.decorators import FC

__all__ = ["gain_option", "no_relevant_option", "rel_threshold_option"]

# the defaults every other entry point has (`MetricConfig`'s)
_DEFAULT = api.MetricConfig()


def rel_threshold_option(*short: str) -> Callable[[FC], FC]:
    """`--rel-threshold N` (and the `short` forms: `metrics` takes trec_eval's `-l`)."""
    return click.option(
        *short,
        "--rel-threshold",
        type=integer(min=0),
        default=_DEFAULT.rel_threshold,
        help="Grade at or above which a memory is relevant for binary measures (trec_eval: 1"
        + (f"; its {', '.join(short)})." if short else ")."),
    )


gain_option = choice_option(
    "--gain",
    choices=["exp", "linear"],
    default=_DEFAULT.gain,
    help="nDCG gain: exp = 2^grade - 1 (seed 002); linear = the grade (trec_eval).",
)
no_relevant_option = choice_option(
    "--no-relevant",
    choices=["zero", "one", "skip"],
    default=_DEFAULT.no_relevant,
    help="A judged query with no relevant memory: score 0 (trec_eval); 1.0 on the measures "
    "where that is 0/0 (Recall, recall_all, AP, R-prec, nDCG and ndcg_any with no ideal gain: "
    "seed 002's Recall); or leave it out of the means (skip). Always counted.",
)
