"""LongMemEval's retrieval evaluation (`src/retrieval/run_retrieval.py`, `eval_utils.py`,
`print_retrieval_metrics.py`) against a transcription written here from its definition, on
random haystacks: roles, has_answer flags, answer / non-answer session ids, random rankings.
memgauge's side is the whole path a user takes: `import longmemeval --protocol paper`, then the
retrieval runner with a subject that returns the drawn ranking.

The transcription, in words:

- corpus: per session, in order: at turn level each user turn, id `<session>_<position from
  1 among all turns>`, where a user turn of a session whose id contains `answer` but without
  `has_answer` has every `answer` in its id replaced by `noans`; at session level one item per
  session, its user contents joined by a space, id the session id, renamed the same way when
  no user turn of it has `has_answer`;
- relevant: the items whose id contains `answer`;
- per question and k: recall_any = some relevant id is in the top k; recall_all = every
  relevant id is (true when there is none); ndcg_any = DCG of the top k binary relevances,
  rank 1 undiscounted and rank i >= 2 divided by log2(i), over the same for the corpus's
  relevances sorted, 0 when that is 0;
- session from turns: label = id without its last `_` part; relevant labels from the
  relevant ids; grow k while it is at most the corpus size and the top k labels hold fewer
  than k distinct ones; then the three measures above on labels, with the grown k;
- the means leave out questions whose id contains `_abs`.
"""

from __future__ import annotations

import hashlib
import json
import math
import random
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from memgauge import api
from memgauge.aggregates.ir import dataset_sha256
from memgauge.cli.main import main
from memgauge.data.importers import import_longmemeval
from memgauge.data.io import load_retrieval_dataset, save_retrieval_dataset
from memgauge.data.models import Memory, SessionContext
from memgauge.errors import DataError
from memgauge.metrics.longmemeval import turn2session
from memgauge.report import retrieval_result
from memgauge.subjects.protocol import Hit, SearchResult

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "tests" / "data" / "longmemeval" / "sample.json"
BAD = ROOT / "tests" / "data" / "bad"
CUTOFFS = (1, 3, 5, 10)


# --- the transcription ------------------------------------------------------------------------


def oracle_corpus(entry: dict[str, Any], granularity: str) -> tuple[list[str], list[str]]:
    texts: list[str] = []
    ids: list[str] = []
    for sid, turns in zip(entry["haystack_session_ids"], entry["haystack_sessions"], strict=True):
        users = [(pos, t) for pos, t in enumerate(turns, 1) if t["role"] == "user"]
        if granularity == "session":
            texts.append(" ".join(t["content"] for _, t in users))
            flagged = [t.get("has_answer", False) for _, t in users]
            ids.append(
                sid.replace("answer", "noans") if "answer" in sid and not any(flagged) else sid
            )
            continue
        for pos, t in users:
            texts.append(t["content"])
            tid = f"{sid}_{pos}"
            ids.append(
                tid.replace("answer", "noans")
                if "answer" in sid and not t.get("has_answer")
                else tid
            )
    return texts, ids


def oracle_dcg(rels: Sequence[int]) -> float:
    return sum(r / (1.0 if i == 0 else math.log2(i + 1)) for i, r in enumerate(rels))


def oracle_measures(
    ranking: Sequence[int], relevant: set[str], ids: Sequence[str], k: int
) -> tuple[float, float, float]:
    top = {ids[i] for i in ranking[:k]}
    flags = [int(x in relevant) for x in ids]
    ideal = oracle_dcg(sorted(flags, reverse=True)[:k])
    gained = oracle_dcg([flags[i] for i in ranking[:k]])
    return (
        float(any(r in top for r in relevant)),
        float(all(r in top for r in relevant)),
        gained / ideal if ideal else 0.0,
    )


def oracle_label(turn_id: str) -> str:
    return turn_id.rsplit("_", 1)[0] if "_" in turn_id else ""


