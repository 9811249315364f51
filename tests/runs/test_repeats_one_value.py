"""With `repeat: 3`, the repeat-aware mean, pass@k and pass^k have one value and one n (scored,
failed), whichever way they are read: the run's `--json` rows, `runs show` (text and `--json`),
`memgauge report`, the viewer's run page (its grid and the repeats table), `health`, `history`
and `gate` (`--json`, `--junit`). An item left out of a measure (no scored repeat, or fewer
than k) is counted as failed in each view, as the stored measure counts it.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from tests.helpers import last_json
from tests.one_value import (
    Key,
    Rows,
    Seen,
    Views,
    cell,
    cli,
    disagreements,
    find,
    latest_views,
    run_views,
    shape_tables,
    stored_views,
)

SUBJECTS = Path(__file__).resolve().parents[1] / "data" / "subjects"
TASK = "t"
#: a subject that fails every ask of q0 and every ask of q1 after its first, and one that fails
#: some asks of every question: items with 0, 1, 2 or 3 scored repeats
SUBJECT_SPECS = {
    "losing": {"python": {"target": "repeat_subjects:LosingAgent"}},
    "flaky": {"python": {"target": "repeat_subjects:FlakyAgent"}},
}
ITEMS = [{"id": f"q{i}", "input": f"question {i} about port", "expected": "8080"} for i in range(5)]
#: the repeats table's columns -> the measure each shows
COLUMNS = {
    "mean": "contains",
    "pass@1": "contains.pass@1",
    "pass@3": "contains.pass@3",
    "pass^3": "contains.pass^3",
}
MEASURES = [*COLUMNS.values(), "contains.pass@2", "contains.pass^2", "contains.pass^1"]


def _repeats_table(rows: Rows) -> dict[Key, Seen]:
    """The repeats table: a row per (subject, evaluator), a column per measure."""
    header = rows[0]
    return {
        (row[0], measure): cell(row[header.index(column)], "pct" if "pass" in column else ".3f")
        for row in rows[1:]
        if row[1] == "contains"
        for column, measure in COLUMNS.items()
    }


@pytest.fixture(scope="module")
def views(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Views, dict[Key, Seen]]]:
    root = tmp_path_factory.mktemp("repeats-one-value")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("MEMGAUGE_HOME", str(root / "home"))
        mp.syspath_prepend(str(SUBJECTS))
        suite = {
            "name": "rep",
            "max_failure_rate": 1.0,
            "subjects": SUBJECT_SPECS,
            "tasks": [
                {
                    "name": TASK,
                    "kind": "expected-output",
                    "repeat": 3,
                    "items": ITEMS,
                    "evaluators": ["contains"],
                }
            ],
        }
        path = root / "suite.yaml"
        path.write_text(yaml.safe_dump(suite))
        db = str(root / "r.db")
        text = cli(["run", str(path), "--store", db, "--concurrency", "1", "--json"])
        last = last_json(text)
        seen: Views = run_views(text, "run", TASK, MEASURES, table=False) | {
            "run --json": {
                (r["subject"], r["evaluator"]): Seen(
                    r["mean"], None, None, r["n_scored"], r["n_failed"]
                )
                for r in last["results"]
            }
        }
        stored, texts = stored_views(last["run_id"], db, root, "run", TASK, "repeats")
        reference = stored.pop("runs show --json (run)")
        seen |= stored
        for view, tables in shape_tables(texts).items():
            rows = find(tables, "subject", "evaluator", "mean", "within-item sd")
            seen[f"{view}: repeats table"] = _repeats_table(rows)
        seen |= latest_views(db, "rep", "run", TASK, MEASURES)
        yield seen, reference


def test_every_view_of_a_repeated_task_gives_each_measure_one_value_and_n(
    views: tuple[Views, dict[Key, Seen]],
) -> None:
    seen, reference = views
    # the data tells the counts apart: items left out of the mean, and more of pass@3 (an item
    # with fewer than 3 scored repeats has no pass@3)
    counts = {k: (r.n_scored, r.n_failed) for k, r in reference.items() if k[1] in COLUMNS.values()}
    assert counts[("losing", "contains")] == (4, 1)
    assert counts[("losing", "contains.pass@3")] == (3, 2)
    assert counts[("flaky", "contains.pass^3")][1] > 0
    gated = set(seen["gate --json (run)"])
    assert {k[1] for k in gated} >= {"contains"}  # the primary measure decides the gate

    def only(keys: object) -> dict[Key, Seen]:
        return {k: v for k, v in reference.items() if k in keys or k[1] in keys}  # type: ignore[operator]

    groups = [
        (only(COLUMNS.values()), [v for v in seen if v.endswith("repeats table")]),
        (only(MEASURES), [v for v in seen if v.startswith(("health", "history"))]),
        (only(gated), [v for v in seen if v.startswith("gate")]),
        (only(["contains"]), ["run --json"]),
        (only(MEASURES), ["run --json (run): measures"]),
        (reference, [v for v in seen if v.endswith(": grid")]),
    ]
    assert sorted(v for _, names in groups for v in names) == sorted(seen)
    wrong = [w for ref, names in groups for w in disagreements(ref, {n: seen[n] for n in names})]
    assert wrong == []
