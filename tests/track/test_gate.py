"""Rolling baselines and regression gates: the decision logic, and `memgauge gate` /
`memgauge history` on real runs in a real store."""

from __future__ import annotations

import json
import re
import sqlite3
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml
from tests.helpers import gated_suite, write_recall_suite

from memgauge import api
from memgauge.cli.main import main
from memgauge.data.records import EvaluatorSummary, RunRecord, RunSummary
from memgauge.errors import UsageError
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


def test_the_seeds_rule_decides_from_the_first_earlier_run() -> None:
    bad = _run("now", 0.5, (0.4, 0.6), evaluator="custom")
    hist = [_run(f"r{i}", 0.9, (0.85, 0.95), evaluator="custom") for i in range(12)]
    first = evaluate_gate(bad, [], GateConfig())
    assert first.status == "pass"
    assert first.checks[0].note == "no earlier run has it: no baseline yet"
    one = evaluate_gate(bad, hist[:1], GateConfig())  # one earlier run is enough
    assert one.status == "fail"
    assert one.checks[0].baseline == pytest.approx(0.9)
    result = evaluate_gate(bad, hist, GateConfig())
    assert result.status == "fail"
    (check,) = result.checks
    assert len(check.history) == 5  # the rolling window
    assert result.baseline_runs == [f"r{i}" for i in range(7, 12)]
    assert check.drop == pytest.approx((0.9 - 0.5) / 0.9)
    assert check.regressed is True


@pytest.mark.parametrize(("current", "fails"), [(0.82, True), (0.57, True), (0.9, False)])
def test_drops_the_old_rule_called_noise_now_fail(current: float, fails: bool) -> None:
    # -18% and -43% passed as "inside the run's CI"; the seed's rule (15%) fails both
    hist = [_run(f"r{i}", 1.0, (0.9, 1.0), evaluator="custom") for i in range(4)]
    now = _run("now", current, (current - 0.3, min(1.0, current + 0.3)), evaluator="custom")
    assert evaluate_gate(now, hist, GateConfig()).status == ("fail" if fails else "pass")


def test_the_ci_aware_view_informs_and_decides_behind_by_ci_upper() -> None:
    hist = [_run(f"r{i}", 0.9) for i in range(10)]
    wide = _run("now", 0.7, (0.45, 0.95))
    (check,) = evaluate_gate(wide, hist, GateConfig(threshold=0.15)).checks
    assert check.drop == pytest.approx(0.2 / 0.9)
    assert (check.regressed, check.within_ci) == (True, True)
    assert "inside this run's 95% CI" in check.note
    assert "--by ci-upper would pass it" in check.note
    by_ci = evaluate_gate(wide, hist, GateConfig(by="ci-upper"))
    assert by_ci.status == "pass"
    assert "noise by --by ci-upper" in by_ci.checks[0].note
    # the whole interval below the baseline by the threshold: a regression by either rule
    narrow = evaluate_gate(_run("now", 0.5, (0.45, 0.6)), hist, GateConfig(by="ci-upper"))
    assert narrow.status == "fail"
    assert "upper bound 0.600 is 33.3% worse" in narrow.checks[0].note
    no_ci = _run("now", 0.7)  # too few items for an interval
    (check,) = evaluate_gate(no_ci, hist, GateConfig(by="ci-upper")).checks
    assert check.regressed is True
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


def test_failed_gates_are_left_out_of_the_baseline() -> None:
    hist = [_run("a", 0.9), _run("b", 0.9), _run("c", 0.9), _run("d", 0.2)]
    now = _run("now", 0.9)
    kept = evaluate_gate(now, hist, GateConfig(), excluded={"d"})
    assert kept.checks[0].baseline == pytest.approx(0.9)
    assert (kept.baseline_runs, kept.excluded) == (["a", "b", "c"], ["d"])
    # accepted (no longer excluded), the regressed run counts again
    counted = evaluate_gate(now, hist, GateConfig())
    assert counted.checks[0].baseline == pytest.approx((0.9 * 3 + 0.2) / 4)
    # the window counts the runs that are kept: five of them, reaching back past the excluded
    long = [_run(f"r{i}", 0.5 + i / 10) for i in range(5)] + [_run("bad", 0.1)]
    result = evaluate_gate(now, long, GateConfig(), excluded={"bad"})
    assert result.baseline_runs == [f"r{i}" for i in range(5)]


