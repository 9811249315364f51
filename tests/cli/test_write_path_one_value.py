"""The write path's numbers have one value and one interval, whichever way they are read.

`memgauge extraction` reports macro F1 (the mean of the cases' F1) with its bootstrap CI; the
run's `extraction` evaluator row (`runs show`, what the gate and the targets read) is the mean
of the same cases' F1. Both must give the same value, n and interval: the interval drawn with
the one bootstrap (`stats.bootstrap`: its resamples, seed and percentiles), not a second one
with its own resample count.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.helpers import cli_output, last_json

CASES = Path(__file__).resolve().parents[1] / "data" / "extraction" / "cases.json"


def test_extraction_macro_f1_and_its_evaluator_row_have_one_interval(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMGAUGE_HOME", str(tmp_path / "home"))
    db = str(tmp_path / "r.db")
    extractor = "{memory: {reference: {mode: lexical}}}"
    argv = ["extraction", str(CASES), "--extractor", extractor, "--no-targets", "--json"]
    report = last_json(cli_output([*argv, "--store", db]))
    shown = last_json(cli_output(["runs", "show", str(report["run_id"]), "--store", db, "--json"]))
    (row,) = shown["results"]
    f1 = report["f1"]
    # the data tells intervals apart: not every case scores alike
    assert f1["macro_ci95"][0] < f1["macro"] < f1["macro_ci95"][1]
    assert row["n_scored"] == report["n_scored"] == 10
    assert row["mean"] == pytest.approx(f1["macro"], rel=1e-12)
    assert [row["ci_low"], row["ci_high"]] == f1["macro_ci95"]
    (aggregate,) = [a for a in shown["summary"]["aggregates"] if a["aggregate"] == "extraction"]
    (macro,) = [m for m in aggregate["measures"] if m["name"] == "f1_macro"]
    assert [macro["ci_low"], macro["ci_high"]] == f1["macro_ci95"]
