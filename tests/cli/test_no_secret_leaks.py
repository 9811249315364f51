"""No key reaches a file or an output, even from an endpoint that echoes it (issue 13, item 3).

A careless provider quotes the request's `Authorization` header and the bare key in its 400,
429 and 500 bodies. A judged suite run, its exports, `judge rejudge`, `judge calibrate` and an
audit with an LLM agent all run against it over real HTTP, the run as a real subprocess (what
an interpreter prints at its start and end included), the others in-process as a fresh process
would run them (a fresh LLM context each; what reaches the file descriptors 1 and 2 is output
too); then every file they wrote (results store, LLM cache, output directory, exports) and both
output streams are searched for the key and for fragments of it.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.helpers import run_memgauge

from memgauge.llm.fake_server import ECHO_BODY, FakeOpenAIServer, Fault

SRC = Path(__file__).resolve().parents[2] / "src"
# long and distinctive, and not shaped like any provider's key: only the configured-key path
# can catch it, not a pattern
KEY = "mgk-LEAKCANARY-7f3a9c2e41b84d6f9a0e5c7b3d2f1e8a-Zq9XwVt4"
FRAGMENTS = (KEY, "LEAKCANARY", "7f3a9c2e41b84d6f", "Zq9XwVt4")
_QA = re.compile(r"CORRECT ANSWER:\n(.*?)\n\nMODEL'S RESPONSE:\n(.*?)\n\n", re.S)


def _rule(payload: dict[str, Any]) -> str:
    text = "\n".join(m["content"] for m in payload["messages"])
    if "CONVERSATIONS:" in text or "RETRIEVED MEMORIES:" in text:
        return "Your name is Sarah." if "Sarah" in text else "That was never mentioned."
    m = _QA.search(text)
    if m is None:
        return json.dumps({"label": "yes"})
    ok = m.group(1).strip().lower() in m.group(2).lower()
    return json.dumps({"reasoning": "-", "label": "yes" if ok else "no"})


def _echoes(rounds: int) -> list[Fault]:
    return [
        Fault(status, ECHO_BODY, echo_auth=True)
        for _ in range(rounds)
        for status in (400, 429, 500)
    ]


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer(api_key=KEY) as srv:
        srv.respond(_rule)
        yield srv


def _env(server: FakeOpenAIServer, tmp_path: Path) -> dict[str, str]:
    return {
        "MEMGAUGE_HOME": str(tmp_path / "home"),
        "MEMGAUGE_LLM_CACHE": str(tmp_path / "llm-cache.db"),
        "OPENAI_BASE_URL": server.base_url,
        "OPENAI_API_KEY": KEY,
        "MEMGAUGE_MODEL": "fake-judge",
        "MEMAUDIT_MODEL": "fake-agent",
        "MEMGAUGE_LLM_RETRIES": "0",  # every echoed failure is final: recorded, cached, shown
    }


def _cli(
    server: FakeOpenAIServer, tmp_path: Path, capfd: pytest.CaptureFixture[str], *args: str
) -> tuple[int, str, str]:
    """The command in-process (tests.helpers.run_memgauge) with a fresh LLM context, as a new
    process has; what it wrote to the file descriptors themselves is its output too."""
    from memgauge.llm import context

    context.reset()
    done = run_memgauge(*args, env=_env(server, tmp_path), cwd=tmp_path)
    context.reset()  # as the process's end: clients closed, the LLM cache's WAL checkpointed
    fd_out, fd_err = capfd.readouterr()
    return done.returncode, done.stdout + fd_out, done.stderr + fd_err


def _process(server: FakeOpenAIServer, tmp_path: Path, *args: str) -> tuple[int, str, str]:
    done = subprocess.run(
        [sys.executable, "-m", "memgauge", *args],
        env={**os.environ, "PYTHONPATH": str(SRC), **_env(server, tmp_path)},
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    return done.returncode, done.stdout, done.stderr


def _suite(recall_suite: Any) -> Path:
    items = [
        {"id": f"q{i}", "input": f"What is the code for item {i}?", "expected": f"K{i}X"}
        for i in range(12)
    ]
    memories = [{"id": f"m{i}", "text": f"The code for item {i} is K{i}X."} for i in range(12)]
    return recall_suite(  # type: ignore[no-any-return]
        items, memories, [{"qa-judge": "strict"}], concurrency=4, max_failure_rate=1.0
    )


def _dataset(tmp_path: Path) -> Path:
    conversation = {
        "id": "c1",
        "turns": [
            {
                "role": "user",
                "content": "Hi, my name is Sarah.",
                "timestamp": "2024-01-15T09:00:00Z",
            },
            {
                "role": "user",
                "content": "I have a dog named Max.",
                "timestamp": "2024-01-15T09:01:00Z",
            },
        ],
        "facts": [
            {"id": "f1", "content": "User's name is Sarah", "timestamp": "2024-01-15T09:00:00Z"},
            {
                "id": "f2",
                "content": "User has a dog named Max",
                "timestamp": "2024-01-15T09:01:00Z",
            },
        ],
    }
    path = tmp_path / "audit.json"
    path.write_text(json.dumps({"id": "leak", "conversations": [conversation]}))
    return path


def test_a_key_echoed_by_the_endpoint_reaches_no_file_and_no_output(
    server: FakeOpenAIServer, tmp_path: Path, recall_suite: Any, capfd: pytest.CaptureFixture[str]
) -> None:
    outputs: list[str] = []

    def cli(*args: str, process: bool = False) -> tuple[int, str]:
        if process:
            code, out, err = _process(server, tmp_path, *args)
        else:
            code, out, err = _cli(server, tmp_path, capfd, *args)
        outputs.extend((out, err))
        return code, out + "\n" + err

    store = str(tmp_path / "r.db")
    server.fail(*_echoes(3))
    code, out = cli("run", str(_suite(recall_suite)), "--store", store, "--json", process=True)
    assert code == 0, out
    run = json.loads(outputs[-2].strip().splitlines()[-1])
    assert server.n_requests >= 12
    # the failures were recorded, with the endpoint's words, minus the key
    rows = _scores(tmp_path / "r.db")
    errors = [e for (e,) in rows if e]
    assert len(errors) == 9, errors
    assert any("Authorization: [REDACTED]" in e for e in errors), errors
    assert any("Incorrect API key provided: [REDACTED]" in e for e in errors), errors
    for kind in ("bad_request", "rate_limit", "server"):
        assert any(kind in e for e in errors), (kind, errors)

    # exports and views of the run
    run_id = run["run_id"]
    for args in (
        ("runs", "show", run_id),
        ("runs", "list"),
        ("runs", "export", run_id, "--format", "jsonl"),
        ("runs", "export", run_id, "--format", "csv", "--out", str(tmp_path / "export.csv")),
        ("runs", "export", run_id, "--format", "json", "--out", str(tmp_path / "export.json")),
    ):
        code, out = cli(*args, "--store", store)
        assert code == 0, (args, out)

    # judge commands over frozen outputs
    frozen = tmp_path / "outputs.jsonl"
    frozen.write_text(
        "".join(
            json.dumps({"id": f"o{i}", "input": f"q{i}", "output": f"A{i}", "expected": f"A{i}"})
            + "\n"
            for i in range(6)
        )
    )
    server.fail(*_echoes(1))
    code, out = cli("judge", "rejudge", str(frozen), "--judge", "{qa-judge: strict}", "-k", "2")
    assert code == 0, out
    labels = tmp_path / "labels.jsonl"
    labels.write_text(
        "".join(
            json.dumps(
                {"id": f"l{i}", "input": "q", "output": "x", "expected": "y", "label": "fail"}
            )
            + "\n"
            for i in range(6)
        )
    )
    server.fail(*_echoes(1))
    code, out = cli(
        "judge", "calibrate", str(labels), "--judge", "{qa-judge: strict}", "--no-cache"
    )
    assert code == 0, out
    assert "[REDACTED]" in out  # calibrate lists the failed verdicts with their reasons

    # an audit whose LLM agent and judge meet the same endpoint
    server.fail(*_echoes(2))
    code, out = cli(
        "audit",
        str(_dataset(tmp_path)),
        "--agent",
        "chat",
        "--output",
        str(tmp_path / "audit-out"),
        "--store",
        store,
        "--no-progress",
    )
    assert code in (0, 1, 4), out  # every judge call fails: the run fails (4), no key leaks
    assert (tmp_path / "audit-out").is_dir()

    assert server.fault_counts == {}
    assert server.n_requests > 30
    assert _cached_errors(tmp_path / "llm-cache.db") >= 1  # a 400 is cached: scrubbed first
    # listed after the cache was read: closing its last connection checkpoints the WAL into
    # the database file (scanned below) and removes it
    written = [f for f in tmp_path.rglob("*") if f.is_file()]
    assert {"r.db", "llm-cache.db", "export.csv", "export.json"} <= {f.name for f in written}
    for fragment in FRAGMENTS:
        for text in outputs:
            assert fragment not in text
        for f in written:
            assert fragment.encode() not in f.read_bytes(), (fragment, f)


def _scores(db: Path) -> list[tuple[str | None]]:
    import sqlite3

    con = sqlite3.connect(db)
    try:
        return con.execute("SELECT error FROM suite_run_scores").fetchall()
    finally:
        con.close()


def _cached_errors(db: Path) -> int:
    import sqlite3

    con = sqlite3.connect(db)
    try:
        rows = con.execute("SELECT response_json FROM llm_responses").fetchall()
    finally:
        con.close()
    return sum(1 for (r,) in rows if '"error"' in r)
