"""A retrieval measure as a per-item evaluator: the output is a ranked list of memory ids (or
of hits with an `id`), the expected value the judged grades `{id: grade}` or a list of relevant
ids (grade 3)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, ClassVar, Literal

from memgauge.data.models import RetrievalDataset
from memgauge.errors import UsageError
from memgauge.metrics import MetricConfig, evaluate_ranked, parse_measure
from memgauge.metrics.conventions import (
    DEFAULT_GAIN,
    DEFAULT_NO_RELEVANT,
    DEFAULT_REL_THRESHOLD,
    Gain,
    NoRelevant,
)
from memgauge.metrics.ir import check_rel_threshold
from memgauge.metrics.measures import SESSION_MEASURES, Measure, refuse_run_level
from memgauge.metrics.single import Prepared, score_prepared
from memgauge.scorers.base import EvalContext, Score

__all__ = ["RetrievalMeasure"]


def _ids(output: Any) -> list[str] | None:
    if isinstance(output, Mapping) and "hits" in output:
        output = output["hits"]
    if isinstance(output, str) or not isinstance(output, Sequence):
        return None
    try:  # the engine's hit records: the common case, in one pass
        return [str(hit["id"]) for hit in output]
    except (TypeError, KeyError, IndexError):
        pass
    ids = []
    for hit in output:
        if isinstance(hit, Mapping) and "id" in hit:
            ids.append(str(hit["id"]))
        elif isinstance(hit, str | int):
            ids.append(str(hit))
        else:
            hid = getattr(hit, "id", None)
            if hid is None:
                return None
            ids.append(str(hid))
    return ids


def _grades(expected: Any) -> dict[str, int] | None:
    if isinstance(expected, Mapping):
        return {str(k): int(v) for k, v in expected.items()}
    if isinstance(expected, Sequence) and not isinstance(expected, str):
        return {str(k): 3 for k in expected}
    return None


@dataclass(frozen=True)
class RetrievalMeasure:
    """One IR measure (e.g. nDCG@10) of a ranked output against judged grades.

    The defaults are those of `memgauge evaluate`, `memgauge metrics` and a suite's `ir`
    aggregate (`metrics.conventions`), and an item is scored exactly as `metrics.ir` scores
    its query, so a suite's table and every other view of the run give one value and one n.

    Attributes:
        measure: the measure, e.g. nDCG@10, RR@10, Recall@5.
        rel_threshold: grade at or above which a memory is relevant.
        gain: nDCG gain, exp or linear.
        no_relevant: an item whose judged memories all lie below the threshold: `zero`
            (default: scored as `metrics.ir` scores it, 0 but for nDCG over judgments below
            the threshold, and counted), `one` (1.0 where the measure is 0/0, seed 002's
            Recall; see `metrics.ir`), `skip` (no value, not a failure: left out of means) or
            `fail` (not scored: the item's verdict is a failure, counted in n_failed).
    """

    measure: str = "nDCG@10"
    rel_threshold: int = DEFAULT_REL_THRESHOLD
    gain: Gain = DEFAULT_GAIN
    no_relevant: NoRelevant | Literal["fail"] = DEFAULT_NO_RELEVANT
    name: ClassVar[str] = "retrieval"

    def __post_init__(self) -> None:
        parsed = parse_measure(self.measure)
        refuse_run_level(parsed, "retrieval")
        check_rel_threshold(self.rel_threshold)  # before anything is scored
        if parsed.name in SESSION_MEASURES:
            raise UsageError(
                f"retrieval: {self.measure} needs each query's corpus; `memgauge evaluate` "
                "computes it on a LongMemEval dataset imported with --protocol paper"
            )
        # parsed once, and its name written once: an evaluator scores thousands of items
        object.__setattr__(self, "_parsed", parsed)
        object.__setattr__(self, "_label", str(parsed))
        # a measure with its own threshold (P(rel=1)@5) finds "nothing relevant" at that one
        threshold = self.rel_threshold if parsed.rel is None else parsed.rel
        object.__setattr__(self, "_threshold", threshold)
        object.__setattr__(self, "_key", f"retrieval@{threshold}")
        object.__setattr__(
            self, "_cfg", MetricConfig(rel_threshold=self.rel_threshold, gain=self.gain)
        )

    def for_dataset(self, dataset: RetrievalDataset) -> RetrievalMeasure:
        """This measure as it scores `dataset`'s queries: on a dataset whose protocol scores
        recall_all of a query with nothing relevant as 1.0 (LongMemEval's `paper`, where all()
        of nothing is true), recall_all does too, as the ir aggregate computes it."""
        protocol = dataset.protocol
        parsed: Measure = vars(self)["_parsed"]
        if parsed.name != "recall_all" or protocol is None or not protocol.recall_all_no_relevant:
            return self
        bound = replace(self)
        object.__setattr__(bound, "_vacuous", protocol.name)
        return bound

    def evaluate(self, ctx: EvalContext) -> Score:
        # every measure of an item reads the same ids, grades and ranking: derived once per
        # item and threshold, in one lookup (a LoCoMo run scores 7 measures of 1,536 items)
        own = vars(self)  # what __post_init__ made, read from one dict (10,752 verdicts)
        key: str = own["_key"]
        got = ctx.shared.get(key)
        if got is None:
            got = ctx.shared[key] = _derived(ctx, own["_threshold"])
        if isinstance(got, str):
            return Score.failure(got)
        grades, ids, relevant, prepared = got
        parsed: Measure = own["_parsed"]
        cfg: MetricConfig = own["_cfg"]
        nothing = "" if relevant else self.no_relevant
        vacuous = own.get("_vacuous")  # (getattr's default pays for an AttributeError)
        if vacuous is not None and nothing in ("zero", "one"):
            return Score(
                value=1.0,
                reason=f"no judged memory is relevant: {parsed} = 1.000 ({vacuous}: all of "
                "nothing is found)",
            )
        if nothing == "skip":
            return Score(
                value=None, reason="no judged memory is relevant: skipped", detail={"skipped": True}
            )
        if nothing == "fail":
            return Score.failure(
                "retrieval: no judged memory reaches the relevance threshold (no_relevant: fail)"
            )
        if nothing == "one":
            cfg_one = replace(cfg, no_relevant="one")
            ev = evaluate_ranked({"q": grades}, {"q": ids}, [self.measure], cfg_one)
            one = float(next(iter(ev.per_query.values()))[0])
            return Score(value=one, reason=f"no judged memory is relevant: {parsed} = {one:.3f}")
        # `zero` keeps the value computed as for any query (metrics.ir's convention): 0 for
        # every binary measure, while nDCG still gains from judgments below the threshold
        quick = score_prepared(prepared, parsed, cfg)
        if quick is not None:
            value = quick
        else:
            ev = evaluate_ranked({"q": grades}, {"q": ids}, [self.measure], cfg)
            value = float(next(iter(ev.per_query.values()))[0])
        if math.isnan(value):
            return Score.failure("retrieval: the measure is undefined for this item")
        why = "no judged memory is relevant: " if nothing else ""
        return Score(value=value, reason=f"{why}{own['_label']} = {value:.3f}")


def _derived(ctx: EvalContext, threshold: int) -> tuple[Any, ...] | str:
    """What every measure of the item at `threshold` reads: (grades, ids, whether any judged
    memory is relevant, the prepared ranking), or why the item cannot be scored."""
    ids = _ids(ctx.output)
    if ids is None:
        return "retrieval: output is not a ranked list of ids or hits"
    grades = _grades(ctx.expected)
    if grades is None:
        return "retrieval: expected is {id: grade} or a list of relevant ids"
    relevant = any(g >= threshold for g in grades.values())
    return grades, ids, relevant, Prepared(grades, ids, threshold)
