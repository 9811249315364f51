"""Knowledge-graph entries (seed 004: "whether the pipeline that writes to storage is producing
quality ... knowledge graph entries"): the triples a system wrote against the expected ones.

A triple is (subject, relation, object). Entities are normalized (Unicode NFKC, case-folded,
punctuation to spaces, a leading article dropped, whitespace collapsed), relations too, with
camelCase, snake_case and kebab-case split into words (`worksAt`, `WORKS_AT`, `works-at` are
`works at`). Then, per item, as sets:

    triples:   TP = |produced & expected|, FP = |produced - expected|, FN = |expected - produced|
    entities:  the same over the subjects and objects of each side
    relations: the same over the relation names of each side
    precision = TP / (TP + FP) (1 when nothing was produced), recall = TP / (TP + FN) (1 when
    nothing was expected), F1 = 2PR / (P + R) (0 when P + R = 0)

Output and expected value take the shapes graph writers give: a list of `[s, r, o]`, of
`{subject|head|source, relation|predicate|type, object|tail|target}`, a `{"triples": [...]}`
object, JSON of those in text, or lines `s | r | o` (or `(s, r, o)`). A line or entry of no such
shape makes the verdict a failure naming it, never a silently shorter list.
"""

from __future__ import annotations

import re
import string
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from memgauge.data.parsing import loads_json
from memgauge.scorers.base import EvalContext, Score
from memgauge.scorers.extraction import prf

__all__ = ["KGTriples", "Triple", "normalize_entity", "normalize_relation", "triples_of"]

Triple = tuple[str, str, str]

_PUNCT = str.maketrans(dict.fromkeys(string.punctuation, " "))
_ARTICLE = re.compile(r"^(a|an|the) ")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_KEYS = (
    ("subject", "head", "source", "s"),
    ("relation", "predicate", "type", "r", "p"),
    ("object", "tail", "target", "o"),
)


def normalize_entity(text: str) -> str:
    """`The  Kuzu-DB.` -> `kuzu db`."""
    text = unicodedata.normalize("NFKC", str(text)).casefold().translate(_PUNCT)
    return _ARTICLE.sub("", " ".join(text.split()))


def normalize_relation(text: str) -> str:
    """`worksAt`, `WORKS_AT`, `works-at` -> `works at`."""
    return normalize_entity(_CAMEL.sub(" ", unicodedata.normalize("NFKC", str(text))))


def _one(entry: Any) -> Triple | None:
    if isinstance(entry, Mapping):
        parts = [next((entry[k] for k in keys if k in entry), None) for keys in _KEYS]
    elif isinstance(entry, list | tuple) and len(entry) == 3:
        parts = list(entry)
    else:
        return None
    if any(p is None or not str(p).strip() for p in parts):
        return None
    return str(parts[0]), str(parts[1]), str(parts[2])


def triples_of(value: Any) -> list[Triple]:
    """The triples in `value` (see the module docstring); ValueError naming an entry of no
    known shape."""
    if isinstance(value, Mapping) and "triples" in value:
        value = value["triples"]
    if isinstance(value, str):
        text = value.strip()
        if text.startswith(("[", "{")):
            try:
                return triples_of(loads_json(text))
            except ValueError:
                pass
        out = []
        for line in (ln.strip() for ln in text.splitlines()):
            if not line:
                continue
            parts = [p.strip() for p in line.strip("()- ").split("|" if "|" in line else ",")]
            if len(parts) != 3 or not all(parts):
                raise ValueError(
                    f"not a triple: {line[:120]!r} (write subject | relation | object)"
                )
            out.append((parts[0], parts[1], parts[2]))
        return out
    if not isinstance(value, list | tuple):
        raise ValueError(f"expected a list of triples, got {type(value).__name__}")
    found = []
    for entry in value:
        triple = _one(entry)
        if triple is None:
            raise ValueError(f"not a triple: {str(entry)[:120]!r}")
        found.append(triple)
    return found


def _counts(produced: set[Any], expected: set[Any]) -> dict[str, Any]:
    tp, fp, fn = len(produced & expected), len(produced - expected), len(expected - produced)
    p, r, f1 = prf(tp, fp, fn)
    return {"tp": tp, "fp": fp, "fn": fn, "precision": p, "recall": r, "f1": f1}


@dataclass(frozen=True)
class KGTriples:
    """Produced knowledge-graph triples against the item's expected ones: P / R / F1 over
    normalized triples, entities and relations (value: triple F1).

    Attributes:
        pass_f1: triple F1 at or above which the item passes (None: no pass/fail).
    """

    pass_f1: float | None = None
    name: ClassVar[str] = "kg-triples"

    def evaluate(self, ctx: EvalContext) -> Score:
        """See the module docstring."""
        try:
            expected = triples_of(ctx.expected)
        except ValueError as exc:
            return Score.failure(f"the item's expected triples: {exc}")
        try:
            produced = triples_of(ctx.output)
        except ValueError as exc:
            return Score.failure(f"the output's triples: {exc}")

        def norm(ts: list[Triple]) -> set[Triple]:
            return {
                (normalize_entity(s), normalize_relation(r), normalize_entity(o)) for s, r, o in ts
            }

        got, want = norm(produced), norm(expected)
        levels = {
            "triples": _counts(got, want),
            "entities": _counts(
                {e for t in got for e in (t[0], t[2])}, {e for t in want for e in (t[0], t[2])}
            ),
            "relations": _counts({t[1] for t in got}, {t[1] for t in want}),
        }
        t = levels["triples"]
        missing = sorted(" | ".join(x) for x in want - got)
        invented = sorted(" | ".join(x) for x in got - want)
        notes = [f"missed: {x}" for x in missing[:2]] + [f"invented: {x}" for x in invented[:2]]
        return Score(
            value=t["f1"],
            passed=None if self.pass_f1 is None else t["f1"] >= self.pass_f1,
            reason=f"triples TP {t['tp']} FP {t['fp']} FN {t['fn']}; F1 {t['f1']:.2f}"
            + (f"; {'; '.join(notes)}" if notes else ""),
            detail={**levels, "missed": missing, "invented": invented},
        )
