"""LLM settings that can never work are bad input, found before a run is written: every
command that asks a model (an audit's chat agent and QA judge, the LLM extractor and decider,
a suite's judge, `judge rejudge`, `synth`) exits 2 naming the setting, instead of asking every
item, recording each failure, and exiting 4."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.helpers import finished, run_memgauge

SHARED = Path(__file__).resolve().parents[2].parent / "shared" / "datasets"
DATA = Path(__file__).resolve().parents[1] / "data"

SUITE = """\
name: judged
subjects:
  lexical: {reference: {mode: lexical}}
tasks:
  - name: answers
    kind: expected-output
    k: 1
    memories: memories.jsonl
    items: [{id: q1, input: "Which database?", expected: Kuzu}]
    evaluators: [JUDGE]
"""

#: each command that asks a model, with the files it writes under {tmp}
COMMANDS = {
    "audit-agent": [
        "audit",
        str(SHARED / "memaudit-sample.json"),
        "--agent",
        "chat",
        "--scoring",
        "offline",
        "--output",
        "{tmp}/out",
    ],
    "audit-judge": [
        "audit",
        str(SHARED / "memaudit-sample.json"),
        "--agent",
        "extractive",
        "--scoring",
        "judge",
        "--output",
        "{tmp}/out",
    ],
    "extraction": [
        "extraction",
        str(DATA / "extraction" / "cases.json"),
        "--extractor",
        "{llm: {}}",
    ],
    "operations": ["operations", str(DATA / "operations" / "cases.json"), "--decider", "{llm: {}}"],
    "suite-judge": ["run", "{tmp}/suite.yaml"],
    "rejudge": ["judge", "rejudge", "{tmp}/outputs.jsonl", "--judge", "rubric", "-k", "2"],
    "synth": ["synth", str(DATA / "good" / "conversations.jsonl"), "--out", "{tmp}/out"],
}

#: (environment, what the message says)
SETTINGS = {
    "scheme": ({"OPENAI_BASE_URL": "htp://x"}, "OPENAI_BASE_URL='htp://x' does not start"),
    "not-a-url": ({"OPENAI_BASE_URL": "not a url"}, "OPENAI_BASE_URL='not a url' does not"),
    "no-host": ({"OPENAI_BASE_URL": "http:///v1"}, "OPENAI_BASE_URL='http:///v1' names no host"),
    "port": ({"OPENAI_BASE_URL": "http://h:port/v1"}, "OPENAI_BASE_URL='http://h:port/v1' is not"),
    "blank-model": ({"MEMGAUGE_MODEL": "  "}, "MEMGAUGE_MODEL='  ' is not a model id"),
    "timeout-word": ({"MEMGAUGE_LLM_TIMEOUT": "soon"}, "MEMGAUGE_LLM_TIMEOUT='soon' is not a"),
    "timeout-zero": ({"MEMGAUGE_LLM_TIMEOUT": "0"}, "MEMGAUGE_LLM_TIMEOUT='0' is out of range"),
    "no-workers": (
        {"MEMGAUGE_LLM_CONCURRENCY": "0"},
        "MEMGAUGE_LLM_CONCURRENCY='0' is out of range: set it to a whole number, at least 1",
    ),
    "rpm": ({"MEMGAUGE_LLM_RPM": "-5"}, "MEMGAUGE_LLM_RPM='-5' is out of range"),
}


def _args(command: str, tmp: Path, judge: str = "qa-judge") -> list[str]:
    (tmp / "suite.yaml").write_text(SUITE.replace("JUDGE", judge), encoding="utf-8")
    (tmp / "memories.jsonl").write_text('{"id": "m1", "text": "We use Kuzu."}\n')
    (tmp / "outputs.jsonl").write_text('{"id": "a", "input": "q", "output": "x"}\n')
    args = [a.replace("{tmp}", str(tmp)) for a in COMMANDS[command]]
    if command not in ("rejudge", "synth"):
        args += ["--store", str(tmp / "r.db"), "--no-progress"]
    return args


@pytest.mark.parametrize("setting", SETTINGS)
@pytest.mark.parametrize("command", COMMANDS)
def test_settings_that_cannot_work_are_exit_2_before_the_run(
    command: str, setting: str, tmp_path: Path
) -> None:
    env, says = SETTINGS[setting]
    base = {"MEMGAUGE_MODEL": "m", "OPENAI_BASE_URL": "http://127.0.0.1:9/v1"}
    done = run_memgauge(*_args(command, tmp_path), env={**base, **env})
    assert done.returncode == 2, (done.stdout[-2000:], done.stderr[-2000:])
    assert says in done.stderr
    assert "Traceback" not in done.stderr
    assert finished(tmp_path / "r.db") == (None, 0)  # no run recorded
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("command", "judge"),
    [
        ("suite-judge", "{qa-judge: {provider: nope}}"),
        ("rejudge", "{rubric: {provider: nope}}"),
    ],
)
def test_an_unknown_provider_is_exit_2_before_the_run(
    command: str, judge: str, tmp_path: Path
) -> None:
    args = _args(command, tmp_path, judge)
    if command == "rejudge":
        args[args.index("rubric")] = judge
    done = run_memgauge(*args, env={"MEMGAUGE_MODEL": "m"})
    assert done.returncode == 2, (done.stdout[-2000:], done.stderr[-2000:])
    assert "unknown LLM provider 'nope'" in done.stderr
    assert "set provider: to one of them" in done.stderr
    assert finished(tmp_path / "r.db") == (None, 0)
