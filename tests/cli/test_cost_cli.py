"""`memgauge evaluate` prints accuracy beside context tokens (in a named encoding) and latency,
and its cost measures are gateable by name.

The two memories' o200k_base ids are published (tests/metrics/test_tokens.py): "hello world"
is 2 tokens and "antidisestablishmentarianism" 6; each query finds its one memory at k=1, so
the contexts are 2 and 6 tokens."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memgauge.cli.main import main


def _dataset(root: Path) -> Path:
    data = root / "tiny"
    data.mkdir()
    rows = {
        "memories": [
            {"id": "m1", "text": "hello world"},
            {"id": "m2", "text": "antidisestablishmentarianism"},
        ],
        "queries": [
            {"id": "q1", "text": "hello"},
            {"id": "q2", "text": "antidisestablishmentarianism"},
        ],
        "judgments": [
            {"query_id": "q1", "memory_id": "m1", "grade": 3},
            {"query_id": "q2", "memory_id": "m2", "grade": 3},
        ],
    }
    for name, lines in rows.items():
        (data / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines))
    return data


def _evaluate(tmp_path: Path, *extra: str) -> int:
    data = _dataset(tmp_path)
    args = ["evaluate", str(data), "-s", "lexical", "-m", "Recall@1", "--k", "1"]
    return main([*args, "--store", str(tmp_path / "r.db"), "--out", str(tmp_path / "out"), *extra])


def test_evaluate_prints_tokens_in_their_encoding_beside_accuracy(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _evaluate(tmp_path, "--quiet") == 0
    out = capsys.readouterr().out
    assert "accuracy against context tokens (o200k_base) and latency (ms, stage total)" in out
    md = (tmp_path / "out" / "summary.md").read_text()
    for line in (
        "| Recall@1 | 1.000 [1.000, 1.000] |",
        "| context_tokens.mean (o200k_base) | 4.000 [2.000, 6.000] |",
        "| context_tokens.p50 (o200k_base) | 4.000 [2.000, 6.000] |",
        # NumPy's linear quantile of [2, 6] at 0.95
        "| context_tokens.p95 (o200k_base) | 5.800 [2.000, 6.000] |",
        # 1000 * mean recall 1.0 / mean tokens 4
        "| Recall@1_per_1k_tokens (o200k_base) | 250.000 [166.667, 500.000] |",
    ):
        assert line in md
    for name in ("context_tokens.p50 (o200k_base)", "latency_ms.p95", "Recall@1_per_1k_tokens"):
        assert name in out


def test_a_cost_measure_gates_by_name(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """250 recall per 1,000 tokens misses a minimum of 300: exit 1, the target named."""
    assert _evaluate(tmp_path, "--quiet", "--fail-under", "Recall@1_per_1k_tokens=300") == 1
    out = capsys.readouterr().out
    assert "target lexical/retrieval/Recall@1_per_1k_tokens >= 300: 250 MISSED" in out


def test_a_dead_subject_has_no_cost_figures_but_its_failures(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every search of `raising` fails: exit 4, and its column says n/a with nothing scored
    (never 0 tokens) beside the working subject's figures."""
    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parents[1] / "data" / "subjects"))
    code = _evaluate(tmp_path, "--quiet", "-s", "python:broken:Broken@raising")
    assert code == 4
    md = (tmp_path / "out" / "summary.md").read_text()
    assert "| context_tokens.mean (o200k_base) | 4.000 [2.000, 6.000] | n/a (0 scored) |" in md
    assert "| latency_ms.p50 |" in md


