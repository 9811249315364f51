"""The CLI as a user runs it: exit codes, output, files written, no tracebacks (in-process,
as a child would answer: tests/helpers.py; start-up in a real process: test_startup.py)."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import click
import pytest
from tests.helpers import run_memgauge

from memgauge.cli.main import cli

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data"
LOCOMO = ROOT.parent / "shared" / "datasets" / "locomo10.json"
COMMANDS = ["demo", "evaluate", "import", "metrics", "sample-size", "schema", "validate"]


def run(
    *args: str, home: Path, cwd: Path | None = None, extra_env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    env = {"MEMGAUGE_HOME": str(home), "COLUMNS": "200", **(extra_env or {})}
    return run_memgauge(*args, env=env, cwd=cwd)


@pytest.fixture(scope="session")
def demo_dataset(demo_dir: Path) -> Path:
    """The demo's dataset directory (the demo's own run is
    test_demo_runs_offline_and_writes_everything's)."""
    return demo_dir


@pytest.mark.parametrize("command", ["", *COMMANDS])
def test_every_command_has_help(command: str, tmp_path: Path) -> None:
    proc = run(*([command] if command else []), "--help", home=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "Usage:" in proc.stdout
    if not command:
        for name in COMMANDS:
            assert name in proc.stdout


def test_no_help_text_shows_a_doubled_percent_sign() -> None:
    """click prints help as written (no %-formatting): optimize's --require-significance
    read "95%% CI"."""
    found = []

    def walk(cmd: click.Command, path: str) -> None:
        ctx = click.Context(cmd, info_name=path)
        if "%%" in cmd.get_help(ctx):
            found.append(path)
        if isinstance(cmd, click.Group):
            for name in cmd.list_commands(ctx):
                sub = cmd.get_command(ctx, name)
                assert sub is not None
                walk(sub, f"{path} {name}")

    walk(cli, "memgauge")
    assert found == []


def test_demo_runs_offline_and_writes_everything(tmp_path: Path) -> None:
    proc = run("demo", "--out", str(tmp_path / "demo"), home=tmp_path / "home")
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    for system in ("lexical", "dense", "hybrid", "hybrid+session"):
        assert system in out
    assert "nDCG@10" in out
    assert "[" in out  # confidence intervals are printed
    assert out.strip().splitlines()[-1].startswith("next: open ")
    for name in ("result.json", "summary.md", "report.html", "dataset/memories.jsonl"):
        assert (tmp_path / "demo" / name).is_file(), name
    result = json.loads((tmp_path / "demo" / "result.json").read_text())
    assert [s["status"] for s in result["systems"]] == ["ok"] * 4
    assert (tmp_path / "home" / "results.db").is_file()
    assert "Traceback" not in proc.stderr
    # the run is also in seed 002's eval_results, one row per system, as another tool reads it
    with sqlite3.connect(tmp_path / "home" / "results.db") as conn:
        conn.row_factory = sqlite3.Row
        rows = {
            r["system"]: dict(r) for r in conn.execute("SELECT * FROM eval_results ORDER BY id")
        }
    assert list(rows) == ["lexical", "dense", "hybrid", "hybrid+session"]
    by_name = {s["name"]: s for s in result["systems"]}
    for name, row in rows.items():
        metrics, agent = by_name[name]["metrics"], by_name[name]["agent_metrics"]
        assert row["run_id"] == result["run_id"]
        assert row["run_type"] == "full"
        assert row["mrr_at_10"] == metrics["RR@10"]["value"]
        assert row["ndcg_at_10"] == metrics["nDCG@10"]["value"]
        assert row["recall_at_5"] == metrics["Recall@5"]["value"]
        assert row["confidence_interval_lower"] == metrics["nDCG@10"]["ci_low"]
        assert row["query_count"] == metrics["nDCG@10"]["n_scored"] == 37
        assert row["constitutional_surfacing_rate"] == agent["constitutional_surfacing@5"]["value"]
        assert row["cold_start_mrr"] == agent["cold_start_mrr_ratio@5"]["detail"]["cold_mrr"]
        assert row["avg_latency_ms"] > 0
        per_query = json.loads(row["per_query_results"])
        assert len(per_query) == 37
        # seed 002's QueryMetrics: each query's agent-memory values, as result.json has them
        by_query = {q["query_id"]: q for q in by_name[name]["per_query"]}
        for q in per_query:
            assert q["agent_metrics"] == by_query[q["query_id"]]["agent_metrics"]
        assert any(q["agent_metrics"] for q in per_query)
    assert rows["lexical"]["control_system"] is None  # the baseline compares with nothing
    (comp,) = [c for c in result["comparisons"] if c["candidate"] == "hybrid"]
    nd = next(m for m in comp["metrics"] if m["measure"] == "nDCG@10")
    assert rows["hybrid"]["control_system"] == "lexical"
    assert rows["hybrid"]["ndcg_delta"] == nd["delta"]
    # the Holm-corrected p the report marks, and its verdict
    assert rows["hybrid"]["p_value"] == nd["p_holm"]
    assert rows["hybrid"]["is_significant"] == int(nd["p_holm"] < 0.05)
    assert set(json.loads(rows["hybrid"]["channel_contribution_json"])) == {"dense", "lexical"}


def test_evaluate_the_written_demo_dataset_with_labels_and_pooling(
    tmp_path: Path, demo_dataset: Path
) -> None:
    proc = run(
        "evaluate",
        str(demo_dataset),
        "-s",
        "lexical",
        "-s",
        "reference:mode=lexical,candidates=5@narrow",
        "-m",
        "nDCG@10",
        "-m",
        "RR@10",
        "--pool-depth",
        "5",
        "--out",
        str(tmp_path / "rep"),
        "--no-store",
        home=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    result = json.loads((tmp_path / "rep" / "result.json").read_text())
    assert [s["name"] for s in result["systems"]] == ["lexical", "narrow"]
    assert result["settings"]["measures"] == ["nDCG@10", "RR@10"]
    assert any("pooling:" in n for n in result["systems"][0]["notes"])
    assert result["comparisons"][0]["candidate"] == "narrow"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["evaluate", "DATA/bad/dataset_unknown_ids"], "unknown"),
        (["evaluate", "DATA/good/memories_bom.jsonl", "-s", "lexical"], "error"),
        (["evaluate", "DEMO", "-s", "bogus"], "--system 'bogus': unknown system 'bogus'"),
        (["evaluate", "DEMO", "-s", "DATA/bad/subject_unknown_kind.yaml"], "must be one of"),
        (["evaluate", "DEMO", "-s", "DATA/bad/subject_truncated.yaml"], "not valid YAML"),
        (["evaluate", "DEMO", "-s", "reference:mode=lexical,k_rrf"], "is not KEY=VALUE"),
        (["evaluate", "DEMO", "-m", "nDCG@x"], "measure"),
        (["evaluate", "DEMO", "-m", "nDCG@50", "--k", "10"], "cutoff @50; use --k 50 or more"),
        (["evaluate", "DEMO", "--pool-judge", "relevance"], "give --pool-depth N as well"),
        (["metrics", "DATA/good/qrels.txt", "DATA/bad/run_bad_score.txt"], "run_bad_score.txt"),
        (["import", "locomo", "DATA/bad/locomo_not_a_list.json", "--out", "OUT"], "JSON list"),
        (
            ["import", "longmemeval", "DATA/bad/longmemeval_missing_fields.json", "--out", "OUT"],
            "missing fields",
        ),
        (
            ["import", "longmemeval", "DATA/bad/longmemeval_truncated.json", "--out", "OUT"],
            "longmemeval_truncated.json:2: not valid JSON",
        ),
        (
            ["import", "longmemeval", "DATA/bad/longmemeval_wrong_types.json", "--out", "OUT"],
            "longmemeval_wrong_types.json: [0].haystack_sessions[1][0].has_answer: must be true",
        ),
        (
            ["import", "locomo", "DATA/bad/locomo_wrong_types.json", "--out", "OUT"],
            "locomo_wrong_types.json: [0].qa[0].category: must be an integer 1-5",
        ),
        (["evaluate", "DEMO", "-m", "session_recall_any@5"], "--protocol paper --granularity turn"),
        (
            ["metrics", "DATA/good/qrels.txt", "DATA/good/run.txt", "-m", "session_ndcg_any@5"],
            "need each query's corpus",
        ),
        (["sample-size", "--delta", "0"], "positive"),
    ],
)
def test_bad_input_exits_2_with_a_message_and_no_traceback(
    args: list[str], message: str, tmp_path: Path, demo_dataset: Path
) -> None:
    real = [
        a.replace("DATA", str(DATA))
        .replace("DEMO", str(demo_dataset))
        .replace("OUT", str(tmp_path / "out"))
        for a in args
    ]
    extra = ["--no-store", "--out", str(tmp_path / "out")] if args[0] == "evaluate" else []
    proc = run(*real, *extra, home=tmp_path)
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert message in proc.stderr
    assert "Traceback" not in proc.stderr
    assert not (tmp_path / "out").exists()  # nothing half-written


