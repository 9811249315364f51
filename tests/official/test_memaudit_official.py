"""memgauge against memaudit (zhy0216/memaudit, the implementation of seed 003), issue 28 item 4:

- memaudit's data files are read by `validate` and `audit` as the memaudit conversations they
  are, whatever their names (its `data/real/memorybench-locomo.json` ends in `locomo`);
- `memaudit.json` is memaudit's own `results.json`, structure and field names: compared with
  the files the real memaudit wrote on the same datasets against the same fake model
  (tests/data/memaudit/results/, see the README there), and, when a built memaudit checkout
  is named by MEMGAUGE_MEMAUDIT_DIR, with memaudit run there and then.

The datasets in tests/data/memaudit/ are ours, written in memaudit's format (its repository
carries no license file); memaudit's own sample dataset is ../shared/datasets/memaudit-sample.json.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
from tests.official.memaudit_model import DATA, DATASETS, rule, run_memaudit

from memgauge.cli.main import main
from memgauge.llm import FakeOpenAIServer
from memgauge.report.audit import memaudit_result

SHARED_SAMPLE = (
    Path(__file__).resolve().parents[2].parent / "shared" / "datasets" / "memaudit-sample.json"
)
MEMAUDIT_DIR = os.environ.get("MEMGAUGE_MEMAUDIT_DIR")

# memaudit's src/types.ts
RESULT_KEYS = ["datasetId", "timestamp", "metrics", "probeResults"]
METRIC_KEYS = [
    "recallAccuracy",
    "hallucinatedMemoryRate",
    "conflictResolutionAccuracy",
    "temporalAccuracy",
]
PROBE_KEYS = ["probeId", "type", "question", "expectedAnswer", "actualAnswer", "isCorrect"]
PROBE_TYPES = {"recall", "hallucination", "conflict", "temporal"}
JS_TIME = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")  # Date.toISOString()


def _memaudit_files() -> list[Path]:
    """Every memaudit data file at hand: ours, memaudit's sample, and with
    MEMGAUGE_MEMAUDIT_DIR its data/ (data/real/ included) and test fixtures."""
    files = [DATA / name for name in DATASETS]
    if SHARED_SAMPLE.is_file():
        files.append(SHARED_SAMPLE)
    if MEMAUDIT_DIR:
        root = Path(MEMAUDIT_DIR)
        files += sorted(root.glob("data/**/*.json")) + sorted(root.glob("tests/fixtures/*.json"))
        files = [f for f in files if f.name != "PROVENANCE.json"]
    return files


def _audit(args: Sequence[str], out: Path) -> int:
    return main(["audit", *args, "--output", str(out), "--no-store", "--no-progress"])


@pytest.mark.parametrize("path", _memaudit_files(), ids=lambda p: p.name)
def test_memaudits_data_files_validate_and_audit_offline(
    path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("MEMGAUGE_MODEL", "MEMAUDIT_MODEL", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    assert main(["validate", str(path)]) == 0
    assert capsys.readouterr().out.startswith(f"ok  {path}  (conversations: ")
    assert _audit([str(path), "--scoring", "offline"], tmp_path / "out") == 0, capsys.readouterr()
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    assert (results["format"], results["status"]) == ("memaudit", "completed")
    assert results["probes"]
    assert all(p["correct"] is not None for p in results["probes"])
    _check_structure(json.loads((tmp_path / "out" / "memaudit.json").read_text()), results)


@pytest.fixture
def fake_model(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeOpenAIServer]:
    """The model both tools are audited against (tests/official/memaudit_model.py)."""
    with FakeOpenAIServer() as server:
        server.respond(rule)
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "fake-key")
        monkeypatch.setenv("MEMAUDIT_MODEL", "fake-model")
        monkeypatch.delenv("MEMGAUGE_MODEL", raising=False)
        yield server


def _memgauge_on(name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """memgauge's memaudit.json for tests/data/memaudit/NAME, audited as memaudit audits: a
    chat model shown the whole history, its answers matched by the same model."""
    monkeypatch.chdir(DATA)  # given by its name, as memaudit was (a JSONL file's id is its path)
    out = tmp_path / "memgauge"
    assert _audit([name, "--agent", "chat", "--scoring", "judge", "--format", "all"], out) == 0
    doc: dict[str, Any] = json.loads((out / "memaudit.json").read_text())
    _check_structure(doc, json.loads((out / "results.json").read_text()))
    return doc


def _computed_metrics(probes: Sequence[Mapping[str, Any]]) -> dict[str, float | None]:
    """memaudit's src/core/scorer.ts `computeMetrics`, transcribed; a type without probes is
    None here where memaudit writes 0."""

    def rate(ptype: str, *, wrong: bool = False) -> float | None:
        rows = [p for p in probes if p["type"] == ptype]
        if not rows:
            return None
        return sum(1 for p in rows if p["isCorrect"] != wrong) / len(rows)

    return {
        "recallAccuracy": rate("recall"),
        "hallucinatedMemoryRate": rate("hallucination", wrong=True),
        "conflictResolutionAccuracy": rate("conflict"),
        "temporalAccuracy": rate("temporal"),
    }


def _check_structure(doc: Mapping[str, Any], results: Mapping[str, Any] | None = None) -> None:
    """`doc` is a memaudit AuditResult: its keys in memaudit's order and with its types."""
    assert list(doc) == RESULT_KEYS
    assert isinstance(doc["datasetId"], str)
    assert JS_TIME.match(doc["timestamp"]), doc["timestamp"]
    assert list(doc["metrics"]) == METRIC_KEYS
    for probe in doc["probeResults"]:
        assert list(probe) == PROBE_KEYS
        assert probe["type"] in PROBE_TYPES
        assert all(isinstance(probe[k], str) for k in PROBE_KEYS[:-1])
        assert isinstance(probe["isCorrect"], bool)
    computed = _computed_metrics(doc["probeResults"])
    if results is None:  # memaudit's own file: its formulas, 0 for a type without probes
        assert doc["metrics"] == {
            k: 0 if v is None else pytest.approx(v) for k, v in computed.items()
        }
    else:  # memgauge's: the same probes and verdicts as results.json
        assert [p["probeId"] for p in doc["probeResults"]] == [p["id"] for p in results["probes"]]
        assert [p["isCorrect"] for p in doc["probeResults"]] == [
            p["correct"] for p in results["probes"]
        ]
        assert doc["metrics"] == computed  # None for a type without probes


