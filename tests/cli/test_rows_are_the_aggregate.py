"""A run's evaluator rows give the very number its IR aggregate gives.

`memgauge evaluate` reports each measure from the IR aggregate (result.json, the terminal
table; what `gate`, `history`, `health` and the targets read); `runs show` prints the
retrieval evaluators' rows of the same run. A row's mean is the mean of the per-item scores,
taken over the items sorted by id and from `metrics.single`'s arithmetic, so it can differ from
the aggregate's in the last bit, and then be printed differently (0.3375 as 0.338 by
`evaluate`, as 0.337 by `runs show`). A row the aggregate measures alike shows the aggregate's
value, as it already shows its interval: one number, exactly, everywhere.

The data: 30 memories and 16 queries (ids q0..q15, so sorting by id reorders them) with graded
judgments, P@5, R-prec and nDCG means whose float sums depend on the order.
"""

from __future__ import annotations

import html
import json
import random
import re
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient
from tests.helpers import cli_output, last_json

from memgauge.view.app import create_app

MEASURES = ["nDCG@10", "nDCG@5", "RR@10", "P@5", "AP@20", "R-prec", "Recall@10", "Bpref"]
TOPICS = [
    "vitamin",
    "coffee",
    "sleep",
    "exercise",
    "diet",
    "stress",
    "memory",
    "heart",
    "bones",
    "sugar",
]
WORDS = [
    "the",
    "of",
    "and",
    "in",
    "to",
    "health",
    "study",
    "adults",
    "risk",
    "lower",
    "higher",
    "effect",
    "daily",
    "linked",
    "trial",
]


