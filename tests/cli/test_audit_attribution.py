"""`memgauge audit --attribute`: each wrong answer of a LoCoMo audit attributed to its cause
from the probes' evidence turns, for a memory-backed agent (a reader model over its memory's
top hits, the fake server answering) and for the offline extractive baseline."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from memgauge.cli.main import main
from memgauge.llm import FakeOpenAIServer

LOCOMO = Path(__file__).resolve().parents[2].parent / "shared" / "datasets" / "locomo10.json"
CAUSES = {"retrieval_miss", "budget_cut", "reader_error", "stale", "unattributable"}


@pytest.fixture
def reader(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeOpenAIServer]:
    """A reader model that always answers the same wrong thing."""
    with FakeOpenAIServer() as srv:
        srv.respond(lambda _payload: "They went to the beach.")
        monkeypatch.setenv("OPENAI_BASE_URL", srv.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "k")
        monkeypatch.setenv("MEMAUDIT_MODEL", "fake-agent")
        monkeypatch.delenv("MEMGAUGE_MODEL", raising=False)
        yield srv


def _audit(tmp_path: Path, capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, Any]:
    if not LOCOMO.exists():
        pytest.skip("../shared/datasets/locomo10.json is not here")
    out = tmp_path / "out"
    code = main(
        [
            "audit",
            str(LOCOMO),
            "--limit",
            "12",
            "--scoring",
            "offline",
            *args,
            "--output",
            str(out),
            "--store",
            str(tmp_path / "r.db"),
            "--no-progress",
        ]
    )
    printed = capsys.readouterr().out
    assert code == 0, printed
    assert "Wrong answers by cause" in printed
    results: dict[str, Any] = json.loads((out / "results.json").read_text())
    assert "Wrong answers by cause" in (out / "report.md").read_text()
    return results


def test_a_memory_agents_wrong_answers_by_cause(
    reader: FakeOpenAIServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    results = _audit(tmp_path, capsys, "--subject", "lexical", "-k", "2", "--attribute")
    attribution = results["attribution"]
    wrong = attribution["items"]
    n_wrong = sum(1 for p in results["probes"] if p["correct"] is False)
    assert attribution["n_wrong"] == len(wrong) == n_wrong > 0
    assert sum(c["count"] for c in attribution["counts"].values()) == n_wrong
    assert set(attribution["counts"]) == CAUSES
    # every probe with evidence is attributed by it; the answer is never right, so every
    # evidence turn found in the top 2 is a reader error, every other one a miss
    causes = {w["cause"] for w in wrong}
    assert causes <= {"retrieval_miss", "reader_error", "unattributable"}
    assert "retrieval_miss" in causes
    for w in wrong:
        if w["cause"] == "retrieval_miss":
            rank = w["rank"]
            if isinstance(rank, int):
                assert rank > 2  # beyond the k the agent read
                assert w["text"].endswith(f"at rank {rank}")
            else:
                assert rank in ("absent", "unranked", ">50")
    # a turn the lexical search ranks 37th, and one stored below the 50 searched
    by_id = {w["id"]: w for w in wrong}
    assert by_id["conv-26:q1"]["rank"] == 37
    assert by_id["conv-26:q4"]["rank"] == ">50"
    assert by_id["conv-26:q4"]["text"] == (
        "evidence conv-26:D1:5 not in the top 50 (stored: conv-26:D1:5)"
    )


def test_a_context_budget_cuts_what_the_agent_retrieved(
    reader: FakeOpenAIServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A 1-token budget keeps no hit: every evidence turn retrieved is a budget cut."""
    results = _audit(
        tmp_path, capsys, "--subject", "lexical", "-k", "5", "--attribute", "--context-budget", "1"
    )
    causes = {w["cause"] for w in results["attribution"]["items"]}
    assert "budget_cut" in causes
    assert "reader_error" not in causes


def test_the_offline_baseline_says_which_turn_it_answered_from(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    results = _audit(tmp_path, capsys, "--attribute")
    wrong = results["attribution"]["items"]
    assert wrong
    # it searches nothing deeper: a miss has no rank, and says so (it answered from one turn,
    # or declined and answered from none)
    misses = [w for w in wrong if w["cause"] == "retrieval_miss"]
    assert misses
    for w in misses:
        assert "rank" not in w
        assert w["text"].endswith(
            (
                "not in the top 1 (not searched deeper)",
                "not retrieved (no hit) (not searched deeper)",
            )
        )
    assert all(
        w["text"] != "the subject did not say which memories it answered from" for w in wrong
    )


def test_context_budget_without_attribute_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(
        [
            "audit",
            str(LOCOMO),
            "--context-budget",
            "10",
            "--output",
            str(tmp_path / "o"),
            "--store",
            str(tmp_path / "r.db"),
        ]
    )
    assert code == 2
    assert "--context-budget is read with --attribute" in capsys.readouterr().err
    assert not (tmp_path / "r.db").exists()