def test_run_prints_the_budget_figures_worked_out_by_hand(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Budget 4: q1's 2 tokens use half of it; q2's one hit (6 tokens, relevant) does not fit
    and is cut. Usage ratios 0.5 and 1.5, one query of two over, one relevant memory of the two
    found cut."""
    data = _dataset(tmp_path)
    suite = {
        "name": "budget",
        "subjects": {"lexical": {"reference": {"mode": "lexical"}}},
        "tasks": [
            {
                "name": "recall",
                "kind": "retrieval",
                "dataset": str(data),
                "k": 1,
                "evaluators": [{"retrieval": {"measure": "Recall@1"}}],
                "aggregates": ["ir", {"cost": {"budget": 4}}],
            }
        ],
    }
    path = tmp_path / "suite.yaml"
    path.write_text(json.dumps(suite))
    assert main(["run", str(path), "--store", str(tmp_path / "r.db")]) == 0
    out = capsys.readouterr().out
    assert (
        "accuracy against context tokens (o200k_base) and latency (ms, stage total), token budget 4"
        in out
    )
    rows = {
        line.split("│")[1].strip(): line.split("│")[2].strip()
        for line in out.splitlines()
        if line.count("│") == 3
    }
    assert rows["token_usage_ratio.mean (o200k_base)"] == "1.000 [0.500, 1.500]"
    assert rows["context_overflow_rate (o200k_base)"] == "0.500 [0.000, 1.000]"
    assert rows["budget_cut_relevant.mean (o200k_base)"] == "0.500 [0.000, 1.000]"
    assert rows["budget_cut_relevant_rate (o200k_base)"] == "0.500 [0.000, 1.000]"


def test_accuracy_against_tokens_and_latency_on_the_terminal_report_and_viewer(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import re
    import sqlite3

    from starlette.testclient import TestClient

    from memgauge.view.app import create_app

    assert _evaluate(tmp_path, "--quiet") == 0
    out = capsys.readouterr().out
    # the compact text form: each subject's dot, its accuracy bar and the median context
    assert "Recall@1 against context tokens (y: Recall@1; x: context tokens per query" in out
    assert "lexical  ██████████ 1.000 [1.000, 1.000] at 4.0 [2.0, 6.0]" in out
    assert "Recall@1 against latency (y: Recall@1; x: latency per query (ms, median" in out
    md = (tmp_path / "out" / "summary.md").read_text()
    assert "**Recall@1 against context tokens" in md
    assert "- lexical ██████████ 1.000 [1.000, 1.000] at 4.0 [2.0, 6.0]\n" in md
    html = (tmp_path / "out" / "report.html").read_text()
    svg = re.search(
        r'<svg class="chart"[^>]*aria-label="Recall@1 against context tokens".*?</svg>', html
    )
    assert svg is not None
    assert svg.group(0).count("<circle") == 1  # one subject, one dot
    assert "<title>lexical: Recall@1 1 at context tokens per query" in svg.group(0)
    assert 'aria-label="Recall@1 against latency"' in html
    assert 'id="cost-accuracy"' in html
    con = sqlite3.connect(tmp_path / "r.db")
    [(run_id,)] = con.execute("SELECT run_id FROM suite_runs").fetchall()
    con.close()
    with TestClient(create_app(str(tmp_path / "r.db"))) as client:
        page = client.get(f"/runs/{run_id}").text
    assert 'aria-label="Recall@1 against context tokens"' in page
    assert 'aria-label="Recall@1 against latency"' in page
    assert 'id="cost-accuracy"' in page
    report_md = tmp_path / "run.md"
    assert main(["report", run_id, "--store", str(tmp_path / "r.db"), "--out", str(report_md)]) == 0
    text = report_md.read_text()
    # the scatter as a table of dots in the Markdown report
    assert "| subject | context tokens per query (median, o200k_base) | Recall@1 |" in text
    assert "| lexical | 4.000 [2.000, 6.000] | 1.000 [1.000, 1.000] (n=2) |" in text


def test_a_target_on_a_measure_with_nothing_scored_says_n_a_with_its_count(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every search of `raising` fails: its target's line printed `n/a n/a`, no count; it
    says `n/a (0 scored, 2 failed)`, as every other n/a, in the terminal and in JUnit."""
    from memgauge.data.records import MeasureValue, TargetCheck
    from memgauge.report.junit import target_line

    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parents[1] / "data" / "subjects"))
    code = _evaluate(tmp_path, "-s", "python:broken:Broken@raising", "--fail-under", "Recall@1=0.5")
    assert code == 4
    out = capsys.readouterr().out
    (line,) = [x for x in out.splitlines() if x.startswith("target raising/")]
    assert "n/a n/a" not in line
    assert ">= 0.5: n/a (0 scored, 2 failed) MISSED (unmeasured) [--fail-under]" in line
    check = TargetCheck(
        subject="s", task="t", measure="m", op=">=", target=0.5, value=None, met=None,
        source="suite",
    )  # fmt: skip
    measured = MeasureValue(subject="s", task="t", name="m", value=None, n_failed=2)
    line = target_line(check, [measured])
    assert line.startswith("value n/a (0 scored, 2 failed), threshold >= 0.5")


def test_a_missed_target_with_nothing_measured_says_missed_as_its_exit_code_does(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every search fails, within a failure rate of 1: the run completes, and its
    `--fail-under` target on a measure with no value is missed (exit 1). The terminal's line
    said `unmeasured`, no MISSED anywhere, while pytest's table said `MISSED`: one verdict
    in both, which says it counts and why."""
    from memgauge import api
    from memgauge.pytest_plugin import failure_table

    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parents[1] / "data" / "subjects"))
    subject = ("-s", "python:broken:Broken@raising", "--max-failure-rate", "1")
    assert _evaluate(tmp_path, *subject, "--fail-under", "Recall@1=0.5") == 1
    (line,) = [x for x in capsys.readouterr().out.splitlines() if x.startswith("target raising/")]
    assert line.endswith(": n/a (0 scored, 2 failed) MISSED (unmeasured) [--fail-under]"), line
    report = api.evaluate(
        tmp_path / "tiny",
        {"raising": "python:broken:Broken@raising"},
        measures=["Recall@1"],
        k=1,
        fail_under=["Recall@1=0.5"],
        max_failure_rate=1.0,
        store=False,
    )
    assert api.exit_code(report) == 1
    (row,) = [x for x in failure_table(report).splitlines() if x.startswith("raising/")]
    assert row.endswith("MISSED (unmeasured)"), row
