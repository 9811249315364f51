"""The conventions that make one tool's IR numbers differ from another's: their defaults, kept
here once, and the one line of text that states them.

Every table and report of retrieval measures prints this line (`relevant: grade >= 2, gain:
exp, no relevant document: zero`), so a number is never read without the choices behind it: a
threshold of 2 against trec_eval's 1 changes every binary measure, exp gain (2^g - 1) against
linear (g) changes nDCG on graded judgments, and scoring 0 against skipping queries with no
relevant document, or missing from the run, changes every mean.

Every entry point that scores retrieval (`MetricConfig`, `memgauge metrics`, `evaluate`, a
suite's `retrieval` evaluator and `ir` aggregate, the pytest plug-in) takes its defaults from
the constants below, so the same judgments and rankings give the same value and count whichever
way they are asked for.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final, Literal

from memgauge.metrics.measures import Measure, own_conventions

__all__ = [
    "DEFAULT_DEPTH",
    "DEFAULT_GAIN",
    "DEFAULT_MISSING_FROM_RUN",
    "DEFAULT_NO_RELEVANT",
    "DEFAULT_REL_THRESHOLD",
    "NO_RELEVANT_IF_UNSTATED",
    "Gain",
    "MissingFromRun",
    "NoRelevant",
    "conventions_text",
]

Gain = Literal["exp", "linear"]
NoRelevant = Literal["zero", "one", "skip"]
MissingFromRun = Literal["zero", "skip"]

#: grade at or above which a document is relevant (seed 002; trec_eval's is 1)
DEFAULT_REL_THRESHOLD: Final = 2
#: nDCG gain 2^grade - 1 (seed 002; trec_eval's is linear)
DEFAULT_GAIN: Final[Gain] = "exp"
#: a judged query with no relevant document scores 0 and counts in n (trec_eval)
DEFAULT_NO_RELEVANT: Final[NoRelevant] = "zero"
#: a judged query absent from the run scores 0 and counts in n (trec_eval's `-c`)
DEFAULT_MISSING_FROM_RUN: Final[MissingFromRun] = "zero"
#: hits asked of a system for retrieval measures (`evaluate --k`, a retrieval task's `k`): deep
#: enough for the default measures (nDCG@20); a measure with no cutoff (AP, R-prec) is computed
#: over these hits, so one depth gives it one value whichever command asked
DEFAULT_DEPTH: Final = 20
#: what a stored result that states no `no_relevant` was computed with: results written
#: before the option existed scored such queries 0 (whatever the default is now)
NO_RELEVANT_IF_UNSTATED: Final[NoRelevant] = "zero"


def conventions_text(
    rel_threshold: int,
    gain: str,
    *,
    no_relevant: str | None,
    missing_from_run: str | None = None,
    measures: Iterable[Measure | str] = (),
) -> str:
    """`relevant: grade >= T, gain: G, no relevant document: N`, then `missing from run: M`
    when given: every setting is stated, default or not, so a non-default one is never left
    out. `no_relevant` must be given (None only for a scorer that has no such option);
    `missing_from_run` is None where the caller has no such case (in a run, a query that got no
    answer is a failed search, counted as failed, never scored). Then, after `; `, which of
    `measures` keep conventions of their own (`their own conventions: P(rel=3)@5 (relevant:
    grade >= 3)`, `measures.own_conventions`), so the run's threshold is never read as theirs."""
    parts = [f"relevant: grade >= {rel_threshold}", f"gain: {gain}"]
    if no_relevant is not None:
        parts.append(f"no relevant document: {no_relevant}")
    if missing_from_run is not None:
        parts.append(f"missing from run: {missing_from_run}")
    own = own_conventions(measures)
    return ", ".join(parts) + ("" if own is None else f"; {own}")
