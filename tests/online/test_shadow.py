"""Shadow runs: stable bucketing, diff metrics and the seed's classification, a runner that
never lets the treatment hurt the user, and the stored summary."""

from __future__ import annotations

import html
import json
import re
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from scipy import stats as sps

from memgauge.cli.main import main
from memgauge.metrics import MetricConfig, evaluate_ranked
from memgauge.online.shadow import (
    ShadowRunner,
    bucket,
    diff_rankings,
    in_shadow,
    summarize_shadow,
)
from memgauge.store.shadow import ShadowStore


def test_bucketing_is_stable_and_proportional() -> None:
    assert bucket("q-1") == bucket("q-1")
    assert bucket("q-1", salt="a") != bucket("q-1", salt="b")
    share = sum(in_shadow(f"q{i}", 10) for i in range(20_000)) / 20_000
    assert share == pytest.approx(0.10, abs=0.01)


def test_diff_metrics_and_classification() -> None:
    ids = [f"m{i}" for i in range(10)]
    same = diff_rankings(ids, ids)
    assert same.kendall_tau_b == pytest.approx(1.0)
    assert (same.jaccard, same.classification) == (1.0, "identical")
    rev = diff_rankings(ids, ids[::-1])
    assert rev.kendall_tau_b == pytest.approx(-1.0)
    assert rev.top1_changed
    assert rev.classification == "incompatible"
    swap = [*ids[:8], ids[9], ids[8]]  # the last two swapped
    minor = diff_rankings(ids, swap)
    assert minor.order_differences == 2
    assert minor.kendall_tau_b == pytest.approx(
        sps.kendalltau(range(10), [0, 1, 2, 3, 4, 5, 6, 7, 9, 8]).statistic
    )
    assert minor.classification == "minor"
    new_top = diff_rankings(ids, [ids[1], ids[0], *ids[2:]])
    assert new_top.top1_changed
    assert new_top.classification == "major"
    judged = diff_rankings(["a", "b"], ["b", "a"], qrels={"b": 3})
    assert judged.mrr_delta == pytest.approx(1.0 - 0.5)
    assert judged.ndcg_delta is not None
    assert judged.ndcg_delta > 0
    partial = diff_rankings(["a", "b", "c"], ["a", "b", "x"])
    assert partial.jaccard == pytest.approx(2 / 4)


