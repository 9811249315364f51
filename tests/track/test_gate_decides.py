"""Issue 27 item 5: the gate decides on what the user asked (the run's targets, `--measure`, each
task's primary measures) and shows the rest as information; changes read better / worse by the
measure's own direction; operations get seed 000's thresholds by tier; an `on_failure: neutral`
judge is a number with its fallbacks; `--learn-into python:` keeps the verdict."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
import yaml
from tests.helpers import gated_suite

from memgauge.cli.main import main
from memgauge.data.records import AggregateResult, MeasureValue, RunRecord, RunSummary, TargetCheck
from memgauge.errors import UsageError
from memgauge.report.gate import gate_markdown
from memgauge.track.gate import GateConfig, evaluate_gate

SUBJECTS = Path(__file__).resolve().parents[1] / "data" / "subjects"


def _m(name: str, value: float, **kw: Any) -> MeasureValue:
    return MeasureValue(subject="mem", task="retrieval", name=name, value=value, **kw)


def _run(
    run_id: str, measures: Sequence[MeasureValue], targets: Sequence[TargetCheck] = ()
) -> RunRecord:
    return RunRecord(
        run_id=run_id,
        suite_name="s",
        suite_sha256="x",
        suite={},
        summary=RunSummary(
            aggregates=[AggregateResult(aggregate="ir", task="retrieval", measures=list(measures))],
            targets=list(targets),
        ),
    )


def _cut(nDCG: float, recall: float, holds: float, important: float) -> list[MeasureValue]:
    """The issue's numbers: the user's two measures with CIs, two agent-memory metrics."""
    return [
        _m("nDCG@10", nDCG, ci_low=nDCG - 0.1, ci_high=nDCG + 0.1, n_scored=37),
        _m("Recall@5", recall, ci_low=recall - 0.1, ci_high=recall + 0.1, n_scored=37),
        _m("tier_order_holds@5", holds, n_scored=49, kind="agent", primary=False),
        _m(
            "tier_precision[important]@5",
            important,
            ci_low=important - 0.1,
            ci_high=important + 0.1,
            n_scored=49,
            kind="agent",
            primary=False,
        ),
    ]


def _history() -> list[RunRecord]:
    return [_run(f"r{i}", _cut(0.80, 0.80, 1.0, 0.30)) for i in range(3)]


def _now() -> RunRecord:
    """-1.1% and -6.1% on the chosen measures; the 0/1 flag flips, a precision drops 30%."""
    return _run("now", _cut(0.80 * 0.989, 0.80 * 0.939, 0.0, 0.21))


def test_by_default_only_the_primary_measures_decide() -> None:
    result = evaluate_gate(_now(), _history(), GateConfig())
    assert result.status == "pass"  # it exited 1 on tier_order_holds@5 before
    by_name = {c.evaluator: c for c in result.checks}
    assert [c.evaluator for c in result.deciding] == ["nDCG@10", "Recall@5"]
    assert {c.basis for c in result.deciding} == {"primary"}
    assert by_name["Recall@5"].change == "worse by 6.1%"
    for name in ("tier_order_holds@5", "tier_precision[important]@5"):
        c = by_name[name]
        assert (c.deciding, c.basis, c.reached, c.regressed) == (False, "information", True, False)
        assert "information: it does not decide the gate" in c.note
    rows = {r["evaluator"]: r for r in json.loads(json.dumps(result.as_dict()))["metrics"]}
    assert rows["nDCG@10"]["deciding"] is True
    assert rows["tier_order_holds@5"]["deciding"] is False
    assert rows["tier_order_holds@5"]["past_threshold"] is True
    assert rows["tier_order_holds@5"]["change"] == "worse by 100.0%"


def test_a_measure_named_with_measure_or_an_enforced_target_decides() -> None:
    from memgauge.aggregates.targets import MeasureRef

    named = evaluate_gate(
        _now(),
        _history(),
        GateConfig(measures=(MeasureRef("tier_order_holds@5", task="retrieval"),)),
    )
    assert named.status == "fail"
    (flag,) = [c for c in named.checks if c.evaluator == "tier_order_holds@5"]
    assert (flag.deciding, flag.basis, flag.regressed) == (True, "--measure", True)

    def target(measure: str, enforced: bool) -> TargetCheck:
        return TargetCheck(
            subject="mem",
            task="retrieval",
            measure=measure,
            op=">=",
            target=0.2,
            value=0.21,
            met=True,
            source="suite",
            enforced=enforced,
        )

    now = _now()
    assert now.summary is not None
    measures = now.summary.measures()
    targeted = _run("now", measures, [target("tier_precision[important]@5", True)])
    result = evaluate_gate(targeted, _history(), GateConfig())
    assert result.status == "fail"
    (prec,) = [c for c in result.checks if c.evaluator == "tier_precision[important]@5"]
    assert (prec.basis, prec.regressed) == ("target", True)
    # a target only shown (a seed 002 agent-memory target) does not make it decide
    shown = _run("now", measures, [target("tier_precision[important]@5", False)])
    assert evaluate_gate(shown, _history(), GateConfig()).status == "pass"
    with pytest.raises(UsageError, match=r"^measures nope@5: no such measure in this run"):
        evaluate_gate(_now(), _history(), GateConfig(measures=(MeasureRef("nope@5"),)))


def test_changes_read_better_or_worse_by_the_measures_direction() -> None:
    def ils(value: float) -> RunRecord:
        return _run(
            "x",
            [_m("folder_ils@5", value, n_scored=40, kind="agent", higher_is_better=False)],
        )

    hist = [ils(0.35)] * 3
    lower = evaluate_gate(ils(0.32), hist, GateConfig(measures=_ref("folder_ils@5")))
    (c,) = lower.checks
    assert c.drop == pytest.approx(-0.03 / 0.35)
    assert c.change == "better by 8.6%"  # it was shown as "+8.6%"
    assert c.note == "better by 8.6%"
    assert c.higher_is_better is False
    higher = evaluate_gate(ils(0.40), hist, GateConfig(measures=_ref("folder_ils@5")))
    (c,) = higher.checks
    assert (c.change, c.regressed) == ("worse by 14.3%", False)
    assert c.note == "worse by 14.3%, under 15%"
    md = gate_markdown(lower)
    assert "better by 8.6%" in md
    assert "+8.6%" not in md
    assert "-8.6%" not in md
    assert evaluate_gate(ils(0.35), hist, GateConfig()).checks[0].change == "unchanged"


def _ref(name: str) -> tuple[Any, ...]:
    from memgauge.aggregates.targets import MeasureRef

    return (MeasureRef(name),)


def test_no_ci_says_why_instead_of_too_few_items() -> None:
    # a number over 49 hits with no interval computed is not "too few items"
    hist = [_run("r", [_m("share@5", 0.3, n_scored=49, kind="agent")])] * 2
    now = _run("now", [_m("share@5", 0.2, n_scored=49, kind="agent")])
    (c,) = evaluate_gate(now, hist, GateConfig()).checks
    assert "too few" not in c.note
    assert "no CI is computed for this measure (over 49)" in c.note
    one = _run("now", [_m("share@5", 0.2, n_scored=1)])
    (c,) = evaluate_gate(one, hist, GateConfig()).checks
    assert "this run has no CI (1 item(s): too few)" in c.note


def test_tier_precision_has_a_wilson_ci_from_its_hits() -> None:
    from memgauge.aggregates.agent_summary import AgentMetrics, _tier_precision
    from memgauge.metrics.agent import tier_stratified_precision
    from memgauge.stats.proportion import wilson_ci

    # 10 searches, 5 hits each: 49 important hits, 12 of them relevant
    tiers = {f"d{i}": "important" for i in range(49)} | {"c0": "critical"}
    ranked = {f"q{q}": [f"d{q * 5 + j}" for j in range(5) if q * 5 + j < 49] for q in range(10)}
    ranked["q9"].append("c0")
    qrels = {f"q{q}": {f"d{q * 5 + j}": 2 for j in range(5) if q * 5 + j < 12} for q in range(10)}
    v = tier_stratified_precision(ranked, qrels, tiers, 5)
    out = AgentMetrics()
    _tier_precision(out, v, 5, set(tiers.values()))
    m = out.metrics["tier_precision[important]@5"]
    assert (m.value, m.n) == (pytest.approx(12 / 49), 49)
    assert (m.ci_low, m.ci_high) == pytest.approx(wilson_ci(12, 49))
    assert out.metrics["tier_order_holds@5"].ci_low is None  # a 0/1 flag has none


def test_operations_thresholds_follow_seed_000s_tiers() -> None:
    from memgauge.aggregates.base import TaskView
    from memgauge.aggregates.write_path import OperationsAggregate
    from memgauge.data.records import ItemRecord, ScoreRecord

    cases = [
        {"exact-noop": {"passed": True}, "action": {"passed": True}},
        {"merge-quality": {"passed": True}, "action": {"passed": False}},
    ]
    items = [
        ItemRecord(
            subject="d",
            task="ops",
            item_id=f"c{i}",
            status="completed",
            scores=[
                ScoreRecord(evaluator="operation-checks", value=1.0, detail={"checks": checks})
            ],
        )
        for i, checks in enumerate(cases)
    ]
    view = TaskView(
        name="ops",
        kind="operations",
        subjects=["d"],
        evaluators=[("operation-checks", "operation-checks")],
    )
    measures = OperationsAggregate().compute(view, {"d": items}).measures
    cfg = GateConfig()
    by = {m.name: cfg.threshold_for(m.name, None, m.scoring) for m in measures}
    # both tiers got 15%: exact-match heuristics 10%, LLM judges 20% (seed 000)
    assert (by["tier.heuristic"], by["tier.operation"], by["tier.judge"]) == (0.10, 0.15, 0.20)
    assert (by["check.exact-noop"], by["check.action"], by["check.merge-quality"]) == (
        0.10,
        0.15,
        0.20,
    )
    # seed 000's success metrics are the tiers; a check is a breakdown
    assert {m.name for m in measures if m.primary} == {
        "tier.heuristic",
        "tier.operation",
        "tier.judge",
    }
    # the gate applies them
    run = RunRecord(
        run_id="now",
        suite_name="s",
        suite_sha256="x",
        suite={},
        summary=RunSummary(
            aggregates=[AggregateResult(aggregate="operations", task="ops", measures=measures)]
        ),
    )
    checks = {c.evaluator: c.threshold for c in evaluate_gate(run, [run], cfg).checks}
    assert checks == by
    # an override still wins
    assert (
        GateConfig(overrides={"tier.judge": 0.3}).threshold_for("tier.judge", None, "judge") == 0.3
    )


def _gate(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict[str, Any]]:
    capsys.readouterr()
    code = main(["gate", *args, "--json"])
    return code, json.loads(capsys.readouterr().out)


def _neutral_suite(tmp_path: Path) -> Path:
    """Three questions the agent answers right, and a judge that cannot be reached (nothing
    listens on port 9) that the suite allows seed 000's neutral 0.5."""
    judge = {"rubric": {"prompt": "Is {{output}} right for {{input}}?", "on_failure": "neutral"}}
    spec = {
        "name": "neutral",
        "subjects": {
            "agent": {
                "python": {
                    "target": "lookup_agents:LookupAgent",
                    "kwargs": {"answers": {f"code {i}?": f"C{i}" for i in range(3)}},
                }
            }
        },
        "tasks": [
            {
                "name": "qa",
                "kind": "expected-output",
                "items": [
                    {"id": f"q{i}", "input": f"What is code {i}?", "expected": f"C{i}"}
                    for i in range(3)
                ],
                "evaluators": ["icontains", judge],
                "targets": {"icontains": 0.9},
            }
        ],
    }
    path = tmp_path / "suite.yaml"
    path.write_text(yaml.safe_dump(spec))
    return path


