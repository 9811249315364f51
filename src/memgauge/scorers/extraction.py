"""Fact-extraction scoring (seed 001): which extracted facts match which expected ones.

The subject returns the memory as it stands after the conversation (a list of facts). Facts
it carried over unchanged from the existing memory are not extractions and are set aside;
the rest are compared one to one with the expected new facts:

    TP = matched pairs, FP = extracted facts with no expected match (invented, or a
    superseded value still kept), FN = expected facts not extracted
    precision = TP / (TP + FP) (1 when nothing was extracted), recall = TP / (TP + FN)
    (1 when nothing was expected), F1 = 2PR / (P + R) (0 when P + R = 0)

Matchers: `exact` (normalized: a leading `category:` dropped, lowercase, punctuation and
articles removed, whitespace collapsed), `semantic` (MiniLM cosine, the best one-to-one
assignment by the Hungarian method, pairs at or above the threshold). Conflict resolution is
correct when every fact that replaces an existing one is extracted and every replaced fact is
gone; minimalism (a conversation that should change nothing) when nothing was added and
nothing existing was lost.
"""

from __future__ import annotations

import re
import string
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from memgauge.data.models import ExtractionCase, fact_key
from memgauge.data.parsing import loads_json
from memgauge.embed import Embedder, load_embedder

__all__ = [
    "CaseScore",
    "ExactMatcher",
    "FactMatcher",
    "SemanticMatcher",
    "facts_of",
    "normalize_fact",
    "prf",
    "score_case",
]

_CATEGORY = re.compile(r"^\s*[A-Za-z_ ]{1,40}:\s+")
_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCT = str.maketrans("", "", string.punctuation)


def normalize_fact(text: str) -> str:
    """Lowercase, without a leading `category:`, punctuation or articles, in one Unicode form
    (NFC: `ü` as one character, however it was written)."""
    text = _CATEGORY.sub("", unicodedata.normalize("NFC", str(text))).lower().translate(_PUNCT)
    return " ".join(_ARTICLES.sub(" ", text).split())


class FactMatcher(Protocol):
    """Pairs predicted with expected facts, one to one."""

    @property
    def name(self) -> str:
        """How it matches, for reports."""
        ...

    def match(
        self, predicted: Sequence[str], expected: Sequence[str]
    ) -> list[tuple[int, int, float]]:
        """(predicted index, expected index, similarity) of each matched pair."""
        ...


class ExactMatcher:
    """Equal after `normalize_fact`."""

    name = "exact"

    def match(
        self, predicted: Sequence[str], expected: Sequence[str]
    ) -> list[tuple[int, int, float]]:
        """See `FactMatcher.match`."""
        free = {i: normalize_fact(e) for i, e in enumerate(expected)}
        pairs = []
        for i, p in enumerate(predicted):
            key = normalize_fact(p)
            j = next((j for j, e in free.items() if e == key), None)
            if j is not None:
                pairs.append((i, j, 1.0))
                del free[j]
        return pairs


@dataclass
class SemanticMatcher:
    """Cosine of MiniLM embeddings (facts without their category prefix), best one-to-one
    assignment, pairs at or above `threshold`."""

    threshold: float = 0.75
    embedder: str = "minilm"
    _model: list[Embedder] = field(default_factory=list, repr=False)

    @property
    def name(self) -> str:
        """`semantic>=0.75`."""
        return f"semantic>={self.threshold}"

    def prepare(self) -> None:
        """Build the embedder: UnavailableError (with the install line) when it is missing."""
        if not self._model:
            self._model.append(load_embedder(self.embedder))

    def match(
        self, predicted: Sequence[str], expected: Sequence[str]
    ) -> list[tuple[int, int, float]]:
        """See `FactMatcher.match`."""
        from scipy.optimize import linear_sum_assignment  # scipy loads in ~0.5 s: only when used

        if not predicted or not expected:
            return []
        self.prepare()
        texts = [_CATEGORY.sub("", t) for t in (*predicted, *expected)]
        vecs = self._model[0].embed(texts)
        sims = vecs[: len(predicted)] @ vecs[len(predicted) :].T
        exact = {(i, j) for i, j, _ in ExactMatcher().match(predicted, expected)}
        ok = sims >= self.threshold
        for i, j in exact:
            ok[i, j] = True
        # most matches first, then the most similar ones: pairs below the threshold are worth
        # nothing, so they can never displace a pair above it
        rows, cols = linear_sum_assignment(-np.where(ok, 1.0 + sims, 0.0))
        return [
            (int(i), int(j), float(sims[i, j])) for i, j in zip(rows, cols, strict=True) if ok[i, j]
        ]


def prf(tp: int, fp: int, fn: int) -> tuple[float, float, float]:
    """Seed 001's precision, recall and F1 (1 / 1 on empty denominators, F1 0 when P + R = 0)."""
    p = tp / (tp + fp) if tp + fp else 1.0
    r = tp / (tp + fn) if tp + fn else 1.0
    return p, r, (2 * p * r / (p + r) if p + r else 0.0)


