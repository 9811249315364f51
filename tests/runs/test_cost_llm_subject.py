"""An LLM-backed subject's own tokens and cost per query (`llm.tally` around each item's
subject call, read by the cost aggregate), against the fake OpenAI-compatible server."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from memgauge import api
from memgauge.llm import context

ITEMS = [{"id": f"i{n}", "input": f"say hello number {n}", "expected": "OK"} for n in range(3)]


def _suite() -> dict[str, Any]:
    return {
        "name": "llm-cost",
        "subjects": {"agent": {"chat": {"model": "fake"}}},
        "tasks": [
            {
                "name": "chat",
                "kind": "expected-output",
                "items": ITEMS,
                "evaluators": ["contains"],
                "aggregates": ["cost"],
            }
        ],
    }


def test_the_subjects_own_llm_tokens_per_query_add_up_to_the_runs_spend(
    llm_server: Any, run_suite_json: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    prices = tmp_path / "prices.yaml"
    prices.write_text("fake: {input: 2.0, output: 10.0}\n")
    monkeypatch.setenv("MEMGAUGE_PRICES", str(prices))
    context.reset()  # a fresh meter reads the price table, as a new process would
    code, out = run_suite_json(_suite())
    assert code == 0
    run = api.read_run(out["run_id"], store=tmp_path / "r.db")
    assert run.summary is not None
    spent = run.summary.llm_usage["fake"]  # the whole run's meter: the subject's calls only
    got = {m.name: m for m in run.summary.measures() if m.task == "chat"}
    total = spent["prompt_tokens"] + spent["completion_tokens"]
    assert total > 0
    assert got["llm_tokens.mean"].value == pytest.approx(total / 3)
    assert got["llm_tokens.mean"].n_scored == 3
    dollars = (spent["prompt_tokens"] * 2.0 + spent["completion_tokens"] * 10.0) / 1e6
    assert spent["cost_usd"] == pytest.approx(dollars)
    assert got["llm_cost_usd.mean"].value == pytest.approx(dollars / 3)
    # an agent's answer is no context: no context-token measures for this task
    assert "context_tokens.mean" not in got
    assert got["latency_ms.p50"].value is not None


def test_an_unpriced_model_has_no_cost_and_says_why(
    llm_server: Any, run_suite_json: Any, tmp_path: Path
) -> None:
    code, out = run_suite_json(_suite())
    assert code == 0
    run = api.read_run(out["run_id"], store=tmp_path / "r.db")
    assert run.summary is not None
    got = {m.name: m for m in run.summary.measures() if m.task == "chat"}
    assert got["llm_tokens.mean"].value is not None
    cost = got["llm_cost_usd.mean"]
    assert cost.value is None
    assert cost.note == "no price for fake: give a price table (MEMGAUGE_PRICES)"
