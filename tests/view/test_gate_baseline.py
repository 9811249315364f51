"""The viewer's gate (a run's page, its report, the suite's trend) takes the rolling baseline
as `memgauge gate` takes it: a run that failed the gate, not accepted, is left out."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from starlette.testclient import TestClient
from tests.helpers import gated_suite

from memgauge.cli.main import main
from memgauge.view.app import create_app

SUBJECTS = Path(__file__).resolve().parents[1] / "data" / "subjects"


def _gate_line(html: str) -> str:
    start = html.index('<p id="gate">')
    return re.sub(r"<[^>]+>", "", html[start : html.index("</p>", start)])


def test_a_failed_gate_is_left_out_of_the_viewers_baseline_as_out_of_the_gates(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`memgauge gate` failed a run (exit 1) whose page, report and trend said "pass": the
    viewer's baseline counted the earlier run that had failed the gate, which the gate leaves
    out (0.7 against the mean of 1.0 and 0.2 is no drop; against 1.0 it is 30%)."""
    monkeypatch.syspath_prepend(str(SUBJECTS))
    db = str(tmp_path / "r.db")
    suite = str(tmp_path / "suite.yaml")
    for right, verdict in ((10, 0), (2, 1), (7, 1)):
        assert main(["run", str(gated_suite(tmp_path, right, n=10)), "--store", db]) == 0
        capsys.readouterr()
        assert main(["gate", suite, "--store", db, "--no-learn", "--json"]) == verdict
        gated = json.loads(capsys.readouterr().out)
    assert gated["status"] == "fail"
    [failed] = gated["excluded"]
    run_id = gated["run_id"]
    client = TestClient(create_app(db))
    line = _gate_line(client.get(f"/runs/{run_id}").text)
    assert line.startswith("Status fail, against the rolling baseline of 1 earlier"), line
    assert "(2 in history)" in line
    assert f"left out as failed gates: {failed}" in line
    report = tmp_path / "run.html"
    assert main(["report", run_id, "--store", db, "--out", str(report)]) == 0
    assert _gate_line(report.read_text()).startswith("Status fail"), report
    trend = client.get("/trends", params={"suite": "gated"}).text
    # the baseline at the third run: 1.0, not the mean of 1.0 and the failed run's 0.2
    assert "1.000" in trend
    assert "0.600" not in trend


def test_the_run_page_and_report_show_the_verdict_memgauge_gate_recorded(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """CI gated a pull request's run against main's bundle and failed it (exit 1); the run's
    report, kept as the job's artifact, said "Status pass, against the rolling baseline of 0
    earlier completed run(s)": the page recomputed a gate from the runner's store alone."""
    monkeypatch.syspath_prepend(str(SUBJECTS))
    main_db, pr_db = str(tmp_path / "main.db"), str(tmp_path / "pr.db")
    bundle = tmp_path / "baseline.json"
    assert main(["run", str(gated_suite(tmp_path, 10, n=10)), "--store", main_db]) == 0
    capsys.readouterr()
    assert main(["runs", "list", "--store", main_db, "--json"]) == 0
    [baseline] = [r["run_id"] for r in json.loads(capsys.readouterr().out)]
    export = ["runs", "export", baseline, "--format", "bundle", "--out", str(bundle)]
    assert main([*export, "--store", main_db]) == 0
    assert main(["run", str(gated_suite(tmp_path, 6, n=10)), "--store", pr_db]) == 0
    capsys.readouterr()
    gate = ["gate", str(tmp_path / "suite.yaml"), "--store", pr_db, "--no-learn", "--json"]
    assert main([*gate, "--baseline", str(bundle)]) == 1
    run_id = json.loads(capsys.readouterr().out)["run_id"]
    page = TestClient(create_app(pr_db)).get(f"/runs/{run_id}").text
    report = tmp_path / "run.html"
    assert main(["report", run_id, "--store", pr_db, "--out", str(report)]) == 0
    for html in (page, report.read_text()):
        start = html.index('<p id="gate-verdict">')
        line = re.sub(r"<[^>]+>", "", html[start : html.index("</p>", start)])
        assert line.startswith("Recorded by memgauge gate: fail, with the baseline"), line
        assert "--baseline bundles" in line


def test_the_trend_and_history_give_an_na_its_count(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The trend's table and `memgauge history` printed a bare "n/a" for a measure the latest
    run did not score and for a baseline no earlier run measured (the task renamed)."""
    monkeypatch.syspath_prepend(str(SUBJECTS))
    db = str(tmp_path / "r.db")
    assert main(["run", str(gated_suite(tmp_path, 10, n=10)), "--store", db]) == 0
    suite = gated_suite(tmp_path, 2, n=10)
    suite.write_text(suite.read_text().replace("name: qa", "name: answers"))
    assert main(["run", str(suite), "--store", db]) == 0
    capsys.readouterr()
    assert main(["history", "gated", "--store", db]) == 0
    out = capsys.readouterr().out
    old = next(line for line in out.splitlines() if "│ qa" in line)
    new = next(line for line in out.splitlines() if "│ answers" in line)
    assert re.search(r"n/a \(0 scored\)\s*│\s*1\.000\s*│", old), old
    assert re.search(r"0\.200\s*│\s*n/a \(0 earlier runs\)\s*│", new), new
    page = TestClient(create_app(db)).get("/trends", params={"suite": "gated"}).text
    rows = re.findall(r"<tr[^>]*>(.*?)</tr>", page[page.index('id="trend-measures"') :])
    cells = {
        re.sub(r"<[^>]+>", "", r).split(" / ")[1].split(" ")[0]: re.findall(
            r'<td class="num">([^<]*)</td>', r
        )
        for r in rows
        if "<td" in r
    }
    assert cells["qa"] == ["n/a (0 scored)", "1.000"], cells
    assert cells["answers"] == ["0.200", "n/a (0 earlier runs)"], cells
