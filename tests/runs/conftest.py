"""Fixtures for run tests: suites over the lookup agent, a fake LLM judge, memgauge in a child
process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from memgauge.llm import FakeOpenAIServer

SUBJECTS = Path(__file__).resolve().parents[1] / "data" / "subjects"
#: what the fake judge answers to every call: a qa-judge verdict of "yes"
VERDICT = json.dumps({"reasoning": "the answer gives the port", "label": "yes"})

LookupSuite = Callable[..., Path]
Spawn = Callable[..., "subprocess.Popen[str]"]


@pytest.fixture
def judge(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeOpenAIServer]:
    """The fake LLM server answering every call with VERDICT, configured (model `fake-judge`)
    for this process and its children."""
    with FakeOpenAIServer() as srv:
        srv.respond(lambda _payload: VERDICT)
        monkeypatch.setenv("OPENAI_BASE_URL", srv.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "k")
        monkeypatch.setenv("MEMGAUGE_MODEL", "fake-judge")
        yield srv


@pytest.fixture
def lookup_suite(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> LookupSuite:
    """`make(n, *, concurrency=2, judged=False, max_failure_rate=0.1, **agent)`: a suite file
    in tmp_path asking the
    (concurrent) lookup agent `n` questions about the port, scored by `contains`, and with
    `judged` by a qa-judge too (one LLM call per item)."""
    monkeypatch.syspath_prepend(str(SUBJECTS))

    def make(
        n: int,
        *,
        concurrency: int = 2,
        judged: bool = False,
        max_failure_rate: float = 0.1,
        **agent: Any,
    ) -> Path:
        items = [
            {"id": f"q{i:03d}", "input": f"question {i} about port", "expected": "8080"}
            for i in range(n)
        ]
        (tmp_path / "items.jsonl").write_text("".join(json.dumps(it) + "\n" for it in items))
        evaluators: list[Any] = ["contains"] + ([{"qa-judge": "strict"}] if judged else [])
        suite = {
            "name": "lookup",
            "concurrency": concurrency,
            "max_failure_rate": max_failure_rate,
            "subjects": {
                "agent": {
                    "python": {
                        "target": "lookup_agents:LookupAgent",
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
                    "evaluators": evaluators,
                }
            ],
        }
        path = tmp_path / "suite.yaml"
        path.write_text(yaml.safe_dump(suite))
        return path

    return make


@pytest.fixture
def spawn() -> Spawn:
    """`spawn(*args, **popen_kwargs)`: `memgauge ARGS` in a child process that can import the
    test subjects (stdout and stderr piped, as text, unless given)."""

    def start(*args: str, **kwargs: Any) -> subprocess.Popen[str]:
        path = os.pathsep.join([str(SUBJECTS), os.environ.get("PYTHONPATH", "")])
        kwargs.setdefault("stdout", subprocess.PIPE)
        kwargs.setdefault("stderr", subprocess.PIPE)
        return subprocess.Popen(
            [sys.executable, "-m", "memgauge.cli.main", *args],
            env={**os.environ, "PYTHONPATH": path},
            text=True,
            **kwargs,
        )

    return start
