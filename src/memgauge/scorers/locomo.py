"""LoCoMo's own QA scoring: one item scored exactly as `eval_question_answering` in LoCoMo's
`task_eval/evaluation.py` scores it, by the item's category (the JSON's numbers):

| category | name | score |
|---|---|---|
| 1 | multi-hop | multi-answer F1: mean over the comma-separated gold parts of the best F1 against any comma-separated part of the answer |
| 2 | temporal | token F1 |
| 3 | open-domain | token F1 against the gold answer's text before its first `;`, stripped |
| 4 | single-hop | token F1 |
| 5 | adversarial | 1 if the lowercased answer contains `no information available` or `not mentioned`, else 0 |

Token F1 is LoCoMo's (`memgauge.scorers.f1.locomo_f1`: its normalisation with the `regex`
module, Porter stems, token multisets). The gold answer is turned into text with `str()` first,
as `evaluation.py` does whenever the prediction is text (a year given as the number 2022 is
compared as "2022"); category 5 ignores it. The category comes from the item's metadata
(`locomo_category`, which `memgauge audit` and the LoCoMo importer set), or from the
evaluator's own `category` argument.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from memgauge.data.importers.locomo import LOCOMO_CATEGORIES
from memgauge.errors import UsageError
from memgauge.scorers.base import EvalContext, Score
from memgauge.scorers.f1 import locomo_f1, locomo_multi_f1

__all__ = ["LoCoMoQA", "locomo_category", "locomo_qa_score"]

_ABSTAIN_PHRASES = ("no information available", "not mentioned")


def locomo_qa_score(category: int, prediction: str, answer: Any) -> float:
    """LoCoMo's score of `prediction` for a QA item of `category` whose gold is `answer`."""
    if category == 5:
        low = prediction.lower()
        return 1.0 if any(p in low for p in _ABSTAIN_PHRASES) else 0.0
    gold = str(answer)
    if category == 3:
        gold = gold.split(";")[0].strip()
    if category == 1:
        return locomo_multi_f1(prediction, gold)
    if category in (2, 3, 4):
        return locomo_f1(prediction, gold)
    raise ValueError(f"LoCoMo has categories 1-5, not {category!r}")


def locomo_category(metadata: Mapping[str, Any]) -> int | None:
    """The item's LoCoMo category from its metadata, or None when it has none (or a bad one)."""
    raw = metadata.get("locomo_category")
    if isinstance(raw, bool) or not isinstance(raw, int) or raw not in LOCOMO_CATEGORIES:
        return None
    return raw


@dataclass(frozen=True)
class LoCoMoQA:
    """LoCoMo's per-category QA score (see the module docstring); in [0, 1].

    Args:
        category: the LoCoMo category (1-5) every item is scored as; default: each item's
            own (its metadata's `locomo_category`).
        threshold: pass when the score is at or above it; none: no pass/fail.
    """

    category: int | None = None
    threshold: float | None = None
    name: ClassVar[str] = "locomo-qa"

    def __post_init__(self) -> None:
        if self.category is not None and (
            isinstance(self.category, bool) or self.category not in LOCOMO_CATEGORIES
        ):
            raise UsageError(f"locomo-qa: category is 1-5, got {self.category!r}")

    def evaluate(self, ctx: EvalContext) -> Score:
        category = self.category if self.category is not None else locomo_category(ctx.metadata)
        if category is None:
            return Score.failure(
                "locomo-qa: the item has no LoCoMo category (metadata locomo_category 1-5)"
            )
        if ctx.output is None:
            return Score.failure("locomo-qa: the subject gave no answer")
        if category != 5 and ctx.expected is None:
            return Score.failure("locomo-qa: the item has no gold answer")
        value = locomo_qa_score(category, str(ctx.output), ctx.expected)
        passed = None if self.threshold is None else value >= self.threshold
        how = "phrase rule" if category == 5 else "multi-answer F1" if category == 1 else "F1"
        return Score(
            value=value,
            passed=passed,
            reason=f"LoCoMo {how} ({LOCOMO_CATEGORIES[category]}) = {value:.3f}",
            detail={"locomo_category": category},
        )
