"""An audit's rates have one value, one Wilson interval and one n, whichever way they are read.

`memgauge audit` on the memaudit sample (the offline extractive agent) and a suite's
expected-output task with probes (the same agent, beside one whose calls fail on some
questions) are read back through every view: the audit's terminal table, report.md,
results.json, memaudit.json, `--json` and `--junit`; the run's `--junit`, `runs show`
(text and `--json`), `memgauge report`, the viewer's run page, `health` (text and `--json`),
`history` (text and `--json`), `gate` (`--json`, `--junit`) and `assert_audit` in pytest. Each
must give results.json's value (the share of scored probes, never counting a failed call), its
Wilson interval and its n (scored, failed): exactly where JSON carries the number, to the
printed precision where only text does (a percentage to 0.1%, a fraction to 0.001).
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from starlette.testclient import TestClient
from tests.cli.test_one_value_everywhere import _Tables
from tests.helpers import QUIET_PLUGINS, cli_output, last_json

from memgauge.stats.proportion import wilson_ci
from memgauge.view.app import create_app

SUBJECTS = Path(__file__).resolve().parents[1] / "data" / "subjects"
SAMPLE = Path(__file__).resolve().parents[2].parent / "shared" / "datasets" / "memaudit-sample.json"
TASK = "audit"
#: the measure's name -> its label in the audit's metrics table
LABELS = {
    "recall_accuracy": "Recall accuracy",
    "hallucinated_memory_rate": "Hallucinated-memory rate (lower is better)",
    "conflict_resolution_accuracy": "Conflict-resolution accuracy",
    "temporal_accuracy": "Temporal accuracy",
}
MEASURES = list(LABELS)
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
            "answers": {
                "name": "Sarah",
                "mainly use": "Rust",
                "have": "a dog named Max",
            },
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


@dataclass(frozen=True)
class Seen:
    """One rate as one view shows it: the value and CI (exact, or the text printed as `fmt`:
    `pct` a percentage to 0.1%, else a format spec), and the counts where the view has them."""

    value: float | str | None
    ci: tuple[float | str, float | str] | None = None
    fmt: str | None = None
    n_scored: int | None = None
    n_failed: int | None = None


Key = tuple[str, str]  # (subject, measure)
Views = dict[str, dict[Key, Seen]]

_RATE = re.compile(
    r"(n/a|[\d.]+)%?(?: \[([\d.]+)%?, ([\d.]+)%?\])? "
    r"(?:\(n=(\d+)(?:, (\d+) failed)?\)|n (\d+)(?: · (\d+) failed)?)"
)


def _cell(text: str, fmt: str) -> Seen:
    """`80.0% [37.6%, 96.4%] (n=5)`, `0.750 [0.301, 0.954] (n=4, 1 failed)` or the grid's
    `0.800 [0.376, 0.964] n 5 · 1 failed`."""
    found = _RATE.search(text)
    assert found, text
    value, low, high, n1, f1, n2, f2 = found.groups()
    ci = (low, high) if low is not None else None
    return Seen(value, ci, fmt, int(n1 or n2), int(f1 or f2 or 0))


def _metrics_table(rows: list[list[str]]) -> dict[Key, Seen]:
    """The audit's metrics table (a measure per row, a subject per column), as percentages."""
    header = rows[0]
    by_label = {v: k for k, v in LABELS.items()}
    return {
        (subject, by_label[row[0]]): _cell(c, "pct")
        for row in rows[1:]
        if row[0] in by_label
        for subject, c in zip(header[1:], row[1:], strict=True)
    }


def _terminal(text: str) -> dict[Key, Seen]:
    """The metrics table on the terminal: the rows after its `measure` header."""
    rows: list[list[str]] = []
    for line in text.splitlines():
        cells = [c.strip() for c in re.split(r"[│┃]", line)[1:-1]]
        if line.startswith("┃") and cells[:1] == ["measure"]:
            rows = [cells]
        elif rows and cells and cells[0] in LABELS.values():
            rows.append(cells)
    return _metrics_table(rows)


def _markdown(text: str) -> dict[Key, Seen]:
    lines = text.splitlines()
    i = lines.index(next(line for line in lines if line.startswith("| measure |")))
    rows = [[c.strip() for c in line.strip("|").split("|")] for line in lines[i:]]
    return _metrics_table([r for r in rows if r[0] == "measure" or r[0] in LABELS.values()])


def _measures(summary: dict[str, Any]) -> dict[Key, Seen]:
    """The audit aggregate's measures in a stored summary (what gate, history and targets
    read)."""
    (agg,) = [a for a in summary["aggregates"] if a["aggregate"] == "audit"]
    return {
        (m["subject"], m["name"]): Seen(
            m["value"], (m["ci_low"], m["ci_high"]), None, m["n_scored"], m["n_failed"]
        )
        for m in agg["measures"]
    }


