"""`memgauge audit`: offline with the extractive baseline, and with a chat agent and the QA
judge over real HTTP against the fake server; memaudit, LoCoMo; reports and replays."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from memgauge import api
from memgauge.cli.main import main
from memgauge.llm import FakeOpenAIServer
from memgauge.report.audit import js_timestamp
from memgauge.scorers.locomo import locomo_qa_score

SHARED = Path(__file__).resolve().parents[2].parent / "shared" / "datasets"
SAMPLE = SHARED / "memaudit-sample.json"
LOCOMO = SHARED / "locomo10.json"
METRICS = (
    "recall_accuracy",
    "hallucinated_memory_rate",
    "conflict_resolution_accuracy",
    "temporal_accuracy",
)


def _audit(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], *args: str
) -> tuple[int, dict[str, Any], str]:
    out = tmp_path / "out"
    code = main(
        [
            "audit",
            *args,
            "--output",
            str(out),
            "--store",
            str(tmp_path / "r.db"),
            "--json",
            "--no-progress",
        ]
    )
    cap = capsys.readouterr()
    last = cap.out.strip().splitlines()[-1] if cap.out.strip() else "{}"
    return code, json.loads(last), cap.out + cap.err


def test_offline_audit_of_the_memaudit_sample(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, summary, out = _audit(tmp_path, capsys, str(SAMPLE))
    assert code == 0, out
    assert summary["agent"].startswith("extractive baseline (no LLM")
    assert summary["scoring"].startswith("offline:")
    for name in METRICS:
        value = summary["metrics"][name]
        assert value is None or 0.0 <= value <= 1.0
        assert summary["counts"][name]["n_probes"] > 0
    assert summary["metrics"]["hallucinated_memory_rate"] == 0.0  # the baseline declines
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    assert results["metrics"] == summary["metrics"]
    probes = results["probes"]
    assert {p["type"] for p in probes} == {"recall", "conflict", "temporal", "hallucination"}
    report = (tmp_path / "out" / "report.md").read_text()
    for p in probes:
        assert p["id"] in report
    assert "| Recall accuracy |" in report
    # the run is a suite run like any other: stored, with every probe as an item
    run = api.read_run(summary["run_id"], store=tmp_path / "r.db")
    assert (run.kind, run.status) == ("audit", "completed")
    assert run.n_items == len(probes)


def test_locomo_audit_asks_each_conversation_its_own_questions(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    if not LOCOMO.exists():
        pytest.skip("../shared/datasets/locomo10.json is not here")
    code, summary, out = _audit(tmp_path, capsys, str(LOCOMO), "--limit", "40", "--format", "json")
    assert code == 0, out
    assert summary["format"] == "locomo"
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    assert len(results["probes"]) == 40
    assert not (tmp_path / "out" / "report.md").exists()
    assert len(json.loads((tmp_path / "out" / "memaudit.json").read_text())["probeResults"]) == 40
    assert summary["counts"]["conflict_resolution_accuracy"]["n_probes"] == 0
    assert summary["metrics"]["conflict_resolution_accuracy"] is None  # n/a, not 0
    assert "n/a (0 scored)" in out


@pytest.mark.locomo
def test_locomo_audit_reports_locomos_own_scoring(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Beside the verdicts, LoCoMo's own per-category scores (evaluation.py), labelled as
    such in the terminal, results.json and report.md."""
    if not LOCOMO.exists():
        pytest.skip("../shared/datasets/locomo10.json is not here")
    code, summary, out = _audit(
        tmp_path, capsys, str(LOCOMO), "--limit", "30", "--scoring", "offline"
    )
    assert code == 0, out
    locomo = summary["locomo_qa"]
    assert locomo["label"].startswith("LoCoMo's own scoring")
    assert "LoCoMo's own scoring" in out
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    probes = results["probes"]
    assert locomo["overall"]["n_scored"] == len(probes) == 30
    for name, c in locomo["by_category"].items():
        cat = int(name.split()[0])
        values = [p["locomo_qa"] for p in probes if p["locomo_category"] == cat]
        assert c["mean"] == pytest.approx(sum(values) / len(values))
    for p in probes:  # each probe's value is LoCoMo's score of the answer given
        assert p["locomo_qa"] == pytest.approx(
            locomo_qa_score(p["locomo_category"], p["answer"], p["expected"])
        )
    report = (tmp_path / "out" / "report.md").read_text()
    assert "### LoCoMo's own scoring" in report
    assert "| overall |" in report