def test_power_warning_when_the_suite_is_too_small() -> None:
    from scipy import stats

    hist = [_run(f"r{i}", 0.8) for i in range(5)]
    # 10 items, sd 0.3 (CI half-width 1.96 * 0.3 / sqrt(10)): a 15% drop is 0.12
    half = 1.959963984540054 * 0.3 / 10**0.5
    small = evaluate_gate(_run("now", 0.8, (0.8 - half, 0.8 + half)), hist, GateConfig())
    (check,) = small.checks
    assert small.status == "pass"
    # the power, checked by simulation: t-tests on 10 draws shifted by 0.12, sd 0.3
    rng = np.random.default_rng(7)
    draws = rng.normal(0.12, 0.3, size=(40_000, 10))
    t = draws.mean(axis=1) / (draws.std(axis=1, ddof=1) / 10**0.5)
    simulated = float(np.mean(np.abs(t) > stats.t.ppf(0.975, 9)))
    assert check.power == pytest.approx(simulated, abs=0.01)
    assert check.power < 0.8
    (warning,) = small.warnings
    assert warning.startswith("agent/qa/icontains: 10 items give")
    assert "15% drop (0.120)" in warning
    assert "about 52 items would give 80%" in warning
    # 400 items with the same spread detect it: no warning
    half = 1.959963984540054 * 0.3 / 400**0.5
    big = _run("now", 0.8, (0.8 - half, 0.8 + half))
    big.summary.evaluators[0].n_scored = 400  # type: ignore[union-attr]
    assert evaluate_gate(big, hist, GateConfig()).warnings == []
    one = _run("now", 0.8)
    one.summary.evaluators[0].n_scored = 1  # type: ignore[union-attr]
    (warning,) = evaluate_gate(one, hist, GateConfig()).warnings
    assert "1 item(s), no spread" in warning


def test_a_drop_too_small_for_any_suite_is_a_warning_not_an_internal_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`gate --exact-threshold 0.00001` (any drop at all) was exit 70: the power warning asked
    for the sample size detecting that drop, which no test of up to 2**31-1 items reaches, and
    sample_size_paired's ValueError went up uncaught. It says so, as a warning."""
    monkeypatch.syspath_prepend(str(SUBJECTS))
    db = str(tmp_path / "r.db")
    for _ in range(2):
        assert main(["run", str(gated_suite(tmp_path, 4, n=10)), "--store", db]) == 0
    suite = str(tmp_path / "suite.yaml")
    args = ("--store", db, "--no-learn", "--exact-threshold", "0.00001")
    code, out = _gate(capsys, suite, *args)
    assert (code, out["status"]) == (0, "pass")
    (warning,) = out["warnings"]
    assert "more than 2,147,483,647 items would give 80%" in warning


def test_thresholds_per_tier_and_per_evaluator() -> None:
    cfg = GateConfig(overrides={"no-leak": 0.5})
    assert cfg.threshold_for("icontains", "icontains") == 0.10
    assert cfg.threshold_for("qa-judge", "qa-judge") == 0.20
    assert cfg.threshold_for("token_f1", "token_f1") == 0.15
    assert cfg.threshold_for("no-leak", "contains") == 0.5
    cfg = GateConfig()  # the runs below have no "no-leak": by their kinds' own thresholds
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


def test_a_threshold_for_no_evaluator_or_measure_of_the_run_is_refused() -> None:
    """`--threshold-for rubirc=0.3` (a typo) left the default threshold in force unsaid."""
    hist = [_run(f"r{i}", 1.0, evaluator="icontains") for i in range(3)]
    kinds = {("qa", "icontains"): "contains"}
    with pytest.raises(UsageError, match=r"--threshold-for rubirc: no evaluator or measure .*"):
        evaluate_gate(_run("now", 0.9), hist, GateConfig(overrides={"rubirc": 0.3}), kinds)
    # a measure's label or its evaluator's kind is a name the run has
    for name in ("icontains", "contains"):
        result = evaluate_gate(_run("now", 0.9), hist, GateConfig(overrides={name: 0.05}), kinds)
        assert result.checks[0].regressed  # 10% drop against 5%: the override decided


def test_no_score_is_na_not_a_regression() -> None:
    result = evaluate_gate(_run("now", None), [_run("r", 1.0)] * 10, GateConfig())
    assert result.status == "pass"
    assert result.checks[0].note == "no score in this run (n/a)"


