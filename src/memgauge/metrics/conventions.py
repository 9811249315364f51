"""The conventions that make one tool's IR numbers differ from another's, as one line of text.

Every table and report of retrieval measures prints this line (`relevant: grade >= 2, gain:
exp`), so a number is never read without the choices behind it: a threshold of 2 against
trec_eval's 1 changes every binary measure, exp gain (2^g - 1) against linear (g) changes nDCG
on graded judgments, and scoring 0 against skipping queries with no relevant document, or
missing from the run, changes every mean.
"""

from __future__ import annotations

__all__ = ["conventions_text"]


def conventions_text(
    rel_threshold: int,
    gain: str,
    *,
    no_relevant: str | None = None,
    missing_from_run: str | None = None,
) -> str:
    """`relevant: grade >= T, gain: G`, then the query conventions that were given (None: the
    caller has no such option, so nothing is claimed)."""
    parts = [f"relevant: grade >= {rel_threshold}", f"gain: {gain}"]
    if no_relevant is not None:
        parts.append(f"no relevant document: {no_relevant}")
    if missing_from_run is not None:
        parts.append(f"missing from run: {missing_from_run}")
    return ", ".join(parts)
