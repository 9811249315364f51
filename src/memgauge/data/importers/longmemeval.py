"""LongMemEval (Wu et al., 2025) as a retrieval dataset, at turn or session granularity, under
one of two protocols.

Each question has its own haystack, so each question is its own corpus (`corpus` = question
id) and memory ids are qualified by it (`<qid>/...`). Question types become categories.

**paper** (the default of `memgauge import longmemeval`): the corpus and relevance rules of
LongMemEval's `src/retrieval/run_retrieval.py` (`process_item_flat_index`), so that numbers can
be set beside the paper's:

- the corpus holds **user turns only**: at turn level one memory per user turn, id
  `<qid>/<session id>_<turn number>` (the turn's position in the session, from 1, counting
  assistant turns too); at session level one memory per session, its user turns joined by a
  space, id `<qid>/<session id>`;
- a memory is relevant (grade 3) only if its LongMemEval id contains `answer`. A session's id
  contains it when it is an answer session; a user turn of an answer session without
  `has_answer` is renamed (`answer` -> `noans`, as LongMemEval does), and so is an answer
  session none of whose user turns has `has_answer`. A `has_answer` on an assistant turn, or
  in a session whose id lacks `answer`, counts for nothing (counted in the report); a missing
  `has_answer` is read as false (counted: LongMemEval's script would stop there);
- questions whose id contains `_abs` are left out of the means (imported, not judged), as
  `print_retrieval_metrics.py` does. Every other question is scored: one with no relevant
  memory is judged 0 on its whole corpus, and `DatasetProtocol.recall_all_no_relevant = 1`
  makes its recall_all 1.0, as LongMemEval's `all([])` gives (recall_any and ndcg_any 0).
  `run_retrieval.py`'s own console average also skips questions with no `has_answer` user
  turn anywhere; the report counts them;
- the session_* measures (`memgauge.metrics.longmemeval`) map a turn to its session as
  LongMemEval does, from these ids.

**all-turns** (what `memgauge audit` reads): every turn of every role is a memory, text
`role: content`, id `<qid>/<session id>:<turn index from 0>` (turn level) or `<qid>/<session id>`
with every turn (session level); grade 3 for every turn with `has_answer` of any role (turn
level) or the sessions in `answer_session_ids` (session level); questions ending in `_abs` are
not judged; questions with nothing relevant are not judged either (counted). A session id a
haystack repeats is kept once, under either protocol (`duplicate_corpus_ids_dropped`). Assistant-side
answers stay reachable: an agent that must recall what the assistant said can find it.

Wrong-typed fields are a DataError naming the file and the field, under either protocol.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from memgauge.data.importers.common import ImportReport, json_type, wrong_type
from memgauge.data.jsonio import DEFAULT_MAX_LINE_BYTES, load_structured
from memgauge.data.models import DatasetProtocol, EvalQuery, Judgment, Memory, RetrievalDataset
from memgauge.errors import DataError, Problem

__all__ = ["PROTOCOLS", "import_longmemeval"]

Granularity = Literal["turn", "session"]
ProtocolName = Literal["paper", "all-turns"]
PROTOCOLS: dict[str, str] = {
    "paper": "LongMemEval's paper protocol (user turns only; relevant = has_answer user turns "
    "of answer sessions; every question but _abs scored)",
    "all-turns": "memgauge's all-turns protocol (every turn of every role; relevant = any "
    "has_answer turn; not LongMemEval's retrieval protocol)",
}
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


def _string_list(file: str, where: str, value: Any, *, nullable: bool = False) -> list[Problem]:
    if nullable and value is None:
        return []
    if not isinstance(value, list):
        return [Problem(file, None, where, f"must be a list of strings, got {json_type(value)}")]
    return [
        p
        for i, v in enumerate(value)
        if (p := wrong_type(file, f"{where}[{i}]", v, str, "a string")) is not None
    ]


def _question_problems(file: str, where: str, item: Any) -> list[Problem]:
    """Every missing or wrong-typed field of one question."""
    if not isinstance(item, dict):
        return [Problem(file, None, where, "each question is a JSON object")]
    missing = [k for k in _REQUIRED if k not in item]
    if missing:
        return [Problem(file, None, where, f"missing fields {missing}")]
    out = [
        p
        for key in ("question_id", "question_type", "question")
        if (p := wrong_type(file, f"{where}.{key}", item[key], str, "a string")) is not None
    ]
    if item["question_id"] == "":  # it becomes the query's id, which cannot be empty
        out.append(Problem(file, None, f"{where}.question_id", "must not be empty"))
    if "question_date" in item and item["question_date"] is not None:
        p = wrong_type(file, f"{where}.question_date", item["question_date"], str, "a string")
        out += [p] if p else []
    if "answer" in item:
        p = wrong_type(file, f"{where}.answer", item["answer"], (str, int, float), "text")
        out += [p] if p else []
    out += _string_list(file, f"{where}.haystack_session_ids", item["haystack_session_ids"])
    out += _string_list(
        file, f"{where}.answer_session_ids", item.get("answer_session_ids"), nullable=True
    )
    out += _string_list(file, f"{where}.haystack_dates", item.get("haystack_dates"), nullable=True)
    sessions = item["haystack_sessions"]
    if not isinstance(sessions, list):
        return [
            *out,
            Problem(file, None, f"{where}.haystack_sessions", "must be a list of sessions"),
        ]
    for si, turns in enumerate(sessions):
        at = f"{where}.haystack_sessions[{si}]"
        if not isinstance(turns, list):
            out.append(
                Problem(file, None, at, f"a session is a list of turns, got {json_type(turns)}")
            )
            continue
        for ti, turn in enumerate(turns):
            if not isinstance(turn, dict):
                out.append(Problem(file, None, f"{at}[{ti}]", "a turn is an object"))
                continue
            for key in ("role", "content"):
                p = wrong_type(file, f"{at}[{ti}].{key}", turn.get(key), str, "a string")
                out += [p] if p else []
            if "has_answer" in turn:
                p = wrong_type(
                    file, f"{at}[{ti}].has_answer", turn["has_answer"], bool, "true or false"
                )
                out += [p] if p else []
    if not out:
        n = len(item["haystack_session_ids"])
        lengths = (len(sessions), len(item.get("haystack_dates") or [None] * n))
        if lengths != (n, n):
            out.append(
                Problem(
                    file,
                    None,
                    where,
                    f"haystack_session_ids ({n}), haystack_sessions ({lengths[0]}) and "
                    f"haystack_dates ({lengths[1]}) differ in length",
                )
            )
    return out


@dataclass
class _Corpus:
    """One question's memories and which of them are relevant."""

    memories: list[Memory] = field(default_factory=list)
    relevant: list[str] = field(default_factory=list)