@pytest.mark.parametrize("name", DATASETS)
def test_memaudits_own_results_pass_the_structure_check(name: str) -> None:
    """The check above holds for memaudit's own output (so it checks memaudit's structure)."""
    _check_structure(json.loads((DATA / "results" / f"{Path(name).stem}.results.json").read_text()))


def _same_structure(ours: Mapping[str, Any], theirs: Mapping[str, Any]) -> None:
    """Field by field: the same keys in the same order, the same types, the same dataset id."""
    assert list(ours) == list(theirs) == RESULT_KEYS
    assert ours["datasetId"] == theirs["datasetId"]
    assert list(ours["metrics"]) == list(theirs["metrics"])
    for key, value in ours["metrics"].items():
        # a type memgauge made no probe of is null where memaudit's rate of nothing is 0
        assert isinstance(value, float | int) or (
            value is None and theirs["metrics"][key] in (0, None)
        )
    for probe in [*ours["probeResults"], *theirs["probeResults"]]:
        assert list(probe) == PROBE_KEYS
    ours_types = {p["type"] for p in ours["probeResults"]}
    assert ours_types <= PROBE_TYPES
    assert {p["type"] for p in theirs["probeResults"]} <= PROBE_TYPES
    # probe generation differs by design (README): both ask recall and hallucination probes
    assert {"recall", "hallucination"} <= ours_types


@pytest.mark.parametrize("name", DATASETS)
def test_memaudit_json_has_the_structure_of_memaudits_results(
    name: str, fake_model: FakeOpenAIServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    theirs = json.loads((DATA / "results" / f"{Path(name).stem}.results.json").read_text())
    ours = _memgauge_on(name, tmp_path, monkeypatch)
    _same_structure(ours, theirs)
    assert {r["json"]["model"] for r in fake_model.requests} == {"fake-model"}


def test_probes_that_failed_are_listed_apart_not_scored() -> None:
    """memaudit stops at a failed call; memgauge records it, outside `probeResults`."""
    probe = {"type": "recall", "question": "Where?", "expected": ["Brno", "Ostrava"]}
    doc = memaudit_result(
        {
            "dataset": "d",
            "dataset_path": "d.json",
            "format": "memaudit",
            "timestamp": "2025-03-01T10:20:30+00:00",
            "metrics": {"recall_accuracy": 1.0},
            "probes": [
                {**probe, "id": "r1", "answer": "Brno", "correct": True},
                {**probe, "id": "r2", "answer": None, "correct": None, "reason": "HTTP 500"},
            ],
        }
    )
    assert doc["timestamp"] == "2025-03-01T10:20:30.000Z"
    assert doc["probeResults"] == [
        {
            "probeId": "r1",
            "type": "recall",
            "question": "Where?",
            "expectedAnswer": "Brno | Ostrava",
            "actualAnswer": "Brno",
            "isCorrect": True,
        }
    ]
    assert doc["failedProbes"] == [
        {
            "probeId": "r2",
            "type": "recall",
            "question": "Where?",
            "expectedAnswer": "Brno | Ostrava",
            "error": "HTTP 500",
        }
    ]
    assert doc["metrics"]["temporalAccuracy"] is None


@pytest.mark.skipif(
    not MEMAUDIT_DIR or shutil.which("node") is None,
    reason="MEMGAUGE_MEMAUDIT_DIR (a built zhy0216/memaudit checkout) and node are needed",
)
@pytest.mark.parametrize("name", DATASETS)
def test_memaudit_run_now_and_memgauge_agree_in_structure(
    name: str, fake_model: FakeOpenAIServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cli = Path(str(MEMAUDIT_DIR)) / "dist" / "cli.js"
    theirs = json.loads(
        run_memaudit(cli, DATA / name, tmp_path / "memaudit", fake_model.base_url).read_text()
    )
    _check_structure(theirs)
    kept = json.loads((DATA / "results" / f"{Path(name).stem}.results.json").read_text())
    # the kept file is what memaudit writes today (the model and data are deterministic)
    assert {k: v for k, v in theirs.items() if k != "timestamp"} == {
        k: v for k, v in kept.items() if k != "timestamp"
    }
    _same_structure(_memgauge_on(name, tmp_path, monkeypatch), theirs)
