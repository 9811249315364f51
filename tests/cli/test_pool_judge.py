"""Issue 18 item 4: `memgauge evaluate --pool-depth N --pool-judge SPEC` grades a pool's
unjudged memories with the relevance judge (the fake OpenAI-compatible server), records them as
bootstrapped judgments in the run, scores with them, and says how many it graded; a pair the
judge could not grade stays unjudged (never a made-up grade)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from memgauge import api
from memgauge.aggregates.ir_facts import IrFacts
from memgauge.cli.main import main
from memgauge.data.io import save_retrieval_dataset
from memgauge.data.models import EvalQuery, Judgment, Memory, RetrievalDataset
from memgauge.llm import FakeOpenAIServer


def _dataset(tmp_path: Path) -> Path:
    """q1's judged answer is m1; m2, unjudged, says the same and ranks first lexically; m3,
    unjudged, is off topic but shares a word; q2 is all judged."""
    ds = RetrievalDataset(
        name="pooled",
        memories=[
            Memory(id="m1", text="deploy window is friday"),
            Memory(id="m2", text="deploy window friday deploy window friday"),
            Memory(id="m3", text="window cleaning happens monthly"),
            Memory(id="m4", text="the cat is named miso"),
        ],
        queries=[
            EvalQuery(id="q1", text="deploy window friday"),
            EvalQuery(id="q2", text="cat named miso"),
        ],
        judgments=[
            Judgment(query_id="q1", memory_id="m1", grade=3),
            Judgment(query_id="q2", memory_id="m4", grade=3),
            Judgment(query_id="q2", memory_id="m1", grade=0),
            Judgment(query_id="q2", memory_id="m2", grade=0),
            Judgment(query_id="q2", memory_id="m3", grade=0),
        ],
    )
    save_retrieval_dataset(ds, tmp_path / "ds")
    return tmp_path / "ds"


def _grade(payload: dict[str, Any]) -> str:
    prompt = next(m["content"] for m in payload["messages"] if "MEMORY:\n" in m["content"])
    memory = prompt.split("MEMORY:\n", 1)[1]
    if "cleaning" in memory:
        return "not json"  # this pair cannot be graded
    grade = 3 if "deploy" in memory else 0
    return json.dumps({"reasoning": "r", "grade": grade})


def test_evaluate_pool_judge_grades_and_records_bootstrapped_judgments(
    llm_server: FakeOpenAIServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data, db, out = _dataset(tmp_path), tmp_path / "r.db", tmp_path / "rep"
    llm_server.respond(_grade)
    args = ["evaluate", str(data), "-s", "lexical", "-m", "RR@10", "-m", "Recall@10"]
    args += ["--k", "10", "--store", str(db), "--quiet", "--out", str(out)]
    assert main([*args, "--pool-depth", "5", "--pool-judge", "{relevance: {model: fake}}"]) == 0
    said = capsys.readouterr().out
    # m2 and m3 are q1's unjudged pool entries (q2's pool is all judged)
    assert "the relevance judge graded 1 of 2 unjudged memories" in " ".join(said.split())
    assert "1 could not be graded" in " ".join(said.split())
    assert main(["runs", "list", "--store", str(db), "--json"]) == 0
    (listed,) = json.loads(capsys.readouterr().out)
    summary = api.read_run(listed["run_id"], store=db).summary
    assert summary is not None
    ir = summary.aggregate("ir")
    assert ir is not None
    facts = ir.facts_as(IrFacts)
    assert facts is not None
    pooled = facts.pool_judge
    assert pooled is not None
    assert (pooled.n_pooled, pooled.n_graded, pooled.n_failed) == (2, 1, 1)
    assert [j.model_dump(mode="json") for j in pooled.judgments] == [
        {
            "query_id": "q1",
            "memory_id": "m2",
            "grade": 3,
            "source": "bootstrapped",
            "annotator": "relevance:fake",
            "confidence": 1.0,
            "source_channels": [],
        }
    ]
    assert pooled.failures[0].memory_id == "m3"
    written = (out / "bootstrapped_judgments.jsonl").read_text().splitlines()
    assert [json.loads(x)["memory_id"] for x in written] == ["m2"]
    # the judged grade is scored: m2 (first for q1) now counts as relevant; m3 stays unjudged
    values = {m.name: m.value for m in ir.measures if m.subject == "lexical"}
    assert values["RR@10"] == pytest.approx(1.0)
    assert values["Recall@10"] == pytest.approx(1.0)
    # the same command again: the LLM cache answers for the graded pair (a failed one is
    # asked again: failures are not cached)
    asked = _asked(llm_server, "deploy window friday deploy window friday")
    assert asked == 1
    again = [*args, "--pool-depth", "5", "--pool-judge", "{relevance: {model: fake}}"]
    assert main(again) == 0
    capsys.readouterr()
    assert _asked(llm_server, "deploy window friday deploy window friday") == asked


def _asked(server: FakeOpenAIServer, memory: str) -> int:
    """Requests whose first prompt grades `memory` (retries repeat the prompt)."""
    firsts = [r["json"]["messages"][1]["content"] for r in server.requests]
    return sum(p.endswith(f"MEMORY:\n{memory}") or f"MEMORY:\n{memory}\n" in p for p in firsts)


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--pool-judge", "relevance"], "give --pool-depth N"),
        (["--pool-depth", "5", "--pool-judge", "{rubric: {}}"], "give the relevance judge"),
        (["--pool-depth", "5", "--pool-judge", "{relevance: {topk: 1}}"], "topk"),
    ],
)
def test_bad_pool_judge_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: list[str], message: str
) -> None:
    data = _dataset(tmp_path)
    args = ["evaluate", str(data), "-s", "lexical", "--no-store", "--quiet", *extra]
    assert main([*args, "--out", str(tmp_path / "rep")]) == 2
    err = capsys.readouterr().err
    assert message in err
    assert "Traceback" not in err


def test_a_pooled_judgments_file_that_cannot_be_written_fails_before_the_judge(
    llm_server: FakeOpenAIServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--out d` where d/bootstrapped_judgments.jsonl is a directory: the check of the reports
    before the run knew result.json, summary.md and report.html only, so the judge graded the
    pool, the run was recorded and three reports written before the fourth failed. Exit 2
    before the run, naming the file, no judge asked."""
    data, db, out = _dataset(tmp_path), tmp_path / "r.db", tmp_path / "rep"
    (out / "bootstrapped_judgments.jsonl").mkdir(parents=True)
    llm_server.respond(_grade)
    args = ["evaluate", str(data), "-s", "lexical", "-m", "RR@10", "--store", str(db)]
    args += ["--quiet", "--out", str(out), "--pool-depth", "5", "--pool-judge", "relevance"]
    assert main(args) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert f"--out {out}: cannot write {out / 'bootstrapped_judgments.jsonl'}" in err, err
    assert "it is a directory" in err, err
    assert llm_server.requests == []
    assert sorted(p.name for p in out.iterdir()) == ["bootstrapped_judgments.jsonl"]
    assert not db.exists()