def oracle_turn2session(
    ranking: Sequence[int], relevant: set[str], ids: Sequence[str], k: int
) -> tuple[float, float, float]:
    labels = [oracle_label(x) for x in ids]
    grown = k
    while grown <= len(labels) and len({labels[i] for i in ranking[:grown]}) < k:
        grown += 1
    return oracle_measures(ranking, {oracle_label(r) for r in relevant}, labels, grown)


def oracle_scores(
    entry: dict[str, Any], ranking: Sequence[int], granularity: str
) -> dict[str, float]:
    _, ids = oracle_corpus(entry, granularity)
    relevant = {x for x in ids if "answer" in x}
    out: dict[str, float] = {}
    for k in CUTOFFS:
        for name, v in zip(
            ("recall_any", "recall_all", "ndcg_any"),
            oracle_measures(ranking, relevant, ids, k),
            strict=True,
        ):
            out[f"{name}@{k}"] = v
        if granularity == "turn":
            values = oracle_turn2session(ranking, relevant, ids, k)
            for name, v in zip(("recall_any", "recall_all", "ndcg_any"), values, strict=True):
                out[f"session_{name}@{k}"] = v
    return out


# --- random haystacks -------------------------------------------------------------------------

_NAMES = ["sharegpt_{h}_{n}", "ultrachat_{n}{h}", "plain{h}", "{h}", "x_{h}_y"]
_ANSWER_NAMES = ["answer_{h}", "answer_{h}_{n}", "x_answer_{h}", "{h}answer", "answer_{h}_answer"]


def random_question(rng: random.Random, i: int) -> dict[str, Any]:
    sessions, session_ids, dates = [], [], []
    for s in range(rng.randint(1, 7)):
        is_answer = rng.random() < 0.35
        pattern = rng.choice(_ANSWER_NAMES if is_answer else _NAMES)
        sid = pattern.format(h=f"{i:03x}{s}{rng.getrandbits(16):04x}", n=rng.randint(1, 9))
        turns = []
        for _t in range(rng.randint(0, 6)):
            turn: dict[str, Any] = {
                "role": rng.choice(["user", "user", "assistant", "assistant", "system"]),
                "content": f"words {rng.getrandbits(20)}",
            }
            if is_answer or rng.random() < 0.5:
                turn["has_answer"] = rng.random() < 0.4
            turns.append(turn)
        sessions.append(turns)
        session_ids.append(sid)
        dates.append(f"2023/05/{rng.randint(10, 28)} (Sat) 1{rng.randint(0, 9)}:00")
    if not any(t["role"] == "user" for s in sessions for t in s):  # an empty corpus: see below
        sessions[0].append({"role": "user", "content": "hello", "has_answer": False})
    qid = f"q{i:04d}" + ("_abs" if rng.random() < 0.15 else "")
    return {
        "question_id": qid,
        "question_type": rng.choice(["single-session-user", "multi-session", "temporal-reasoning"]),
        "question": f"question {qid}",
        "answer": "something",
        "question_date": "2023/06/01 (Thu) 10:00",
        "haystack_session_ids": session_ids,
        "haystack_dates": dates,
        "haystack_sessions": sessions,
        "answer_session_ids": [s for s in session_ids if "answer" in s],
    }


class RankedSubject:
    """Returns, for each question text, the ranking drawn for it (memgauge memory ids); what
    it is given to ingest does not change its rankings, but it keeps it, as its dump says (a
    memory whose dump lists nothing after an ingest holds nothing: issue 27)."""

    name = "drawn"

    def __init__(self, rankings: dict[str, list[str]]) -> None:
        self._rankings = rankings
        self._stored: list[Memory] = []

    def reset(self) -> None:
        self._stored = []

    def ingest(self, memories: Sequence[Memory]) -> None:
        self._stored.extend(memories)

    def flush(self) -> None: ...

    def search(self, query: str, k: int, *, session: SessionContext | None = None) -> SearchResult:
        ids = self._rankings[query][:k]
        return SearchResult(
            hits=[Hit(id=m, text="", score=None, rank=r) for r, m in enumerate(ids, 1)]
        )

    def dump(self) -> list[Memory]:
        return list(self._stored)