def test_a_neutral_judge_is_a_number_with_its_fallbacks_and_the_exit_follows_the_targets(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.syspath_prepend(str(SUBJECTS))
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    monkeypatch.setenv("MEMGAUGE_MODEL", "fake")
    monkeypatch.setenv("MEMGAUGE_LLM_RETRIES", "0")  # refused at once: no backoff to wait out
    db = str(tmp_path / "r.db")
    suite = _neutral_suite(tmp_path)
    for _ in range(2):
        # the target is met; the unreachable judge was allowed its stand-in (it exited 3)
        assert main(["run", str(suite), "--store", db]) == 0
    shown = " ".join(capsys.readouterr().out.split())
    # the run's own row is the number the gate reads, with its fallbacks (one value)
    assert "rubric │ 0.500 (3 fallbacks)" in shown
    assert "3 of its 3 scores are the opt-in neutral 0.5" in shown
    code, out = _gate(capsys, str(suite), "--store", db, "--no-learn")
    assert code == 0
    rubric = next(m for m in out["metrics"] if m["evaluator"] == "rubric")
    assert (rubric["current"], rubric["n_fallback"], rubric["deciding"]) == (0.5, 3, True)
    assert (rubric["baseline"], rubric["ci"], rubric["note"]) == (0.5, None, "unchanged")
    capsys.readouterr()
    assert main(["gate", str(suite), "--store", db, "--no-learn"]) == 0
    assert "| 0.500 (3 fallbacks) |" in capsys.readouterr().out
    # a target on the judge's number is decided on that number: 0.5 misses 0.6 (exit 1)
    assert main(["run", str(suite), "--store", db, "--fail-under", "rubric=0.6"]) == 1
    assert main(["run", str(suite), "--store", db, "--fail-under", "rubric=0.5"]) == 0


def test_learn_into_a_python_memory_keeps_the_verdict(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.syspath_prepend(str(SUBJECTS))
    db = str(tmp_path / "r.db")
    assert main(["run", str(gated_suite(tmp_path, right=6)), "--store", db]) == 0
    assert main(["run", str(gated_suite(tmp_path, right=2)), "--store", db]) == 0
    suite = str(tmp_path / "suite.yaml")
    into = "python:keyword_memory:KeywordMemory"
    capsys.readouterr()
    # it stored the memory, then crashed on the object's missing close() (exit 70)
    code = main(["gate", suite, "--store", db, "--learn-into", into, "--json"])
    out, err = capsys.readouterr()
    assert code == 1
    assert json.loads(out)["status"] == "fail"
    assert "stored 1 failure memories" in err
    assert main(["learnings", "query", "icontains", "--learn-into", into]) == 0
    # (a fresh object: a python memory keeps nothing between processes or calls)
    assert "no stored failure is relevant" in capsys.readouterr().out


def test_the_gate_prints_what_decides_and_folds_the_rest(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two subjects of a retrieval run: the user's two measures decide (4 rows); seed 002's
    agent-memory metrics (about 40 rows) are information."""
    from memgauge.data.demo import demo_dataset
    from memgauge.data.io import save_retrieval_dataset

    monkeypatch.syspath_prepend(str(SUBJECTS))
    data = tmp_path / "demo"
    save_retrieval_dataset(demo_dataset(), data)
    db = str(tmp_path / "r.db")
    chosen = ["-m", "nDCG@10", "-m", "Recall@5"]
    argv = ["evaluate", str(data), "--out", str(tmp_path / "o"), "--quiet", "--store", db, *chosen]
    assert main([*argv, "-s", "lexical@sys", "-s", "lexical"]) == 0
    assert main([*argv, "-s", "python:keyword_memory:KeywordMemory@sys", "-s", "lexical"]) == 0
    with_runs = ["--store", db, "--no-learn"]
    capsys.readouterr()
    runs = json.loads(_runs_json(capsys, db))
    newest = runs[0]["run_id"]
    code, out = _gate(capsys, newest, *with_runs)
    deciding = {(m["subject"], m["evaluator"]) for m in out["metrics"] if m["deciding"]}
    assert deciding == {(s, m) for s in ("sys", "lexical") for m in ("nDCG@10", "Recall@5")}
    info = [m for m in out["metrics"] if not m["deciding"]]
    assert len(info) > 30
    assert {m["basis"] for m in info} == {"information"}
    assert not any(m["regressed"] for m in info)
    regressed = any(m["regressed"] for m in out["metrics"])
    assert code == (1 if regressed else 0)
    md = tmp_path / "gate.md"
    capsys.readouterr()
    main(["gate", newest, *with_runs, "--markdown", str(md)])
    shown = capsys.readouterr().out
    comment = md.read_text()
    within = [m for m in info if not m["past_threshold"] and m["subject"] == "lexical"]
    assert within
    # the terminal counts what stayed within its threshold; the comment lists it, folded
    assert f"| lexical | retrieval | {within[0]['evaluator']} |" not in shown
    assert f"| lexical | retrieval | {within[0]['evaluator']} |" in comment.split("<details>")[1]
    assert f"Information: {len(info)} more measures that do not decide the gate" in shown
    assert shown.count("| sys | retrieval | nDCG@10 | primary measure |") == 1
    capsys.readouterr()
    assert main(["gate", newest, *with_runs, "--measure", "nope@5"]) == 2
    assert "--measure nope@5: no such measure in this run" in capsys.readouterr().err
    code, out = _gate(capsys, newest, *with_runs, "--measure", "sys/retrieval/folder_ils@5")
    (ils,) = [
        m for m in out["metrics"] if (m["subject"], m["evaluator"]) == ("sys", "folder_ils@5")
    ]
    assert (ils["deciding"], ils["basis"], ils["higher_is_better"]) == (True, "--measure", False)


def _runs_json(capsys: pytest.CaptureFixture[str], db: str) -> str:
    assert main(["runs", "list", "--store", db, "--json"]) == 0
    return capsys.readouterr().out


def test_a_suite_file_gates_the_run_that_completed_last(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A CI job's run (a regression) and someone's run of the same suite, at once on one store:
    the other one started later and ended first. `memgauge run suite.yaml && memgauge gate
    suite.yaml` in the CI job gated the other run (the one created last), passed, and never
    gated its own. The latest completed run is the one that completed last."""
    import sqlite3
    from datetime import datetime, timedelta

    monkeypatch.syspath_prepend(str(SUBJECTS))
    db = str(tmp_path / "r.db")
    ids = []
    for right in (6, 2, 6):  # a baseline, the CI job's regression, the other person's run
        assert main(["run", str(gated_suite(tmp_path, right=right)), "--store", db]) == 0
        with sqlite3.connect(db) as conn:
            newest = "SELECT run_id FROM suite_runs ORDER BY created_at DESC, run_id DESC"
            ids.append(conn.execute(newest).fetchone()[0])
    ci, other = ids[1], ids[2]
    with sqlite3.connect(db) as conn:  # the CI job's run ended after the other one
        (ended,) = conn.execute("SELECT finished_at FROM suite_runs WHERE run_id = ?", (other,))
        later = datetime.fromisoformat(ended[0]) + timedelta(seconds=1)
        conn.execute(
            "UPDATE suite_runs SET finished_at = ? WHERE run_id = ?", (later.isoformat(), ci)
        )
    capsys.readouterr()
    code = main(["gate", str(tmp_path / "suite.yaml"), "--store", db, "--no-learn", "--json"])
    report = json.loads(capsys.readouterr().out)
    assert (report["run_id"], report["status"], code) == (ci, "fail", 1)


def _a_baseline_then_every_item_failed(tmp_path: Path, db: str, *run_args: str) -> Path:
    """The gated suite run once with every item right, then run again (with `run_args`) with
    the agent failing every item, as the suite allows (max_failure_rate 1): its file."""
    assert main(["run", str(gated_suite(tmp_path, right=6)), "--store", db]) == 0
    suite = tmp_path / "suite.yaml"
    spec = yaml.safe_load(suite.read_text())
    spec["max_failure_rate"] = 1.0
    spec["subjects"]["agent"]["python"]["kwargs"]["fail_on"] = ["code"]
    suite.write_text(yaml.safe_dump(spec))
    assert main(["run", str(suite), "--store", db, *run_args]) == 0
    return suite


def test_a_deciding_measure_with_no_score_now_is_said_not_passed_unsaid(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The agent failed every item (the suite allows it: max_failure_rate 1): its primary
    measure is n/a, which is no regression, and the gate passed with the baseline's 1.000
    beside n/a and no word. It still passes (n/a is not a drop), with a warning that names
    the measure, its counts and where to see why."""
    monkeypatch.syspath_prepend(str(SUBJECTS))
    db = str(tmp_path / "r.db")
    suite = _a_baseline_then_every_item_failed(tmp_path, db, "--json")
    run_id = json.loads(capsys.readouterr().out.strip().splitlines()[-1])["run_id"]
    code = main(["gate", str(suite), "--store", db, "--no-learn", "--json"])
    report = json.loads(capsys.readouterr().out)
    assert (report["status"], code) == ("pass", 0)
    assert report["warnings"] == [
        "agent/qa/icontains: no score in this run (6 failed, 0 scored) where the baseline has"
        f" 1.000: it cannot fail the gate; see why with `memgauge runs show {run_id}`"
    ]


@pytest.mark.parametrize("status", ["failed", "cancelled", "running"])
def test_a_gate_with_no_baseline_names_the_earlier_runs_that_did_not_complete(
    status: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The suite's earlier run failed (or was cancelled, or is still running): the gate
    said "No earlier run to compare with", as if there were none. It passes still, with a
    warning naming that run and that only a completed run counts."""
    from memgauge.store.suite_runs import SuiteRunStore

    monkeypatch.syspath_prepend(str(SUBJECTS))
    db = str(tmp_path / "r.db")
    suite = str(gated_suite(tmp_path, right=6))
    ids = []
    for _ in range(2):
        assert main(["run", suite, "--store", db, "--json"]) == 0
        ids.append(json.loads(capsys.readouterr().out.strip().splitlines()[-1])["run_id"])
    with SuiteRunStore(db) as store:
        store.set_status(ids[0], status)
    assert main(["gate", ids[1], "--store", db, "--no-learn", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["baseline_runs"] == []
    assert report["warnings"] == [
        f"1 earlier run of suite 'gated' did not complete ({ids[0]} {status}): only a"
        " completed run counts in the baseline"
    ]


def test_the_summary_says_why_a_deciding_measure_was_not_compared(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A deciding measure with no score now (every item failed) beside a baseline: the
    summary's row had an empty change column and its reason was only in `--json`. A line
    under the table says why, as it does for a measure past its threshold."""
    monkeypatch.syspath_prepend(str(SUBJECTS))
    db = str(tmp_path / "r.db")
    suite = _a_baseline_then_every_item_failed(tmp_path, db)
    md = tmp_path / "gate.md"
    assert main(["gate", str(suite), "--store", db, "--no-learn", "--markdown", str(md)]) == 0
    assert "- icontains (agent / qa): no score in this run (n/a)" in md.read_text()