def _paper_id(sid: str, local: str, renamed: bool, at: tuple[str, str]) -> str:
    if not renamed:
        return local
    out = local.replace("answer", "noans")
    if "answer" in out:  # LongMemEval asserts this cannot happen; its script stops here
        raise DataError(
            Problem(at[0], None, at[1], f"session id {sid!r} still holds 'answer' once renamed")
        )
    return out


def _paper_corpus(
    qid: str,
    item: dict[str, Any],
    granularity: Granularity,
    report: ImportReport,
    at: tuple[str, str],
) -> _Corpus:
    """One question's corpus as `process_item_flat_index` builds it (`at`: file and field)."""
    corpus = _Corpus()
    seen: set[str] = set()
    dates = item.get("haystack_dates") or [None] * len(item["haystack_session_ids"])
    for si, (sid, turns, when) in enumerate(
        zip(item["haystack_session_ids"], item["haystack_sessions"], dates, strict=True)
    ):
        answer_session = "answer" in sid
        user = [(ti, t) for ti, t in enumerate(turns) if t["role"] == "user"]
        report.add("turns_left_out_not_user", len(turns) - len(user))
        flagged = sum(bool(t.get("has_answer")) for t in turns if t["role"] != "user")
        report.add("has_answer_on_non_user_turns_not_relevant", flagged)
        if not answer_session:
            report.add(
                "has_answer_outside_answer_sessions_not_relevant",
                sum(bool(t.get("has_answer")) for _, t in user),
            )
        elif any("has_answer" not in t for _, t in user):
            report.add(
                "has_answer_missing_read_as_false", sum("has_answer" not in t for _, t in user)
            )
        ids: list[tuple[str, str, dict[str, Any]]] = []
        if granularity == "session":
            evidence = any(t.get("has_answer") for _, t in user)
            local = sid.replace("answer", "noans") if answer_session and not evidence else sid
            if answer_session and not evidence:
                report.add("answer_sessions_without_user_evidence_renamed_noans")
            text = " ".join(t["content"] for _, t in user)
            ids.append((local, text, {"user_turns": len(user)}))
        else:
            for ti, t in user:
                renamed = answer_session and not t.get("has_answer")
                where = (at[0], f"{at[1]}.haystack_session_ids[{si}]")
                local = _paper_id(sid, f"{sid}_{ti + 1}", renamed, where)
                report.add("answer_session_user_turns_renamed_noans", int(renamed))
                ids.append((local, t["content"], {"role": "user", "turn": ti + 1}))
        for local, text, meta in ids:
            mid = f"{qid}/{local}"
            if _repeated(qid, mid, seen, report):
                continue
            corpus.memories.append(
                Memory(
                    id=mid,
                    text=text,
                    session=sid,
                    corpus=qid,
                    created_at=_date(when),
                    metadata=meta,
                )
            )
            if "answer" in local:
                corpus.relevant.append(mid)
    return corpus


