"""`memgauge ab` decision rules (issue 19): the Beta-Binomial P(T > C) > 0.95 for binary
metrics, checked against a Monte Carlo estimate, and no graduation with a guardrail unmeasured
unless the test was created with --allow-unmeasured."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from memgauge.cli.main import main
from memgauge.stats.sequential import beta_binomial_decision


def _write(path: Path, rows: list[dict[str, Any]]) -> str:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return str(path)


def _binary(n: int, p_c: float, p_t: float, seed: int, **extra: Any) -> list[dict[str, Any]]:
    rng = np.random.default_rng(seed)
    return [
        {
            "query_id": f"q{i}",
            "control": int(rng.random() < p_c),
            "treatment": int(rng.random() < p_t),
            **extra,
        }
        for i in range(n)
    ]


def _status(capsys: pytest.CaptureFixture[str], db: str, name: str) -> dict[str, Any]:
    capsys.readouterr()
    assert main(["ab", "status", name, "--store", db, "--json"]) == 0
    (report,) = json.loads(capsys.readouterr().out)
    return dict(report)


GUARDS = {"control_latency_ms": 10.0, "treatment_latency_ms": 10.0, "constitutional_delta": 0.0}


def _monte_carlo(c: int, t: int, n: int, draws: int = 400_000) -> float:
    rng = np.random.default_rng(1)
    return float((rng.beta(t + 1, n - t + 1, draws) > rng.beta(c + 1, n - c + 1, draws)).mean())


def test_the_beta_binomial_rule_graduates_a_better_binary_treatment(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = str(tmp_path / "r.db")
    create = ["ab", "create", "hit", "--delta", "0.05", "--metric", "hit@1", "--min-samples"]
    assert main([*create, "60", "--rule", "beta-binomial", "--store", db]) == 0
    rows = _binary(120, 0.4, 0.7, seed=3, **GUARDS)
    assert main(["ab", "add", "hit", _write(tmp_path / "p.jsonl", rows), "--store", db]) == 0
    report = _status(capsys, db, "hit")
    c = sum(r["control"] for r in rows)
    t = sum(r["treatment"] for r in rows)
    assert report["p_treatment_better"] == pytest.approx(_monte_carlo(c, t, 120), abs=0.004)
    assert report["p_treatment_better"] > 0.95
    assert (report["rule"], report["rule_decision"]) == ("beta-binomial", "treatment_better")
    assert (report["decision"], report["status"]) == ("graduate", "graduated")


def test_the_beta_binomial_rule_rejects_a_worse_treatment_and_waits_when_unsure() -> None:
    for c, t, n in [(70, 40, 120), (50, 52, 120), (3, 9, 10)]:
        decision, p = beta_binomial_decision(c, t, n, threshold=0.95, min_samples=30)
        assert p == pytest.approx(_monte_carlo(c, t, n), abs=0.004)
        want = "continue" if n < 30 else {True: "no_difference", False: "continue"}[p < 0.05]
        assert decision == want
    assert beta_binomial_decision(0, 0, 0) == ("continue", None)
    with pytest.raises(ValueError, match="threshold"):
        beta_binomial_decision(1, 2, 3, threshold=0.4)


def test_the_beta_binomial_rule_refuses_non_binary_pairs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = str(tmp_path / "r.db")
    assert (
        main(["ab", "create", "b", "--delta", "0.1", "--rule", "beta-binomial", "--store", db]) == 0
    )
    pairs = _write(tmp_path / "p.jsonl", [{"query_id": "q7", "control": 1, "treatment": 0.5}])
    capsys.readouterr()
    assert main(["ab", "add", "b", pairs, "--store", db]) == 2
    err = capsys.readouterr().err
    assert "Beta-Binomial" in err
    assert "q7" in err
    assert _status(capsys, db, "b")["n_pairs"] == 0  # nothing written
    assert main(["ab", "create", "c", "--delta", "0.1", "--rule", "bayes", "--store", db]) == 2


@pytest.mark.parametrize("override", [False, True])
def test_no_graduation_with_a_guardrail_unmeasured_unless_overridden(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], override: bool
) -> None:
    db = str(tmp_path / "r.db")
    extra = ["--allow-unmeasured"] if override else []
    assert main(["ab", "create", "g", "--delta", "0.03", *extra, "--store", db]) == 0
    rng = np.random.default_rng(0)
    rows = [  # clearly better, latency measured, constitutional surfacing never measured
        {
            "query_id": f"q{i}",
            "control": float(c),
            "treatment": float(c + 0.08 + rng.normal(0, 0.05)),
            "control_latency_ms": 10.0,
            "treatment_latency_ms": 10.0,
        }
        for i, c in enumerate(rng.uniform(0.3, 0.7, 200))
    ]
    assert main(["ab", "add", "g", _write(tmp_path / "p.jsonl", rows), "--store", db]) == 0
    report = _status(capsys, db, "g")
    assert report["sprt"]["decision"] == "treatment_better"
    if override:
        assert (report["decision"], report["status"]) == ("graduate", "graduated")
        assert "constitutional surfacing not measured" in report["reasons"]
    else:
        assert (report["decision"], report["status"]) == ("unmeasured", "running")
        assert report["reasons"][0] == (
            "not graduated: unmeasured (constitutional surfacing not measured)"
        )
        assert report["graduated_at"] is None
