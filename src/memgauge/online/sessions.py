"""Sessions and outcomes from the query log (seed 002 sections 5.3 and 5.4).

- `session_summary`: the seed's `SessionEvalSummary.aggregateMetrics` (searches, memories
  accessed, average MRR over the judged searches, re-search rate, duration) with the session's
  turn count, task outcomes and `to_validate`, the memories it accessed and did not validate yet
  (what a batch validation after the task asks about).
- `outcome_report`: does retrieval quality go with task success? Per session, the average
  RR@10 of its judged searches against its last outcome: Pearson (point-biserial for success)
  with a 95% CI, and mean MRR of successful vs failed sessions; n/a below `MIN_SESSIONS`.
- `session_length_signal`: longer sessions may mean search friction: Spearman's correlation of
  a session's turn count with its searches per turn.
- `channel_contribution`: per channel, the share of returned results it surfaced (and surfaced
  alone), from the logged `channel_contributions`.
- `derive_signals`: scroll-past (results ranked above the deepest one the agent selected, and
  not selected: it looked that far and skipped them) and copy/reference (an agent output holding
  a verbatim span of a memory its session was shown: `SPAN_WORDS` consecutive words, or the
  whole memory when it is shorter).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from memgauge.metrics import agent
from memgauge.metrics.ir import MetricConfig, evaluate_ranked
from memgauge.stats.correlation import correlation
from memgauge.store.sessions import SessionLog

__all__ = [
    "MIN_SESSIONS",
    "SPAN_WORDS",
    "channel_contribution",
    "derive_signals",
    "outcome_report",
    "session_length_signal",
    "session_summary",
]

#: sessions with both a judged search and an outcome (or with a turn count) below which a
#: correlation is n/a: a Fisher-z CI on fewer is wider than the range it lives in
MIN_SESSIONS = 10
#: consecutive words of a memory an agent output must hold verbatim to count as a reference
SPAN_WORDS = 8
_SELECT = ("read_after_search", "reference")
_VALIDATE = ("validate_useful", "validate_not_useful")
_K = 10


def _rr(session: SessionLog) -> dict[str, float]:
    """RR@10 of the session's searches that have judgments (seed 002 MRR@10, at the default
    relevance threshold)."""
    judged = {q.query_id: q.result_ids for q in session.queries if q.query_id in session.grades}
    if not judged:
        return {}
    ev = evaluate_ranked(
        {q: session.grades[q] for q in judged},
        judged,
        [f"RR@{_K}"],
        MetricConfig(),
    )
    return dict(zip(ev.query_ids, ev.per_query[f"RR@{_K}"].tolist(), strict=True))


def _minutes(session: SessionLog) -> float | None:
    stamps = [q.created_at for q in session.queries] + [f[4] for f in session.feedback]
    stamps += [o["created_at"] for o in session.outcomes]
    stamps += [s for s in (session.started_at, session.ended_at) if s]
    if not stamps:
        return None
    first, last = min(stamps), max(stamps)
    return (datetime.fromisoformat(last) - datetime.fromisoformat(first)).total_seconds() / 60


def session_summary(session: SessionLog) -> dict[str, Any]:
    """The session's aggregate metrics (see the module docstring); n/a values are None."""
    rr = _rr(session)
    searches = len(session.queries)
    accessed = list(dict.fromkeys(m for k, _q, m, *_ in session.feedback if k in _SELECT and m))
    validated = {m for k, _q, m, *_ in session.feedback if k in _VALIDATE}
    re_searched = {q for k, q, *_ in session.feedback if k == "re_search" and q}
    return {
        "session_id": session.session_id,
        "searches": searches,
        "memories_accessed": len(accessed),
        "avg_mrr": sum(rr.values()) / len(rr) if rr else None,
        "n_judged": len(rr),
        "re_search_rate": len(re_searched) / searches if searches else None,
        "duration_minutes": _minutes(session),
        "turns": session.turns,
        "searches_per_turn": searches / session.turns if session.turns else None,
        "outcomes": session.outcomes,
        "to_validate": [m for m in accessed if m not in validated],
    }


def _outcome_value(o: Mapping[str, Any]) -> tuple[str, float] | None:
    if o.get("success") is not None:
        return "success", float(bool(o["success"]))
    if o.get("score") is not None:
        return "score", float(o["score"])
    return None