def test_the_runner_serves_control_and_records_only_the_shadow_share(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "r.db"

    def control(q: str, k: int) -> list[str]:
        return ["a", "b", "c"]

    def treatment(q: str, k: int) -> list[str]:
        if q == "boom":
            raise RuntimeError("treatment crashed")
        return ["b", "a", "c"]

    with ShadowStore(db) as store:
        runner = ShadowRunner("swap-top", control, treatment, store, percent=50)
        served = [runner.search(f"q{i}", "text") for i in range(200)]
        assert all(s == ["a", "b", "c"] for s in served)
        shadowed = [i for i in range(200) if in_shadow(f"q{i}", 50)]
        runner.flush()
        assert len(store.shadow_rows("swap-top")) == len(shadowed)
        boom_id = next(f"x{i}" for i in range(100) if in_shadow(f"x{i}", 50))
        assert runner.search(boom_id, "boom") == ["a", "b", "c"]
        runner.close()
        assert store.shadow_errors("swap-top") == 1
        assert runner.stats()["treatment_errors"] == 1
    assert main(["shadow", "summary", "swap-top", "--store", str(db), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)["swap-top"]
    assert out["n"] == len(shadowed)
    assert out["classes"]["major"] + out["classes"]["incompatible"] == len(shadowed)
    assert out["top1_changed_rate"] == 1.0
    assert out["n_errors"] == 1
    # seed 002's eval_shadow_runs, as another tool reads it
    with sqlite3.connect(db) as conn:
        ok = conn.execute(
            "SELECT control_result_ids, treatment_result_ids, rank_correlation, set_overlap,"
            " top_result_changed, order_differences, control_latency_ms, treatment_latency_ms"
            " FROM eval_shadow_runs WHERE feature_id = 'swap-top' AND error IS NULL LIMIT 1"
        ).fetchone()
        failed = conn.execute(
            "SELECT query_id, control_result_ids, treatment_result_ids, error"
            " FROM eval_shadow_runs WHERE error IS NOT NULL"
        ).fetchone()
    assert ok[:2] == ('["a", "b", "c"]', '["b", "a", "c"]')
    assert ok[2] == pytest.approx(1 / 3)  # tau-b of one swapped pair among three
    assert ok[3:6] == (1.0, 1, 2)
    assert ok[6] >= 0
    assert ok[7] >= 0
    assert failed == (boom_id, '["a", "b", "c"]', None, "RuntimeError: treatment crashed")


def test_a_recorder_that_fails_never_reaches_the_user() -> None:
    class Locked:
        def record_shadow(self, experiment: str, row: Any) -> None:
            raise sqlite3.OperationalError("database is locked")

        def record_shadow_dropped(self, experiment: str, n: int) -> None:
            raise AssertionError("nothing was dropped")

    def control(q: str, k: int) -> list[str]:
        return ["a", "b"]

    runner = ShadowRunner("x", control, lambda q, k: ["b", "a"], Locked(), percent=100)
    assert [runner.search(f"q{i}", "text") for i in range(3)] == [["a", "b"]] * 3
    runner.close()
    assert runner.record_errors == 3
    assert runner.last_record_error == "OperationalError: database is locked"


def test_summary_means_and_na_without_judgments() -> None:
    rows = [
        {**diff_rankings(["a", "b", "c"], t).as_dict(), "control_latency_ms": 1.0}
        for t in (["a", "b", "c"], ["c", "b", "a"])
    ]
    s = summarize_shadow(rows)
    assert s["mean_spearman_rho"] == pytest.approx(0.0)  # 1 and -1
    assert s["mean_order_differences"] == pytest.approx(1.0)  # 0 and 2
    assert s["mean_mrr_delta"] is None  # nothing judged: n/a, not 0


def test_deltas_are_evaluate_s_measures_with_its_threshold_and_gain() -> None:
    # seed 002: relevant = grade >= 2, so a (grade 1) is not relevant and b (3) is
    d = diff_rankings(["a", "b"], ["b", "a"], qrels={"a": 1, "b": 3})
    assert d.mrr_delta == 0.5
    ev = evaluate_ranked(
        {"c": {"a": 1, "b": 3}, "t": {"a": 1, "b": 3}},
        {"c": ["a", "b"], "t": ["b", "a"]},
        ["nDCG@10"],
    )
    assert d.ndcg_delta == ev.per_query["nDCG@10"][1] - ev.per_query["nDCG@10"][0]
    # an unjudged hit is not relevant even at threshold 0 (the old code counted grade > 0)
    at0 = MetricConfig(rel_threshold=0)
    assert diff_rankings(["u", "a"], ["a", "u"], qrels={"a": 0}, config=at0).mrr_delta == 0.5
    lenient = diff_rankings(["a", "b"], ["b", "a"], qrels={"a": 1, "b": 3}, config=MetricConfig(1))
    assert lenient.mrr_delta == 0.0  # both rank a relevant document first


def test_empty_rankings_with_judgments_have_zero_deltas_and_none_only_without() -> None:
    empty = diff_rankings([], [], qrels={"a": 3})
    assert (empty.mrr_delta, empty.ndcg_delta) == (0.0, 0.0)
    assert diff_rankings([], [], qrels=None).mrr_delta is None
    assert diff_rankings([], [], qrels={}).ndcg_delta is None
    rows = [{**empty.as_dict(), "control_latency_ms": 1.0}]
    assert summarize_shadow(rows)["mean_mrr_delta"] == 0.0  # judged: measured, 0


def test_the_runner_measures_deltas_with_its_metric_config() -> None:
    rows: list[Any] = []

    class Keep:
        def record_shadow(self, experiment: str, row: Any) -> None:
            rows.append(row)

        def record_shadow_dropped(self, experiment: str, n: int) -> None:
            raise AssertionError("nothing was dropped")

    judged = {"a": 1, "b": 3}
    for config, want in ((None, 0.5), (MetricConfig(rel_threshold=1), 0.0)):
        runner = ShadowRunner(
            "x",
            lambda q, k: ["a", "b"],
            lambda q, k: ["b", "a"],
            Keep(),
            percent=100,
            metric_config=config,
        )
        runner.search("q1", "text", qrels=judged)
        runner.close()
        assert rows[-1]["mrr_delta"] == want


def test_summary_is_a_table_and_a_sentence_when_there_is_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "r.db"
    with ShadowStore(db):
        pass  # the store, with no experiment yet
    assert main(["shadow", "summary", "--store", str(db)]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"no shadow experiment recorded in {db} yet: wrap a production search")
    assert out.count("\n") == 1

    def control(q: str, k: int) -> list[str]:
        return ["a", "b", "c"]

    def swapped(q: str, k: int) -> list[str]:
        return ["b", "a", "c"]

    with ShadowStore(db) as store:
        for name, treatment in (("swap-top", swapped), ("same", control)):
            runner = ShadowRunner(name, control, treatment, store, percent=100)
            for i in range(10):
                runner.search(f"q{i}", "text")
            runner.close()
    assert main(["shadow", "summary", "--store", str(db)]) == 0
    out = capsys.readouterr().out
    assert "{" not in out  # no Python dict
    rows = {
        cells[0]: cells[1:]
        for line in out.splitlines()
        if line.startswith("│")
        for cells in [[c.strip() for c in line.strip("│").split("│")]]
    }
    header = next(line for line in out.splitlines() if line.startswith("┃"))
    assert [c.strip() for c in header.strip("┃").split("┃")] == ["measure", "same", "swap-top"]
    assert rows["queries compared"] == ["10", "10"]
    assert rows["identical"] == ["10 (100%)", "0 (0%)"]
    assert rows["top-1 changed"] == ["0.0%", "100.0%"]
    assert rows["mean Jaccard"] == ["1.000", "1.000"]
    assert rows["mean MRR delta (judged)"] == ["n/a (0 judged)"] * 2  # nothing judged: never 0
    assert rows["treatment errors"] == ["0", "0"]


def test_summary_by_intent_breaks_down_each_intents_changes_and_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Seed 002's per-intent error breakdown: the intent each query was shadowed with groups
    the comparisons (and the treatment's errors)."""
    db = tmp_path / "r.db"

    def control(q: str, k: int) -> list[str]:
        return ["a", "b", "c"]

    def treatment(q: str, k: int) -> list[str]:
        if q == "boom":
            raise RuntimeError("treatment crashed")
        return ["b", "a", "c"] if q.startswith("why") else ["a", "b", "c"]

    with ShadowStore(db) as store:
        runner = ShadowRunner("by-intent", control, treatment, store, percent=100)
        for i in range(6):  # the decision queries, judged: a is the relevant one
            runner.search(f"d{i}", "why", {"a": 3}, intent="find_decision")
        for i in range(4):
            runner.search(f"u{i}", "what", intent="understand")
        runner.search("u-boom", "boom", intent="understand")
        runner.search("n0", "what")  # no intent
        runner.close()
    assert main(["shadow", "summary", "by-intent", "--by", "intent", "--store", str(db),
                 "--json"]) == 0  # fmt: skip
    out = json.loads(capsys.readouterr().out)["by-intent"]
    assert (out["n"], out["n_errors"]) == (11, 1)
    groups = out["by_intent"]
    assert list(groups) == ["find_decision", "understand", "(no intent)"]
    decision, understand, none = groups.values()
    assert (decision["n"], decision["n_errors"], decision["top1_changed_rate"]) == (6, 0, 1.0)
    assert decision["classes"]["identical"] == 0
    assert decision["mean_mrr_delta"] == pytest.approx(0.5 - 1.0)  # a fell from 1st to 2nd
    assert (understand["n"], understand["n_errors"]) == (4, 1)
    assert understand["classes"]["identical"] == 4
    assert understand["mean_mrr_delta"] is None  # nothing judged: n/a, never 0
    assert (none["n"], none["n_errors"]) == (1, 0)
    # the terminal: one table per experiment, a column per intent
    assert main(["shadow", "summary", "by-intent", "--by", "intent", "--store", str(db)]) == 0
    shown = capsys.readouterr().out
    assert "shadow experiment by-intent by intent" in shown
    table = shown.split("by intent")[1]
    rows = {
        cells[0]: cells[1:]
        for line in table.splitlines()
        if line.startswith("│")
        for cells in [[c.strip() for c in line.strip("│").split("│")]]
    }
    assert rows["queries compared"] == ["6", "4", "1"]
    assert rows["treatment errors"] == ["0", "1", "0"]
    assert rows["top-1 changed"] == ["100.0%", "0.0%", "0.0%"]
    assert rows["mean MRR delta (judged)"] == ["-0.500 (n=6)", "n/a (0 judged)", "n/a (0 judged)"]
    # without --by the summary is as before
    assert main(["shadow", "summary", "by-intent", "--store", str(db), "--json"]) == 0
    assert "by_intent" not in json.loads(capsys.readouterr().out)["by-intent"]


def _table(out: str) -> dict[str, list[str]]:
    """A rich table's rows on the terminal, by their first cell."""
    return {
        cells[0]: cells[1:]
        for line in out.splitlines()
        if line.startswith("│")
        for cells in [[c.strip() for c in line.strip("│").split("│")]]
    }


def test_the_shadow_page_and_summary_name_and_count_each_figure_alike(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The viewer's shadow page said `top1 changed rate 1.000` where `shadow summary` said
    `top-1 changed 100.0%`, and neither gave its judged-only MRR / nDCG deltas an n."""
    from starlette.testclient import TestClient

    from memgauge.view.app import create_app

    db = tmp_path / "r.db"
    with ShadowStore(db) as store:
        runner = ShadowRunner(
            "swap", lambda q, k: ["a", "b"], lambda q, k: ["b", "a"], store, percent=100
        )
        for i in range(4):  # the first three judged: "a" is relevant
            runner.search(f"q{i}", "text", {"a": 3} if i < 3 else None)
        runner.close()
        runner = ShadowRunner("plain", lambda q, k: ["a"], lambda q, k: ["a"], store, percent=100)
        runner.search("q0", "text")
        runner.close()
    assert main(["shadow", "summary", "--store", str(db)]) == 0
    cli = _table(capsys.readouterr().out)
    assert cli["mean MRR delta (judged)"] == ["n/a (0 judged)", "-0.500 (n=3)"]
    assert cli["mean nDCG delta (judged)"][0] == "n/a (0 judged)"
    assert cli["top-1 changed"] == ["0.0%", "100.0%"]
    client = TestClient(create_app(str(db)))
    for column, name in enumerate(("plain", "swap")):
        page = client.get("/shadow", params={"name": name}).text
        body = page[
            page.index('id="shadow-summary"') : page.index(
                "</table>", page.index('id="shadow-summary"')
            )
        ]
        rows = dict(re.findall(r"<th>([^<]*)</th><td[^>]*>([^<]*)</td>", body))
        shown = {label: cells[column] for label, cells in cli.items() if label in rows}
        assert rows == {html.unescape(k): v for k, v in rows.items()}
        assert shown == rows, (name, rows)
        assert len(rows) == len(cli), set(cli) - set(rows)


def test_an_intent_with_only_errors_shows_each_mean_as_n_a_with_its_count(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An intent whose every treatment call failed compared nothing: its means and latencies
    printed a bare `n/a`, beside `n/a (0 compared)` in its share rows; each says its count."""
    from memgauge.report.shadow import shadow_cells

    db = tmp_path / "r.db"

    def treatment(q: str, k: int) -> list[str]:
        if q == "boom":
            raise RuntimeError("treatment crashed")
        return ["a", "b"]

    with ShadowStore(db) as store:
        runner = ShadowRunner("e", lambda q, k: ["a", "b"], treatment, store, percent=100)
        runner.search("q0", "what", intent="understand")
        runner.search("q1", "boom", intent="broken")
        runner.close()
    assert main(["shadow", "summary", "e", "--by", "intent", "--store", str(db)]) == 0
    rows = _table(capsys.readouterr().out.split("by intent")[1])
    assert rows["queries compared"] == ["0", "1"]  # broken, understand
    for label in ("mean Kendall tau-b", "mean Jaccard", "p95 latency ms, control"):
        assert rows[label][0] == "n/a (0 compared)", label
    # the viewer's shadow page, of an experiment with nothing compared, shares the rows
    cells = dict(shadow_cells({"n": 0, "n_errors": 1, "n_dropped": 0}))
    assert cells["mean Spearman rho"] == "n/a (0 compared)"
