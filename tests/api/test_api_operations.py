"""Every command's work is a `memgauge.api` function a script can call without the CLI: checked
files, imports, A/B tests, audits, sample sizes, each with the errors the command shows."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from memgauge import api
from memgauge.errors import DataError, UsageError

DATA = Path(__file__).resolve().parents[1] / "data"
MEMAUDIT = (
    Path(__file__).resolve().parents[2].parent / "shared" / "datasets" / "memaudit-sample.json"
)


def test_validate_file_names_the_kind_and_what_the_file_holds() -> None:
    detected = api.validate_file(DATA / "good" / "qrels.txt")
    assert detected == api.validate_file(DATA / "good" / "qrels.txt", "qrels")
    assert detected[0] == "qrels"
    kind, summary = api.validate_file(DATA / "good" / "suite.yaml")
    assert kind == "suite"
    assert summary.startswith("suite ")
    with pytest.raises(DataError) as missing:
        api.validate_file(DATA / "good" / "no-such.jsonl")
    assert missing.value.problems[0].message == "no such file or directory"


def test_an_ab_test_from_python(tmp_path: Path) -> None:
    db = tmp_path / "r.db"
    assert api.create_ab_test("t", delta=0.05, min_samples=2, store=db) is True
    with pytest.raises(UsageError, match="exists with min_samples 2, not 100; pick another"):
        api.create_ab_test("t", delta=0.05, store=db)
    assert api.create_ab_test("t", delta=0.05, min_samples=2, store=db) is False  # run again
    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text(
        "".join(
            json.dumps({"query_id": f"q{i}", "control": 0.5, "treatment": 0.6}) + "\n"
            for i in range(4)
        )
    )
    n, held, state, report = api.add_ab_pairs("t", pairs, store=db)
    assert (n, held, report["n_pairs"]) == (4, 0, 4)
    assert report["mean_delta"] == pytest.approx(0.1)
    assert state.n == report["sprt"]["n"]
    assert api.pause_ab_test("t", store=db) == "paused"
    with pytest.raises(UsageError, match="paused"):
        api.add_ab_pairs("t", pairs, store=db)
    assert api.pause_ab_test("t", paused=False, store=db) != "paused"
    (listed,) = api.ab_test_reports(store=db)
    assert listed["n_pairs"] == 4
    with pytest.raises(UsageError, match="no results store"):
        api.ab_test_reports(store=tmp_path / "none.db")


@pytest.mark.skipif(not MEMAUDIT.exists(), reason="../shared/datasets is not here")
def test_import_and_an_offline_audit_from_python(tmp_path: Path) -> None:
    imported = api.import_dataset("memaudit", MEMAUDIT, tmp_path / "m")
    assert [p.name for p in imported.files] == ["conversations.json", "import_report.json"]
    assert json.loads(imported.report_path.read_text())["counts"] == imported.report.counts

    plan = api.plan_audit(MEMAUDIT, limit=6)
    assert (plan.agent, plan.method) == ("extractive", api.AUDIT_MATCH_METHOD)
    report = api.run_suite(plan.suite, store=False, kind="audit")
    result = api.audit_result(plan, report)
    assert result["run_id"] == report.run_id
    assert len(result["probes"]) == 6
    assert result["agent"].startswith("extractive baseline")
    with pytest.raises(UsageError, match="needs a model"):
        api.plan_audit(MEMAUDIT, agent="chat")


def test_sample_size_refuses_what_no_test_can_have() -> None:
    # normal approximation: ((z_0.975 + z_0.8) * sigma / delta)^2 = (2.8016 * 3)^2 = 70.6 -> 71
    size = api.sample_size(0.05, 0.15)
    assert size.n_normal == 71
    assert size.n_t >= size.n_normal  # the exact paired t needs a few more
    with pytest.raises(UsageError, match="positive"):
        api.sample_size(0.0, 0.15)


def test_every_api_name_loads_on_first_use_and_a_command_loads_only_its_own() -> None:
    assert set(api.__all__) == set(api._LAZY)
    for name in api.__all__:
        assert getattr(api, name) is not None, name
    code = (
        "import sys; from memgauge import api; api.apply_retention;"
        " print(sorted(m for m in sys.modules if m.startswith('memgauge')))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert "memgauge.store.querylog" in out
    assert "memgauge.runs.engine" not in out


def test_an_import_over_its_source_names_the_keyword_from_python(tmp_path: Path) -> None:
    """`api.import_dataset("memaudit", d/conversations.json, d)` is refused (it would replace
    the file it reads), but the refusal said "--out d ...: give another --out", a flag a
    Python caller has not got: it names `out_dir`, as `argument()` names keywords."""
    import shutil

    src = tmp_path / "conversations.json"
    shutil.copyfile(MEMAUDIT, src)
    with pytest.raises(DataError) as raised:
        api.import_dataset("memaudit", src, tmp_path)
    said = str(raised.value)
    assert f"out_dir={tmp_path} would replace {src}" in said, said
    assert "give another out_dir" in said, said
    assert "--out" not in said, said
