"""Fact-extraction scoring (seed 001) and the `memgauge extraction` command."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from memgauge.cli.main import main
from memgauge.data.io import load_extraction_cases
from memgauge.data.models import ExtractionCase
from memgauge.llm import FakeOpenAIServer
from memgauge.scorers.extraction import ExactMatcher, SemanticMatcher, facts_of, score_case

DATA = Path(__file__).resolve().parents[1] / "data"
CASES = DATA / "extraction" / "cases.json"
LOCOMO = DATA.parents[2] / "shared" / "datasets" / "locomo10.json"


def _case(**kw: Any) -> ExtractionCase:
    base: dict[str, Any] = {"id": "c", "conversation": [{"role": "user", "content": "x"}]}
    return ExtractionCase.model_validate({**base, **kw})


def test_counts_precision_recall_and_the_pairs() -> None:
    case = _case(
        existing_memory=["channels: own app"],
        expected_facts=[{"content": "Customers are bakeries"}, {"content": "Price is 30 euros"}],
    )
    out = ["channels: own app", "customer_segments: customers are bakeries", "Logo is blue"]
    s = score_case(case, out, ExactMatcher())
    assert (s.tp, s.fp, s.fn) == (1, 1, 1)
    assert (s.precision, s.recall) == (0.5, 0.5)
    assert s.matched[0]["expected"] == "Customers are bakeries"
    assert s.false_positives == ["Logo is blue"]
    assert s.missed == ["Price is 30 euros"]
    assert s.lost == []
    assert s.minimal_ok is None


def test_conflict_needs_the_new_value_and_the_old_one_gone() -> None:
    case = _case(
        existing_memory=["pricing: Price is 20 euros per month"],
        expected_facts=[
            {
                "content": "Price is 35 euros per month",
                "replaces": "pricing: Price is 20 euros per month",
            }
        ],
    )
    good = score_case(case, ["pricing: Price is 35 euros per month"], SemanticMatcher())
    assert good.conflict_ok is True
    assert (good.tp, good.fp, good.fn) == (1, 0, 0)
    both = ["pricing: Price is 20 euros per month", "pricing: Price is 35 euros per month"]
    kept_old = score_case(case, both, SemanticMatcher())
    assert kept_old.conflict_ok is False
    assert kept_old.stale == ["pricing: Price is 20 euros per month"]
    assert kept_old.fp == 1


def test_minimalism_means_nothing_added_and_nothing_lost() -> None:
    case = _case(existing_memory=["a: one fact", "b: another fact"], expected_facts=[])
    assert score_case(case, ["a: one fact", "b: another fact"], ExactMatcher()).minimal_ok is True
    added = score_case(case, ["a: one fact", "b: another fact", "user says hi"], ExactMatcher())
    assert added.minimal_ok is False
    assert added.precision == 0.0
    lost = score_case(case, ["a: one fact"], ExactMatcher())
    assert lost.minimal_ok is False
    assert lost.lost == ["b: another fact"]
    assert (lost.precision, lost.recall) == (1.0, 1.0)  # nothing extracted, nothing expected


def test_outputs_in_the_shapes_extractors_give() -> None:
    assert facts_of("- a\n* b\n1. c\n\n") == ["a", "b", "c"]
    assert facts_of('{"memory": ["x", "y"]}') == ["x", "y"]
    assert facts_of(["z"]) == ["z"]


def test_the_fixtures_cover_the_ten_scenarios_of_seed_001() -> None:
    cases = load_extraction_cases(CASES)
    assert len(cases) == 10
    scenarios = " ".join(c.scenario or "" for c in cases)
    for word in (
        "simple",
        "chit-chat",
        "constraint",
        "conflict",
        "several blocks",
        "maybe",
        "preference",
        "also want",
        "cost and revenue",
        "expert",
    ):
        assert word in scenarios


def _perfect_trace(path: Path) -> Path:
    lines = []
    for c in load_extraction_cases(CASES):
        removed = {f.replaces for f in c.expected_facts}
        mem = [m for m in c.existing_memory if m not in removed]
        mem += [f"{f.category}: {f.content}" for f in c.expected_facts]
        lines.append(json.dumps({"case_id": c.id, "output": mem}))
    path.write_text("\n".join(lines) + "\n")
    return path


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict[str, Any], str]:
    code = main(["extraction", *args, "--json"])
    cap = capsys.readouterr()
    lines = cap.out.strip().splitlines()
    return (
        code,
        json.loads(lines[-1]) if lines and lines[-1].startswith("{") else {},
        cap.out + cap.err,
    )


def test_recorded_outputs_of_a_perfect_extractor_meet_every_target(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, text = _run(
        capsys,
        str(CASES),
        "--outputs",
        str(_perfect_trace(tmp_path / "t.jsonl")),
        "--output",
        str(tmp_path),
    )
    assert code == 0, text
    for name in ("precision", "recall", "f1"):
        assert out[name]["micro"] == 1.0
        assert out[name]["met"] is True
    assert out["conflict"]["value"] == 1.0
    assert out["minimalism"] == {
        "value": 1.0,
        "n": 2,
        "ci95": pytest.approx(out["minimalism"]["ci95"]),
        "target": 1.0,
        "met": True,
    }
    report = json.loads((tmp_path / "extraction.json").read_text())
    assert len(report["per_case"]) == 10


def test_a_naive_live_extractor_invents_and_keeps_old_values(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.syspath_prepend(str(DATA / "subjects"))
    code, out, text = _run(
        capsys, str(CASES), "--extractor", "{python: {target: 'extractors:NaiveExtractor'}}"
    )
    assert code == 1, text  # seed 001's targets are missed: exit 1
    assert "MISSED" in text
    assert out["precision"]["micro"] < 0.95
    assert out["precision"]["met"] is False
    assert out["minimalism"]["value"] == 0.0  # it adds chit-chat as facts
    assert out["conflict"]["value"] == 0.0  # it never drops the old price
    code, out, _ = _run(
        capsys,
        str(CASES),
        "--extractor",
        "{python: {target: 'extractors:make_unchanged'}}",
        "--no-targets",
    )
    assert code == 0  # reported, not enforced
    assert out["minimalism"]["value"] == 1.0
    assert out["recall"]["micro"] == 0.0


def test_a_missing_recorded_output_is_a_failure_not_a_zero(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    trace = _perfect_trace(tmp_path / "t.jsonl")
    trace.write_text("\n".join(trace.read_text().splitlines()[1:]) + "\n")
    code, out, _ = _run(capsys, str(CASES), "--outputs", str(trace))
    assert code == 0  # 1 of 10 failed: within max_failure_rate, and the other 9 are perfect
    assert (out["n_scored"], out["n_failed"]) == (9, 1)
    assert out["failures"] == [{"id": "simple", "error": "no output for this case"}]


@pytest.fixture
def server(llm_server: FakeOpenAIServer) -> FakeOpenAIServer:
    return llm_server


def test_the_llm_extractor_and_the_fact_enumeration_judge_over_http(
    server: FakeOpenAIServer, capsys: pytest.CaptureFixture[str]
) -> None:
    def rule(payload: dict[str, Any]) -> str:
        text = payload["messages"][-1]["content"]
        if "fact extraction auditor" in json.dumps(payload["messages"]).lower():
            return json.dumps(
                {
                    "conversation_facts": ["a", "b"],
                    "extracted_facts": ["a", "x"],
                    "missed_facts": ["b"],
                    "hallucinated_facts": ["x"],
                }
            )
        existing = text.split("EXISTING MEMORY:\n", 1)[1].split("\n\nCONVERSATION:", 1)[0]
        kept = [] if existing == "(empty)" else [ln[2:] for ln in existing.splitlines()]
        return json.dumps({"memory": kept})

    server.respond(rule)
    code, out, text = _run(
        capsys, str(CASES), "--extractor", "{llm: {}}", "--match", "judge", "--no-targets"
    )
    assert code == 0, text
    assert (out["tp"], out["fp"], out["fn"]) == (10, 10, 10)  # the judge's lists, 1/1/1 a case
    assert out["matching"] == "facts judge (+semantic>=0.75)"
    assert out["minimalism"]["value"] == 1.0  # the memory came back unchanged
    prompts = [r["json"]["messages"][-1]["content"] for r in server.requests]
    assert sum("EXISTING MEMORY:" in p and "Reply with only" in p for p in prompts) == 10


def test_locomo_observations_as_silver_facts(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    if not LOCOMO.exists():
        pytest.skip("../shared/datasets/locomo10.json is not here")
    monkeypatch.syspath_prepend(str(DATA / "subjects"))
    code, out, text = _run(
        capsys,
        str(LOCOMO),
        "--extractor",
        "{python: {target: 'extractors:NaiveExtractor'}}",
        "--limit",
        "3",
        "--match",
        "exact",
        "--no-targets",
    )
    assert code == 0, text
    assert out["n_scored"] == 3
    assert out["recall"]["micro"] is not None


def test_usage_errors(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, text = _run(capsys, str(CASES))
    assert code == 2
    assert "--extractor SPEC" in text
    assert os.path.exists(CASES)


class _Vectors:
    """A stub embedder: fixed unit vectors per text."""

    def __init__(self, table: dict[str, list[float]]) -> None:
        self.table = table

    def embed(self, texts: list[str]) -> Any:
        import numpy as np

        v = np.array([self.table[t] for t in texts], dtype=float)
        return v / np.linalg.norm(v, axis=1, keepdims=True)


def test_semantic_matching_never_trades_a_good_pair_for_two_poor_ones() -> None:
    import numpy as np

    # similarities: A-X 0.8, A-Y 0.7, B-X 0.7, B-Y about 0.1 (threshold 0.75)
    x, y = np.array([1.0, 0.0, 0.0]), np.array([0.0, 1.0, 0.0])
    a = 0.8 * x + 0.7 * y
    a = a / np.linalg.norm(a)
    m = SemanticMatcher(threshold=0.75)
    table = {"A": list(a), "B": [0.7, 0.1, 0.7], "X": list(x), "Y": list(y)}
    m._model.append(_Vectors(table))  # type: ignore[arg-type]
    pairs = m.match(["A", "B"], ["X", "Y"])
    assert [(i, j) for i, j, _ in pairs] == [(0, 0)]


def test_replaces_must_name_an_existing_fact() -> None:
    with pytest.raises(ValueError, match="not in existing_memory"):
        _case(
            existing_memory=["pricing: 20 euros per month"],
            expected_facts=[{"content": "35 euros", "replaces": "pricing: 20 euros a month"}],
        )


TRACE = DATA / "extraction" / "trace.jsonl"


def _facts_judge(payload: dict[str, Any]) -> str:
    """The fact-enumeration judge: the conversation's one fact; the output's new facts, one of
    them invented when the output adds two; what the prompt held is kept for the test."""
    prompt = payload["messages"][-1]["content"]
    extracted = [
        ln[2:] for ln in prompt.split("EXTRACTED OUTPUT")[1].splitlines() if ln[:2] == "- "
    ]
    existing = prompt.split("EXISTING MEMORY")[1].split("EXTRACTED OUTPUT")[0]
    new = [f for f in extracted if f not in existing]
    return json.dumps(
        {
            "conversation_facts": new[:1],
            "extracted_facts": new,
            "missed_facts": [],
            "hallucinated_facts": new[1:],
        }
    )


def test_unlabelled_trace_lines_are_judged_alone_never_for_minimalism(
    server: FakeOpenAIServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 18 item 5: a production trace with no case ids, tag-filtered and sampled, scored
    by the fact-enumeration judge from its conversation, existing memory and output alone."""
    server.respond(_facts_judge)
    code, out, text = _run(
        capsys,
        "--outputs",
        str(TRACE),
        "--tag",
        "memory_extraction",
        "--no-targets",
        "--output",
        str(tmp_path),
    )
    assert code == 0, text
    report = json.loads((tmp_path / "extraction.json").read_text())
    cases = report["per_case"]
    assert len(cases) == 18  # the 18 lines tagged memory_extraction, none of the 6 chat lines
    assert {c["scenario"] for c in cases} == {"unlabelled"}
    assert all(c["minimal_ok"] is None and c["conflict_ok"] is None for c in cases)
    assert "unchanged WRONG" not in text
    assert out["minimalism"]["n"] == 0  # n/a, not 0%
    assert out["conflict"]["n"] == 0
    ids = {c["id"] for c in cases}
    assert {"run-006", "run-018"} <= ids  # a line's own id is kept; run-012 is a chat line
    assert sum(i.startswith("trace-") for i in ids) == 16
    # 12 lines add one fact, 4 add two (one invented), 2 add none: TP 16, FP 4
    assert (out["tp"], out["fp"], out["fn"]) == (16, 4, 0)
    assert out["precision"]["micro"] == pytest.approx(16 / 20)
    prompts = [r["json"]["messages"][-1]["content"] for r in server.requests]
    assert len(prompts) == 18
    assert any("pricing: Price is 20 euros" in p and "charge 35 euros" in p for p in prompts)


