"""Rolling baselines and regression gates: the decision logic, and `memgauge gate` /
`memgauge history` on real runs in a real store."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from memgauge.cli.main import main
from memgauge.data.records import EvaluatorSummary, RunRecord, RunSummary
from memgauge.track.gate import GateConfig, evaluate_gate, sparkline
from memgauge.track.history import metric_series

SUBJECTS = Path(__file__).resolve().parents[1] / "data" / "subjects"


def _run(
    run_id: str,
    mean: float | None,
    ci: tuple[float, float] | None = None,
    evaluator: str = "icontains",
) -> RunRecord:
    row = EvaluatorSummary(
        subject="agent",
        task="qa",
        evaluator=evaluator,
        mean=mean,
        ci_low=ci[0] if ci else None,
        ci_high=ci[1] if ci else None,
        n_scored=10,
        n_failed=0,
    )
    return RunRecord(
        run_id=run_id,
        suite_name="s",
        suite_sha256="x",
        suite={},
        summary=RunSummary(evaluators=[row]),
    )


def test_phases_go_from_bootstrap_to_production() -> None:
    bad = _run("now", 0.5, (0.4, 0.6), evaluator="custom")
    hist = [_run(f"r{i}", 0.9, (0.85, 0.95), evaluator="custom") for i in range(12)]
    cfg = GateConfig()
    assert evaluate_gate(bad, hist[:2], cfg).status == "pass"  # bootstrap: baseline forming
    assert evaluate_gate(bad, hist[:2], cfg).phase == "bootstrap"
    assert evaluate_gate(bad, hist[:5], cfg).status == "warn"  # stabilization
    result = evaluate_gate(bad, hist, cfg)
    assert (result.phase, result.status) == ("production", "fail")
    (check,) = result.checks
    assert check.baseline == pytest.approx(0.9)
    assert len(check.history) == 5  # the rolling window
    assert check.drop == pytest.approx((0.9 - 0.5) / 0.9)
    assert check.regressed is True


def test_a_drop_inside_the_runs_own_ci_is_noise_not_a_regression() -> None:
    hist = [_run(f"r{i}", 0.9) for i in range(10)]
    wide = _run("now", 0.7, (0.45, 0.95))
    (check,) = evaluate_gate(wide, hist, GateConfig(phase="production")).checks
    assert check.drop == pytest.approx(0.2 / 0.9)
    assert (check.regressed, check.within_ci) == (False, True)
    assert "inside this run's 95% CI" in check.note
    no_ci = _run("now", 0.7)  # too few items for an interval
    (check,) = evaluate_gate(no_ci, hist, GateConfig(phase="production")).checks
    assert check.regressed is True
    assert "no CI" in check.note
    assert "threshold alone" in check.note


def test_history_series_have_a_gap_where_a_run_did_not_measure_and_the_gates_baseline() -> None:
    runs = [
        _run("r0", 0.6),
        _run("r1", 0.8, evaluator="contains"),
        _run("r2", None),
        _run("r3", 0.9),
        _run("r4", 0.5),
    ]
    icontains, contains = metric_series(runs)
    assert (icontains.subject, icontains.task, icontains.measure) == ("agent", "qa", "icontains")
    assert icontains.values == [0.6, None, None, 0.9, 0.5]
    assert contains.values == [None, 0.8, None, None, None]
    # the last two runs before the latest: r2 scored n/a, so r3 alone
    assert icontains.baseline(2) == pytest.approx(0.9)
    assert icontains.baseline(5) == pytest.approx(0.75)
    # the gate's own baseline over the same window agrees
    (check,) = evaluate_gate(runs[-1], runs[:-1], GateConfig(window=2)).checks
    assert check.baseline == pytest.approx(icontains.baseline(2))
    assert contains.baseline(5) == pytest.approx(0.8)
    assert metric_series([_run("only", 0.7)])[0].baseline(5) is None


def test_thresholds_per_tier_and_per_evaluator() -> None:
    cfg = GateConfig(overrides={"no-leak": 0.5})
    assert cfg.threshold_for("icontains", "icontains") == 0.10
    assert cfg.threshold_for("qa-judge", "qa-judge") == 0.20
    assert cfg.threshold_for("token_f1", "token_f1") == 0.15
    assert cfg.threshold_for("no-leak", "contains") == 0.5
    hist = [_run(f"r{i}", 1.0, evaluator="icontains") for i in range(10)]
    # 12% drop: a regression for an exact-match evaluator (10%), not for a judge (20%)
    exact = evaluate_gate(
        _run("now", 0.88, (0.85, 0.9)), hist, cfg, {("qa", "icontains"): "icontains"}
    )
    assert exact.checks[0].regressed
    judge_hist = [_run(f"r{i}", 1.0, evaluator="qa-judge") for i in range(10)]
    judged = evaluate_gate(
        _run("now", 0.88, (0.85, 0.9), evaluator="qa-judge"),
        judge_hist,
        cfg,
        {("qa", "qa-judge"): "qa-judge"},
    )
    assert not judged.checks[0].regressed


def test_no_score_is_na_not_a_regression() -> None:
    result = evaluate_gate(_run("now", None), [_run("r", 1.0)] * 10, GateConfig(phase="production"))
    assert result.status == "pass"
    assert result.checks[0].note == "no score in this run (n/a)"


def test_sparkline() -> None:
    assert sparkline([0.0, 0.5, 1.0]) == "▁▅█"
    assert sparkline([0.3, None, 0.3]) == "▁ ▁"
    assert sparkline([]) == ""


def _suite(tmp_path: Path, good: bool) -> Path:
    items = [{"id": f"q{i}", "input": f"What is code {i}?", "expected": f"C{i}"} for i in range(12)]
    answers = {f"code {i}?": f"C{i}" if good or i % 2 else "no idea" for i in range(12)}
    spec = {
        "name": "gated",
        "max_failure_rate": 0.5,
        "subjects": {
            "agent": {"python": {"target": "agents:LookupAgent", "kwargs": {"answers": answers}}}
        },
        "tasks": [
            {"name": "qa", "kind": "expected-output", "items": items, "evaluators": ["icontains"]}
        ],
    }
    path = tmp_path / "suite.yaml"
    path.write_text(yaml.safe_dump(spec))
    return path


def test_gate_and_history_on_real_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.syspath_prepend(str(SUBJECTS))
    db = str(tmp_path / "r.db")
    for _ in range(5):
        assert main(["run", str(_suite(tmp_path, good=True)), "--store", db]) == 0
    capsys.readouterr()
    assert main(["gate", str(tmp_path / "suite.yaml"), "--store", db, "--json"]) == 0
    steady = json.loads(capsys.readouterr().out)
    assert steady["status"] == "pass"
    assert steady["metrics"][0]["drop"] == 0.0
    assert main(["run", str(_suite(tmp_path, good=False)), "--store", db]) == 0
    capsys.readouterr()
    md = tmp_path / "gate.md"
    learned = str(tmp_path / "learnings.db")
    code = main(
        [
            "gate",
            str(tmp_path / "suite.yaml"),
            "--store",
            db,
            "--phase",
            "production",
            "--json",
            "--markdown",
            str(md),
            "--learnings",
            learned,
        ]
    )
    out = json.loads(capsys.readouterr().out)
    assert code == 1
    assert (out["status"], out["phase"]) == ("fail", "production")
    (metric,) = out["metrics"]
    assert metric["baseline"] == 1.0
    assert metric["current"] == pytest.approx(0.5)
    assert metric["threshold"] == 0.10  # icontains is an exact-match evaluator
    assert metric["regressed"] is True
    assert "❌ memgauge gate: fail" in md.read_text()
    # auto phase with 5 earlier runs: stabilization, a warning, exit 0
    assert main(["gate", str(tmp_path / "suite.yaml"), "--store", db, "--learnings", learned]) == 0
    assert "⚠️ memgauge gate: warn (stabilization phase)" in capsys.readouterr().out
    # eval-to-learning: the regression is a memory now (stored once, however often gated)
    assert main(["learnings", "query", "code icontains regression", "--learnings", learned]) == 0
    recalled = capsys.readouterr().out
    assert 'Eval "gated/qa/icontains" regression detected' in recalled
    assert recalled.count("regression detected") == 1
    assert "Failing examples:" in recalled
    examples = recalled.split("Failing examples:")[1].strip().splitlines()[:3]
    assert len(examples) == 3
    assert all("got 'no idea'" in line for line in examples)  # only items it failed
    # the same regression kept in a memory of the user's choosing, with the seed's metadata
    team = tmp_path / "team.yaml"
    team.write_text(
        yaml.safe_dump(
            {"reference": {"mode": "lexical", "path": str(tmp_path / "team.db"), "namespace": "t"}}
        )
    )
    suite = str(tmp_path / "suite.yaml")
    assert main(["gate", suite, "--store", db, "--learn-into", str(team)]) == 0
    capsys.readouterr()
    assert main(["learnings", "query", "icontains regression", "--learn-into", str(team)]) == 0
    assert 'Eval "gated/qa/icontains" regression detected' in capsys.readouterr().out
    from memgauge.subjects.specs import build_subject

    memory = build_subject(yaml.safe_load(team.read_text()))
    (stored,) = memory.dump()
    memory.close()
    meta = stored.metadata
    assert meta["tags"] == ["eval-failure", "gated/qa/icontains", "regression"]
    assert (meta["baseline_score"], meta["current_score"]) == (1.0, pytest.approx(0.5))
    assert meta["drop_percentage"] == pytest.approx(0.5)
    assert meta["timestamp"].startswith("20")
    assert main(["history", "gated", "--store", db]) == 0
    shown = capsys.readouterr().out
    assert "█████▁" in shown
    assert "6 completed runs" in shown


def test_gate_needs_a_completed_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "r.db"
    assert main(["gate", "nope", "--store", str(db)]) == 2
    assert "no results store at" in capsys.readouterr().err
    assert not db.exists()  # a command that only reads creates nothing
    assert main(["runs", "list", "--store", str(db)]) == 0  # (listing creates the store)
    assert main(["gate", "nope", "--store", str(db)]) == 2
    assert "no run 'nope'" in capsys.readouterr().err
    not_sqlite = tmp_path / "notes.txt"
    not_sqlite.write_text("these are notes, not a database\n" * 100)
    assert main(["gate", "nope", "--store", str(not_sqlite)]) == 2
    err = capsys.readouterr().err
    assert "notes.txt: not a SQLite database" in err
    assert "Traceback" not in err
    learned = tmp_path / "learnings.db"
    assert main(["learnings", "query", "anything", "--learnings", str(learned)]) == 0
    assert "no failure has been stored" in capsys.readouterr().out
    assert not learned.exists()


@pytest.mark.parametrize("value", ["rubric=2", "rubric=0", "rubric=x", "=0.2"])
def test_bad_threshold_overrides_exit_2(
    value: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "r.db"
    assert main(["runs", "list", "--store", str(db)]) == 0
    assert main(["gate", "any", "--store", str(db), "--threshold-for", value]) == 2
    assert "--threshold-for" in capsys.readouterr().err