def _draw(
    entries: list[dict[str, Any]], granularity: str, rng: random.Random
) -> dict[str, list[int]]:
    """A random ranking of each question's official corpus (indices into it)."""
    drawn: dict[str, list[int]] = {}
    for e in entries:
        order = list(range(len(oracle_corpus(e, granularity)[1])))
        rng.shuffle(order)
        drawn[e["question_id"]] = order
    return drawn


def _evaluate(
    path: Path, entries: list[dict[str, Any]], granularity: str, drawn: dict[str, list[int]]
) -> Any:
    """`import longmemeval --protocol paper`, then the runner, the subject ranking as drawn."""
    ds, _ = import_longmemeval(path, granularity, "paper")  # type: ignore[arg-type]
    rankings: dict[str, list[str]] = {}
    for e in entries:
        ids = oracle_corpus(e, granularity)[1]
        rankings[e["question"]] = [f"{e['question_id']}/{ids[i]}" for i in drawn[e["question_id"]]]
    measures = [f"{n}@{k}" for k in CUTOFFS for n in ("recall_any", "recall_all", "ndcg_any")]
    if granularity == "turn":
        measures += [f"session_{m}" for m in measures]
    depth = max(max(len(r) for r in rankings.values()), max(CUTOFFS))
    report = api.evaluate(
        ds,
        {"drawn": RankedSubject(rankings)},
        measures=tuple(measures),
        k=depth,
        resamples=100,
        store=False,
    )
    (system,) = retrieval_result(report.run).systems
    assert system.status == "ok", system.reason
    return system


@pytest.mark.parametrize("granularity", ["turn", "session"])
def test_paper_protocol_reproduces_longmemeval(
    rng: random.Random, tmp_path: Path, granularity: str
) -> None:
    for round_ in range(3):
        entries = [random_question(rng, i) for i in range(400)]
        path = tmp_path / f"lme{round_}.json"
        path.write_text(json.dumps(entries))
        drawn = _draw(entries, granularity, rng)
        system = _evaluate(path, entries, granularity, drawn)
        ours = {q.query_id: q.metrics for q in system.per_query}
        counted = [e for e in entries if "_abs" not in e["question_id"]]
        assert set(ours) == {e["question_id"] for e in counted}
        official: dict[str, dict[str, float]] = {}
        for e in counted:
            qid = e["question_id"]
            official[qid] = oracle_scores(e, drawn[qid], granularity)
            for name, want in official[qid].items():
                got = ours[qid][name]
                assert got == pytest.approx(want, abs=1e-12), (qid, name, got, want)
        for name in official[counted[0]["question_id"]]:
            mean = float(np.mean([official[e["question_id"]][name] for e in counted]))
            assert system.metrics[name].value == pytest.approx(mean, abs=1e-12), name


def test_turn2session_short_flag_is_sound(rng: random.Random) -> None:
    """A query not flagged `short` has, from its truncated hits, LongMemEval's value on the
    whole ranking; flagged ones are those whose hits ran out first."""
    for _ in range(2000):
        n_sessions = rng.randint(1, 6)
        corpus = [
            f"{rng.choice(['answer', 'noans', 's'])}_{s}_{t}"
            for s in range(n_sessions)
            for t in range(1, rng.randint(1, 5) + 1)
        ]
        relevant = {c for c in corpus if rng.random() < 0.3}
        order = list(range(len(corpus)))
        rng.shuffle(order)
        depth = rng.randint(0, len(corpus))
        k = rng.choice([1, 2, 3, 5, 10])
        names = [f"session_{m}@{k}" for m in ("recall_any", "recall_all", "ndcg_any")]
        ev = turn2session(
            {"q": {c: 3 if c in relevant else 0 for c in corpus}},
            {"q": [corpus[i] for i in order[:depth]]},
            {"q": corpus},
            names,
        )
        truncated = oracle_turn2session(order[:depth], relevant, corpus, k)
        full = oracle_turn2session(order, relevant, corpus, k)
        for name, cut, whole in zip(names, truncated, full, strict=True):
            assert ev.per_query[name][0] == pytest.approx(cut, abs=1e-12), (corpus, order, depth)
            if not ev.short:
                assert cut == pytest.approx(whole, abs=1e-12), (corpus, order, depth, name)