def _dataset(root: Path) -> Path:
    rng = random.Random(7)
    ds = root / "dataset"
    ds.mkdir()
    (ds / "dataset.yaml").write_text("name: rows\n")
    memories = []
    for i in range(30):
        t = rng.sample(TOPICS, 2)
        memories.append({"id": f"d{i}", "text": " ".join([*t, *rng.sample(WORDS, 6), t[0]])})
    queries, judgments = [], []
    for j in range(16):
        t = rng.sample(TOPICS, 2)
        queries.append({"id": f"q{j}", "text": " ".join(t) + " effect"})
        found = [m for m in memories if t[0] in m["text"] or t[1] in m["text"]]
        rng.shuffle(found)
        for m in found[:6]:
            grade = rng.choice([0, 1, 2, 2, 3])
            judgments.append({"query_id": f"q{j}", "memory_id": m["id"], "grade": grade})
    for name, rows in (("memories", memories), ("queries", queries), ("judgments", judgments)):
        (ds / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return ds


def test_runs_show_rows_are_the_values_evaluate_reports(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMGAUGE_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("COLUMNS", "200")
    db, out = str(tmp_path / "r.db"), tmp_path / "out"
    measures = [a for m in MEASURES for a in ("-m", m)]
    ds = str(_dataset(tmp_path))
    cli_output(
        ["evaluate", ds, "-s", "lexical", *measures, "--out", str(out), "--store", db, "--quiet"]
    )
    result = json.loads((out / "result.json").read_text())
    (system,) = result["systems"]
    reported = system["metrics"]
    shown = last_json(cli_output(["runs", "show", result["run_id"], "--store", db, "--json"]))
    rows = {r["evaluator"]: r for r in shown["results"]}
    differ = {
        m: (rows[m]["mean"], v["value"])
        for m, v in reported.items()
        if (rows[m]["mean"], rows[m]["ci_low"], rows[m]["ci_high"], rows[m]["n_scored"])
        != (v["value"], v["ci_low"], v["ci_high"], v["n_scored"])
    }
    assert differ == {}
    # and the terminal prints them alike: each row's mean as evaluate's table does
    text = cli_output(["runs", "show", result["run_id"], "--store", db])
    for m, v in reported.items():
        line = next(ln for ln in text.splitlines() if re.search(rf"\b{re.escape(m)}\s", ln))
        assert f"{v['value']:.3f}" in line, (m, v["value"], line)


def test_a_comparison_of_every_query_gives_each_system_its_value(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """evaluate's paired comparisons pair the queries sorted by id; their columns a and b
    (`mean_a`, `mean_b`) are the two systems' means over the queries both scored, here all of
    them: each system's value as the retrieval table reports it, to the last bit."""
    monkeypatch.setenv("MEMGAUGE_HOME", str(tmp_path / "home"))
    out = tmp_path / "out"
    measures = [a for m in MEASURES for a in ("-m", m)]
    ds = str(_dataset(tmp_path))
    systems = ["-s", "lexical", "-s", "reference:mode=lexical,candidates=5@narrow"]
    cli_output(["evaluate", ds, *systems, *measures, "--out", str(out), "--no-store", "--quiet"])
    result = json.loads((out / "result.json").read_text())
    value = {s["name"]: s["metrics"] for s in result["systems"]}
    (compared,) = result["comparisons"]
    assert (compared["baseline"], compared["candidate"]) == ("lexical", "narrow")
    differ = [
        (c["measure"], side, c[f"mean_{side}"], value[name][c["measure"]]["value"])
        for c in compared["metrics"]
        for side, name in (("a", "lexical"), ("b", "narrow"))
        if c["n"] != value[name][c["measure"]]["n_scored"]
        or c[f"mean_{side}"] != value[name][c["measure"]]["value"]
    ]
    assert differ == []


def test_runs_compare_and_the_viewer_give_each_run_its_value(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two runs compared (`runs compare A B`, the viewer's /compare): columns A and B are
    each run's value where the row pairs every item that run scored, as `evaluate` reported
    it, not the stored items' mean one bit away."""
    monkeypatch.setenv("MEMGAUGE_HOME", str(tmp_path / "home"))
    db = str(tmp_path / "r.db")
    measures = [a for m in MEASURES for a in ("-m", m)]
    ds = str(_dataset(tmp_path))
    runs = {}
    for system in ("lexical", "reference:mode=lexical,candidates=5@narrow"):
        out = tmp_path / system.rsplit("@", 1)[-1]
        argv = ["evaluate", ds, "-s", system, *measures, "--out", str(out), "--store", db]
        cli_output([*argv, "--quiet"])
        result = json.loads((out / "result.json").read_text())
        (reported,) = result["systems"]
        runs[result["run_id"]] = reported["metrics"]
    (a, va), (b, vb) = runs.items()
    rows = last_json(cli_output(["runs", "compare", a, b, "--store", db, "--json"]))["rows"]
    assert {r["evaluator"] for r in rows} == set(MEASURES)
    differ = [
        (r["evaluator"], r["mean_a"], va[r["evaluator"]]["value"], r["mean_b"])
        for r in rows
        if r["n"] != va[r["evaluator"]]["n_scored"]
        or (r["mean_a"], r["mean_b"]) != (va[r["evaluator"]]["value"], vb[r["evaluator"]]["value"])
    ]
    assert differ == []
    with TestClient(create_app(db)) as client:
        page = client.get(f"/compare?a={a}&b={b}")
    assert page.status_code == 200
    text = re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", page.text)))
    for m in MEASURES:
        want = f"{m} {va[m]['value']:.3f} {vb[m]['value']:.3f}"
        assert want in text, (want, re.findall(rf"{re.escape(m)} \S+ \S+", text))


def test_the_systems_table_gives_each_system_its_value(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The table of systems (`runs compare RUN` of one run's subjects; several runs through
    `api.compare_stored_runs`, what `--format markdown|latex` prints): each system's mean and
    each pair's means are the values its run reports, where it scored what the run did."""
    from memgauge import api
    from memgauge.store.suite_runs import SuiteRunStore

    monkeypatch.setenv("MEMGAUGE_HOME", str(tmp_path / "home"))
    db = str(tmp_path / "r.db")
    measures = [a for m in MEASURES for a in ("-m", m)]
    ds = str(_dataset(tmp_path))
    systems = ["lexical", "reference:mode=lexical,candidates=5@narrow"]
    reported: dict[str, dict[str, Any]] = {}
    runs = []
    for given in ([systems[0]], [systems[1]], systems):
        out = tmp_path / f"run{len(runs)}"
        argv = ["evaluate", ds, *(a for s in given for a in ("-s", s)), *measures, "--quiet"]
        cli_output([*argv, "--out", str(out), "--store", db])
        result = json.loads((out / "result.json").read_text())
        runs.append(result["run_id"])
        reported.update({s["name"]: s["metrics"] for s in result["systems"]})
    one = json.loads(cli_output(["runs", "compare", runs[2], "--store", db, "--json"]))
    with SuiteRunStore(db) as store:
        _, several, _ = api.compare_stored_runs(store, runs[:2])
    for table in (one, several.as_dict()):
        assert sorted(table["systems"]) == ["lexical", "narrow"]
        differ = [
            (label, name, mean)
            for label, means in table["means"].items()
            for name, mean in means.items()
            if mean != reported[name][label.rsplit(" / ", 1)[-1]]["value"]
        ]
        differ += [
            (c["measure"], c[side], c[f"mean_{side}"])
            for c in table["comparisons"]
            for side in ("a", "b")
            if c[f"mean_{side}"] != reported[c[side]][c["measure"].rsplit(" / ", 1)[-1]]["value"]
        ]
        assert differ == []