def _all_turns_corpus(
    qid: str, item: dict[str, Any], granularity: Granularity, report: ImportReport
) -> _Corpus:
    corpus = _Corpus()
    seen: set[str] = set()
    answer_sessions = set(item.get("answer_session_ids") or [])
    dates = item.get("haystack_dates") or [None] * len(item["haystack_session_ids"])
    for sid, turns, when in zip(
        item["haystack_session_ids"], item["haystack_sessions"], dates, strict=True
    ):
        created = _date(when)
        if granularity == "session":
            mid = f"{qid}/{sid}"
            if _repeated(qid, mid, seen, report):
                continue
            text = "\n".join(f"{t['role']}: {t['content']}" for t in turns)
            corpus.memories.append(
                Memory(id=mid, text=text, session=sid, corpus=qid, created_at=created)
            )
            if sid in answer_sessions:
                corpus.relevant.append(mid)
            continue
        for ti, turn in enumerate(turns):
            mid = f"{qid}/{sid}:{ti}"
            if _repeated(qid, mid, seen, report):
                continue
            corpus.memories.append(
                Memory(
                    id=mid,
                    text=f"{turn['role']}: {turn['content']}",
                    session=sid,
                    corpus=qid,
                    created_at=created,
                    metadata={"role": turn["role"]},
                )
            )
            if turn.get("has_answer"):
                corpus.relevant.append(mid)
    return corpus


def _repeated(qid: str, mid: str, seen: set[str], report: ImportReport) -> bool:
    """Whether memory `mid` is already in the question's corpus (a haystack that repeats a
    session id): the repeat is dropped and counted, as the paper protocol drops it."""
    if mid not in seen:
        seen.add(mid)
        return False
    report.add("duplicate_corpus_ids_dropped")
    report.dropped.append({"query": qid, "memory": mid.split("/", 1)[1], "reason": "duplicate id"})
    return True


def _judge(
    qid: str,
    corpus: _Corpus,
    protocol: ProtocolName,
    granularity: Granularity,
    report: ImportReport,
) -> list[Judgment]:
    """The question's judgments under `protocol` (and the report's counts)."""
    abstention = "_abs" in qid if protocol == "paper" else qid.endswith("_abs")
    if abstention:
        report.add("abstention_not_judged")
        return []
    if corpus.relevant:
        report.add("questions_judged")
        return [Judgment(query_id=qid, memory_id=m, grade=3) for m in corpus.relevant]
    if protocol == "all-turns":
        report.add("questions_without_evidence")
        report.dropped.append({"query": qid, "reason": f"no evidence {granularity}s"})
        return []
    if not corpus.memories:
        report.add("questions_with_empty_corpus_not_scored")
        report.dropped.append({"query": qid, "reason": "no user turn in the haystack"})
        return []
    report.add("questions_without_relevant_scored")
    return [Judgment(query_id=qid, memory_id=m.id, grade=0) for m in corpus.memories]


def _no_user_evidence(item: dict[str, Any]) -> bool:
    return not any(
        t.get("has_answer") for s in item["haystack_sessions"] for t in s if t["role"] == "user"
    )


_HYPOTHESES = (
    "a LongMemEval hypothesis file ({question_id, hypothesis} per line: a system's answers, which "
    "LongMemEval's evaluate_qa.py scores, or the .eval-results log it writes), not its dataset; "
    "import the questions: longmemeval_s.json, longmemeval_m.json or longmemeval_oracle.json"
)


def _first_record(path: Path) -> dict[str, Any]:
    """The object the file's first line holds alone (a JSON-lines record), else {}."""
    try:
        with open(path, "rb") as fh:
            first = json.loads(fh.readline(DEFAULT_MAX_LINE_BYTES).removeprefix(b"\xef\xbb\xbf"))
    except (OSError, ValueError, RecursionError):  # a line nested too deep is no record
        return {}
    return first if isinstance(first, dict) else {}


def _questions(path: Path) -> tuple[Any, dict[int, int]]:
    """The file's questions: LongMemEval's JSON list, or JSON lines of one question each, which
    its evaluate_qa.py reads too (then with each question's line). A file of a system's
    answers (`hypothesis`) is refused."""
    raw, lines = load_structured(path)  # JSON lines are read a record a line (data.jsonio)
    first = raw[0] if isinstance(raw, list) and raw else raw
    if isinstance(first, dict) and "hypothesis" in first:
        raise DataError(Problem(str(path), 1, None, _HYPOTHESES))
    return raw, lines


