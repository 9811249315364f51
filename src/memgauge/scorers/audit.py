"""Offline matching of audit answers (no LLM), by probe type; the method is in every verdict.

- recall / conflict / answers with a reference: correct when the answer's LoCoMo token F1 with
  the expected answer is at least `f1`, or it contains at least `coverage` of the expected
  answer's (stemmed) tokens, or the cosine of their MiniLM embeddings is at least `cosine`
  (when `cosine` is set). An answer that abstains is wrong. For a conflict probe, an answer
  closer to a superseded value than to the newest one is wrong ("used the old value").
- temporal with two options (`Which happened first: A or B?`): the answer names the option it
  is closer to; correct when that is the expected (earlier) one, wrong when it is close to
  neither.
- hallucination: correct (nothing invented) when the answer says it does not know or that it
  was never mentioned.
"""

from __future__ import annotations

import re
import threading
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, ClassVar

from memgauge.data.models import blank
from memgauge.embed import Embedder, load_embedder
from memgauge.errors import MemgaugeError
from memgauge.scorers.base import EvalContext, Score, output_text, quoted
from memgauge.scorers.f1 import _stem, locomo_f1, locomo_normalize

__all__ = ["ABSTAIN", "AuditMatch", "abstains"]

ABSTAIN = re.compile(
    r"\b(not (been )?mentioned|never (been )?mentioned|no (record|information|mention|memory)|"
    r"(do not|don't|cannot|can't|couldn't|could not) (know|recall|remember|find|say|tell)|"
    r"not (sure|stated|specified|provided|available|discussed|known)|unknown|"
    r"didn't (say|mention|tell)|did not (say|mention|tell)|no idea|unanswerable)\b",
    re.I,
)


_LOAD = threading.Lock()


def abstains(answer: str) -> bool:
    """Whether the answer declines to answer (says it does not know / was never mentioned)."""
    return bool(ABSTAIN.search(answer))


def _coverage(answer: str, gold: str) -> float:
    ref = [_stem(w) for w in locomo_normalize(gold).split()]
    if not ref:
        return 0.0
    pred = Counter(_stem(w) for w in locomo_normalize(answer).split())
    return sum((Counter(ref) & pred).values()) / len(ref)


@dataclass(frozen=True)
class AuditMatch:
    """Probe-aware offline matching (see the module docstring).

    Args:
        f1: the least LoCoMo token F1 with the expected answer that makes a match.
        coverage: the least share (0 to 1) of the expected answer's stemmed tokens the answer
            must contain to match.
        cosine: the least cosine of the two embeddings that makes a match; null: no embedding
            (F1 and coverage only).
        embedder: the embedder of the cosine (`minilm`, offline, by default; `openai:MODEL`,
            `st:MODEL`).
    """

    f1: float = 0.5
    coverage: float = 0.8
    cosine: float | None = 0.75
    embedder: str = "minilm"
    name: ClassVar[str] = "audit-match"
    _model: list[Embedder] = field(default_factory=list, init=False, repr=False, compare=False)

    def _similarity(self, answer: str, golds: list[str]) -> list[dict[str, float]]:
        sims: list[dict[str, float]] = [
            {"f1": locomo_f1(answer, g), "coverage": _coverage(answer, g)} for g in golds
        ]
        if self.cosine is not None and answer.strip():
            self.prepare()
            vecs = self._model[0].embed([answer, *golds])
            for s, v in zip(sims, vecs[1:] @ vecs[0], strict=True):
                s["cosine"] = float(v)
        return sims

    def prepare(self) -> None:
        """Build the embedder when cosine matching is on: UnavailableError (with the install
        line) when it is missing, before any answer is scored."""
        if self.cosine is None:
            return
        with _LOAD:
            if not self._model:
                self._model.append(load_embedder(self.embedder))

    def _match(self, s: dict[str, float]) -> bool:
        return (
            s["f1"] >= self.f1
            or s["coverage"] >= self.coverage
            or (self.cosine is not None and s.get("cosine", -1.0) >= self.cosine)
        )

    @staticmethod
    def _strength(s: dict[str, float]) -> float:
        return max(s["f1"], s["coverage"], s.get("cosine", 0.0))

    def evaluate(self, ctx: EvalContext) -> Score:
        answer = output_text(ctx)
        if blank(answer) is not None:  # zero-width characters alone say nothing either
            return Score.failure("audit-match: the agent gave an empty answer")
        kind = str(ctx.metadata.get("probe_type") or "recall")
        method = self.method
        if kind == "hallucination" or ctx.metadata.get("abstention"):
            ok = abstains(answer)
            why = "declined: nothing invented" if ok else "answered as if it knew: invented"
            return Score(float(ok), ok, why, detail={"method": "abstention phrases"})
        if ctx.expected is None:
            return Score.failure("audit-match: the probe has no expected answer")
        try:
            options: list[str] = list(ctx.metadata.get("options") or [])
            if kind == "temporal" and len(options) == 2:
                return self._temporal(answer, str(ctx.expected), options, method)
            golds = (
                [str(g) for g in ctx.expected]
                if isinstance(ctx.expected, list)
                else [str(ctx.expected)]
            )
            old = [str(v) for v in ctx.metadata.get("old_values") or []]
            sims = self._similarity(answer, golds + old)
        except MemgaugeError as exc:
            return Score.failure(f"audit-match: {exc}")
        new, stale = sims[: len(golds)], sims[len(golds) :]
        best = max(new, key=self._strength)
        detail: dict[str, Any] = {"method": method, **{k: round(v, 4) for k, v in best.items()}}
        if abstains(answer):
            return Score(0.0, False, "declined to answer a question it could answer", detail=detail)
        ok = self._match(best)
        if ok and stale and max(self._strength(s) for s in stale) > self._strength(best):
            return Score(
                0.0, False, "closer to a superseded value: used the old value", detail=detail
            )
        shown = ", ".join(f"{k} {v:.2f}" for k, v in best.items())
        return Score(
            float(ok), ok, f"{'matches' if ok else 'does not match'} ({shown})", detail=detail
        )

    def _temporal(self, answer: str, expected: str, options: list[str], method: str) -> Score:
        sims = self._similarity(answer, options)
        strengths = [self._strength(s) for s in sims]
        pick = 0 if strengths[0] >= strengths[1] else 1
        detail = {"method": method, "strengths": [round(x, 4) for x in strengths]}
        if not self._match(sims[pick]) or strengths[0] == strengths[1]:
            return Score(0.0, False, "names neither event clearly", detail=detail)
        ok = options[pick] == expected
        return Score(float(ok), ok, f"chose {quoted(options[pick])}", detail=detail)

    @property
    def method(self) -> str:
        """How answers are matched, for reports."""
        parts = [f"LoCoMo token F1 >= {self.f1}", f"expected-token coverage >= {self.coverage}"]
        if self.cosine is not None:
            parts.append(f"{self.embedder} cosine >= {self.cosine}")
        return "offline: " + " or ".join(parts)