def _counts(subject: str, counts: dict[str, Any]) -> dict[Key, Seen]:
    """results.json's (and `--json`'s) counts: per measure its value, ci95 and n."""
    return {
        (subject, m): Seen(c["value"], tuple(c["ci95"]), None, c["n_scored"], c["n_failed"])
        for m, c in counts.items()
    }


def _junit(path: Path, line: str) -> dict[Key, Seen]:
    """Each case's `value X` (a run's target) or `current X [lo, hi]` (a gate's), as `.4g`."""
    out: dict[Key, Seen] = {}
    for case in ET.parse(path).getroot().iter("testcase"):
        subject, _, task = str(case.get("classname")).partition(".")
        measure = str(case.get("name")).split(" ")[0]
        text = " ".join((el.text or "") + " " + el.get("message", "") for el in case)
        found = re.search(rf"\b{line} (n/a|[-\d.e+]+)(?: \[([-\d.e+]+), ([-\d.e+]+)\])?", text)
        if task == TASK and measure in MEASURES and found:
            ci = (found.group(2), found.group(3)) if found.group(2) else None
            out[(subject, measure)] = Seen(found.group(1), ci, ".4g")
    return out


def _page(text: str) -> dict[str, dict[Key, Seen]]:
    """The run page (viewer or `memgauge report`): the results grid's audit rows and the
    audit section's metrics table."""
    parser = _Tables()
    parser.feed(text)
    grid = parser.tables["grid"]
    cells: dict[Key, Seen] = {}
    for row in grid[1:]:
        measure = row[1].removesuffix(" (audit)")
        if row[0] == TASK and measure in MEASURES:
            for subject, c in zip(grid[0][2:], row[2:], strict=True):
                cells[(subject, measure)] = _cell(c, ".3f")
    (table,) = [t for t in parser.tables.values() if t and t[0][:1] == ["measure"]]
    return {"grid": cells, "metrics table": _metrics_table(table)}


def _health_text(text: str) -> dict[Key, Seen]:
    """`  agent/audit recall_accuracy: 0.800 [0.376, 0.964] (n=5)`."""
    out: dict[Key, Seen] = {}
    for found in re.finditer(rf"^  (\w+)/{TASK} (\w+): (.*)$", text, re.M):
        if found.group(2) in MEASURES:
            out[(found.group(1), found.group(2))] = _cell(found.group(3), ".3f")
    return out


def _history_text(text: str) -> dict[Key, Seen]:
    """The `latest` column of each measure's row."""
    out: dict[Key, Seen] = {}
    for line in text.splitlines():
        cells = [c.strip() for c in re.split(r"[│┃]", line)[1:-1]]
        if len(cells) == 6 and cells[1] == TASK and cells[2] in MEASURES:
            out[(cells[0], cells[2])] = Seen(cells[4], None, ".3f")
    return out


def _fail_under(subject: str) -> list[str]:
    """A met target on every rate (>= 0): JUnit then has a case per rate with its value."""
    return [a for m in MEASURES for a in ("--fail-under", f"{subject}/{TASK}/{m}=0")]


def _stored(run_id: str, db: str, root: Path, name: str) -> Views:
    """Every view of a stored run: `runs show`, `memgauge report`, the viewer, `gate`."""
    seen: Views = {}
    shown = last_json(cli(["runs", "show", run_id, "--store", db, "--json"]))
    seen[f"runs show --json ({name})"] = _measures(shown["summary"])
    seen[f"runs show ({name})"] = _terminal(cli(["runs", "show", run_id, "--store", db]))
    page = root / f"{name}.html"
    cli(["report", run_id, "--out", str(page), "--store", db])
    for part, got in _page(page.read_text()).items():
        seen[f"memgauge report ({name}): {part}"] = got
    with TestClient(create_app(db)) as client:
        response = client.get(f"/runs/{run_id}")
    assert response.status_code == 200
    for part, got in _page(response.text).items():
        seen[f"viewer run page ({name}): {part}"] = got
    xml = root / f"{name}-gate.xml"
    gated = last_json(
        cli(["gate", run_id, "--store", db, "--json", "--no-learn", "--junit", str(xml)])
    )
    seen[f"gate --json ({name})"] = {
        (c["subject"], c["evaluator"]): Seen(c["current"], tuple(c["ci"]), None, c["n_scored"])
        for c in gated["metrics"]
        if c["task"] == TASK and c["evaluator"] in MEASURES
    }
    seen[f"gate --junit ({name})"] = _junit(xml, "current")
    return seen