def import_longmemeval(
    path: str | Path, granularity: Granularity = "turn", protocol: ProtocolName = "paper"
) -> tuple[RetrievalDataset, ImportReport]:
    """Read a LongMemEval JSON file (`longmemeval_s/m/oracle.json` format, or JSON lines of its
    questions, as its evaluate_qa.py reads them) under `protocol`; `[i]` in a problem is the
    i-th question."""
    if granularity not in ("turn", "session"):
        raise DataError(Problem(str(path), None, "granularity", "use 'turn' or 'session'"))
    if protocol not in PROTOCOLS:
        raise DataError(Problem(str(path), None, "protocol", "use 'paper' or 'all-turns'"))
    file = str(path)
    raw, lines = _questions(Path(path))
    if not isinstance(raw, list):
        hypotheses = "hypothesis" in _first_record(Path(path))
        said = _HYPOTHESES if hypotheses else "LongMemEval is a JSON list of questions"
        raise DataError(Problem(file, None, None, said))
    problems = [
        replace(p, line=lines.get(i))  # a JSON-lines question's line; None in a JSON list
        for i, item in enumerate(raw)
        for p in _question_problems(file, f"[{i}]", item)
    ]
    seen_q: set[str] = set()
    for i, item in enumerate(raw):
        qid = item.get("question_id") if isinstance(item, dict) else None
        if not isinstance(qid, str):
            continue
        if qid in seen_q:
            problems.append(Problem(file, lines.get(i), f"[{i}].question_id", f"duplicate {qid!r}"))
        seen_q.add(qid)
    if problems:
        raise DataError(problems)
    report = ImportReport(
        source=file, format=f"longmemeval-{granularity}", protocol=PROTOCOLS[protocol]
    )
    memories: list[Memory] = []
    queries: list[EvalQuery] = []
    judgments: list[Judgment] = []
    for i, item in enumerate(raw):
        qid = item["question_id"]
        if protocol == "paper":
            corpus = _paper_corpus(qid, item, granularity, report, (file, f"[{i}]"))
            if "_abs" not in qid and _no_user_evidence(item):
                report.add("questions_without_user_evidence_anywhere")
        else:
            corpus = _all_turns_corpus(qid, item, granularity, report)
        memories += corpus.memories
        queries.append(
            EvalQuery(
                id=qid,
                text=item["question"],
                category=item["question_type"],
                corpus=qid,
                metadata={
                    "answer": item.get("answer"),
                    "question_date": item.get("question_date"),
                    "abstention": "_abs" in qid if protocol == "paper" else qid.endswith("_abs"),
                },
            )
        )
        report.add(f"questions_{item['question_type']}")
        judgments += _judge(qid, corpus, protocol, granularity, report)
    report.counts = {k: v for k, v in report.counts.items() if v}
    report.counts.update(memories=len(memories), queries=len(queries), judgments=len(judgments))
    report.notes += _notes(protocol)
    if report.counts.get("duplicate_corpus_ids_dropped"):
        report.notes.append(
            "a haystack repeated a corpus id: the repeat is dropped (LongMemEval's script would "
            "index both copies, so these questions' nDCG may differ from its)"
        )
    name = f"{Path(path).stem}-{granularity}"
    dataset_protocol = DatasetProtocol(
        name=f"longmemeval-{protocol}",
        granularity=granularity,
        recall_all_no_relevant=1 if protocol == "paper" else 0,
        turn_ids="longmemeval" if protocol == "paper" and granularity == "turn" else None,
    )
    return RetrievalDataset(
        name=name,
        memories=memories,
        queries=queries,
        judgments=judgments,
        protocol=dataset_protocol,
    ), report


def _notes(protocol: ProtocolName) -> Sequence[str]:
    if protocol == "all-turns":
        return [
            "all-turns protocol: every turn of every role is a memory and any has_answer turn "
            "is relevant; not LongMemEval's retrieval protocol (use --protocol paper for that)",
            "abstention questions (_abs) are imported as queries, not judged",
        ]
    return [
        "paper protocol: LongMemEval's corpus (user turns only) and relevance (has_answer user "
        "turns of sessions whose id holds 'answer'), as src/retrieval/run_retrieval.py builds them",
        "abstention questions (_abs) are imported as queries, not judged: left out of the means "
        "as print_retrieval_metrics.py does",
        "a question with no relevant memory is judged 0 on its whole corpus and scored "
        "(recall_any 0, recall_all 1.0, ndcg_any 0, as LongMemEval scores it)",
        "run_retrieval.py's console average also skips questions with no has_answer user turn "
        "anywhere (questions_without_user_evidence_anywhere); print_retrieval_metrics.py keeps "
        "them, and so does memgauge",
    ]
