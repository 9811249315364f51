"""`memgauge evaluate` and seed 002's evaluation pipeline: the comparisons' sequential test,
per-category coverage warnings, and the run's sampling rate, feature and run type."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from memgauge.cli.main import main

SUBJECTS = Path(__file__).resolve().parents[1] / "data" / "subjects"


def bundle(where: Path, n: int, categories: dict[str, int] | None = None) -> Path:
    """A dataset of `n` queries `key{i}`, each judging memory m{i} relevant (grade 3); the
    queries' categories in blocks as `categories` counts them (the rest: no category)."""
    cats: list[str | None] = []
    for name, count in (categories or {}).items():
        cats += [name] * count
    cats += [None] * (n - len(cats))
    doc = {
        "name": "keys",
        "memories": [{"id": f"m{i}", "text": f"the fact called key{i}"} for i in range(n)],
        "queries": [
            {"id": f"q{i:03d}", "text": f"key{i}", **({"category": c} if c else {})}
            for i, c in enumerate(cats)
        ],
        "judgments": [
            {"query_id": f"q{i:03d}", "memory_id": f"m{i}", "grade": 3} for i in range(n)
        ],
    }
    path = where / "bundle.yaml"
    path.write_text(yaml.safe_dump(doc))
    return path


def evaluate(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], data: Path, *args: str
) -> tuple[int, dict[str, Any], str]:
    out = tmp_path / "out"
    capsys.readouterr()
    code = main(
        ["evaluate", str(data), *args, "--out", str(out), "--store", str(tmp_path / "r.db"),
         "--quiet"]
    )  # fmt: skip
    shown = capsys.readouterr()
    result = json.loads((out / "result.json").read_text()) if (out / "result.json").exists() else {}
    return code, result, shown.out + shown.err


@pytest.fixture(autouse=True)
def _rankers(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(SUBJECTS))