def test_sparkline() -> None:
    assert sparkline([0.0, 0.5, 1.0]) == "▁▅█"
    assert sparkline([0.3, None, 0.3]) == "▁ ▁"
    assert sparkline([]) == ""


def _gate(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict[str, Any]]:
    capsys.readouterr()
    code = main(["gate", *args, "--json"])
    return code, json.loads(capsys.readouterr().out)


def test_after_four_runs_an_80_percent_drop_fails_and_an_unchanged_run_passes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.syspath_prepend(str(SUBJECTS))
    db = str(tmp_path / "r.db")
    learned = str(tmp_path / "learnings.db")
    suite = str(tmp_path / "suite.yaml")
    common = ("--store", db, "--learnings", learned)
    for _ in range(4):
        assert main(["run", str(gated_suite(tmp_path, 10, n=10)), "--store", db]) == 0
    code, first = _gate(capsys, suite, *common)
    assert (code, first["status"]) == (0, "pass")
    assert len(first["baseline_runs"]) == 3
    # the fifth run answers 2 of 10: its score falls by 80%
    assert main(["run", str(gated_suite(tmp_path, 2, n=10)), "--store", db]) == 0
    md = tmp_path / "gate.md"
    code, out = _gate(capsys, suite, *common, "--markdown", str(md))
    assert code == 1
    assert out["status"] == "fail"
    (metric,) = out["metrics"]
    assert (metric["baseline"], metric["current"]) == (1.0, pytest.approx(0.2))
    assert metric["drop"] == pytest.approx(0.8)
    assert metric["threshold"] == 0.10  # icontains is an exact-match evaluator
    assert metric["regressed"] is True
    assert len(out["baseline_runs"]) == 4
    failed_run = out["run_id"]
    assert "❌ memgauge gate: fail" in md.read_text()
    # an unchanged run passes: the failed run is left out of its baseline
    assert main(["run", str(gated_suite(tmp_path, 10, n=10)), "--store", db]) == 0
    code, steady = _gate(capsys, suite, *common)
    assert (code, steady["status"]) == (0, "pass")
    assert steady["metrics"][0]["baseline"] == 1.0
    assert steady["excluded"] == [failed_run]
    assert failed_run not in steady["baseline_runs"]
    # a run that fails again by 15% is still caught against the clean baseline
    assert main(["run", str(gated_suite(tmp_path, 8, n=10)), "--store", db]) == 0
    code, again = _gate(capsys, suite, *common)
    assert (code, again["metrics"][0]["baseline"]) == (1, 1.0)
    # accepted, the 80% run counts again (and the later failure is still left out)
    capsys.readouterr()
    assert main(["gate", "--accept", failed_run, "--store", db]) == 0
    assert f"run {failed_run} accepted (was fail)" in capsys.readouterr().err
    assert main(["run", str(gated_suite(tmp_path, 10, n=10)), "--store", db]) == 0
    code, accepted = _gate(capsys, suite, *common)
    assert code == 0
    assert failed_run in accepted["baseline_runs"]
    assert len(accepted["excluded"]) == 1
    assert accepted["metrics"][0]["baseline"] == pytest.approx((1.0 * 4 + 0.2) / 5)
    # the store keeps the verdicts
    with sqlite3.connect(db) as conn:
        verdicts = [r[0] for r in conn.execute("SELECT gate FROM suite_runs ORDER BY created_at")]
    assert verdicts == [None, None, None, "pass", "accepted", "pass", "fail", "pass"]


def test_gate_and_history_on_real_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.syspath_prepend(str(SUBJECTS))
    db = str(tmp_path / "r.db")
    for _ in range(5):
        assert main(["run", str(gated_suite(tmp_path, 12, n=12)), "--store", db]) == 0
    code, steady = _gate(capsys, str(tmp_path / "suite.yaml"), "--store", db)
    assert (code, steady["status"]) == (0, "pass")
    assert steady["metrics"][0]["drop"] == 0.0
    assert main(["run", str(gated_suite(tmp_path, 6, n=12)), "--store", db]) == 0
    learned = str(tmp_path / "learnings.db")
    suite = str(tmp_path / "suite.yaml")
    code, out = _gate(capsys, suite, "--store", db, "--learnings", learned)
    assert code == 1
    (metric,) = out["metrics"]
    assert metric["baseline"] == 1.0
    assert metric["current"] == pytest.approx(0.5)
    # gated again: the same verdict, the memory stored once
    assert main(["gate", suite, "--store", db, "--learnings", learned]) == 1
    assert "❌ memgauge gate: fail" in capsys.readouterr().out
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
    assert main(["gate", suite, "--store", db, "--learn-into", str(team)]) == 1
    capsys.readouterr()
    assert main(["learnings", "query", "icontains regression", "--learn-into", str(team)]) == 0
    assert 'Eval "gated/qa/icontains" regression detected' in capsys.readouterr().out
    from memgauge.subjects.registry import build_subject

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


