"""A failing subject beside a working one (issue 27, item 3): whatever the mix and the order of
working, contract-breaking, raising and dead subjects, the run finishes every working subject,
writes every file with their numbers and the failing ones' failures (with the contract's
message), and exits 4. `max_failure_rate` applies to each subject's own items."""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Any

import pytest
import yaml

from memgauge.cli.main import main

DATA = Path(__file__).resolve().parents[1] / "data"
PAIRS_MESSAGE = "an (id, score) pair is not read as one"
CONTRACT = "search(query, k) must return a list of hits"


def _dead_url() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}"  # nothing listens here once the socket is closed


# what each failing subject is, and what its failure must say
FAILING = {
    "pairs": ("python:mistakes:PairsMemory@pairs", [PAIRS_MESSAGE, CONTRACT]),
    "raising": ("python:broken:Broken@raising", ["RuntimeError: search is down"]),
    "dead": (None, ["ConnectError"]),
    # its factory raises: the subject's own code failing, not memgauge (was exit 70)
    "unbuildable": (
        "python:broken:Unbuildable@unbuildable",
        ["subject unbuildable could not be built: no such index: prod"],
    ),
}


@pytest.fixture(scope="session")
def dataset(demo_dir: Path) -> Path:
    return demo_dir


@pytest.fixture(scope="module")
def alone(dataset: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The working subject's result.json entry, evaluated on its own."""
    tmp = tmp_path_factory.mktemp("alone")
    args = ["evaluate", str(dataset), "-s", "lexical", "--store", str(tmp / "r.db")]
    assert main([*args, "--out", str(tmp / "o"), "--quiet"]) == 0
    doc = json.loads((tmp / "o" / "result.json").read_text())
    (system,) = doc["systems"]
    return dict(system)


def _spec(kind: str) -> str:
    spec = FAILING[kind][0]
    return spec if spec is not None else f"{_dead_url()}@dead"


@pytest.mark.parametrize("first", [True, False], ids=["failing-first", "failing-second"])
@pytest.mark.parametrize("kind", sorted(FAILING))
def test_evaluate_finishes_the_working_subject_and_reports_the_failing_one(
    kind: str,
    first: bool,
    dataset: Path,
    alone: dict[str, Any],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.syspath_prepend(str(DATA / "subjects"))
    subjects = [_spec(kind), "lexical"] if first else ["lexical", _spec(kind)]
    out = tmp_path / "o"
    args = ["evaluate", str(dataset), "--store", str(tmp_path / "r.db"), "--out", str(out)]
    code = main([*args, *(a for s in subjects for a in ("-s", s))])
    printed = capsys.readouterr()
    assert code == 4, printed.err[-3000:]
    assert "internal error" not in printed.err
    files = {p.name: p.read_text() for p in out.iterdir()}
    assert {"result.json", "summary.md", "report.html"} <= set(files)
    doc = json.loads(files["result.json"])
    systems = {s["name"]: s for s in doc["systems"]}
    # the working subject's numbers are those it has on its own, every query asked
    lexical = systems["lexical"]
    assert lexical["status"] == "ok"
    assert lexical["metrics"] == alone["metrics"]
    assert lexical["counts"]["n_scored"] == 37
    failing = systems[kind]
    messages = FAILING[kind][1]
    if kind in ("dead", "unbuildable"):
        assert failing["status"] == "failed"
        assert all(m in failing["reason"] for m in messages)
    else:
        assert failing["status"] == "ok"
        errors = [q["error"] for q in failing["per_query"]]
        assert errors
        assert all(all(m in e for m in messages) for e in errors)
        # no data: n/a with its failures counted, never 0
        nd = failing["metrics"]["nDCG@10"]
        assert (nd["value"], nd["n_scored"], nd["n_failed"]) == (None, 0, len(errors))
        # against a subject with no scores, every paired comparison is n/a over 0 queries
        (comparison,) = doc["comparisons"]
        assert {(m["delta"], m["n"]) for m in comparison["metrics"]} == {(None, 0)}
    # the failure, with the contract's words, in every file and on the terminal
    for text in (files["summary.md"], files["report.html"], printed.out):
        assert all(m.replace("'", "&#x27;") in text or m in text for m in messages), text[-2000:]
    assert f"subject {kind}: " in printed.out


def test_a_suite_with_working_failing_and_dead_subjects_finishes_and_exits_4(
    dataset: Path,
    alone: dict[str, Any],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.syspath_prepend(str(DATA / "subjects"))
    suite = {
        "name": "mixed",
        "subjects": {
            "dead": {"http": {"base_url": _dead_url(), "max_retries": 0}},
            "pairs": {"python": {"target": "mistakes:PairsMemory"}},
            "lex": {"reference": {"mode": "lexical"}},
            "raising": {"python": {"target": "broken:Broken"}},
            "unbuildable": {"python": {"target": "broken:Unbuildable"}},
        },
        "tasks": [
            {
                "name": "recall",
                "kind": "retrieval",
                "dataset": str(dataset),
                "evaluators": [{"retrieval": "nDCG@10"}],
            }
        ],
    }
    path = tmp_path / "suite.yaml"
    path.write_text(yaml.safe_dump(suite))
    db = str(tmp_path / "r.db")
    assert main(["run", str(path), "--store", db, "--json"]) == 4
    printed = capsys.readouterr()
    doc = json.loads(printed.out.strip().splitlines()[-1])
    # the failures shown: each failing subject's, not the first ten of the dead one
    shown = " ".join(printed.err.split())
    expected = ("ConnectError", "is a tuple", "search is down", "could not be built")
    assert all(m in shown for m in expected), shown
    rows = {r["subject"]: r for r in doc["results"] if r["evaluator"] == "nDCG@10"}
    assert rows["lex"]["n_scored"] + rows["lex"]["n_failed"] == 37
    assert rows["lex"]["mean"] is not None
    for name in ("dead", "pairs", "raising", "unbuildable"):
        assert (rows[name]["mean"], rows[name]["n_scored"]) == (None, 0)
        assert f"subject {name}: " in doc["reason"]
    # the stored run reports like an evaluate run: every file, the failures' messages in it
    report = tmp_path / "report.html"
    assert main(["report", doc["run_id"], "--store", db, "--out", str(report)]) == 0
    html = report.read_text()
    assert "ConnectError" in html
    assert PAIRS_MESSAGE in html
    capsys.readouterr()
    assert main(["runs", "show", doc["run_id"], "--store", db, "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert (shown["summary"]["n_completed"], shown["status"]) == (37, "failed")


@pytest.mark.parametrize("stored", [True, False], ids=["stored", "no-store"])
def test_a_failed_run_says_where_its_failures_are(
    stored: bool, dataset: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A stored run points to `runs show`; a `--no-store` run (which `runs show` cannot find)
    to its report."""
    keep = ["--store", str(tmp_path / "r.db")] if stored else ["--no-store"]
    args = ["evaluate", str(dataset), "-s", _spec("dead"), "--out", str(tmp_path / "o"), *keep]
    assert main(args) == 4
    out = capsys.readouterr().out
    (line,) = [x for x in out.splitlines() if x.startswith("run ") and " failed: " in x]
    if stored:
        assert line.endswith("for the failures")
        assert "see `memgauge runs show " in line
    else:
        assert "runs show" not in out
        assert line.endswith(
            "the run was kept in memory only (--no-store), not recorded: its failures are in its "
            "report"
        )