def test_metrics_json_contract(tmp_path: Path) -> None:
    proc = run(
        "metrics",
        str(DATA / "good" / "qrels.txt"),
        str(DATA / "good" / "run.txt"),
        "-m",
        "nDCG@10",
        "-m",
        "RR@10",
        "--rel-threshold",
        "1",
        "--gain",
        "linear",
        "--per-query",
        "--json",
        home=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    payload = json.loads(proc.stdout)
    assert set(payload) == {"aggregate", "per_query", "counts", "config"}
    assert set(payload["aggregate"]) == {"nDCG@10", "RR@10"}
    assert payload["counts"]["n_judged"] == len(payload["per_query"])
    mean = sum(v["RR@10"] for v in payload["per_query"].values()) / len(payload["per_query"])
    assert payload["aggregate"]["RR@10"] == pytest.approx(mean)
    no_pq = run(
        "metrics",
        str(DATA / "good" / "qrels.txt"),
        str(DATA / "good" / "run.txt"),
        "--json",
        home=tmp_path,
    )
    assert "per_query" not in json.loads(no_pq.stdout)


def _evaluate_lexical(tmp_path: Path, *measures: str) -> subprocess.CompletedProcess[str]:
    """`memgauge evaluate TMP/lme -s lexical -m ... --k 5` into TMP/r, not stored."""
    flags = [x for m in measures for x in ("-m", m)]
    out = ["--out", str(tmp_path / "r"), "--no-store"]
    return run(
        "evaluate", str(tmp_path / "lme"), "-s", "lexical", *flags, "--k", "5", *out, home=tmp_path
    )


def test_import_longmemeval_then_evaluate(tmp_path: Path) -> None:
    """The paper protocol by default: its name in the import report, the dataset and every
    report of the evaluation, and LongMemEval's session measures from the turn ranking."""
    src = DATA / "longmemeval" / "sample.json"
    proc = run("import", "longmemeval", str(src), "--out", str(tmp_path / "lme"), home=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "abstention_not_judged: 1" in proc.stdout
    assert "protocol: LongMemEval's paper protocol" in proc.stdout
    report = json.loads((tmp_path / "lme" / "import_report.json").read_text())
    assert report["protocol"].startswith("LongMemEval's paper protocol")
    assert report["counts"]["turns_left_out_not_user"] == 7
    assert "longmemeval-paper" in (tmp_path / "lme" / "dataset.yaml").read_text()
    proc = _evaluate_lexical(tmp_path, "recall_any@1", "session_recall_all@2")
    assert proc.returncode == 0, proc.stderr
    assert "longmemeval-paper (turn)" in proc.stdout
    result = json.loads((tmp_path / "r" / "result.json").read_text())
    assert result["dataset"]["protocol"] == "longmemeval-paper (turn)"
    metrics = result["systems"][0]["metrics"]
    assert metrics["recall_any@1"]["n_scored"] == 2
    assert metrics["session_recall_all@2"]["n_scored"] == 2
    assert (
        "Dataset protocol: longmemeval-paper (turn)." in (tmp_path / "r" / "summary.md").read_text()
    )


def test_all_turns_protocol_is_the_old_import_and_has_no_session_measures(tmp_path: Path) -> None:
    src = DATA / "longmemeval" / "sample.json"
    out = tmp_path / "lme"
    proc = run(
        "import",
        "longmemeval",
        str(src),
        "--out",
        str(out),
        "--protocol",
        "all-turns",
        home=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    assert "all-turns protocol" in proc.stdout
    assert json.loads((out / "import_report.json").read_text())["counts"]["memories"] == 15
    proc = _evaluate_lexical(tmp_path, "session_recall_any@1")
    assert proc.returncode == 2
    assert "--protocol paper --granularity turn" in proc.stderr
    assert not (tmp_path / "r").exists()


@pytest.mark.skipif(not LOCOMO.is_file(), reason="../shared/datasets/locomo10.json not present")
def test_import_locomo_counts(tmp_path: Path) -> None:
    proc = run("import", "locomo", str(LOCOMO), "--out", str(tmp_path / "loc"), home=tmp_path)
    assert proc.returncode == 0, proc.stderr
    report = json.loads((tmp_path / "loc" / "import_report.json").read_text())
    assert report["counts"]["memories"] == 5882
    assert report["counts"]["questions_adversarial"] == 446
    assert (
        report["counts"]["answerable_judged"] + report["counts"]["answerable_without_evidence"]
        == 1540
    )
    # evidence the import changed is listed per question with before and after (issue 28)
    kinds = {c["kind"] for entry in report["changed"] for c in entry["changes"]}
    assert {"malformed", "dangling", "split", "reformatted", "duplicate"} == kinds


def test_import_memaudit(tmp_path: Path) -> None:
    src = ROOT.parent / "shared" / "datasets" / "memaudit-sample.json"
    if not src.is_file():
        pytest.skip("../shared/datasets/memaudit-sample.json not present")
    proc = run("import", "memaudit", str(src), "--out", str(tmp_path / "m"), home=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "m" / "conversations.json").is_file()
    assert "facts: 6" in proc.stdout


def test_evaluate_python_and_subprocess_subjects(tmp_path: Path, demo_dataset: Path) -> None:
    subjects = DATA / "subjects"
    spec = tmp_path / "subject.yaml"
    spec.write_text(
        f"subprocess:\n  command: [{sys.executable!r}, {str(subjects / 'keyword_memory.py')!r}]\n"
    )
    proc = run(
        "evaluate",
        str(demo_dataset),
        "-s",
        "lexical",
        "-s",
        "python:keyword_memory:KeywordMemory@keywords",
        "-s",
        f"{spec}@keywords-child",
        "-m",
        "RR@10",
        "--out",
        str(tmp_path / "r"),
        "--no-store",
        home=tmp_path,
        extra_env={"PYTHONPATH": str(subjects)},
    )
    assert proc.returncode == 0, proc.stderr
    result = json.loads((tmp_path / "r" / "result.json").read_text())
    values = {s["name"]: s["metrics"]["RR@10"]["value"] for s in result["systems"]}
    assert set(values) == {"lexical", "keywords", "keywords-child"}
    assert values["keywords"] == values["keywords-child"]  # same system, two adapters
