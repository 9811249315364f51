"""LongMemEval (Wu et al., 2025) as a retrieval dataset, at turn or session granularity.

Each question has its own haystack, so each question is its own corpus (`corpus` = question id)
and memory ids are qualified by it: turn level `<qid>/<session_id>:<turn index>`, session level
`<qid>/<session_id>`. Judgments (grade 3): turns marked `has_answer`, or the sessions in
`answer_session_ids`. Questions whose id ends in `_abs` are abstention questions (the answer is
not in the history): imported, not judged, counted. Question types become categories.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from memgauge.data.importers.common import ImportReport
from memgauge.data.importers.shapes import LongMemEvalQuestion, shape_problems
from memgauge.data.jsonio import load_structured
from memgauge.data.models import EvalQuery, Judgment, Memory, RetrievalDataset
from memgauge.errors import DataError, Problem

__all__ = ["import_longmemeval"]

Granularity = Literal["turn", "session"]
_REQUIRED = (
    "question_id",
    "question_type",
    "question",
    "haystack_session_ids",
    "haystack_sessions",
)


def _date(text: Any) -> datetime | None:
    if not isinstance(text, str):
        return None
    for fmt in ("%Y/%m/%d (%a) %H:%M", "%Y/%m/%d %H:%M", "%Y/%m/%d"):
        try:
            return datetime.strptime(text.strip(), fmt)
        except ValueError:
            continue
    return None


def import_longmemeval(
    path: str | Path, granularity: Granularity = "turn"
) -> tuple[RetrievalDataset, ImportReport]:
    """Read a LongMemEval JSON file (`longmemeval_s/m/oracle.json` format)."""
    if granularity not in ("turn", "session"):
        raise DataError(Problem(str(path), None, "granularity", "use 'turn' or 'session'"))
    raw = load_structured(Path(path))[0]
    file = str(path)
    if not isinstance(raw, list):
        raise DataError(Problem(file, None, None, "LongMemEval is a JSON list of questions"))
    report = ImportReport(source=file, format=f"longmemeval-{granularity}")
    memories: list[Memory] = []
    queries: list[EvalQuery] = []
    judgments: list[Judgment] = []
    problems: list[Problem] = []
    seen_q: set[str] = set()
    for i, item in enumerate(raw):
        where = f"[{i}]"
        if not isinstance(item, dict):
            problems.append(Problem(file, None, where, "each question is a JSON object"))
            continue
        missing = [k for k in _REQUIRED if k not in item]
        if missing:
            problems.append(Problem(file, None, where, f"missing fields {missing}"))
            continue
        wrong = shape_problems(item, LongMemEvalQuestion, file, where)
        if wrong:
            problems.extend(wrong)
            continue
        qid = str(item["question_id"])
        if qid in seen_q:
            problems.append(Problem(file, None, f"{where}.question_id", f"duplicate {qid!r}"))
            continue
        seen_q.add(qid)
        session_ids = [str(s) for s in item["haystack_session_ids"]]
        sessions = item["haystack_sessions"]
        dates = item.get("haystack_dates") or [None] * len(session_ids)
        if len(sessions) != len(session_ids) or len(dates) != len(session_ids):
            problems.append(
                Problem(
                    file,
                    None,
                    where,
                    f"haystack_session_ids ({len(session_ids)}), haystack_sessions "
                    f"({len(sessions)}) and haystack_dates ({len(dates)}) differ in length",
                )
            )
            continue
        abstention = qid.endswith("_abs")
        answer_sessions = {str(s) for s in item.get("answer_session_ids") or []}
        relevant: list[str] = []
        for sid, turns, when in zip(session_ids, sessions, dates, strict=True):
            created = _date(when)
            if granularity == "session":
                mid = f"{qid}/{sid}"
                text = "\n".join(f"{t.get('role', '?')}: {t.get('content', '')}" for t in turns)
                memories.append(
                    Memory(id=mid, text=text, session=sid, corpus=qid, created_at=created)
                )
                if sid in answer_sessions:
                    relevant.append(mid)
                continue
            for ti, turn in enumerate(turns):
                mid = f"{qid}/{sid}:{ti}"
                memories.append(
                    Memory(
                        id=mid,
                        text=f"{turn.get('role', '?')}: {turn.get('content', '')}",
                        session=sid,
                        corpus=qid,
                        created_at=created,
                        metadata={"role": turn.get("role")},
                    )
                )
                if turn.get("has_answer"):
                    relevant.append(mid)
        queries.append(
            EvalQuery(
                id=qid,
                text=str(item["question"]),
                category=str(item["question_type"]),
                corpus=qid,
                metadata={
                    "answer": item.get("answer"),
                    "question_date": item.get("question_date"),
                    "abstention": abstention,
                },
            )
        )
        report.add(f"questions_{item['question_type']}")
        if abstention:
            report.add("abstention_not_judged")
            continue
        if not relevant:
            report.add("questions_without_evidence")
            report.dropped.append({"query": qid, "reason": f"no evidence {granularity}s"})
            continue
        report.add("questions_judged")
        judgments.extend(Judgment(query_id=qid, memory_id=m, grade=3) for m in relevant)
    if problems:
        raise DataError(problems)
    report.counts.update(memories=len(memories), queries=len(queries), judgments=len(judgments))
    report.notes.append("abstention questions (_abs) are imported as queries, not judged")
    name = f"{Path(path).stem}-{granularity}"
    return RetrievalDataset(
        name=name, memories=memories, queries=queries, judgments=judgments
    ), report
