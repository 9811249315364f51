"""An audit's rates have one value, one Wilson interval and one n, whichever way they are read.

`memgauge audit` on the memaudit sample (the offline extractive agent) and a suite's
expected-output task with probes (the same agent, beside one whose calls fail on some
questions) are read back through every view: the audit's terminal table, report.md,
results.json, memaudit.json, `--json` and `--junit`; the run's `--junit`, `runs show` (text and
`--json`), `memgauge report`, the viewer's run page, `health` (text and `--json`), `history`
(text and `--json`), `gate` (`--json`, `--junit`) and `assert_audit` in pytest. Each must give
results.json's value (the share of scored probes, never counting a failed call), its Wilson
interval and its n (scored, failed): exactly where JSON carries the number, to the printed
precision where only text does (a percentage to 0.1%, a fraction to 0.001).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from tests.helpers import QUIET_PLUGINS, cli_output, last_json
from tests.one_value import (
    Key,
    Rows,
    Seen,
    Views,
    cli,
    compare_views,
    disagreements,
    find,
    junit,
    latest_views,
    markdown_tables,
    measures_of,
    plugin_failure,
    run_views,
    shape_tables,
    stored_views,
    systems_views,
    table_cells,
    terminal_tables,
)

from memgauge.stats.proportion import wilson_ci

SUBJECTS = Path(__file__).resolve().parents[1] / "data" / "subjects"
SAMPLE = Path(__file__).resolve().parents[2].parent / "shared" / "datasets" / "memaudit-sample.json"
TASK = "audit"
#: the measure's label in the audit's metrics table -> its name
LABELS = {
    "Recall accuracy": "recall_accuracy",
    "Hallucinated-memory rate (lower is better)": "hallucinated_memory_rate",
    "Conflict-resolution accuracy": "conflict_resolution_accuracy",
    "Temporal accuracy": "temporal_accuracy",
}
MEASURES = list(LABELS.values())
#: memaudit's AuditResult names
MEMAUDIT = {
    "recall_accuracy": "recallAccuracy",
    "hallucinated_memory_rate": "hallucinatedMemoryRate",
    "conflict_resolution_accuracy": "conflictResolutionAccuracy",
    "temporal_accuracy": "temporalAccuracy",
}
#: an agent that answers from a table and fails on three questions: failed calls, never scores
FLAKY = {
    "python": {
        "target": "lookup_agents:LookupAgent",
        "kwargs": {
            "answers": {"name": "Sarah", "mainly use": "Rust", "have": "a dog named Max"},
            "fail_on": ["blood type", "Which happened first: User has a dog", "joined"],
        },
    }
}
#: flaky's failed probes per measure (the three questions above)
FLAKY_FAILED = {
    "recall_accuracy": 1,
    "hallucinated_memory_rate": 1,
    "conflict_resolution_accuracy": 0,
    "temporal_accuracy": 2,
}


def _metrics(tables: dict[str, Rows]) -> dict[Key, Seen]:
    """The audit's metrics table (a measure per row, a subject per column), as percentages."""
    return table_cells(find(tables, "measure"), LABELS, 1)


def _counts(subject: str, counts: dict[str, Any]) -> dict[Key, Seen]:
    """results.json's (and `--json`'s) counts: per measure its value, ci95 and n."""
    return {
        (subject, m): Seen(c["value"], tuple(c["ci95"]), None, c["n_scored"], c["n_failed"])
        for m, c in counts.items()
    }


def _fail_under(subject: str) -> list[str]:
    """A met target on every rate (>= 0): JUnit then has a case per rate with its value."""
    return [a for m in MEASURES for a in ("--fail-under", f"{subject}/{TASK}/{m}=0")]


def _stored(run_id: str, db: str, root: Path, name: str) -> Views:
    seen, texts = stored_views(run_id, db, root, name, TASK, "audit")
    for view, tables in shape_tables(texts).items():
        seen[f"{view}: metrics table"] = _metrics(tables)
    return seen


# --- the runs, once for the module ----------------------------------------------------------