def test_sample_file_under_both_protocols(tmp_path: Path) -> None:
    """tests/data/longmemeval/sample.json: what each protocol keeps, judges and counts."""
    paper, report = import_longmemeval(SAMPLE, "turn", "paper")
    assert [m.id for m in paper.memories if m.corpus == "e47becba"] == [
        "e47becba/sharegpt_yywfi_0_1",
        "e47becba/answer_280352e9_1",
        "e47becba/noans_280352e9_3",  # the user turn without has_answer is renamed
    ]
    assert all(m.metadata["role"] == "user" for m in paper.memories)
    assert paper.qrels() == {
        "e47becba": {"e47becba/answer_280352e9_1": 3},
        "gpt4_2655b836": {
            "gpt4_2655b836/answer_4be1b6b4_2_1": 3,
            "gpt4_2655b836/answer_4be1b6b4_3_1": 3,
        },
    }
    assert report.counts["turns_left_out_not_user"] == 7
    assert report.counts["has_answer_missing_read_as_false"] == 2
    assert report.counts["abstention_not_judged"] == 1
    assert "paper protocol" in report.as_dict()["protocol"]
    assert paper.protocol is not None
    assert paper.protocol.recall_all_no_relevant == 1
    assert paper.protocol.turn_ids == "longmemeval"
    every, _ = import_longmemeval(SAMPLE, "turn", "all-turns")
    assert len(every.memories) == 15  # assistant turns too
    assert every.protocol is not None
    assert every.protocol.name == "longmemeval-all-turns"
    assert every.protocol.recall_all_no_relevant == 0
    sessions, _ = import_longmemeval(SAMPLE, "session", "paper")
    abs_ids = [m.id for m in sessions.memories if m.corpus == "6a1eabeb_abs"]
    assert abs_ids == ["6a1eabeb_abs/noans_a1b2c3_1", "6a1eabeb_abs/sharegpt_xyz_2"]
    # a ranking of each question's corpus, best first, and LongMemEval's numbers for it by hand
    entries = json.loads(SAMPLE.read_text())
    drawn = {"e47becba": [2, 1, 0], "gpt4_2655b836": [1, 0, 2], "6a1eabeb_abs": [0, 1]}
    system = _evaluate(SAMPLE, entries, "turn", drawn)
    ours = {q.query_id: q.metrics for q in system.per_query}
    assert set(ours) == {"e47becba", "gpt4_2655b836"}  # the _abs question is left out
    # e47becba ranks noans_280352e9_3 first: a turn of the answer session, but not evidence
    assert ours["e47becba"]["recall_any@1"] == 0.0
    assert ours["e47becba"]["session_recall_any@1"] == 0.0  # its label is noans_280352e9
    assert ours["e47becba"]["recall_any@3"] == 1.0
    assert ours["e47becba"]["ndcg_any@3"] == pytest.approx(1.0)  # rank 2 is undiscounted too
    # gpt4_2655b836: ultrachat_1_1 first, then both evidence turns
    assert ours["gpt4_2655b836"]["recall_all@3"] == 1.0
    assert ours["gpt4_2655b836"]["ndcg_any@3"] == pytest.approx((1 + 1 / math.log2(3)) / 2)
    for entry in entries[:2]:
        want = oracle_scores(entry, drawn[entry["question_id"]], "turn")
        for name, value in want.items():
            assert ours[entry["question_id"]][name] == pytest.approx(value, abs=1e-12), name


