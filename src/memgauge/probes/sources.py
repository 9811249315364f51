"""What an audit reads: memaudit conversations (JSON or JSONL), LoCoMo and LongMemEval files.
Each becomes probes plus the turns the agent under test gets to see.

- memaudit: probes generated from the facts (`generate.generate_probes`); the turns of every
  conversation, in order, are the agent's memory.
- LoCoMo (through the importer): one probe per QA item, asked against its own conversation
  (the corpus). Category 2 is a temporal probe, category 5 (adversarial) a hallucination
  probe whose right answer is that it was not mentioned, 1 / 3 / 4 recall probes.
- LongMemEval: knowledge-update questions are conflict probes, temporal-reasoning ones temporal
  probes, `_abs` questions hallucination (abstention) probes, the rest recall probes; each is
  asked against its own haystack, read under the importer's **all-turns** protocol (every turn
  of every role), not the paper's retrieval protocol (user turns only): an answer the
  assistant gave must stay reachable for an agent asked to recall it. The audit says so.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memgauge.data.detect import read_as
from memgauge.data.importers import import_locomo, import_longmemeval
from memgauge.data.io import load_conversations
from memgauge.data.models import EvalQuery, Memory
from memgauge.errors import DataError, Problem
from memgauge.probes.generate import NOT_MENTIONED, Probe, conversation_memories, generate_probes

__all__ = ["AUDIT_PROTOCOL", "AuditSource", "load_audit_source"]

#: How an audit reads LongMemEval, said in its results and report.
AUDIT_PROTOCOL = (
    "memgauge's all-turns protocol for LongMemEval: every turn of every role is in memory, so "
    "answers the assistant gave stay reachable (not the paper's retrieval protocol, which keeps "
    "user turns only; `memgauge import longmemeval --protocol paper` gives that one)"
)


@dataclass(frozen=True)
class AuditSource:
    """Probes and the memories they are asked against."""

    name: str
    format: str
    probes: list[Probe]
    memories: list[Memory]
    notes: dict[str, Any] = field(default_factory=dict)


def _evidence(qrels: Mapping[str, Mapping[str, int]], q: EvalQuery) -> dict[str, Any]:
    """The memories judged to hold the probe's answer (`evidence`: what a wrong answer is
    attributed by, `aggregates.attribution_cause`); nothing for a probe with none."""
    ids = [m for m, grade in (qrels.get(q.id) or {}).items() if grade > 0]
    return {"evidence": ids} if ids else {}


def _locomo_probe(q: EvalQuery, qrels: Mapping[str, Mapping[str, int]]) -> Probe:
    cat = int(q.metadata.get("locomo_category") or 0)
    meta = {"locomo_category": cat, "category_name": q.category, **_evidence(qrels, q)}
    if cat == 5:
        return Probe(q.id, "hallucination", q.text, NOT_MENTIONED, corpus=q.corpus, metadata=meta)
    kind = "temporal" if cat == 2 else "recall"
    return Probe(q.id, kind, q.text, str(q.metadata.get("answer")), corpus=q.corpus, metadata=meta)


def _longmemeval_probe(q: EvalQuery, qrels: Mapping[str, Mapping[str, int]]) -> Probe:
    qtype = str(q.category or "")
    meta: dict[str, Any] = {"longmemeval_type": qtype, **_evidence(qrels, q)}
    date = q.metadata.get("question_date")
    if date:
        # "how many days ago ..." needs the day the question is asked
        q = q.model_copy(update={"text": f"(Today is {date}.) {q.text}"})
    if q.metadata.get("abstention"):
        expected = str(q.metadata.get("answer") or NOT_MENTIONED)
        return Probe(q.id, "hallucination", q.text, expected, corpus=q.corpus, metadata=meta)
    kind = {"knowledge-update": "conflict", "temporal-reasoning": "temporal"}.get(qtype, "recall")
    return Probe(q.id, kind, q.text, str(q.metadata.get("answer")), corpus=q.corpus, metadata=meta)


def load_audit_source(path: str | Path, *, seed: int = 0, kind: str | None = None) -> AuditSource:
    """Probes and memories from `path`, read as `kind` (conversations, locomo, longmemeval;
    default: what its content shows, its name breaking a tie; DataError if unreadable)."""
    p = Path(path)
    kind = read_as(p, kind, "probes")
    if kind == "locomo":
        ds, report = import_locomo(p)
        qrels = ds.qrels()
        probes = [_locomo_probe(q, qrels) for q in ds.queries]
        return AuditSource(p.stem, "locomo", probes, ds.memories, {"import": report.as_dict()})
    if kind == "longmemeval":
        ds, report = import_longmemeval(p, protocol="all-turns")
        qrels = ds.qrels()
        probes = [_longmemeval_probe(q, qrels) for q in ds.queries]
        notes = {"import": report.as_dict(), "protocol": AUDIT_PROTOCOL}
        return AuditSource(p.stem, "longmemeval", probes, ds.memories, notes)
    if kind != "conversations" and p.suffix.lower() not in (".json", ".jsonl"):
        raise DataError(Problem(str(p), None, None, "not a memaudit, LoCoMo or LongMemEval file"))
    # memaudit reads any .json / .jsonl as its own: its reader names what does not fit
    conv = load_conversations(p)
    probes = generate_probes(conv, seed=seed)
    return AuditSource(conv.id, "memaudit", probes, conversation_memories(conv))
