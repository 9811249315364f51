"""Token F1 between an answer and the gold answer, in the two variants the field reports.

- `locomo` (LoCoMo's `task_eval/evaluation.py`): remove commas, lowercase, strip ASCII
  punctuation, drop the words a / an / the / and, collapse whitespace, Porter-stem each token
  (NLTK's stemmer, as LoCoMo uses), and compare token multisets. With `multi_answer` (LoCoMo
  uses it for multi-hop questions) prediction and gold are split on commas first, and the score
  is the mean over gold parts of the best F1 against any predicted part. The words are
  dropped with the `regex` module, as LoCoMo does, not `re`: their `\\b` differ. `regex` counts
  combining marks and zero-width (non-)joiners as word characters, so `the\\u0301` is one word
  there and keeps its `the`, where `re` would see `the` and strip it.
- `mem0` (Mem0's evaluation harness, from A-Mem): lowercase, replace `. , ! ?` by spaces, split
  on whitespace, and compare token *sets*; an empty prediction or gold scores 0.

The two give different numbers on the same answers; reports name the variant.
"""

from __future__ import annotations

import string
from collections import Counter
from dataclasses import dataclass
from functools import cache
from typing import Any, ClassVar, Literal

import numpy as np
import regex

from memgauge.errors import UsageError
from memgauge.scorers.base import EvalContext, Score, expected_texts, output_text

__all__ = ["TokenF1", "locomo_f1", "locomo_multi_f1", "locomo_normalize", "mem0_f1"]

# `regex`, not `re`: LoCoMo's word boundaries (see the module docstring)
_ARTICLES = regex.compile(r"\b(a|an|the|and)\b")
_PUNCT = str.maketrans("", "", string.punctuation)


@cache
def _stemmer() -> Any:  # nltk's PorterStemmer (nltk has no types)
    from nltk.stem import PorterStemmer

    return PorterStemmer()


def _stem(word: str) -> str:
    return str(_stemmer().stem(word))


def locomo_normalize(text: str) -> str:
    """LoCoMo's `normalize_answer`."""
    text = text.replace(",", "").lower().translate(_PUNCT)
    return " ".join(_ARTICLES.sub(" ", text).split())


def locomo_f1(prediction: str, gold: str) -> float:
    """LoCoMo's `f1_score`: stemmed token multisets."""
    pred = [_stem(w) for w in locomo_normalize(prediction).split()]
    ref = [_stem(w) for w in locomo_normalize(gold).split()]
    same = sum((Counter(pred) & Counter(ref)).values())
    if same == 0:
        return 0.0
    precision, recall = same / len(pred), same / len(ref)
    return 2 * precision * recall / (precision + recall)


def locomo_multi_f1(prediction: str, gold: str) -> float:
    """LoCoMo's multi-answer `f1`: the mean over comma-separated gold parts of the best F1
    against any comma-separated predicted part (NumPy's mean, as LoCoMo takes it)."""
    preds = [p.strip() for p in prediction.split(",")]
    golds = [g.strip() for g in gold.split(",")]
    return float(np.mean([max(locomo_f1(p, g) for p in preds) for g in golds]))


def mem0_f1(prediction: str, gold: str) -> float:
    """Mem0's harness: set overlap of lowercased whitespace tokens with . , ! ? removed."""
    prediction, gold = str(prediction).strip(), str(gold).strip()
    if not prediction or not gold:
        return 0.0

    def tokens(t: str) -> set[str]:
        for ch in ".,!?":
            t = t.lower().replace(ch, " ")
        return set(t.split())

    pred, ref = tokens(prediction), tokens(gold)
    common = pred & ref
    if not pred or not ref or not common:
        return 0.0
    precision, recall = len(common) / len(pred), len(common) / len(ref)
    return 2 * precision * recall / (precision + recall)


@dataclass(frozen=True)
class TokenF1:
    """Token F1 against `expected` (a string, or a list: the best match counts).

    Args:
        variant: `locomo` (LoCoMo's token F1, Porter-stemmed) or `mem0` (mem0's harness: set
            overlap of lowercased tokens).
        multi_answer: LoCoMo's multi-answer rule: the mean over comma-separated gold parts of
            the best F1 against any predicted part (variant `locomo` only).
        threshold: pass when the F1 is at or above it; none: no pass/fail.
    """

    variant: Literal["locomo", "mem0"] = "locomo"
    multi_answer: bool = False
    threshold: float | None = None
    name: ClassVar[str] = "token_f1"

    def __post_init__(self) -> None:
        if self.variant not in ("locomo", "mem0"):
            raise UsageError(f"token_f1 variant is 'locomo' or 'mem0', got {self.variant!r}")
        if self.multi_answer and self.variant != "locomo":
            raise UsageError("multi_answer is LoCoMo's rule; use it with variant 'locomo'")

    def evaluate(self, ctx: EvalContext) -> Score:
        if ctx.expected is None:
            return Score.failure("token_f1: the item has no expected answer")
        golds, out = expected_texts(ctx), output_text(ctx)
        if self.variant == "mem0":
            fn = mem0_f1
        else:
            fn = locomo_multi_f1 if self.multi_answer else locomo_f1
        value = max(fn(out, g) for g in golds)
        passed = None if self.threshold is None else value >= self.threshold
        return Score(
            value=value,
            passed=passed,
            reason=f"token F1 ({self.variant}{', multi-answer' if self.multi_answer else ''}) "
            f"= {value:.3f}",
        )