def test_the_protocol_travels_with_the_dataset(tmp_path: Path) -> None:
    """dataset.yaml keeps the protocol; a bad one is named with its file and field."""
    ds, _ = import_longmemeval(SAMPLE, "turn", "paper")
    save_retrieval_dataset(ds, tmp_path / "lme")
    again = load_retrieval_dataset(tmp_path / "lme")
    assert again.protocol == ds.protocol
    assert dataset_sha256(again) == dataset_sha256(ds)
    plain = again.model_copy(update={"protocol": None})
    assert (
        dataset_sha256(plain)
        == hashlib.sha256(
            plain.model_dump_json(
                exclude={
                    "protocol": True,
                    "synthetic": True,
                    "judgments": {"__all__": {"source_channels"}},
                }
            ).encode()
        ).hexdigest()
    )  # datasets without a protocol (or judgment channels, or a synthetic origin) hash as they did before
    # any existed
    meta = tmp_path / "lme" / "dataset.yaml"
    meta.write_text(
        meta.read_text().replace("recall_all_no_relevant: 1", "recall_all_no_relevant: 2")
    )
    with pytest.raises(DataError) as err:
        load_retrieval_dataset(tmp_path / "lme")
    (problem,) = err.value.problems
    assert problem.file == str(meta)
    assert "recall_all_no_relevant" in (problem.field or "")


def test_all_turns_keeps_the_former_import() -> None:
    every, report = import_longmemeval(SAMPLE, "turn", "all-turns")
    assert every.qrels() == {
        "e47becba": {"e47becba/answer_280352e9:0": 3},
        "gpt4_2655b836": {
            "gpt4_2655b836/answer_4be1b6b4_2:0": 3,
            "gpt4_2655b836/answer_4be1b6b4_3:0": 3,
        },
    }
    assert every.memories[1].text.startswith("assistant: ")
    assert "all-turns protocol" in report.as_dict()["protocol"]


def test_a_question_with_nothing_relevant_is_scored_not_dropped(tmp_path: Path) -> None:
    """The answer sits in an assistant turn: nothing is relevant under the paper protocol,
    the question is judged 0 on its corpus and scores 0 / 1.0 / 0 as in LongMemEval; the
    all-turns protocol judges the assistant turn instead."""
    entry = {
        "question_id": "sa1",
        "question_type": "single-session-assistant",
        "question": "What did you recommend?",
        "answer": "Lisbon",
        "answer_session_ids": ["answer_1"],
        "haystack_session_ids": ["answer_1", "other_2"],
        "haystack_dates": ["2023/05/20 (Sat) 10:00", "2023/05/21 (Sun) 10:00"],
        "haystack_sessions": [
            [
                {"role": "user", "content": "Where should I go?", "has_answer": False},
                {"role": "assistant", "content": "Lisbon.", "has_answer": True},
            ],
            [{"role": "user", "content": "Thanks"}],
        ],
    }
    path = tmp_path / "one.json"
    path.write_text(json.dumps([entry]))
    ds, report = import_longmemeval(path, "turn", "paper")
    assert ds.qrels() == {"sa1": {"sa1/noans_1_1": 0, "sa1/other_2_1": 0}}
    assert report.counts["questions_without_relevant_scored"] == 1
    assert report.counts["has_answer_on_non_user_turns_not_relevant"] == 1
    assert report.counts["questions_without_user_evidence_anywhere"] == 1
    system = _evaluate(path, [entry], "turn", {"sa1": [0, 1]})
    (q,) = system.per_query
    assert (q.metrics["recall_any@1"], q.metrics["recall_all@1"], q.metrics["ndcg_any@1"]) == (
        0.0,
        1.0,
        0.0,
    )
    assert q.metrics["session_recall_all@1"] == 1.0
    assert any(
        "recall_all of the 1 query with no relevant memory is 1.0" in n for n in system.notes
    )
    every, _ = import_longmemeval(path, "turn", "all-turns")
    assert every.qrels() == {"sa1": {"sa1/answer_1:1": 3}}


