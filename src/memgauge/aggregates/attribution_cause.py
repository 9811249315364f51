"""Why one wrong answer was wrong (seed 004: "whether the vector search returned irrelevant
results, the context rule suppressed the right source, or the knowledge graph had stale data").

What an item tells (its input's `metadata`, written by its dataset):
- `evidence`: the ids of the memories that hold the answer (LoCoMo's and LongMemEval's audit
  probes carry their judged turns; an items file writes them);
- `stale`: ids of memories that a newer one supersedes, and `old_values`: the superseded
  values a conflict probe knows (seed 003).

What the subject's call recorded (the item's `extra`):
- `retrieved` (a memory answering with its hits) or `used` (an agent that says so in its
  answer's `retrieved` metadata, as the memory agent does): the ids of the hits it answered
  from;
- `context`: of those, the ids its context rule kept (an agent that says so);
- `ranking`: with an attribution aggregate in the task, the subject's ranking searched deeper
  (`{"id", "text"}` per hit, best first), and `stored`: which evidence ids its store holds at
  all, recorded when the deeper search did not find them.

The cause, first that applies:
1. `stale`: the answer gives a superseded value, or the context held a superseded memory;
2. `unattributable` (with its reason): no evidence to check, or no hits recorded;
3. `retrieval_miss`: no evidence memory among the hits used; the best rank where one would
   have been in the deeper ranking, `>N` below it, `unranked` when the search returns it at
   no depth, `absent` when the store does not hold it (none: not searched deeper);
4. `budget_cut`: retrieved, but none kept in the context: the subject's own `context`, else the
   hits filled in rank order into a simulated token budget until the next would not fit (the
   cost aggregate's rule, `aggregates.cost_values`);
5. `reader_error`: an evidence memory was in the context and the answer is still wrong.

A correct answer has no cause, and neither has an item whose call failed or whose verdict could
not be given: those are failures, counted beside the causes, never one of them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from memgauge._util.listing import counted
from memgauge.data.records import ItemRecord, ScoreRecord
from memgauge.metrics.tokens import Encoding, token_counts

__all__ = ["CAUSES", "Cause", "attribute", "correct", "evidence_of", "verdict_of"]

#: every cause, in the order reports list them, with its label
CAUSES: dict[str, str] = {
    "retrieval_miss": "retrieval miss",
    "budget_cut": "budget cut",
    "reader_error": "reader error",
    "stale": "stale/conflicting",
    "unattributable": "unattributable",
}


@dataclass(frozen=True)
class Cause:
    """The cause of one wrong answer, and what shows it.

    Attributes:
        cause: a key of `CAUSES`.
        text: the cause in words, with its evidence.
        rank: for a retrieval miss, the best 1-based rank of an evidence memory in the deeper
            ranking; ">N" when the store holds it below the N hits searched; "unranked" when
            it holds it but the search ran out of hits first; "absent" when the store does not
            hold it; None when not searched deeper.
    """

    cause: str
    text: str
    rank: int | str | None = None

    def as_dict(self) -> dict[str, Any]:
        """The cause as the item's record keeps it."""
        out: dict[str, Any] = {"cause": self.cause, "text": self.text}
        if self.rank is not None:
            out["rank"] = self.rank
        return out


def verdict_of(record: ItemRecord, label: str | None) -> ScoreRecord | None:
    """The verdict of evaluator `label` (None: the item's first verdict)."""
    if label is not None:
        return record.verdict(label)
    return record.scores[0] if record.scores else None


def correct(verdict: ScoreRecord) -> bool:
    """Passed, or for an evaluator that decides no pass/fail, scored at least 0.5 (the audit's
    rule)."""
    return bool(verdict.passed) if verdict.passed is not None else (verdict.value or 0) >= 0.5


def _ids(value: object) -> list[str] | None:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list | tuple):
        return [str(v["id"]) if isinstance(v, Mapping) else str(v) for v in value]
    return None


def evidence_of(metadata: Mapping[str, Any]) -> list[str]:
    """The item's evidence memory ids (none when its metadata names none)."""
    return _ids(metadata.get("evidence")) or []


_SPACE = re.compile(r"\W+")


def _norm(text: str) -> str:
    return " " + _SPACE.sub(" ", text.lower()).strip() + " "


