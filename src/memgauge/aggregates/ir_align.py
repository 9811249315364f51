"""One set of conventions for a retrieval task: its retrieval evaluators and its `ir` aggregate.

A suite's retrieval task scores each query once per evaluator (the rows of `memgauge run`) and
again in its `ir` aggregate (CIs, breakdowns, comparisons; what `gate`, `history`, targets and
the viewer's retrieval section read). An evaluator labelled `nDCG@10` and the aggregate's
`nDCG@10` are one measure to a reader, so they must be computed alike: the aggregate takes the
conventions its spec leaves unset from the evaluators, and a suite where that cannot give one
value is refused before the run, naming the evaluators.

Only the conventions a measure depends on are compared: the gain for nDCG alone; the relevance
threshold for every measure but nDCG, and for nDCG too when queries with nothing relevant are
not scored as any other (`no_relevant` other than `zero`: the threshold says which those are);
`no_relevant` for every measure.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Any

from memgauge.errors import UsageError
from memgauge.metrics import parse_measure

__all__ = ["CONVENTIONS", "shared_conventions"]

#: the settings a retrieval evaluator and the ir aggregate share for a measure both give
CONVENTIONS = ("rel_threshold", "gain", "no_relevant")


def _matters(measure: str, key: str, evaluator: Any) -> bool:
    """Whether `key` can change the value of `measure` as `evaluator` computes it (not the
    gain of an nDCG with its own gain table, nor the threshold of a measure with its own)."""
    parsed = parse_measure(measure)
    ndcg = parsed.name == "nDCG"
    if key == "gain":
        return ndcg and parsed.gains is None
    if key == "rel_threshold":
        return parsed.rel is None and (not ndcg or evaluator.no_relevant != "zero")
    return True


def shared_conventions(
    task: str,
    ours: Mapping[str, Any],
    given: Collection[str],
    evaluators: Sequence[tuple[str, Any]],
) -> dict[str, Any]:
    """The conventions the aggregate must change to compute each of `evaluators`' measures as
    the evaluator does (`ours`: its own; `given`: those its spec sets, which are kept and must
    agree). UsageError when no single setting can."""
    changes: dict[str, Any] = {}
    for key in CONVENTIONS:
        values = {label: getattr(ev, key) for label, ev in evaluators if _matters(label, key, ev)}
        if key in given:
            odd = [f"{label} ({key}: {v})" for label, v in values.items() if v != ours[key]]
            if odd:
                raise UsageError(
                    f"task {task!r}: its ir aggregate has {key}: {ours[key]}, but the retrieval "
                    f"evaluator {', '.join(odd)} gives the same measure, which would have two "
                    f"values. Set the same {key} on both, or leave it off the aggregate (it then "
                    "takes the evaluators')"
                )
        elif len(set(values.values())) > 1:
            shown = ", ".join(f"{label} ({key}: {v})" for label, v in values.items())
            raise UsageError(
                f"task {task!r}: the retrieval evaluators {shown} differ, and the task's ir "
                f"aggregate computes their measures with one {key}. Give them the same {key}, "
                "or label the odd one with a name that is not a measure (label: nDCG@10-linear)"
            )
        elif values:
            value = next(iter(values.values()))
            if value != ours[key]:
                changes[key] = value
    return changes