def test_a_repeated_corpus_id_is_dropped_and_said(tmp_path: Path) -> None:
    entry = random_question(random.Random(0), 0) | {"question_id": "dup"}
    entry["haystack_session_ids"] = ["s_1", "s_1"]
    entry["haystack_sessions"] = [[{"role": "user", "content": "a"}]] * 2
    entry["haystack_dates"] = ["2023/05/20 (Sat) 10:00"] * 2
    path = tmp_path / "dup.json"
    path.write_text(json.dumps([entry]))
    ds, report = import_longmemeval(path, "turn", "paper")
    assert [m.id for m in ds.memories] == ["dup/s_1_1"]
    assert report.counts["duplicate_corpus_ids_dropped"] == 1
    assert any("repeated a corpus id" in n for n in report.notes)


@pytest.mark.parametrize("granularity", ["turn", "session"])
def test_a_repeated_session_under_all_turns_is_dropped_too(
    tmp_path: Path, granularity: str
) -> None:
    """A haystack naming an answer session twice: the all-turns import wrote its memories and
    judgments twice, a dataset `evaluate` then refused (duplicate id, judged twice)."""
    entry = {
        "question_id": "rep",
        "question_type": "single-session-user",
        "question": "Where?",
        "answer": 3,  # LongMemEval has numeric answers
        "answer_session_ids": ["answer_1"],
        "haystack_session_ids": ["answer_1", "other_2", "answer_1"],
        "haystack_dates": ["2023/05/20 (Sat) 10:00"] * 3,
        "haystack_sessions": [
            [{"role": "user", "content": "Lisbon", "has_answer": True}],
            [{"role": "user", "content": "Thanks"}],
            [{"role": "user", "content": "Lisbon", "has_answer": True}],
        ],
    }
    path = tmp_path / "rep.json"
    path.write_text(json.dumps([entry]))
    ds, report = import_longmemeval(path, granularity, "all-turns")  # type: ignore[arg-type]
    ids = [m.id for m in ds.memories]
    assert len(ids) == len(set(ids)) == 2
    assert len(ds.judgments) == 1
    assert report.counts["duplicate_corpus_ids_dropped"] == 1
    save_retrieval_dataset(ds, tmp_path / "out")
    assert len(load_retrieval_dataset(tmp_path / "out").memories) == 2


def test_turn2session_quirks_by_hand() -> None:
    """The docstring's quirks of LongMemEval's turn2session, on cases small enough to check."""
    names = [f"session_{m}@{k}" for k in (2, 3, 4) for m in ("recall_any", "ndcg_any")]
    corpus = ["answer_x_1", "noans_x_2", "s_1", "s_2"]
    ev = turn2session(
        {"q": {"answer_x_1": 3}},
        {"q": ["noans_x_2", "s_1", "answer_x_1", "s_2"]},
        {"q": corpus},
        names,
    )
    got = {n: float(v[0]) for n, v in ev.per_query.items()}
    # the answer session's other turn is labelled noans_x: ranked first, it finds nothing
    assert got["session_recall_any@2"] == 0.0
    assert got["session_recall_any@3"] == 1.0
    assert got["session_ndcg_any@3"] == pytest.approx(1 / math.log2(3))
    # 3 labels in 4 turns: k = 4 grows past the corpus, to 5, and sees everything
    assert got["session_recall_any@4"] == 1.0
    assert not ev.short
    # two evidence turns of one session both gain, and both are in the ideal
    both = turn2session(
        {"q": {"answer_x_1": 3, "answer_x_2": 3}},
        {"q": ["answer_x_1", "s_1", "answer_x_2"]},
        {"q": ["answer_x_1", "answer_x_2", "s_1"]},
        ["session_ndcg_any@1", "session_ndcg_any@2", "session_recall_all@1"],
    )
    assert both.per_query["session_ndcg_any@1"][0] == 1.0
    assert both.per_query["session_ndcg_any@2"][0] == 0.5  # the only session is at rank 1
    assert both.per_query["session_recall_all@1"][0] == 1.0


HYPOTHESES = SAMPLE.with_name("sample.hypotheses.jsonl")