@dataclass(frozen=True)
class CaseScore:
    """One case's verdict."""

    id: str
    scenario: str | None
    tp: int
    fp: int
    fn: int
    precision: float
    recall: float
    f1: float
    matched: list[dict[str, Any]]
    false_positives: list[str]
    missed: list[str]
    stale: list[str]
    lost: list[str]
    conflict_ok: bool | None
    minimal_ok: bool | None
    method: str
    #: the false positives that repeat another fact of the output (counted, not invented)
    repeated: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return dict(self.__dict__)


def score_case(
    case: ExtractionCase,
    output: Sequence[str],
    matcher: FactMatcher,
    *,
    counts: tuple[int, int, int] | None = None,
    method: str | None = None,
) -> CaseScore:
    """Score one case's output (the memory after the conversation). `counts` (TP, FP, FN)
    from a judge replace the matcher's, which still decides conflict and minimalism."""
    out = [str(o) for o in output if str(o).strip()]
    removed = [e.replaces for e in case.expected_facts if e.replaces]
    kept = [m for m in case.existing_memory if m not in removed]
    expected = [e.content for e in case.expected_facts]
    # one assignment over every target, so each output fact goes to the one it fits best: a
    # new fact close to an existing one is not mistaken for a carry-over, nor the new value
    # of a changed fact for the old one
    pairs_all = matcher.match(out, expected + kept + removed)
    n_exp, n_kept = len(expected), len(kept)
    pairs = [(i, j, s) for i, j, s in pairs_all if j < n_exp]
    carried = {i for i, j, _s in pairs_all if n_exp <= j < n_exp + n_kept}
    still = {j - n_exp for _i, j, _s in pairs_all if n_exp <= j < n_exp + n_kept}
    stale_idx = {i for i, j, _s in pairs_all if j >= n_exp + n_kept}
    matched_out = {i for i, _j, _s in pairs}
    matched_exp = {j for _i, j, _s in pairs}
    new_out = [o for i, o in enumerate(out) if i not in carried and i not in stale_idx]
    stale = [out[i] for i in sorted(stale_idx)]
    false_pos = [
        o
        for i, o in enumerate(out)
        if i not in matched_out and i not in carried and i not in stale_idx
    ]
    keys = [fact_key(o) for o in out]
    repeated = [
        o
        for i, o in enumerate(out)
        if i not in matched_out and i not in carried and i not in stale_idx and keys[i] in keys[:i]
    ]
    missed = [e for j, e in enumerate(expected) if j not in matched_exp]
    lost = [m for j, m in enumerate(kept) if j not in still]
    tp, fp, fn = (
        counts if counts is not None else (len(pairs), len(false_pos) + len(stale), len(missed))
    )
    p, r, f1 = prf(tp, fp, fn)
    conflict_ok = None
    if removed:
        replacing = {j for j, e in enumerate(case.expected_facts) if e.replaces}
        conflict_ok = not stale and replacing <= matched_exp
    minimal_ok = None
    if not case.expected_facts:
        minimal_ok = not new_out and not stale and not lost
    return CaseScore(
        id=case.id,
        scenario=case.scenario,
        tp=tp,
        fp=fp,
        fn=fn,
        precision=p,
        recall=r,
        f1=f1,
        matched=[
            {"extracted": out[i], "expected": expected[j], "similarity": round(s, 4)}
            for i, j, s in pairs
        ],
        false_positives=false_pos,
        missed=missed,
        stale=stale,
        lost=lost,
        conflict_ok=conflict_ok,
        minimal_ok=minimal_ok,
        method=method or matcher.name,
        repeated=repeated,
    )


def unmatched_notes(case: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(`invented` or `repeated`, fact) for each false positive of a case (`CaseScore`'s
    fields): a fact the output holds twice is said to be repeated, not invented."""
    repeats = list(case.get("repeated") or ())
    out = []
    # the later copies are the repeats: the first of two unmatched ones is invented
    for fact in reversed(case.get("false_positives") or ()):
        if fact in repeats:
            repeats.remove(fact)
            out.append(("repeated", fact))
        else:
            out.append(("invented", fact))
    return out[::-1]


def facts_of(output: Any) -> list[str]:
    """An extractor's output as a list of facts: a list as is, or text split into lines
    (bullets and numbering removed), or a JSON list / `{"memory": [...]}` in text."""
    if isinstance(output, dict):
        output = output.get("memory", output.get("facts", []))
    if isinstance(output, list | tuple):
        return [str(x) for x in output]
    text = str(output or "").strip()
    if text.startswith(("[", "{")):
        try:
            return facts_of(loads_json(text))
        except ValueError:
            pass
    lines = [re.sub(r"^\s*(?:[-*\u2022]|\d+[.)])\s*", "", ln).strip() for ln in text.splitlines()]
    return [ln for ln in lines if ln]