def _stale(record: ItemRecord, meta: Mapping[str, Any], used: Sequence[str]) -> Cause | None:
    answer = _norm(str(record.output or ""))
    expected = record.expected if isinstance(record.expected, list) else [record.expected]
    right = [_norm(str(e)) for e in expected if e]
    for old in meta.get("old_values") or ():
        value = _norm(str(old))
        # an old value that is part of the right one ("Paris" in "Paris, Texas") says nothing
        if value.strip() and value in answer and not any(value in r for r in right):
            return Cause("stale", f"answered the superseded value {str(old)!r}")
    stale = [m for m in _ids(meta.get("stale")) or [] if m in used]
    if stale:
        return Cause("stale", f"the context held superseded memory {', '.join(stale)}")
    return None


def _kept(
    used: Sequence[str], texts: Mapping[str, str], budget: int, encoding: Encoding
) -> list[str] | None:
    """The hits that fit `budget` tokens, filled in rank order until the next would not fit;
    None when a hit's text was not recorded."""
    if any(u not in texts for u in used):
        return None
    total, kept = 0, []
    for hid, n in zip(used, token_counts([texts[u] for u in used], encoding), strict=True):
        total += int(n)
        if total > budget:
            break
        kept.append(hid)
    return kept


def _miss(evidence: Sequence[str], extra: Mapping[str, Any], k: int) -> Cause:
    ranking = _ids(extra.get("ranking")) or []
    ranks = [ranking.index(e) + 1 for e in evidence if e in ranking]
    shown = ", ".join(evidence)
    if ranks:
        return Cause(
            "retrieval_miss",
            f"evidence {shown} not in the top {k}; at rank {min(ranks)}",
            min(ranks),
        )
    stored = _ids(extra.get("stored"))
    if stored is not None and not stored:
        return Cause("retrieval_miss", f"evidence {shown} is not in the subject's store", "absent")
    if stored:
        depth = extra.get("depth")
        if isinstance(depth, int) and len(ranking) < depth:
            # the search ran out of hits before the depth asked: no depth finds it
            return Cause(
                "retrieval_miss",
                f"evidence {shown} is stored but the search does not return it at any depth "
                f"({counted(len(ranking), 'hit')})",
                "unranked",
            )
        return Cause(
            "retrieval_miss",
            f"evidence {shown} not in the top {len(ranking)} (stored: {', '.join(stored)})",
            f">{len(ranking)}",
        )
    where = f"not in the top {k}" if k else "not retrieved (no hit)"
    return Cause("retrieval_miss", f"evidence {shown} {where} (not searched deeper)")


def attribute(
    record: ItemRecord,
    label: str | None = None,
    *,
    budget: int | None = None,
    encoding: Encoding = "o200k_base",
) -> Cause | None:
    """The cause of the item's wrong answer (module docstring); None when the answer is right,
    the call failed or the verdict could not be given."""
    if record.status != "completed":
        return None
    verdict = verdict_of(record, label)
    if verdict is None or verdict.error is not None or verdict.value is None or correct(verdict):
        return None
    meta: Mapping[str, Any] = record.input.get("metadata") or {}
    extra = record.extra
    used = _ids(extra.get("used", extra.get("retrieved")))
    stale = _stale(record, meta, used or [])
    if stale is not None:
        return stale
    evidence = evidence_of(meta)
    if not evidence:
        why = (
            "an abstention probe: no memory holds its answer"
            if meta.get("abstention")
            else "the item names no evidence memory (metadata.evidence)"
        )
        return Cause("unattributable", why)
    if used is None:
        return Cause("unattributable", "the subject did not say which memories it answered from")
    if not any(e in used for e in evidence):
        return _miss(evidence, extra, len(used))
    context = _ids(extra.get("context"))
    if context is None and budget is not None:
        texts = {
            str(h["id"]): str(h["text"])
            for h in extra.get("ranking") or ()
            if isinstance(h, Mapping) and "text" in h
        }
        context = _kept(used, texts, budget, encoding)
        if context is None:
            return Cause(
                "unattributable",
                f"retrieved, but the hits' texts were not recorded to fill a {budget}-token budget",
            )
    found = [e for e in evidence if e in used]
    if context is not None and not any(e in context for e in evidence):
        limit = f"a {budget}-token budget" if extra.get("context") is None else "the context rule"
        return Cause(
            "budget_cut",
            f"evidence {', '.join(found)} retrieved at rank {used.index(found[0]) + 1}, cut by "
            f"{limit} ({len(context)} of {counted(len(used), 'hit')} kept)",
        )
    return Cause(
        "reader_error",
        f"evidence {', '.join(found)} in the context (rank {used.index(found[0]) + 1}); "
        "the answer is still wrong",
    )