def _latest(db: str, suite: str, name: str) -> Views:
    """`health` and `history`: they read the latest run of the store (of `suite`)."""
    seen: Views = {}
    health = last_json(cli(["health", "--store", db, "--suite", suite, "--json"]))
    (latest,) = health["latest_evaluations"]
    seen[f"health --json ({name})"] = {
        (m["subject"], m["measure"]): Seen(
            m["value"], tuple(m["ci"]), None, m["n_scored"], m["n_failed"]
        )
        for m in latest["metrics"]
        if m["task"] == TASK and m["measure"] in MEASURES
    }
    seen[f"health ({name})"] = _health_text(cli(["health", "--store", db, "--suite", suite]))
    history = last_json(cli(["history", suite, "--store", db, "--json"]))
    seen[f"history --json ({name})"] = {
        (m["subject"], m["evaluator"]): Seen(m["values"][-1])
        for m in history["metrics"]
        if m["task"] == TASK and m["evaluator"] in MEASURES
    }
    seen[f"history ({name})"] = _history_text(cli(["history", suite, "--store", db]))
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
        junit = ["--junit", str(root / "a.xml"), *_fail_under("agent")]
        text = cli([*argv, "--output", str(out), "--store", db, "--json", *junit])
        results = json.loads((out / "results.json").read_text())
        audit["results.json"] = _counts("agent", results["counts"])
        audit["audit --json"] = _counts("agent", last_json(text)["counts"])
        memaudit = json.loads((out / "memaudit.json").read_text())["metrics"]
        audit["memaudit.json"] = {("agent", m): Seen(memaudit[MEMAUDIT[m]]) for m in MEASURES}
        audit["audit terminal"] = _terminal(text)
        audit["audit report.md"] = _markdown((out / "report.md").read_text())
        audit["audit --junit"] = _junit(root / "a.xml", "value")
        audit_run = str(results["run_id"])
        audit.update(_stored(audit_run, db, root, "audit"))
        audit.update(_latest(db, f"audit-{results['dataset']}", "audit"))

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
        fail_under = [*_fail_under("agent"), *_fail_under("flaky")]
        cli(["run", str(path), "--store", db, "--junit", str(root / "r.xml"), *fail_under])
        run["run --junit"] = _junit(root / "r.xml", "value")
        (listed,) = json.loads(
            cli_output(["runs", "list", "--store", db, "--json", "--limit", "1"])
        )
        run.update(_stored(str(listed["run_id"]), db, root, "run"))
        run.update(_latest(db, "audit-one-value", "run"))
        yield audit, run, Path(db)


def _same(reference: dict[Key, Seen], views: Views) -> list[str]:
    """Every disagreement of a view with the reference, as `view: subject/measure: what`."""
    wrong = []
    for view, got in views.items():
        missing = sorted(set(reference) - set(got))
        if missing:
            wrong.append(f"{view}: no {', '.join('/'.join(k) for k in missing)}")
        for key, s in got.items():
            want = reference[key]
            name = f"{view}: {'/'.join(key)}"

            def shown(v: float | None, fmt: str | None) -> float | str | None:
                if fmt is None or v is None:
                    return v if v is not None or fmt is None else "n/a"
                return f"{100 * v:.1f}" if fmt == "pct" else format(v, fmt)

            if s.value != shown(want.value, s.fmt):  # type: ignore[arg-type]
                wrong.append(f"{name}: value {s.value}, not {want.value}")
            if s.ci is not None and want.ci is not None:
                ci = tuple(shown(b, s.fmt) for b in want.ci)  # type: ignore[arg-type]
                if s.ci != ci:
                    wrong.append(f"{name}: CI {s.ci}, not {want.ci}")
            for count in ("n_scored", "n_failed"):
                have = getattr(s, count)
                if have is not None and have != getattr(want, count):
                    wrong.append(f"{name}: {count} {have}, not {getattr(want, count)}")
    return wrong


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
    assert _same(reference, {k: v for k, v in audit.items() if k != "results.json"}) == []


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
    assert _same(reference, run) == []


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
    out = result.stdout.str()
    table: dict[Key, Seen] = {}
    for m in MEASURES:
        found = re.search(rf"agent/{TASK}/{m}\s+(n/a|[\d.]+)\s+\[([\d.]+), ([\d.]+)\]", out)
        assert found, (m, out[-3000:])
        table[("agent", m)] = Seen(found.group(1), (found.group(2), found.group(3)), ".4f")
    run_id = re.search(r"assert_audit: run (\S+) ", out)
    assert run_id, out[-3000:]
    shown = last_json(cli(["runs", "show", run_id.group(1), "--store", str(db), "--json"]))
    plugin = {"assert_audit failure table": table, "assert_audit run": _measures(shown["summary"])}
    assert _same(reference, plugin) == []


def cli(argv: list[str], ok: int = 0) -> str:
    """Run a command in-process; its stdout and stderr, one after the other."""
    return cli_output(argv, ok, with_stderr=True)