def outcome_report(summaries: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Retrieval quality (a session's average MRR) against its task outcome (its last one
    with a success flag, else a score), over sessions that have both."""
    out: dict[str, Any] = {"min_sessions": MIN_SESSIONS}
    for kind in ("success", "score"):
        pairs = []
        for s in summaries:
            if s["avg_mrr"] is None or not s["outcomes"]:
                continue
            values = [v for o in s["outcomes"] if (v := _outcome_value(o)) and v[0] == kind]
            if values:
                pairs.append((float(s["avg_mrr"]), values[-1][1]))
        corr = correlation([p[0] for p in pairs], [p[1] for p in pairs], min_n=MIN_SESSIONS)
        entry = corr.as_dict()
        if kind == "success":
            entry["method"] = "point-biserial (Pearson)"
            won = [m for m, v in pairs if v == 1.0]
            lost = [m for m, v in pairs if v == 0.0]
            entry.update(
                n_success=len(won),
                n_failure=len(lost),
                mrr_success=sum(won) / len(won) if won else None,
                mrr_failure=sum(lost) / len(lost) if lost else None,
            )
        out[kind] = entry
    return out


def session_length_signal(summaries: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Spearman's correlation of turns with searches per turn, over sessions with a turn
    count (seed 002 section 5.3: longer sessions may indicate search friction)."""
    rows = [(s["turns"], s["searches_per_turn"]) for s in summaries if s["turns"]]
    corr = correlation(
        [float(t) for t, _ in rows],
        [float(r) for _, r in rows],
        "spearman",
        min_n=MIN_SESSIONS,
    )
    spt = [r for _, r in rows]
    return {
        **corr.as_dict(),
        "mean_searches_per_turn": sum(spt) / len(spt) if spt else None,
    }


def channel_contribution(sessions: Mapping[str, SessionLog], k: int = _K) -> dict[str, Any]:
    """Per channel, the share of the top-`k` results of logged searches it surfaced, and the
    share it alone surfaced (seed 002 section 3.2), over the searches that logged channels."""
    per_query: dict[str, list[list[str]]] = {}
    for s in sessions.values():
        for q in s.queries:
            if not q.channels:
                continue
            found = {c: set(ids) for c, ids in q.channels.items()}
            per_query[q.query_id] = [
                sorted(c for c, ids in found.items() if m in ids) for m in q.result_ids[:k]
            ]
    v = agent.channel_contribution(per_query, k)
    return {
        "k": k,
        "n_searches": len(per_query),
        "n_results": v.n,
        "contribution": v.detail.get("contribution"),
        "unique": v.detail.get("unique"),
        "note": v.note,
    }


_WORD = re.compile(r"\w+")


def _words(text: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(text)]


def _spans(words: Sequence[str], n: int) -> set[tuple[str, ...]]:
    return {tuple(words[i : i + n]) for i in range(len(words) - n + 1)}


Signal = tuple[str, str, str | None, str, int | None, dict[str, Any]]


def derive_signals(sessions: Mapping[str, SessionLog], texts: Mapping[str, str]) -> list[Signal]:
    """Scroll-past and copy/reference events (event, session, query, memory, rank, metadata)
    from the logs; `texts` holds the memories' texts (reference needs them)."""
    out: list[Signal] = []
    for sid, s in sessions.items():
        for q in s.queries:
            picked = {m for k, qid, m, *_ in s.feedback if k in _SELECT and qid == q.query_id}
            ranks = [q.result_ids.index(m) for m in picked if m in q.result_ids]
            if not ranks:
                continue
            deepest = max(ranks)
            for r, m in enumerate(q.result_ids[:deepest]):
                if m not in picked:
                    meta = {"derived": "scroll_past", "selected_rank": deepest + 1}
                    out.append(("scroll_past", sid, q.query_id, m, r + 1, meta))
        for oid, _qid, text, at in s.outputs:
            said = _words(text)
            shown: dict[str, tuple[str, int]] = {}  # memory -> (latest query, rank) before it
            for q in s.queries:
                if q.created_at <= at:
                    for r, m in enumerate(q.result_ids):
                        shown[m] = (q.query_id, r + 1)
            for m, (qid, rank) in shown.items():
                words = _words(texts.get(m, ""))
                if len(words) < 3:
                    continue  # too short to tell a copy from a coincidence
                n = min(SPAN_WORDS, len(words))
                common = _spans(words, n) & _spans(said, n)
                if common:
                    span = " ".join(min(common))
                    meta = {"derived": "reference", "output_id": oid, "span": span}
                    out.append(("reference", sid, qid, m, rank, meta))
    return out