def test_gate_names_the_failure_memories_it_stored(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Seed 000: "Stored to memory: <memory_id>", on the terminal, in --json and --markdown."""
    monkeypatch.syspath_prepend(str(SUBJECTS))
    db = str(tmp_path / "r.db")
    learned = tmp_path / "learnings.db"
    suite = str(tmp_path / "suite.yaml")
    for good in (10, 10, 4):
        assert main(["run", str(gated_suite(tmp_path, good, n=10)), "--store", db]) == 0
    md = tmp_path / "gate.md"
    common = ["--store", db, "--learnings", str(learned)]
    capsys.readouterr()
    code = main(["gate", suite, *common, "--markdown", str(md), "--json"])
    captured = capsys.readouterr()
    out = json.loads(captured.out)
    assert code == 1
    from memgauge.subjects.learnings import learnings_memory

    memory = learnings_memory(learned)
    (stored,) = memory.dump()
    memory.close()
    assert out["failure_memories"] == [
        {"id": stored.id, "subject": "agent", "task": "qa", "measure": "icontains", "new": True}
    ]
    assert f"- `{stored.id}`: icontains (agent / qa)" in md.read_text()
    assert f"stored 1 failure memories for future prompts: {stored.id}" in captured.err
    # the terminal: the summary names it, and stderr says it was stored
    assert main(["gate", suite, *common]) == 1
    shown = capsys.readouterr()
    assert f"`{stored.id}`: icontains (agent / qa), already stored" in shown.out
    assert "stored" not in shown.err  # gated again: nothing new was stored
    # --no-learn stores nothing and names nothing
    code, quiet = _gate(capsys, suite, *common, "--no-learn")
    assert (code, quiet["failure_memories"]) == (1, [])


def test_gate_needs_a_completed_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "r.db"
    assert main(["gate", "nope", "--store", str(db)]) == 2
    assert "no results store at" in capsys.readouterr().err
    assert not db.exists()  # a command that only reads creates nothing
    assert main(["runs", "list", "--store", str(db)]) == 2  # (nor does listing)
    assert not db.exists()
    api.open_store(db).close()  # an empty store
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
    api.open_store(db).close()
    assert main(["gate", "any", "--store", str(db), "--threshold-for", value]) == 2
    assert "--threshold-for" in capsys.readouterr().err


def test_accept_needs_a_known_run_and_gate_needs_a_target(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = str(tmp_path / "r.db")
    api.open_store(db).close()
    assert main(["gate", "--accept", "nope", "--store", db]) == 2
    assert "no run 'nope'" in capsys.readouterr().err
    assert main(["gate", "--store", db]) == 2
    assert "name a suite file or a run" in capsys.readouterr().err
    for gone in ("--phase", "--min-history", "--production-after"):
        assert main(["gate", "x", "--store", db, gone, "1"]) == 2


def test_a_learnings_file_that_cannot_be_used_leaves_the_run_ungated(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The verdict was recorded before the failure memories were stored: a --learnings that
    is no SQLite file exited 2 with the run already marked 'fail', so it was left out of every
    later baseline though the gate never finished."""
    monkeypatch.syspath_prepend(str(SUBJECTS))
    db = str(tmp_path / "r.db")
    for good in (10, 10, 4):
        assert main(["run", str(gated_suite(tmp_path, good, n=10)), "--store", db]) == 0
    not_sqlite = tmp_path / "notes.txt"
    not_sqlite.write_text("not a database\n")
    suite = str(tmp_path / "suite.yaml")
    capsys.readouterr()
    assert main(["gate", suite, "--store", db, "--learnings", str(not_sqlite)]) == 2
    assert "not a SQLite database" in capsys.readouterr().err
    with api.open_store(db) as opened:
        runs = opened.list_runs()
        assert [opened.gate_verdict(r["run_id"]) for r in runs] == [None, None, None]


def test_gating_a_completed_run_without_a_summary_says_what_is_missing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """It said the run "is completed: only a completed run can be gated"."""
    monkeypatch.syspath_prepend(str(Path(__file__).parents[1] / "data" / "subjects"))
    db = str(tmp_path / "r.db")
    assert main(["run", str(gated_suite(tmp_path, 10, n=10)), "--store", db]) == 0
    with api.open_store(db) as opened:
        [run] = [r["run_id"] for r in opened.list_runs()]
    con = sqlite3.connect(db)
    con.execute("UPDATE suite_runs SET summary_json = NULL, headline_json = NULL")
    con.commit()
    con.close()
    capsys.readouterr()
    assert main(["gate", run, "--store", db]) == 2
    err = capsys.readouterr().err
    assert f"run {run} is completed but holds no summary" in err
    assert "only a completed run can be gated" not in err
    assert "run its suite again" in err


def test_accept_refuses_a_run_that_did_not_complete(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A baseline reads completed runs only: `--accept` of a failed (or cancelled) run said
    it "counts in later baselines" (exit 0) and changed nothing."""
    monkeypatch.syspath_prepend(str(Path(__file__).parents[1] / "data" / "subjects"))
    suite = gated_suite(tmp_path, 0)
    spec = yaml.safe_load(suite.read_text())
    spec["max_failure_rate"] = 0
    spec["subjects"]["agent"]["python"]["kwargs"]["fail_on"] = ["code"]
    suite.write_text(yaml.safe_dump(spec))
    db = str(tmp_path / "r.db")
    assert main(["run", str(suite), "--store", db]) == 4
    with api.open_store(db) as opened:
        [run] = [r["run_id"] for r in opened.list_runs()]
    capsys.readouterr()
    assert main(["gate", "--accept", run, "--store", db]) == 2
    err = capsys.readouterr().err
    assert f"run {run} is failed; only a completed run counts in a baseline" in err
    with api.open_store(db) as opened:
        assert opened.gate_verdict(run) is None


def test_the_gate_verdict_migration_keeps_old_runs_and_checks_values(tmp_path: Path) -> None:
    """A store from before the gate kept verdicts (0009, by the frozen migrations) is upgraded
    by Alembic's 0011: its runs count as never gated, and a verdict outside pass / fail /
    accepted is refused."""
    from memgauge.store import migrations
    from memgauge.store.engine import upgrade_store
    from memgauge.store.url import store_url

    db = tmp_path / "old.db"
    conn = sqlite3.connect(db)
    migrations.migrate(conn)
    conn.execute(
        "INSERT INTO suite_runs (run_id, suite_name, status, created_at, suite_sha256,"
        " suite_json, settings_json, provenance_json, n_items) VALUES"
        " ('r', 's', 'completed', '2026-01-01', 'x', '{}', '{}', '{}', 1)"
    )
    conn.commit()
    conn.close()
    assert "0011" in upgrade_store(store_url(db))
    conn = sqlite3.connect(db)
    assert conn.execute("SELECT gate FROM suite_runs").fetchone() == (None,)  # never gated
    with pytest.raises(sqlite3.IntegrityError):
        conn.execute("UPDATE suite_runs SET gate = 'maybe'")
    conn.close()


def test_a_drop_of_exactly_the_threshold_fails_despite_round_off() -> None:
    hist = [_run(f"r{i}", 1.0) for i in range(3)]
    (check,) = evaluate_gate(
        _run("now", 0.9), hist, GateConfig(), {("qa", "icontains"): "icontains"}
    ).checks
    assert check.drop == pytest.approx(0.1)
    assert check.drop < 0.1  # 0.09999999999999998
    assert check.threshold == 0.10
    assert check.regressed


@pytest.mark.parametrize("tty", [True, False])
def test_gate_markdown_is_drawn_on_a_terminal_and_raw_when_piped_or_written(
    tty: bool,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.syspath_prepend(str(SUBJECTS))
    db = str(tmp_path / "r.db")
    for right in (10, 2):
        assert main(["run", str(gated_suite(tmp_path, right, n=10)), "--store", db]) == 0
    capsys.readouterr()
    monkeypatch.setenv("COLUMNS", "100")
    monkeypatch.setattr(sys.stdout, "isatty", lambda: tty)
    md = tmp_path / "gate.md"
    argv = ["gate", str(tmp_path / "suite.yaml"), "--store", db, "--no-learn"]
    assert main([*argv, "--markdown", str(md)]) == 1
    out = re.sub(r"\x1b\[[0-9;]*m", "", capsys.readouterr().out)
    raw = md.read_text()
    # the file is Markdown whatever stdout is
    assert raw.startswith("### ❌ memgauge gate: fail\n")
    assert "|---|" in raw
    if tty:
        assert out.splitlines()[0].strip() == "❌ memgauge gate: fail"
        assert "###" not in out
        assert "|---" not in out
        assert "`" not in out  # code spans drawn as such
        assert re.search(r"agent +qa +icontains +.*0\.200", out)
        assert "…" not in out
    else:
        assert out.startswith("### ❌ memgauge gate: fail\n")
        assert "| agent | qa | icontains |" in out


def test_a_learn_into_that_names_no_memory_is_refused_whatever_the_verdict(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`--learn-into nosuch` was read only when a regression had a memory to store: every
    passing gate exited 0 with it, and the first regression then exited 2 (bad input) instead
    of 1, its verdict not recorded. It is refused before the run is gated, pass or fail."""
    monkeypatch.syspath_prepend(str(SUBJECTS))
    db = str(tmp_path / "r.db")
    suite = str(tmp_path / "suite.yaml")
    for good in (6, 6):
        assert main(["run", str(gated_suite(tmp_path, good)), "--store", db]) == 0
    capsys.readouterr()
    assert main(["gate", suite, "--store", db, "--learn-into", "nosuch", "--json"]) == 2
    captured = capsys.readouterr()
    assert "--learn-into 'nosuch': unknown system 'nosuch'" in captured.err
    assert captured.out == ""
    with sqlite3.connect(db) as con:
        assert con.execute("SELECT gate FROM suite_runs WHERE gate IS NOT NULL").fetchall() == []


def test_history_and_gate_read_only_the_suite_files_name(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`history suite.yaml` and `gate suite.yaml` checked the whole suite to learn its name:
    on a machine without its subjects' modules or its datasets (a CI job that only gates) they
    exited 2 about those, though they read nothing but runs."""
    monkeypatch.syspath_prepend(str(SUBJECTS))
    db = str(tmp_path / "r.db")
    for _ in range(2):
        assert main(["run", str(gated_suite(tmp_path, 6)), "--store", db]) == 0
    suite = tmp_path / "suite.yaml"
    suite.write_text(suite.read_text().replace("lookup_agents:", "not_installed_here:"))
    capsys.readouterr()
    assert main(["history", str(suite), "--store", db, "--json"]) == 0
    assert main(["gate", str(suite), "--store", db]) == 0
    assert "not_installed_here" not in capsys.readouterr().err


def test_markdown_and_junit_naming_one_file_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`gate --markdown out.txt --junit out.txt` wrote the Markdown summary, then the JUnit XML
    over it (exit 0): the summary was lost without a word."""
    monkeypatch.syspath_prepend(str(SUBJECTS))
    monkeypatch.chdir(tmp_path)
    db = str(tmp_path / "r.db")
    for _ in range(2):
        assert main(["run", str(gated_suite(tmp_path, 6)), "--store", db]) == 0
    capsys.readouterr()
    args = ["gate", "suite.yaml", "--store", db, "--markdown", "out.txt", "--junit", "./out.txt"]
    assert main(args) == 2
    assert "--markdown and --junit both name out.txt" in capsys.readouterr().err
    assert not (tmp_path / "out.txt").exists()
    # a path through `..` names the same file too (the check compared unresolved paths)
    (tmp_path / "sub").mkdir()
    given = ["--markdown", "sub/../out.txt", "--junit", "out.txt"]
    args = ["gate", "suite.yaml", "--store", db, *given]
    assert main(args) == 2
    assert "--markdown and --junit both name out.txt" in capsys.readouterr().err
    assert not (tmp_path / "out.txt").exists()
    with sqlite3.connect(db) as con:
        assert con.execute("SELECT gate FROM suite_runs WHERE gate IS NOT NULL").fetchall() == []


def test_history_s_baseline_leaves_out_a_failed_gate_as_the_gate_does(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`memgauge history` showed the latest run against a baseline of 0.6 (the mean of 1.0
    and a run that failed the gate, 0.2) where `memgauge gate` compared it with 1.0 and
    failed it."""
    monkeypatch.syspath_prepend(str(SUBJECTS))
    db = str(tmp_path / "r.db")
    suite = str(tmp_path / "suite.yaml")
    for right, verdict in ((10, 0), (2, 1), (7, 1)):
        assert main(["run", str(gated_suite(tmp_path, right, n=10)), "--store", db]) == 0
        code, gated = _gate(capsys, suite, "--store", db, "--no-learn")
        assert code == verdict
    assert gated["metrics"][0]["baseline"] == 1.0
    assert main(["history", "gated", "--store", db]) == 0
    row = next(line for line in capsys.readouterr().out.splitlines() if "icontains" in line)
    assert re.search(r"0\.700\s*│\s*1\.000\s*│", row), row


def test_a_renamed_task_passes_the_gate_saying_nothing_was_compared(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A suite whose task was renamed (another version of the suite) passed the gate against
    the earlier run "against the rolling baseline of 1 earlier run", every baseline n/a and
    not a word why, though its score fell from 1.0 to 0.2."""
    monkeypatch.syspath_prepend(str(SUBJECTS))
    db = str(tmp_path / "r.db")
    assert main(["run", str(gated_suite(tmp_path, 10, n=10)), "--store", db]) == 0
    suite = gated_suite(tmp_path, 2, n=10)
    suite.write_text(suite.read_text().replace("name: qa", "name: answers"))
    assert main(["run", str(suite), "--store", db]) == 0
    md = tmp_path / "gate.md"
    code, out = _gate(capsys, str(suite), "--store", db, "--no-learn", "--markdown", str(md))
    assert (code, out["status"], len(out["baseline_runs"])) == (0, "pass", 1)
    assert out["metrics"][0]["baseline"] is None
    warning = (
        "agent/answers: no run of the baseline measured this subject and task (they have"
        " agent/qa): its measures were compared with nothing, so they cannot fail the gate"
    )
    assert any(w.startswith(warning) for w in out["warnings"]), out["warnings"]
    assert warning in md.read_text()


def test_a_dataset_changed_since_the_baseline_is_a_warning(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A pull request that added a question to the golden set was gated against main's runs on
    the old set without a word: its drop (or rise) was the data's, and the gate said nothing
    that told the two apart."""
    memories = [{"id": "m1", "text": "deploys go out on Tuesday"}]
    items = [{"id": "q1", "input": "when do deploys go out?", "expected": "Tuesday"}]
    suite = write_recall_suite(tmp_path, items, memories, ["icontains"])
    assert main(["run", str(suite), "--store", str(tmp_path / "r.db")]) == 0
    _, same = _gate(capsys, str(suite), "--store", str(tmp_path / "r.db"), "--no-learn")
    more = [*items, {"id": "q2", "input": "who owns billing?", "expected": "Ana"}]
    write_recall_suite(tmp_path, more, memories, ["icontains"])
    assert main(["run", str(suite), "--store", str(tmp_path / "r.db")]) == 0
    code, out = _gate(capsys, str(suite), "--store", str(tmp_path / "r.db"), "--no-learn")
    assert code == 1  # 1.0 to 0.5: the new question, not the system
    [warning] = [w for w in out["warnings"] if w.startswith("task recall: its dataset")]
    assert "is not the one 1 of the baseline's 1 run read (sha256 " in warning
    assert "a change may be the data's, not the system's" in warning
    assert "`memgauge gate --accept RUN`" in warning
    assert not [w for w in same["warnings"] if "dataset" in w]


def test_a_markdown_summary_over_the_results_store_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`gate --markdown r.db --store r.db` wrote the summary over the store (exit 0): every
    run and gate was gone, the next command said 'not a SQLite database'. Exit 2, the store
    kept as it was."""
    monkeypatch.syspath_prepend(str(SUBJECTS))
    monkeypatch.chdir(tmp_path)
    db = str(tmp_path / "r.db")
    for _ in range(2):
        assert main(["run", str(gated_suite(tmp_path, 6)), "--store", db]) == 0
    capsys.readouterr()
    kept = Path(db).read_bytes()
    for flag in ("--markdown", "--junit"):
        assert main(["gate", "suite.yaml", "--store", db, flag, "./r.db"]) == 2
        err = " ".join(capsys.readouterr().err.split())
        assert f"the results store and {flag} both name r.db" in err, err
    assert Path(db).read_bytes() == kept