@pytest.mark.parametrize(
    ("argv", "name"),
    [
        (["import", "longmemeval"], "sample.hypotheses.jsonl"),
        (["import", "longmemeval"], "sample.hypotheses.jsonl.eval-results-gpt-4o"),
        (["validate"], "sample.hypotheses.jsonl"),
        (["validate", "--kind", "longmemeval"], "sample.hypotheses.jsonl.eval-results-gpt-4o"),
    ],
)
def test_a_hypothesis_file_is_named_as_a_systems_answers_not_the_dataset(
    argv: list[str], name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """evaluate_qa.py's input (`{question_id, hypothesis}` lines) and its `.eval-results-*` log
    (tests/data/longmemeval/README.md) were refused as 'not valid JSON: Extra data' on line 2,
    as if a LongMemEval dataset were broken."""
    path = HYPOTHESES.with_name(name)
    out = ["--out", str(tmp_path / "out")] if argv[0] == "import" else []
    assert main([*argv, str(path), *out]) == 2
    err = capsys.readouterr().err
    assert "a LongMemEval hypothesis file ({question_id, hypothesis} per line" in err
    assert "import the questions: longmemeval_s.json" in err
    assert not (tmp_path / "out").exists()
    one = tmp_path / "one.jsonl"  # one line: a JSON object, not LongMemEval's list
    one.write_text(HYPOTHESES.read_text().splitlines()[0] + "\n")
    with pytest.raises(DataError, match="a LongMemEval hypothesis file"):
        import_longmemeval(one)


def test_the_questions_as_json_lines_import_as_the_json_list(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """LongMemEval's evaluate_qa.py reads its reference file as a JSON list or, failing that, as
    JSON lines of one question each; memgauge refused the latter ('not valid JSON: Extra
    data' on line 2)."""
    lines = tmp_path / "longmemeval_s.jsonl"
    lines.write_text("".join(json.dumps(q) + "\n" for q in json.loads(SAMPLE.read_text())))
    for protocol in ("paper", "all-turns"):
        got = import_longmemeval(lines, protocol=protocol)[0]
        want = import_longmemeval(SAMPLE, protocol=protocol)[0]
        assert got.model_dump(exclude={"name"}) == want.model_dump(exclude={"name"})
    assert main(["validate", str(lines)]) == 0
    assert "longmemeval" in capsys.readouterr().out
    lines.write_text(lines.read_text() + '{"question_id": "q9", \n')
    assert main(["import", "longmemeval", str(lines), "--out", str(tmp_path / "out")]) == 2
    assert f"{lines}:4: not valid JSON" in capsys.readouterr().err


def test_one_question_as_json_lines_imports_as_two_do(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A `.jsonl` file of one question was one JSON document, an object: "LongMemEval is a
    JSON list of questions" (exit 2), where two questions read as JSON lines. A `.jsonl` name
    is read a record a line, one line or many."""
    first = json.loads(SAMPLE.read_text())[0]
    one = tmp_path / "one.jsonl"
    one.write_text(json.dumps(first) + "\n")
    got = import_longmemeval(one)[0]
    assert [q.id for q in got.queries] == [first["question_id"]]
    assert main(["validate", str(one)]) == 0
    assert "longmemeval: " in capsys.readouterr().out
    del first["question_type"]
    one.write_text("\n" + json.dumps(first) + "\n")
    assert main(["import", "longmemeval", str(one), "--out", str(tmp_path / "out")]) == 2
    assert f"{one}:2: [0]: missing fields ['question_type']" in capsys.readouterr().err


def test_a_bad_question_of_json_lines_is_named_by_its_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A question of JSON lines under a `.json` name missing a field, or a line that is a list,
    was named `[1]` alone: its line, which the file has, was lost on the way."""
    bad = BAD / "longmemeval_lines_missing_field.json"
    assert main(["import", "longmemeval", str(bad), "--out", str(tmp_path / "out")]) == 2
    assert f"{bad}:2: [1]: missing fields ['question_type']" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()
    lines = tmp_path / "questions.json"
    lines.write_text(bad.read_text().split("\n")[0] + "\n[1]\n")
    assert main(["import", "longmemeval", str(lines), "--out", str(tmp_path / "out")]) == 2
    assert f"{lines}:2: [1]: each question is a JSON object" in capsys.readouterr().err