def test_comparisons_carry_the_sequential_test_decision(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Seed 002's comparison.sequentialTestDecision: the SPRT on the paired RR@10 differences,
    with the seed's Wald bounds or Ville's."""
    data = bundle(tmp_path, 80)
    worse, better = "python:rankers:half_demoted@worse", "python:rankers:perfect@better"
    code, result, shown = evaluate(tmp_path, capsys, data, "-s", worse, "-s", better)
    assert code == 0, shown
    (comp,) = result["comparisons"]
    assert (comp["baseline"], comp["candidate"]) == ("worse", "better")
    assert comp["sequential_test_decision"] == "accept-treatment"
    sq = comp["sequential"]
    assert sq["measure"] == "RR@10"
    assert sq["decision"] == "treatment_better"
    assert (sq["bounds"], sq["delta"], sq["alpha"], sq["beta"]) == ("ville", 0.05, 0.05, 0.2)
    assert sq["upper"] == pytest.approx(2.995732)  # ln(1 / 0.05)
    assert sq["n_pairs"] == 80
    # every even query differs by +0.5: the test starts at the 30th such pair (query 59)
    assert (sq["n"], sq["n_informative"]) == (59, 30)
    assert sq["log_lr"] >= sq["upper"]
    assert "sequential test (SPRT on RR@10, effect 0.05, ville bounds): better against worse:" \
        " accept-treatment after 59 of 80 pairs" in shown  # fmt: skip
    # the other way round, with the seed's bounds: the control is accepted
    code, result, shown = evaluate(
        tmp_path, capsys, data, "-s", better, "-s", worse, "--sprt-bounds", "wald"
    )
    sq = result["comparisons"][0]["sequential"]
    assert result["comparisons"][0]["sequential_test_decision"] == "accept-control"
    assert sq["bounds"] == "wald"
    assert (sq["upper"], sq["lower"]) == (
        pytest.approx(2.772589),  # ln((1 - 0.2) / 0.05)
        pytest.approx(-1.558145),  # ln(0.2 / (1 - 0.05))
    )
    # too few informative pairs: no decision, and the reader is told why
    small = bundle(tmp_path, 20)
    code, result, shown = evaluate(tmp_path, capsys, small, "-s", worse, "-s", better)
    assert result["comparisons"][0]["sequential_test_decision"] == "continue"
    assert result["comparisons"][0]["sequential"]["log_lr"] is None
    assert "continue after 20 of 20 pairs (not started: 10 of 30 informative pairs)" in shown


def test_evaluate_warns_of_thin_categories_by_healths_rule(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Seed 002 section 2.3: a per-category comparison needs at least 15 queries in the
    category; the dataset's coverage is held to the rule `memgauge health` holds the golden set
    to (`stats.coverage`), and each shortfall is a warning."""
    own = bundle(tmp_path, 25, {"alpha": 20, "beta": 5})
    code, result, shown = evaluate(tmp_path, capsys, own, "-s", "python:rankers:perfect@p")
    assert code == 0, shown
    want = "dataset: under the 15 queries a per-category comparison needs: beta (5)"
    assert result["dataset"]["warnings"] == [want]
    coverage = result["dataset"]["coverage"]
    assert coverage["other_categories"] == {"alpha": 20, "beta": 5}
    assert coverage["target"] is None  # its own categories: not held to the seed's targets
    assert f"warning: {want}" in shown
    # the seed's categories: its targets too, worded as health words them
    seeded = bundle(tmp_path, 25, {"semantic-search": 20, "cold-start": 5})
    code, result, shown = evaluate(tmp_path, capsys, seeded, "-s", "python:rankers:perfect@p")
    warnings = result["dataset"]["warnings"]
    assert warnings[0] == "dataset: 25 of 280 queries"
    assert warnings[1].startswith(
        "dataset: short of the category target: trigger-match (0 of 30), semantic-search (20 of 50)"
    )
    assert warnings[2] == (
        "dataset: under the 15 queries a per-category comparison needs: trigger-match (0),"
        " causal-query (0), cross-folder (0), intent-specific (0), cold-start (5),"
        " multi-concept (0), edge-case (0)"
    )
    assert result["dataset"]["coverage"]["categories"]["cold-start"] == {
        "queries": 5, "target": 15, "short_of_target": 10, "below_minimum": True
    }  # fmt: skip
    assert all(f"warning: {w}" in shown for w in warnings)
    # enough queries in each of its own categories: no warning
    plenty = bundle(tmp_path, 30, {"alpha": 15, "beta": 15})
    code, result, shown = evaluate(tmp_path, capsys, plenty, "-s", "python:rankers:perfect@p")
    assert result["dataset"]["warnings"] == []
    assert "warning: dataset" not in shown


def test_health_and_evaluate_share_one_coverage_rule() -> None:
    from memgauge.api import _health
    from memgauge.stats import coverage

    counts: dict[str | None, int] = {"semantic-search": 3, "mine": 2}
    got, warnings = _health._coverage(counts)
    assert (got, warnings) == coverage.category_coverage(counts, "golden set", seed_targets=True)
    assert warnings[-1].endswith("multi-concept (0), edge-case (0), mine (2)")


def test_sampling_rate_feature_and_run_type_are_recorded_and_shown(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Seed 002's EvalPipelineConfig: samplingRate asks a stable share of the queries;
    featureId and the run type label the run, in `runs show` and seed 002's eval_results."""
    import sqlite3

    from memgauge.data.traces import sampled

    data = bundle(tmp_path, 60)
    want = sorted(f"q{i:03d}" for i in range(60) if sampled(f"q{i:03d}", 0.25, 3))
    assert 5 < len(want) < 25  # a quarter, give or take
    args = ("-s", "python:rankers:perfect@p", "--sampling-rate", "0.25", "--seed", "3",
            "--feature-id", "session-boost", "--run-type", "shadow")  # fmt: skip
    code, result, shown = evaluate(tmp_path, capsys, data, *args)
    assert code == 0, shown
    (system,) = result["systems"]
    assert sorted(q["query_id"] for q in system["per_query"]) == want
    assert (system["metrics"]["RR@10"]["n_scored"], system["metrics"]["RR@10"]["n_failed"]) == (
        len(want),
        0,
    )  # the others were not asked: neither scored nor failed
    assert result["dataset"]["coverage"]["queries"] == len(want)  # the rule counts those asked
    db = str(tmp_path / "r.db")
    with sqlite3.connect(db) as conn:
        run_id, run_type, feature, n = conn.execute(
            "SELECT run_id, run_type, feature_id, query_count FROM eval_results"
        ).fetchone()
    assert (run_type, feature, n) == ("shadow", "session-boost", len(want))
    assert main(["runs", "show", run_id, "--store", db, "--json"]) == 0
    pipeline = json.loads(capsys.readouterr().out)["pipeline"]
    assert pipeline == {
        "retrieval": {
            "sampling_rate": 0.25,
            "feature_id": "session-boost",
            "run_type": "shadow",
            "n_judged": 60,
            "n_asked": len(want),
        }
    }
    assert main(["runs", "show", run_id, "--store", db]) == 0
    assert (
        "task retrieval: run type shadow, feature session-boost, sampling rate 0.25"
        f" ({len(want)} of 60 judged queries asked)"
    ) in capsys.readouterr().out
    # the same seed, the same sample; without the options, no pipeline line and run type full
    code, again, _ = evaluate(tmp_path, capsys, data, *args)
    assert sorted(q["query_id"] for q in again["systems"][0]["per_query"]) == want
    code, plain, _ = evaluate(tmp_path, capsys, data, "-s", "python:rankers:perfect@p")
    assert len(plain["systems"][0]["per_query"]) == 60
    with sqlite3.connect(db) as conn:
        last = conn.execute(
            "SELECT run_type, feature_id FROM eval_results ORDER BY id DESC LIMIT 1"
        ).fetchone()
    assert last == ("full", None)
    # a rate outside (0, 1] is bad input
    assert main(["evaluate", str(data), "--sampling-rate", "0", "--store", db]) == 2


def test_a_system_that_dedups_scores_the_tokens_its_dedup_saved(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Seed 002's dedup token savings: the tokens of the results the session dedup filtered.
    A system without dedup is scored on the repeats it returned; one that dedups reports what
    it filtered (`dedup_filtered`) and scores that, not 0."""
    doc = {
        "name": "sessions",
        "memories": [{"id": f"m{i}", "text": f"the fact called key{i}"} for i in range(4)],
        "queries": [
            {
                "id": f"q{i}",
                "text": f"key{i}",
                "session_context": {"session_id": "s1", "turn_number": i + 1},
            }
            for i in range(2)
        ],
        "judgments": [{"query_id": f"q{i}", "memory_id": f"m{i}", "grade": 3} for i in range(2)],
    }
    data = tmp_path / "sessions.yaml"
    data.write_text(yaml.safe_dump(doc))
    args = ("-m", "RR@2", "--k", "2", "--agent-k", "2")
    systems = ("-s", "python:rankers:perfect@plain", "-s", "python:rankers:session_dedup@dedup")
    code, result, shown = evaluate(tmp_path, capsys, data, *systems, *args)
    assert code == 0, shown
    by = {s["name"]: s["agent_metrics"]["dedup_token_savings@2"] for s in result["systems"]}
    # dedup returns m0 m1, then filters both: it saved those 8 tokens (it returned no repeat)
    assert by["dedup"]["value"] == 0.5
    assert by["dedup"]["detail"] == {"tokens_total": 16, "tokens_saved": 8, "tokens_filtered": 8}
    # plain returns m0 m1, then m1 m0 again: 8 of its 16 tokens repeat
    assert by["plain"]["value"] == 0.5
    assert by["plain"]["detail"] == {"tokens_total": 16, "tokens_saved": 8, "tokens_filtered": 0}


def test_the_sequential_decision_and_coverage_warnings_are_in_the_report_and_the_viewer(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """What evaluate prints of seed 002's sequential test and of thin categories is also drawn
    where a run is read later: `memgauge report` (Markdown and HTML) and the viewer."""
    from starlette.testclient import TestClient

    from memgauge.view.app import create_app

    data = bundle(tmp_path, 80, {"alpha": 75, "beta": 5})
    worse, better = "python:rankers:half_demoted@worse", "python:rankers:perfect@better"
    code, _, shown = evaluate(tmp_path, capsys, data, "-s", worse, "-s", better)
    assert code == 0, shown
    db = tmp_path / "r.db"
    code = main(["runs", "list", "--store", str(db), "--json"])
    run_id = json.loads(capsys.readouterr().out)[0]["run_id"]
    warning = "dataset: under the 15 queries a per-category comparison needs: beta (5)"
    decided = "| better vs worse | RR@10 | accept-treatment |"
    assert main(["report", run_id, "--out", str(tmp_path / "r.md"), "--store", str(db)]) == 0
    md = (tmp_path / "r.md").read_text()
    assert "Sequential test (seed 002's sequentialTestDecision)" in md
    assert decided in md
    assert "59 of 80 (30 informative)" in md
    assert warning in md
    assert main(["report", run_id, "--out", str(tmp_path / "r.html"), "--store", str(db)]) == 0
    with TestClient(create_app(db)) as client:
        page = client.get(f"/runs/{run_id}").text
    for html in (page, (tmp_path / "r.html").read_text()):
        assert "accept-treatment" in html
        assert "beta (5)" in html
