"""LLM judges under faults, over real HTTP (the fake server on 127.0.0.1): `--retry-failed`
asks again the judges whose calls failed on something that passes, and not those a retry would
only replay; the run's LLM spend is recorded request by request, so it is exact across kill -9."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from memgauge.cli.main import main
from memgauge.llm import FakeOpenAIServer, Fault

SUBJECTS = Path(__file__).resolve().parents[1] / "data" / "subjects"
VERDICT = json.dumps({"reasoning": "the answer gives the port", "label": "yes"})


@pytest.fixture(autouse=True)
def _importable_subjects(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(SUBJECTS))


@pytest.fixture
def judge(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as srv:
        srv.respond(lambda _payload: VERDICT)
        monkeypatch.setenv("OPENAI_BASE_URL", srv.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "k")
        monkeypatch.setenv("MEMGAUGE_MODEL", "fake-judge")
        monkeypatch.setenv("MEMGAUGE_LLM_TIMEOUT", "0.5")
        yield srv


def _suite(tmp_path: Path, n: int, *, concurrency: int, **agent: Any) -> Path:
    items = [
        {"id": f"q{i:03d}", "input": f"question {i} about port", "expected": "8080"}
        for i in range(n)
    ]
    (tmp_path / "items.jsonl").write_text("".join(json.dumps(it) + "\n" for it in items))
    suite = {
        "name": "judged",
        "concurrency": concurrency,
        "subjects": {
            "agent": {
                "python": {
                    "target": "agents:LookupAgent",
                    "kwargs": {"answers": {"port": "port 8080"}, **agent},
                    "concurrent": True,
                }
            }
        },
        "tasks": [
            {
                "name": "t",
                "kind": "expected-output",
                "dataset": "items.jsonl",
                "evaluators": [{"qa-judge": "strict"}],  # one LLM call per item
            }
        ],
    }
    path = tmp_path / "suite.yaml"
    path.write_text(yaml.safe_dump(suite))
    return path


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict[str, Any], str]:
    code = main(["run", *args, "--json"])
    cap = capsys.readouterr()
    return code, json.loads(cap.out.strip().splitlines()[-1]), cap.err


def _judge_row(doc: dict[str, Any]) -> tuple[Any, ...]:
    (row,) = doc["results"]
    return row["mean"], row["n_scored"], row["n_failed"]


def test_retry_failed_asks_again_the_judges_whose_calls_failed_on_something_that_passes(
    tmp_path: Path,
    judge: FakeOpenAIServer,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("MEMGAUGE_LLM_RETRIES", "0")  # each fault fails its call for good
    path = _suite(tmp_path, 10, concurrency=1)  # one item at a time: the faults go in order
    db = tmp_path / "r.db"
    judge.fail(
        Fault(500),
        Fault(429, headers=(("retry-after", "0.01"),)),
        Fault(truncate=True),  # the connection drops mid-body
        Fault(200, delay=2.0, content=VERDICT),  # no answer within the 0.5 s timeout
        Fault(400, body='{"error": {"message": "the model does not exist"}}'),
    )
    code, first, err = _run(capsys, str(path), "--store", str(db))
    assert code == 0, err
    assert _judge_row(first) == (1.0, 5, 5)
    assert judge.n_requests == 10

    code, again, err = _run(
        capsys, str(path), "--store", str(db), "--resume", first["run_id"], "--retry-failed"
    )
    assert code == 0, err
    # the 500, 429, dropped connection and timeout are asked again and judged; the 400 is not:
    # it is cached, so asking again would replay it
    assert judge.n_requests == 10 + 4
    assert _judge_row(again) == (1.0, 9, 1)
    with sqlite3.connect(db) as conn:
        (error,) = conn.execute(
            "SELECT error FROM suite_run_scores WHERE error IS NOT NULL"
        ).fetchone()
        kinds = [r[0] for r in conn.execute("SELECT kind FROM suite_run_failures")]
    assert "400" in error
    assert len(kinds) == 5  # the first run's judge failures stay, as history