@pytest.fixture(scope="module")
def views(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Views, Views, Path]]:
    """Every view of the audit CLI's run (reference: its results.json) and of the suite's run
    (reference: results.json for `agent`, the run's stored summary for `flaky`); the store."""
    root = tmp_path_factory.mktemp("audit-one-value")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("MEMGAUGE_HOME", str(root / "home"))
        mp.syspath_prepend(str(SUBJECTS))
        db = str(root / "r.db")
        out = root / "out"
        audit: Views = {}
        argv = ["audit", str(SAMPLE), "--agent", "extractive", "--scoring", "offline"]
        xml = ["--junit", str(root / "a.xml"), *_fail_under("agent")]
        text = cli([*argv, "--output", str(out), "--store", db, "--json", *xml])
        results = json.loads((out / "results.json").read_text())
        audit["results.json"] = _counts("agent", results["counts"])
        audit["audit --json"] = _counts("agent", last_json(text)["counts"])
        memaudit = json.loads((out / "memaudit.json").read_text())["metrics"]
        audit["memaudit.json"] = {("agent", m): Seen(memaudit[MEMAUDIT[m]]) for m in MEASURES}
        audit["audit terminal"] = _metrics(terminal_tables(text))
        audit["audit report.md"] = _metrics(markdown_tables((out / "report.md").read_text()))
        audit["audit --junit"] = junit(root / "a.xml", "value", TASK, MEASURES)
        audit.update(_stored(str(results["run_id"]), db, root, "audit"))
        audit.update(latest_views(db, f"audit-{results['dataset']}", "audit", TASK, MEASURES))

        suite = {
            "name": "audit-one-value",
            "max_failure_rate": 0.5,
            "subjects": {"agent": {"extractive": {}}, "flaky": FLAKY},
            "tasks": [
                {
                    "name": TASK,
                    "kind": "expected-output",
                    "dataset": str(SAMPLE),
                    "probes": {},
                    "evaluators": ["audit-match"],
                }
            ],
        }
        path = root / "suite.yaml"
        path.write_text(yaml.safe_dump(suite))
        run: Views = {}
        xml = ["--junit", str(root / "r.xml"), *_fail_under("agent"), *_fail_under("flaky")]
        text = cli(["run", str(path), "--store", db, "--json", *xml])
        run["run --junit"] = junit(root / "r.xml", "value", TASK, MEASURES)
        run.update(run_views(text, "run", TASK, MEASURES))
        (listed,) = json.loads(
            cli_output(["runs", "list", "--store", db, "--json", "--limit", "1"])
        )
        run.update(_stored(str(listed["run_id"]), db, root, "run"))
        # the audit command's run against the suite's: A is `agent`'s, B the suite's two
        a_side, b_side = compare_views(str(results["run_id"]), listed["run_id"], db, TASK, MEASURES)
        audit.update(a_side)
        run.update(b_side)
        # the suite's subjects compared, and three runs: the audit command's twice, the suite's
        for seen in systems_views([listed["run_id"]], db, TASK, MEASURES).values():
            for view, cells in seen.items():
                run.setdefault(view, {}).update(cells)
        cli([*argv, "--output", str(root / "again"), "--store", db])
        again = json.loads((root / "again" / "results.json").read_text())["run_id"]
        three = [str(results["run_id"]), listed["run_id"], again]
        for system, seen in systems_views(three, db, TASK, MEASURES).items():
            side = run if system == listed["run_id"] else audit
            side.update({f"{view} ({system})": cells for view, cells in seen.items()})
        run.update(latest_views(db, "audit-one-value", "run", TASK, MEASURES))
        yield audit, run, Path(db)


def _by_definition(rate: Seen) -> None:
    """A rate is a share of its scored probes, with Wilson's interval of that share."""
    assert rate.n_scored
    assert isinstance(rate.value, float)
    count = round(rate.value * rate.n_scored)
    assert rate.value == count / rate.n_scored
    assert rate.ci == pytest.approx(wilson_ci(count, rate.n_scored))


def test_every_view_of_an_audit_gives_each_rate_one_value_ci_and_n(
    views: tuple[Views, Views, Path],
) -> None:
    audit, _, _ = views
    reference = audit["results.json"]
    assert set(reference) == {("agent", m) for m in MEASURES}
    for key, want in reference.items():
        assert want.n_failed == 0, key
        _by_definition(want)
    others = {k: v for k, v in audit.items() if k != "results.json"}
    assert disagreements(reference, others) == []


def test_a_suite_audit_with_failed_calls_gives_each_rate_one_value_ci_and_n(
    views: tuple[Views, Views, Path],
) -> None:
    """The same agent in a suite gives the audit command's numbers; the flaky agent's failed
    calls are counted as failed in every view, never as wrong answers."""
    audit, run, _ = views
    stored = run["runs show --json (run)"]
    reference = audit["results.json"] | {k: v for k, v in stored.items() if k[0] == "flaky"}
    for m in MEASURES:
        flaky = reference[("flaky", m)]
        assert flaky.n_failed == FLAKY_FAILED[m], m
        _by_definition(flaky)
    assert disagreements(reference, run) == []


@pytest.mark.usefixtures("pytester_keeps_modules")
def test_assert_audit_gives_the_same_values(
    views: tuple[Views, Views, Path], pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`assert_audit` in a user's test: its failure table prints every rate with its CI (one
    threshold missed on purpose), and its recorded run has the same n."""
    audit, _, db = views
    reference = audit["results.json"]
    thresholds: dict[str, float | str] = dict.fromkeys(MEASURES, 0.0)
    thresholds |= {"recall_accuracy": 0.999, "hallucinated_memory_rate": "<= 1"}
    monkeypatch.syspath_prepend(str(SUBJECTS))
    pytester.makepyfile(
        f"""
        from memgauge.pytest_plugin import assert_audit

        def test_memory():
            assert_audit(
                {str(SAMPLE)!r}, None, {thresholds!r},
                agent="extractive", scoring="offline", store={str(db)!r},
            )
        """
    )
    result = pytester.runpytest("-p", "memgauge.pytest_plugin", *QUIET_PLUGINS)
    result.assert_outcomes(failed=1)
    table, run_id = plugin_failure(result.stdout.str(), "agent", TASK, MEASURES, "assert_audit")
    shown = last_json(cli(["runs", "show", run_id, "--store", str(db), "--json"]))
    plugin = {
        "assert_audit failure table": table,
        "assert_audit run": measures_of(shown["summary"], "audit"),
    }
    assert disagreements(reference, plugin) == []


def test_the_audits_help_states_the_failure_budget_its_run_has(
    views: tuple[Views, Views, Path],
) -> None:
    """`audit --help` said `(default 0.1)` for --max-failure-rate, the option every evaluating
    command shares, while an audit lets half its probes fail: the run recorded 0.5."""
    _, _, db = views
    runs = json.loads(cli_output(["runs", "list", "--store", str(db), "--json"]))
    first = [r for r in runs if r["kind"] == "audit"][-1]  # the audit command's, no flag given
    shown = last_json(cli(["runs", "show", first["run_id"], "--store", str(db), "--json"]))
    budget = shown["settings"]["max_failure_rate"]
    text = " ".join(cli(["audit", "--help"]).split())
    assert f"its items (default {budget:g});" in text
    assert budget == 0.5
