"""What an agent's `answer()` may return, whoever built it: text, an object with a `text`
attribute, or a dict with "text" is the item's answer; anything else is the item's failure
(stage and kind `subject`, naming the type returned and what is expected), never an
AttributeError, and a run whose every item fails so exits 4."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from memgauge import api
from memgauge.cli.main import main
from memgauge.errors import ReplyError
from memgauge.runs.suite import Suite
from memgauge.subjects.events import Capabilities
from memgauge.subjects.protocol import Answer
from memgauge.subjects.python_import import normalise_answer

SUBJECTS = Path(__file__).resolve().parents[1] / "data" / "subjects"
EXPECTED = "text (str), an object with a str `text` attribute, or a dict with a str 'text'"

# (shape, exit code of `memgauge run`, the recorded output or the failure's message)
CASES = [
    ("str", 0, "port 8080"),
    ("object", 0, "port 8080"),
    ("dict", 0, "port 8080"),
    ("int", 4, f"answer() returned int (42); expected {EXPECTED}"),
    ("none", 4, "answer() returned NoneType (None)"),
    ("dict-without-text", 4, "answer() returned dict without a str 'text' ({'answer': 'port"),
    ("object-with-int-text", 4, "answer() returned Said whose text is int (<replies.Said"),
]


def _suite(tmp_path: Path, subject: dict[str, Any]) -> Path:
    items = [{"id": f"q{i}", "input": f"which port? {i}", "expected": "8080"} for i in range(3)]
    spec = {
        "name": "replies",
        "subjects": {"agent": subject},
        "tasks": [
            {"name": "qa", "kind": "expected-output", "items": items, "evaluators": ["contains"]}
        ],
    }
    path = tmp_path / "suite.yaml"
    path.write_text(yaml.safe_dump(spec))
    return path


@pytest.mark.parametrize(("shape", "code", "recorded"), CASES, ids=[c[0] for c in CASES])
def test_a_python_agents_reply(
    shape: str,
    code: int,
    recorded: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.syspath_prepend(str(SUBJECTS))
    subject = {"python": {"target": "replies:ReplyAgent", "kwargs": {"shape": shape}}}
    db = tmp_path / "r.db"
    assert main(["run", str(_suite(tmp_path, subject)), "--store", str(db), "--json"]) == code
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    run_id = json.loads(out.strip().splitlines()[-1])["run_id"]
    with api.open_store(db) as store:
        items = store.item_records(run_id)
    # once past max_failure_rate the run stops: an item not yet asked stays queued
    asked = [item for item in items if item.status != "queued"]
    assert asked
    assert code == 4 or len(asked) == len(items)
    for item in asked:
        if code == 0:
            assert (item.status, item.output, item.failures) == ("completed", recorded, [])
            assert item.score == 1.0
            assert item.latency_ms["total"] >= 0
        else:
            assert (item.status, item.output) == ("failed", None)
            failure = item.failures[-1]
            assert (failure.stage, failure.kind) == ("subject", "subject")
            assert failure.message.startswith(recorded)
            assert failure.message.endswith(f"expected {EXPECTED}")


class _Protocol:
    """An agent that speaks the protocol (`name`, `capabilities`), so a run calls it as it is,
    without the python: adapter: as it calls a plug-in's subject."""

    def __init__(self, reply: Any) -> None:
        self.name = "bare"
        self.capabilities = Capabilities(answers=True)
        self.reply = reply

    def answer(self, question: str, *, history: Any = None) -> Any:
        return self.reply


@pytest.mark.parametrize(
    ("reply", "status", "output"),
    [
        ("port 8080", "completed", "port 8080"),
        ({"text": "port 8080"}, "completed", "port 8080"),
        (Answer("port 8080", {"total": 1.5}), "completed", "port 8080"),
        (3.5, "failed", None),
    ],
    ids=["str", "dict", "Answer", "float"],
)
def test_an_agent_called_as_it_is(reply: Any, status: str, output: str | None) -> None:
    items = [{"id": "q", "input": "which port?", "expected": "8080"}]
    suite = Suite.model_validate(
        {
            "name": "bare",
            "subjects": {"bare": {"live": {"name": "bare"}}},
            "tasks": [
                {
                    "name": "qa",
                    "kind": "expected-output",
                    "items": items,
                    "evaluators": ["contains"],
                }
            ],
        }
    )
    report = api.run_suite(suite, store=False, subjects={"bare": _Protocol(reply)})
    (item,) = report.items
    assert (item.status, item.output) == (status, output)
    if status == "failed":
        assert [(f.kind, f.message) for f in item.failures] == [
            ("subject", f"answer() returned float (3.5); expected {EXPECTED}")
        ]
        assert api.exit_code(report) == 4
    elif isinstance(reply, Answer):
        assert item.latency_ms == {"total": 1.5}  # the agent's own timings, as they were


def test_normalise_answer_keeps_a_dicts_other_keys_as_metadata() -> None:
    answer = normalise_answer({"text": "x", "source": "table"}, 2.0)
    assert (answer.text, answer.latency_ms, answer.metadata) == (
        "x",
        {"total": 2.0},
        {"source": "table"},
    )
    with pytest.raises(ReplyError, match=r"returned list \(\[1, 2\]\)"):
        normalise_answer([1, 2], 2.0)
