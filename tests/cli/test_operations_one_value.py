"""Memory operations' pass rates have one value, one Wilson interval and one n, whichever way
they are read.

`memgauge operations` on the fixture cases, with a decider whose call fails on one case, is
read back through every view: its terminal tables, operations.json, `--json` and `--junit`;
`runs show` (text and `--json`), `memgauge report`, the viewer's run page, `health`, `history`,
`gate` (`--json`, `--junit`) and `assert_operations` in pytest. Each must give operations.json's
value, interval and n (scored, failed) for every tier and check.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.helpers import QUIET_PLUGINS, last_json
from tests.one_value import (
    Key,
    Rows,
    Seen,
    Views,
    cli,
    disagreements,
    find,
    junit,
    latest_views,
    measures_of,
    plugin_failure,
    shape_tables,
    stored_views,
    table_cells,
    terminal_tables,
)

from memgauge.stats.proportion import wilson_ci

SUBJECTS = Path(__file__).resolve().parents[1] / "data" / "subjects"
CASES = Path(__file__).resolve().parents[1] / "data" / "operations" / "cases.json"
TASK = "operations"
TIERS = ["heuristic", "operation", "judge"]
CHECKS = ["exact-noop", "no-placeholders", "required-fields", "action", "similarity"]
CHECKS += ["merge-quality"]
MEASURES = [f"tier.{t}" for t in TIERS] + [f"check.{c}" for c in CHECKS]
#: the measures with a value (no judge is asked: the judge's tier and check are n/a)
VALUED = [m for m in MEASURES if m not in ("tier.judge", "check.merge-quality")]
#: the decision on topic-1 (a new topic, not a duplicate) fails: failed for the checks that
#: apply to its case whatever the decision (not exact-noop, a duplicate's; not the judge's, an
#: UPDATE's), and their tiers
FAILED = dict.fromkeys(MEASURES, 1) | dict.fromkeys(
    ["check.exact-noop", "check.merge-quality", "tier.judge"], 0
)
DECIDER = "{python: {target: flaky_decider:FlakyDecider, kwargs: {fail_on: [refresh patterns]}}}"


def _tables(tables: dict[str, Rows]) -> dict[Key, Seen]:
    """The tiers' table and the checks' table (a label and a second column before the
    subjects'), as percentages."""
    tiers = table_cells(find(tables, "tier"), {t: f"tier.{t}" for t in TIERS}, 2)
    return tiers | table_cells(find(tables, "check"), {c: f"check.{c}" for c in CHECKS}, 2)


def _summary(summary: dict[str, Any]) -> dict[Key, Seen]:
    """operations.json's (and `--json`'s) tiers and checks (an entry without `n_failed` says
    none failed, as its table cell does)."""
    out: dict[Key, Seen] = {}
    for prefix, group in (("tier", summary["tiers"]), ("check", summary["checks"])):
        for name, e in group.items():
            ci = None if e["ci95"] is None else tuple(e["ci95"])
            out[("decider", f"{prefix}.{name}")] = Seen(
                e["pass_rate"], ci, None, e["n"], e.get("n_failed", 0)
            )
    return out


@pytest.fixture(scope="module")
def views(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Views, Path]]:
    root = tmp_path_factory.mktemp("operations-one-value")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("MEMGAUGE_HOME", str(root / "home"))
        mp.syspath_prepend(str(SUBJECTS))
        db, out = str(root / "r.db"), root / "out"
        seen: Views = {}
        argv = ["operations", str(CASES), "--decider", DECIDER, "--no-judge", "--no-targets"]
        argv += ["--max-failure-rate", "0.5", "--output", str(out), "--store", db, "--json"]
        argv += ["--junit", str(root / "o.xml")]
        argv += [a for m in VALUED for a in ("--fail-under", f"decider/{TASK}/{m}=0")]
        text = cli(argv)
        written = json.loads((out / "operations.json").read_text())
        seen["operations.json"] = _summary(written)
        seen["operations --json"] = _summary(last_json(text))
        seen["operations terminal"] = _tables(terminal_tables(text))
        seen["operations --junit"] = junit(root / "o.xml", "value", TASK, MEASURES)
        stored, texts = stored_views(str(written["run_id"]), db, root, "run", TASK, TASK)
        seen |= stored
        for view, tables in shape_tables(texts).items():
            seen[f"{view}: tiers and checks"] = _tables(tables)
        (listed,) = json.loads(cli(["runs", "list", "--store", db, "--json"]))
        seen |= latest_views(db, listed["suite"], "run", TASK, MEASURES)
        yield seen, Path(db)


def test_every_view_of_operations_gives_each_rate_one_value_ci_and_n(
    views: tuple[Views, Path],
) -> None:
    """The failed decision is failed for each check (and tier) that applies to its case: in
    operations.json as in the stored measures that health, the grid and the gate read (which
    said 1 failed for every check, and operations.json none)."""
    seen, _ = views
    reference = seen["operations.json"]
    assert set(reference) == {("decider", m) for m in MEASURES}
    assert {k[1]: r.n_failed for k, r in reference.items()} == FAILED
    for m in VALUED:
        rate = reference[("decider", m)]
        assert rate.n_scored
        assert isinstance(rate.value, float)
        count = round(rate.value * rate.n_scored)
        assert rate.ci == pytest.approx(wilson_ci(count, rate.n_scored))
    assert reference[("decider", "tier.judge")] == Seen(None, None, None, 0, 0)
    # the run's JUnit has a case per target: the measures with a value
    targeted = {k: v for k, v in reference.items() if k[1] in VALUED}
    junit_view = {"operations --junit": seen["operations --junit"]}
    others = {k: v for k, v in seen.items() if k not in ("operations.json", *junit_view)}
    assert disagreements(reference, others) + disagreements(targeted, junit_view) == []


@pytest.mark.usefixtures("pytester_keeps_modules")
def test_assert_operations_gives_the_same_values(
    views: tuple[Views, Path], pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`assert_operations` in a user's test: its failure table prints each rate with its CI
    (one threshold missed on purpose), and its recorded run has the same values and n."""
    seen, db = views
    reference = seen["operations.json"]
    thresholds: dict[str, float | str] = dict.fromkeys(VALUED, 0.0) | {"tier.heuristic": "> 1"}
    monkeypatch.syspath_prepend(str(SUBJECTS))
    pytester.makepyfile(
        f"""
        from memgauge.pytest_plugin import assert_operations

        def test_decider():
            assert_operations(
                {str(CASES)!r}, {DECIDER!r}, {thresholds!r}, store={str(db)!r},
                max_failure_rate=0.5,
            )
        """
    )
    result = pytester.runpytest("-p", "memgauge.pytest_plugin", *QUIET_PLUGINS)
    result.assert_outcomes(failed=1)
    table, run_id = plugin_failure(
        result.stdout.str(), "decider", TASK, VALUED, "assert_operations"
    )
    shown = last_json(cli(["runs", "show", run_id, "--store", str(db), "--json"]))
    run = {"assert_operations run": measures_of(shown["summary"], TASK)}
    targeted = {k: v for k, v in reference.items() if k[1] in VALUED}
    table_view = {"assert_operations failure table": table}
    assert disagreements(reference, run) + disagreements(targeted, table_view) == []