def test_the_sample_is_a_seeded_share_of_the_tagged_lines(
    server: FakeOpenAIServer, capsys: pytest.CaptureFixture[str]
) -> None:
    server.respond(_facts_judge)
    picked = []
    for seed in (0, 0, 1):
        code, out, text = _run(
            capsys,
            "--outputs",
            str(TRACE),
            "--tag",
            "memory_extraction",
            "--sample",
            "0.5",
            "--seed",
            str(seed),
            "--no-targets",
            "--no-store",
        )
        assert code == 0, text
        picked.append(out["n_cases"])
    assert picked[0] == picked[1]  # the same seed keeps the same lines
    assert 3 <= picked[0] <= 15
    from memgauge.data.traces import unlabelled_cases

    first = [c.id for c in unlabelled_cases(TRACE, tags=["memory_extraction"], sample=0.5)[0]]
    again = [c.id for c in unlabelled_cases(TRACE, tags=["memory_extraction"], sample=0.5)[0]]
    other = [
        c.id for c in unlabelled_cases(TRACE, tags=["memory_extraction"], sample=0.5, seed=1)[0]
    ]
    assert first == again
    assert first != other
    assert len(first) == picked[0]


def test_labelled_cases_and_unlabelled_lines_are_reported_apart(
    server: FakeOpenAIServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    server.respond(_facts_judge)
    code, _out, text = _run(
        capsys,
        str(CASES),
        "--outputs",
        str(TRACE),
        "--match",
        "exact",
        "--no-targets",
        "--tag",
        "memory_extraction",
        "--max-failure-rate",
        "1",
        "--output",
        str(tmp_path),
    )
    assert code == 0, text
    report = json.loads((tmp_path / "extraction.json").read_text())
    assert report["n_scored"] == 1  # only 'simple' was recorded
    assert report["n_failed"] == 9
    assert report["matching"] == "exact"
    assert report["online"]["n_scored"] == 18
    assert report["online"]["matching"] == "facts judge (unlabelled)"
    assert "online · Extraction: Precision, recall and F1" in text  # its own section


def test_a_trace_with_nothing_to_judge_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, text = _run(capsys, "--outputs", str(TRACE), "--tag", "no-such-tag")
    assert code == 2
    assert "tagged no-such-tag" in text
    labelled = tmp_path / "labelled.jsonl"
    labelled.write_text('{"case_id": "simple", "output": []}\n')
    code, _, text = _run(capsys, "--outputs", str(labelled))
    assert code == 2
    assert "no unlabelled line" in text


def test_langsmith_runs_tagged_memory_extraction_are_the_trace_lines(
    server: FakeOpenAIServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 33 item 2: seed 001's online phase read from a LangSmith export as it is: the runs
    tagged memory_extraction, each once (not again as its own LLM child, which inherits the
    tag), a failed one skipped rather than judged as an extraction of nothing."""
    server.respond(_facts_judge)
    runs = DATA / "traces" / "langsmith_runs.json"
    code, out, text = _run(
        capsys, "--outputs", str(runs), "--no-targets", "--output", str(tmp_path)
    )
    assert code == 0, text
    cases = json.loads((tmp_path / "extraction.json").read_text())["per_case"]
    assert sorted(c["id"] for c in cases) == [
        "1f0e3b2a-7c44-4e51-9a0b-2d3c4e5f6a05",
        "1f0e3b2a-7c44-4e51-9a0b-2d3c4e5f6a07",
    ]
    assert (out["tp"], out["fp"], out["fn"]) == (2, 0, 0)
    prompts = [r["json"]["messages"][-1]["content"] for r in server.requests]
    assert len(prompts) == 2
    # LangChain's `human` message read as the user's turn; the existing memory as given
    assert any("charge 35 euros" in p and "pricing: Price is 20 euros" in p for p in prompts)


def test_a_langsmith_export_with_no_judgeable_extraction_run_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "runs.json"
    failed = {"id": "r-1", "run_type": "chain", "tags": ["memory_extraction"], "error": "boom"}
    path.write_text(json.dumps([failed, {"id": "r-2", "run_type": "llm", "tags": ["chat"]}]))
    code, _, text = _run(capsys, "--outputs", str(path), "--no-targets")
    assert code == 2
    assert "runs.json: a langsmith trace export with no run tagged memory_extraction" in text
    assert "extraction_runs_failed_skipped: the first is run r-1" in text
    assert "Traceback" not in text


def test_a_locomo_observation_written_twice_is_one_silver_fact(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """An expected fact listed twice is refused in a case file (`extraction_duplicate_fact.json`);
    a LoCoMo session whose observations repeat one (a model wrote them) is read as one fact,
    not refused, and an extractor that keeps it once misses nothing."""
    session = [{"speaker": "Ann", "dia_id": "D1:1", "text": "I moved to Lisbon."}]
    said = [["Ann moved to Lisbon.", "D1:1"]]
    doc = [
        {
            "sample_id": "conv-1",
            "conversation": {"speaker_a": "Ann", "speaker_b": "Bob", "session_1": session},
            "observation": {"session_1_observation": {"Ann": said, "Bob": said}},
            "qa": [],
        }
    ]
    path = tmp_path / "locomo.json"
    path.write_text(json.dumps(doc))
    trace = tmp_path / "trace.jsonl"
    out = {"case_id": "conv-1:S1", "output": ["Ann moved to Lisbon."]}
    trace.write_text(json.dumps(out) + "\n")
    code, out, text = _run(
        capsys, str(path), "--outputs", str(trace), "--match", "exact", "--no-targets"
    )
    assert code == 0, text
    assert (out["tp"], out["fp"], out["fn"]) == (1, 0, 0)


def test_a_fact_the_output_holds_twice_is_said_repeated_not_invented(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An extractor that stored 'Favourite colour is green' twice was shown as having
    invented it ('Invented: Favourite colour is green'); the copy still counts as a false
    positive (the memory holds it twice) and is said to be repeated."""
    cases = tmp_path / "cases.json"
    conversation = [{"role": "user", "content": "My favourite colour is green. I like tea."}]
    case = {
        "id": "c1",
        "conversation": conversation,
        "expected_facts": [{"content": "Favourite colour is green"}],
    }
    cases.write_text(json.dumps({"cases": [case]}))
    trace = tmp_path / "trace.jsonl"
    output = ["Favourite colour is green", "favourite colour is  green", "Likes coffee"]
    trace.write_text(json.dumps({"case_id": "c1", "output": output}) + "\n")
    code = main(
        ["extraction", str(cases), "--outputs", str(trace), "--match", "exact", "--no-targets"]
    )
    text = " ".join(capsys.readouterr().out.split())
    assert code == 0, text
    assert "TP 1, FP 2, FN 0" in text
    assert "Repeated: favourite colour is green · Invented: Likes coffee" in text
    assert "Invented: favourite colour" not in text
    # both copies unmatched: the first is invented, the second repeats it
    trace.write_text(json.dumps({"case_id": "c1", "output": ["Likes coffee"] * 2}) + "\n")
    argv = ["extraction", str(cases), "--outputs", str(trace), "--match", "exact", "--no-targets"]
    assert main(argv) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "TP 0, FP 2, FN 1 · Invented: Likes coffee · Repeated: Likes coffee" in text


def test_an_exact_match_sets_the_unicode_form_aside(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--match exact missed 'Lives in Zürich' written with 'ü' as one character (NFC, as a
    model writes it) against the case's 'u' and a combining mark (NFD, as macOS saves a
    name), and said the extractor invented the fact it got right: one text, one fact."""
    cases = tmp_path / "cases.json"
    case = {
        "id": "c1",
        "conversation": [{"role": "user", "content": "I live in Zu\u0308rich."}],
        "expected_facts": [{"content": "Lives in Zu\u0308rich"}],
    }
    cases.write_text(json.dumps({"cases": [case]}))
    trace = tmp_path / "trace.jsonl"
    trace.write_text(json.dumps({"case_id": "c1", "output": ["Lives in Z\u00fcrich"]}) + "\n")
    argv = ["extraction", str(cases), "--outputs", str(trace), "--match", "exact", "--no-targets"]
    assert main(argv) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "TP 1 · FP 0 · FN 0" in text, text
    assert "Invented" not in text


def test_a_locomo_observation_of_only_zero_width_characters_is_skipped_as_a_blank_one(
    tmp_path: Path,
) -> None:
    """A blank observation is skipped (no extractor can produce it); one of only zero-width
    characters passed that check, then failed the expected fact's own (a ValidationError out
    of the importer): one rule for blank, and it is skipped too."""
    from memgauge.data.importers.locomo import locomo_extraction_cases

    session = [{"speaker": "Ann", "dia_id": "D1:1", "text": "I moved to Lisbon."}]
    said = [["Ann moved to Lisbon.", "D1:1"], ["\u200b\ufeff", "D1:1"], ["  ", "D1:1"]]
    doc = [
        {
            "sample_id": "conv-1",
            "conversation": {"speaker_a": "Ann", "speaker_b": "Bob", "session_1": session},
            "observation": {"session_1_observation": {"Ann": said}},
            "qa": [],
        }
    ]
    path = tmp_path / "locomo.json"
    path.write_text(json.dumps(doc))
    (case,) = locomo_extraction_cases(path)
    assert [f.content for f in case.expected_facts] == ["Ann moved to Lisbon."]


def test_a_production_trace_with_a_turn_without_text_is_still_read(tmp_path: Path) -> None:
    """A case file's blank turn is refused (`extraction_blank_turn.json`); a production trace's
    turn without text (an assistant's tool call) is no mistake of the user's: left out of the
    conversation it gives the extractor, the line still read."""
    from memgauge.data.traces import unlabelled_cases

    trace = tmp_path / "trace.jsonl"
    turns = [
        {"role": "user", "content": "I moved to Lisbon."},
        {"role": "assistant", "content": ""},
        {"role": "user", "content": "\u200b"},
    ]
    line = {"id": "t1", "conversation": turns, "output": ["Lives in Lisbon"]}
    trace.write_text(json.dumps(line) + "\n")
    (case,), n = unlabelled_cases(trace)
    assert n == 1
    assert [t.content for t in case.conversation] == ["I moved to Lisbon."]


def test_a_production_trace_line_with_no_turn_of_text_is_not_kept_not_an_internal_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A trace line whose only turn is a tool call (no text) was left a case with no turn,
    which the case model refuses: `extraction --outputs` ended in an internal error (exit 70,
    a pydantic traceback). It has nothing to judge its output against: not kept, the other
    lines judged; a trace of only such lines is exit 2, saying so."""
    from memgauge.data.traces import unlabelled_cases

    trace = tmp_path / "trace.jsonl"
    said = {"id": "t1", "conversation": "I moved to Lisbon.", "output": ["Lives in Lisbon"]}
    silent = {"id": "t2", "conversation": [{"role": "assistant", "content": ""}], "output": []}
    trace.write_text(json.dumps(said) + "\n" + json.dumps(silent) + "\n")
    (case,), n = unlabelled_cases(trace)
    assert (case.id, n) == ("t1", 2)
    trace.write_text(json.dumps(silent) + "\n")
    code, _, text = _run(capsys, "--outputs", str(trace), "--no-store")
    assert code == 2, text
    assert "internal error" not in text
    assert f"none of the 1 unlabelled lines of {trace} has a turn with text" in text, text