def test_longmemeval_audit_says_it_reads_all_turns(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sample = Path(__file__).resolve().parents[1] / "data" / "longmemeval" / "sample.json"
    code, summary, out = _audit(tmp_path, capsys, str(sample), "--scoring", "offline")
    assert code == 0, out
    assert "all-turns protocol" in summary["protocol"]
    assert "all-turns protocol" in out
    assert "all-turns protocol" in (tmp_path / "out" / "report.md").read_text()
    memories = api.audit_source(sample).memories  # what the agent was given
    assert any(m.metadata.get("role") == "assistant" for m in memories)  # answers stay reachable
    assert "locomo_qa" not in summary


_QA = re.compile(r"CORRECT ANSWER:\n(.*?)\n\nMODEL'S RESPONSE:\n(.*?)\n\n", re.S)


def _rule(payload: dict[str, Any]) -> str:
    text = "\n".join(m["content"] for m in payload["messages"])
    if "CONVERSATIONS:" in text or "RETRIEVED MEMORIES:" in text:
        question = text.rsplit("QUESTION:", 1)[1]
        if "name" in question and "Sarah" in text:
            return "Your name is Sarah."
        return "That was never mentioned."
    if "cannot be answered" in text:
        said = text.rsplit("MODEL'S RESPONSE:", 1)[1]
        return json.dumps({"label": "yes" if "never mentioned" in said else "no"})
    m = _QA.search(text)
    assert m is not None, text
    ok = m.group(1).strip().lower() in m.group(2).lower()
    return json.dumps({"reasoning": "-", "label": "yes" if ok else "no"})


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as srv:
        srv.respond(_rule)
        monkeypatch.setenv("OPENAI_BASE_URL", srv.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "k")
        monkeypatch.setenv("MEMAUDIT_MODEL", "fake-agent")
        monkeypatch.delenv("MEMGAUGE_MODEL", raising=False)
        yield srv


def test_chat_agent_judged_by_the_qa_judge_and_replayed(
    server: FakeOpenAIServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, summary, out = _audit(tmp_path, capsys, str(SAMPLE))
    assert code == 0, out
    assert summary["agent"] == "chat: fake-agent"
    assert summary["scoring"].startswith("QA judge (longmemeval")
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    n_questions = len({p["question"] for p in results["probes"]})
    # one answer per distinct question (a conflict probe asks what its recall probe asks: the
    # same prompt is sent once) and one verdict per probe
    assert len(server.requests) == n_questions + len(results["probes"])
    agent_prompt = next(
        r for r in server.requests if "CONVERSATIONS:" in r["json"]["messages"][-1]["content"]
    )
    assert "Sarah" in agent_prompt["json"]["messages"][-1]["content"]  # the whole history
    assert summary["metrics"]["hallucinated_memory_rate"] == 0.0
    assert summary["metrics"]["recall_accuracy"] == pytest.approx(1 / 5)  # only the name
    assert summary["metrics"]["conflict_resolution_accuracy"] == 0.0
    # the same audit again, from the cache only: no request, the same numbers
    before = len(server.requests)
    code, again, _ = _audit(tmp_path, capsys, str(SAMPLE), "--cache-only")
    assert code == 0
    assert len(server.requests) == before
    assert again["metrics"] == summary["metrics"]


def test_memory_backed_agent_reads_its_top_hits(
    server: FakeOpenAIServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, summary, out = _audit(
        tmp_path, capsys, str(SAMPLE), "--subject", "lexical", "-k", "2", "--scoring", "offline"
    )
    assert code == 0, out
    assert summary["agent"] == "memory: fake-agent"
    prompts = [r["json"]["messages"][-1]["content"] for r in server.requests]
    assert prompts
    assert all("RETRIEVED MEMORIES:" in p for p in prompts)
    assert summary["scoring"].startswith("offline:")


def test_an_llm_agent_without_a_model_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("MEMGAUGE_MODEL", "MEMAUDIT_MODEL", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    code, _, out = _audit(tmp_path, capsys, str(SAMPLE), "--agent", "chat")
    assert code == 2
    assert "needs a model" in out
    assert "Traceback" not in out


@pytest.mark.parametrize(
    ("given", "says"),
    [
        (["--judge-model", "gpt-x"], "--judge-model gpt-x names the QA judge's model"),
        (["--judge-preset", "strict"], "--judge-preset sets how the QA judge judges"),
    ],
)
def test_a_judge_setting_beside_offline_scoring_is_refused(
    given: list[str], says: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--scoring offline --judge-model X` ran offline and never said the model went unused."""
    code, _, out = _audit(tmp_path, capsys, str(SAMPLE), "--scoring", "offline", *given)
    assert code == 2
    assert says in out
    assert "--scoring offline judges nothing" in out
    assert not (tmp_path / "r.db").exists()


def test_a_malformed_dataset_exits_2_and_runs_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = (
        Path(__file__).resolve().parents[1]
        / "data"
        / "bad"
        / "conversations_dangling_supersedes.json"
    )
    code, _, out = _audit(tmp_path, capsys, str(bad))
    assert code == 2
    assert "supersedes unknown fact 'f0'" in out
    assert not (tmp_path / "r.db").exists()


def test_memaudit_jsonl_gives_the_same_probes_as_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = json.loads(SAMPLE.read_text())
    jsonl = tmp_path / "sample.jsonl"
    jsonl.write_text("".join(json.dumps(c) + "\n" for c in data["conversations"]))
    code, from_jsonl, out = _audit(tmp_path, capsys, str(jsonl), "--scoring", "offline")
    assert code == 0, out
    code, from_json, _ = _audit(tmp_path, capsys, str(SAMPLE), "--scoring", "offline")
    assert from_jsonl["counts"] == from_json["counts"]


# issue 18 item 6: memaudit's own result format, its sample and example, its model defaults

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "run-audit.sh"
OWN_SAMPLE = ROOT / "examples" / "data" / "sample-dataset.json"
MEMAUDIT_KEYS = {
    "recall_accuracy": "recallAccuracy",
    "hallucinated_memory_rate": "hallucinatedMemoryRate",
    "conflict_resolution_accuracy": "conflictResolutionAccuracy",
    "temporal_accuracy": "temporalAccuracy",
}


def _no_model(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("MEMGAUGE_MODEL", "MEMAUDIT_MODEL", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)


def test_the_memaudit_format_is_seed_003s_audit_result(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    _no_model(monkeypatch)
    code, summary, out = _audit(tmp_path, capsys, str(OWN_SAMPLE))
    assert code == 0, out
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    doc = json.loads((tmp_path / "out" / "memaudit.json").read_text())  # always alongside
    assert set(doc) == {"datasetId", "timestamp", "metrics", "probeResults"}
    assert doc["datasetId"] == "memgauge-sample-audit"
    assert doc["timestamp"] == js_timestamp(results["timestamp"])  # as toISOString() writes
    assert doc["metrics"] == {MEMAUDIT_KEYS[k]: v for k, v in summary["metrics"].items()}
    assert len(doc["probeResults"]) == len(results["probes"])
    conflict = next(p for p in doc["probeResults"] if p["type"] == "conflict")
    assert "Olomouc" in conflict["expectedAnswer"]
    # memaudit's ProbeResult (src/types.ts), no more and no less (issue 28 item 4)
    assert list(conflict) == [
        "probeId", "type", "question", "expectedAnswer", "actualAnswer", "isCorrect"
    ]  # fmt: skip
    only = tmp_path / "only"
    assert main(["audit", str(OWN_SAMPLE), "--format", "memaudit", "--output", str(only),
                 "--no-store"]) == 0  # fmt: skip
    assert sorted(p.name for p in only.iterdir()) == ["memaudit.json"]


def test_format_json_writes_memaudits_audit_result_beside_memgauges_results(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Seed 003: `audit --format json` writes memaudit's AuditResult (as `memaudit audit
    --format json` does); memgauge's own results stay in results.json."""
    _no_model(monkeypatch)
    code, summary, out = _audit(tmp_path, capsys, str(OWN_SAMPLE), "--format", "json")
    assert code == 0, out
    written = tmp_path / "out"
    assert sorted(p.name for p in written.iterdir()) == ["memaudit.json", "results.json"]
    doc = json.loads((written / "memaudit.json").read_text())
    assert list(doc) == ["datasetId", "timestamp", "metrics", "probeResults"]
    assert doc["datasetId"] == "memgauge-sample-audit"
    assert list(doc["metrics"]) == [
        "recallAccuracy", "hallucinatedMemoryRate", "conflictResolutionAccuracy",
        "temporalAccuracy",
    ]  # fmt: skip
    assert doc["metrics"] == {MEMAUDIT_KEYS[k]: v for k, v in summary["metrics"].items()}
    results = json.loads((written / "results.json").read_text())
    assert results["metrics"] == summary["metrics"]  # memgauge's own shape, unchanged
    assert [p["probeId"] for p in doc["probeResults"]] == [p["id"] for p in results["probes"]]
    assert all(isinstance(p["isCorrect"], bool) for p in doc["probeResults"])
    assert f"wrote {written / 'memaudit.json'}, {written / 'results.json'}" in out


def test_the_example_script_runs_offline_with_no_model_and_no_key(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("OPENAI_API_KEY", "MEMGAUGE_MODEL", "MEMAUDIT_MODEL")
    }
    env.update(MEMGAUGE=f"{sys.executable} -m memgauge", OUTPUT=str(tmp_path / "results"))
    env["PYTHONPATH"] = str(ROOT / "src")
    done = subprocess.run(
        ["bash", str(EXAMPLE), "--no-store"], cwd=tmp_path, env=env, capture_output=True,
        text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "offline: no model named and no OPENAI_API_KEY" in done.stdout
    doc = json.loads((tmp_path / "results" / "memaudit.json").read_text())
    assert doc["metrics"]["recallAccuracy"] is not None


@pytest.fixture
def keyed(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeOpenAIServer]:
    """The fake server with OPENAI_API_KEY set and no model named anywhere."""
    with FakeOpenAIServer() as srv:
        srv.respond(_rule)
        _no_model(monkeypatch)
        monkeypatch.setenv("OPENAI_BASE_URL", srv.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "k")
        yield srv


def test_model_alone_switches_auto_scoring_to_the_judge(
    keyed: FakeOpenAIServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, summary, out = _audit(tmp_path, capsys, str(SAMPLE), "--model", "m-1")
    assert code == 0, out
    assert summary["agent"] == "chat: m-1"
    assert summary["scoring"] == "QA judge (longmemeval preset, model m-1)"
    assert {r["json"]["model"] for r in keyed.requests} == {"m-1"}


def test_with_a_key_and_no_model_the_agent_is_gpt_4o_mini_as_in_memaudit(
    keyed: FakeOpenAIServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, summary, out = _audit(tmp_path, capsys, str(SAMPLE))
    assert code == 0, out
    assert summary["agent"].startswith("chat: gpt-4o-mini (memaudit's default")
    assert summary["scoring"].startswith("QA judge (longmemeval preset, model gpt-4o-mini")
    assert {r["json"]["model"] for r in keyed.requests} == {"gpt-4o-mini"}


def test_a_probe_whose_agent_call_failed_says_why_in_every_file(
    server: FakeOpenAIServer,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The agent's endpoint answering 500: each probe is a recorded failure (n/a metrics, exit
    4), and results.json, memaudit.json and report.md said only 'failed' where the run has the
    reason (the LLM call's error); they say it."""
    from memgauge.llm import Fault

    monkeypatch.setenv("MEMGAUGE_LLM_RETRIES", "0")
    server.fail(*[Fault(500, '{"error": {"message": "the model is down"}}')] * 200)
    code, summary, out = _audit(tmp_path, capsys, str(SAMPLE), "--limit", "3")
    assert code == 4, out
    assert all(v is None for v in summary["metrics"].values())
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    memaudit = json.loads((tmp_path / "out" / "memaudit.json").read_text())
    reasons = [p["reason"] for p in results["probes"]]
    errors = [p["error"] for p in memaudit["failedProbes"]]
    assert len(reasons) == len(errors) == 3
    for said in (*reasons, *errors):
        assert "status 500: the model is down" in said, said
    assert "status 500: the model is down" in (tmp_path / "out" / "report.md").read_text()


def test_an_answer_cut_off_at_the_token_limit_is_a_failure_not_a_scored_answer(
    server: FakeOpenAIServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A chat agent whose replies stop at the token limit (`finish_reason: length`): the half
    answer was scored as the agent's answer ("The user's na": invented); it is a recorded
    failure saying why (n/a metrics, exit 4)."""
    from memgauge.llm import Fault

    cut = {
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": "The user's na"},
                "finish_reason": "length",
            }
        ],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5},
    }
    server.fail(*[Fault(200, json.dumps(cut))] * 3)
    code, summary, out = _audit(
        tmp_path, capsys, str(SAMPLE), "--limit", "3", "--scoring", "offline"
    )
    assert code == 4, out
    assert all(v is None for v in summary["metrics"].values())
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    for probe in results["probes"]:
        assert "cut off at the token limit" in probe["reason"], probe


def test_an_audit_whose_endpoint_failed_is_finished_by_resume_retry_failed(
    server: FakeOpenAIServer,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The agent's endpoint down for the first calls: the audit ends in exit 4, and `--resume
    ID` keeps its failed probes failed. `run` had `--retry-failed` to ask them again; the
    audit had no such option, so the only way on was a new run."""
    from memgauge.llm import Fault

    monkeypatch.setenv("MEMGAUGE_LLM_RETRIES", "0")
    server.fail(*[Fault(500, '{"error": {"message": "the model is down"}}')] * 3)
    code, summary, out = _audit(tmp_path, capsys, str(SAMPLE), "--limit", "3")
    assert code == 4, out
    asked = server.n_requests
    code, again, out = _audit(
        tmp_path,
        capsys,
        str(SAMPLE),
        "--limit",
        "3",
        "--resume",
        summary["run_id"],
        "--retry-failed",
    )
    assert code == 0, out
    assert again["run_id"] == summary["run_id"]
    assert sum(c["n_failed"] for c in again["counts"].values()) == 0
    assert server.n_requests - asked == 6  # each probe's answer and verdict, asked once
