"""`memgauge bench systems` (issue 32, item 4): the memory systems installed here, and any named,
on each dataset in one recorded run, ranked by the primary measure with its CI beside the median
context tokens and latency; a system that stored or returned nothing, or whose calls failed, is
named as such and not ranked; the suite it runs is the one `memgauge run` runs."""

from __future__ import annotations

import json
import socket
from html import unescape
from pathlib import Path
from typing import Any

import pytest
import yaml
from starlette.testclient import TestClient

from memgauge import api
from memgauge.aggregates.facts import RankingFacts
from memgauge.api import _bench_systems
from memgauge.cli.main import main
from memgauge.data.demo import demo_dataset
from memgauge.data.io import save_retrieval_dataset
from memgauge.report.retrieval import ranking_json
from memgauge.subjects.installed import Installed
from memgauge.view.app import create_app

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data"
EXAMPLE = ROOT / "examples" / "bench-systems.yaml"
MINI = ROOT / "examples" / "data" / "longmemeval-mini.json"


@pytest.fixture(autouse=True)
def _subjects(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(DATA / "subjects"))


# session-scoped: written once per xdist worker (cheap), the file's tests not held on one worker
@pytest.fixture(scope="session")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("demo") / "demo"
    save_retrieval_dataset(demo_dataset(), path)
    return path


def _bench(tmp: Path, *args: str) -> int:
    store = ["--store", str(tmp / "r.db"), "--out", str(tmp / "out"), "--quiet"]
    return main(["bench", "systems", *args, *store])


def _systems(tmp: Path) -> dict[str, dict[str, Any]]:
    doc = json.loads((tmp / "out" / "result.json").read_text())
    (ranking,) = doc["rankings"]
    return {s["name"]: s for s in ranking["systems"]}


def _dead_url() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}"  # nothing listens here once the socket is closed


def test_installed_systems_are_ranked_with_cis_and_the_unusable_listed_as_skipped(
    tmp_path: Path,
    dataset: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    found = [
        Installed("lexical", {"reference": {"mode": "lexical"}}),
        Installed("hybrid", {"reference": {"mode": "hybrid"}}),
        Installed("mem0", {"mem0": {}}, "mem0 not installed", "pip install 'memgauge[mem0]'"),
    ]
    monkeypatch.setattr(_bench_systems, "installed_systems", lambda: found)
    assert _bench(tmp_path, "--dataset", str(dataset)) == 0
    out = capsys.readouterr().out
    assert "skipped mem0: mem0 not installed (pip install 'memgauge[mem0]')" in out
    assert "benchmarking lexical, hybrid" in out
    systems = _systems(tmp_path)
    assert set(systems) == {"lexical", "hybrid"}
    hybrid, lexical = systems["hybrid"], systems["lexical"]
    assert (hybrid["rank"], lexical["rank"]) == (1, 2)
    # the ir aggregate's nDCG@10 over the demo's 37 judged queries, with its bootstrap CI
    assert hybrid["value"] == pytest.approx(0.8446593229787959)
    assert lexical["value"] == pytest.approx(0.7645052447611744)
    for s in (hybrid, lexical):
        assert s["status"] == "ranked"
        assert s["n"] == 37
        assert s["ci"][0] < s["value"] < s["ci"][1]
        assert s["latency_p50"] > 0
    # the cost aggregate's median context at k = 20, in o200k_base tokens
    assert (lexical["tokens_p50"], hybrid["tokens_p50"]) == (124, 457)
    assert "demo: systems ranked by nDCG@10" in out
    assert "0.845 [0.766, 0.916] (n=37)" in out
    for name in ("summary.md", "report.html"):
        text = (tmp_path / "out" / name).read_text()
        assert "demo: systems ranked by nDCG@10" in text
        assert "0.845 [0.766, 0.916] (n=37)" in text
    summary = (tmp_path / "out" / "summary.md").read_text()
    assert summary.endswith(
        "## Skipped systems\n\n- mem0: mem0 not installed (`pip install 'memgauge[mem0]'`)\n"
    )


def test_a_system_that_returns_or_stores_nothing_is_named_and_not_ranked(
    tmp_path: Path, dataset: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Every item of both fails (`empty_memory`): exit 4, and the table names why, with counts,
    instead of a rank beside 0.000."""
    args = ["--dataset", str(dataset), "--no-discover", "-s", "lexical"]
    hollow = ["-s", "python:hollow:Mute@mute", "-s", "python:hollow:Forgetful@forgetful"]
    assert _bench(tmp_path, *args, *hollow) == 4
    out = capsys.readouterr().out
    systems = _systems(tmp_path)
    assert systems["lexical"]["rank"] == 1
    mute, forgetful = systems["mute"], systems["forgetful"]
    assert (mute["rank"], mute["status"]) == (None, "returned nothing")
    assert mute["note"] == "0 hits in 37 of 37 searches"
    assert (forgetful["rank"], forgetful["status"]) == (None, "stored nothing")
    assert forgetful["note"] == (
        "its store held no memory after ingest; 37 of 37 queries not asked"
    )
    assert mute["value"] is None
    assert forgetful["value"] is None
    assert "returned nothing: 0 hits in 37 of 37 searches" in out
    assert "stored nothing: its store held no memory after ingest" in out
    # the viewer's run page draws the same table from the stored run
    run_id = json.loads((tmp_path / "out" / "result.json").read_text())["run_id"]
    with TestClient(create_app(tmp_path / "r.db")) as client:
        page = client.get(f"/runs/{run_id}")
    assert page.status_code == 200
    html = unescape(page.text)
    assert "demo: systems ranked by nDCG@10" in html
    assert "returned nothing: 0 hits in 37 of 37 searches" in html


def test_a_hollow_system_is_not_ranked_on_a_task_of_few_questions(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Beside LoCoMo, a LongMemEval file of two questions: a memory that found nothing in any
    search of the run, or only ids of its own, was named on LoCoMo but ranked with 0.000 on
    LongMemEval (its two searches under the five that make a task's memory empty)."""
    locomo = DATA / "locomo" / "normalisations.json"
    args = ["--locomo", str(locomo), "--longmemeval", str(MINI), "--no-discover", "-s", "lexical"]
    small = ["--corpus", "conv-t", "--corpus", "mini-01", "--corpus", "mini-02"]
    hollow = ["-s", "python:hollow:Mute@mute", "-s", "python:hollow:RowIds@rows"]
    assert _bench(tmp_path, *args, *small, *hollow) == 4
    doc = json.loads((tmp_path / "out" / "result.json").read_text())
    status = {
        (r["task"], s["name"]): (s["rank"], s["status"])
        for r in doc["rankings"]
        for s in r["systems"]
    }
    assert status == {
        (task, name): (1, "ranked") if name == "lexical" else (None, why)
        for task in ("locomo", "longmemeval")
        for name, why in [("lexical", ""), ("mute", "returned nothing"), ("rows", "failed")]
    }
    (longmemeval,) = (r for r in doc["rankings"] if r["task"] == "longmemeval")
    mute, rows = (
        next(s for s in longmemeval["systems"] if s["name"] == n) for n in ("mute", "rows")
    )
    assert mute["note"] == "0 hits in 2 of 2 searches"
    # the whole message, with what to do, not cut at a width
    assert rows["note"].startswith("2 of 2 queries failed (foreign_ids: none of the 4 hits")
    assert rows["note"].endswith("keep a map back to the ingested ids)")


def test_systems_with_equal_values_share_a_rank(tmp_path: Path, dataset: Path) -> None:
    """Two configurations that give the same value were ranked 1 and 2 by name, an order the
    numbers do not hold; they share the rank."""
    args = ["--dataset", str(dataset), "--no-discover", "-m", "nDCG@10"]
    assert _bench(tmp_path, *args, "-s", "lexical@b", "-s", "lexical@a") == 0
    ranks = {name: s["rank"] for name, s in _systems(tmp_path).items()}
    assert ranks == {"a": 1, "b": 1}


def test_a_dead_http_subject_exits_4_and_the_others_numbers_stand(
    tmp_path: Path, dataset: Path
) -> None:
    alone = tmp_path / "alone"
    assert _bench(alone, "--dataset", str(dataset), "--no-discover", "-s", "lexical") == 0
    beside = tmp_path / "beside"
    dead = f"{_dead_url()}@dead"
    assert (
        _bench(beside, "--dataset", str(dataset), "--no-discover", "-s", "lexical", "-s", dead) == 4
    )
    lexical, dead_row = _systems(beside)["lexical"], _systems(beside)["dead"]
    expected = _systems(alone)["lexical"]
    for key in ("rank", "value", "ci", "n", "tokens_p50", "status"):
        assert lexical[key] == expected[key]
    assert (dead_row["rank"], dead_row["status"]) == (None, "failed")
    assert dead_row["note"].startswith("37 of 37 queries failed (")
    assert "ConnectError" in dead_row["note"]


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--no-discover", "-s", "lexical"], "give a dataset to benchmark on"),
        (["--dataset", "DATA", "--k", "5"], "--k"),
        (["--dataset", "DATA", "--skip", "nope"], "--skip nope: not a system found here"),
        (["--dataset", "DATA", "--no-discover", "-s", "nonsense"], "unknown system 'nonsense'"),
        (["--dataset", "no/such/dir"], "no/such/dir"),
        (["--dataset", "DATA", "-s", "lexical"], "two systems are named lexical"),
        (["--dataset", "DATA", "--no-discover"], "no system to benchmark"),
    ],
)
def test_bad_options_exit_2_and_write_nothing(
    tmp_path: Path,
    dataset: Path,
    args: list[str],
    said: str,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(
        _bench_systems,
        "installed_systems",
        lambda: [Installed("lexical", {"reference": {"mode": "lexical"}})],
    )
    assert _bench(tmp_path, *(str(dataset) if a == "DATA" else a for a in args)) == 2
    err = capsys.readouterr().err
    assert said in err
    assert "Traceback" not in err
    assert not (tmp_path / "out").exists()
    assert not (tmp_path / "r.db").exists()


def _numbers(rankings: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    """What must be equal run to run: ranks, values, CIs, counts, tokens (not latency)."""
    return [
        (r["task"], s["name"], s["rank"], s["value"], s["ci"], s["n"], s["tokens_p50"])
        for r in rankings
        for s in r["systems"]
    ]


def test_the_example_suite_is_what_the_command_runs_and_gives_its_numbers(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["--longmemeval", str(MINI), "--no-discover", "-s", "lexical", "-s", "dense"]
    args += ["-s", "hybrid", "-m", "nDCG@10", "-m", "Recall@10", "-m", "RR@10"]
    written = tmp_path / "bench-systems.yaml"
    assert _bench(tmp_path / "w", *args, "--write-suite", str(written)) == 0
    mine, shipped = yaml.safe_load(written.read_text()), yaml.safe_load(EXAMPLE.read_text())
    # each names the dataset relative to itself
    for doc, where in ((mine, written), (shipped, EXAMPLE)):
        (task,) = doc["tasks"]
        assert (where.parent / task.pop("dataset")).resolve() == MINI.resolve()
    assert mine == shipped
    assert _bench(tmp_path / "cmd", *args) == 0
    by_command = json.loads((tmp_path / "cmd" / "out" / "result.json").read_text())["rankings"]
    capsys.readouterr()
    store = str(tmp_path / "run.db")
    assert main(["run", str(EXAMPLE), "--store", store, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    summary = api.read_run(doc["run_id"], store=store).summary
    assert summary is not None
    by_run = [ranking_json(a) for a in summary.aggregates if a.aggregate == "ranking"]
    assert _numbers(by_run) == _numbers(by_command)
    # lexical misses one of the six questions (a paraphrase); the embedders find all six
    assert [(s["name"], s["rank"], s["value"]) for s in by_run[0]["systems"]] == [
        ("dense", 1, 1.0),
        ("hybrid", 1, 1.0),  # tied with dense: one rank
        ("lexical", 3, pytest.approx(5 / 6)),
    ]


def test_the_api_ranks_as_the_command_does(dataset: Path) -> None:
    bench = api.bench_systems(
        datasets=[dataset],
        systems=["lexical", "python:hollow:Mute@mute"],
        discover=False,
        options=api.RunConfig(store=False),
    )
    assert bench.report.status == "failed"  # mute's 37 items are empty_memory failures
    (ranking,) = bench.rankings
    facts = ranking.facts_as(RankingFacts)
    assert facts is not None
    rows = [(s.name, s.rank, s.status) for s in facts.systems]
    assert rows == [("lexical", 1, "ranked"), ("mute", None, "returned nothing")]
    assert facts.systems[0].value == pytest.approx(0.7645052447611744)


def test_a_corpus_the_dataset_lacks_is_bad_input(
    tmp_path: Path, dataset: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--corpus` keeps a LoCoMo run small; a mistyped conversation id ran nothing and exited 0."""
    args = ["--dataset", str(dataset), "--no-discover", "-s", "lexical", "--corpus", "conv-99"]
    assert _bench(tmp_path, *args) == 2
    err = capsys.readouterr().err
    assert "no item of its dataset is in corpus conv-99 (its items have no corpus)" in err
    assert not (tmp_path / "out").exists()


def test_a_locomo_corpus_narrows_the_locomo_task_and_leaves_longmemeval_whole(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--corpus` names a LoCoMo conversation, as the docs say; beside `--longmemeval` it was
    applied to the LongMemEval task too, which holds none, and the whole run exited 2. Each
    task keeps the corpora its dataset holds; one that no dataset holds is still refused."""
    locomo = DATA / "locomo" / "normalisations.json"
    common = ["--locomo", str(locomo), "--longmemeval", str(MINI), "--no-discover", "-s", "lexical"]
    assert _bench(tmp_path, *common, "--corpus", "conv-t", "--limit", "3") == 0
    doc = json.loads((tmp_path / "out" / "result.json").read_text())
    n = {r["task"]: r["systems"][0]["n"] for r in doc["rankings"]}
    assert n == {"locomo": 3, "longmemeval": 3}
    assert _bench(tmp_path / "b", *common, "--corpus", "conv-99") == 2
    err = capsys.readouterr().err
    assert "--corpus conv-99: no dataset given holds it" in err
    assert not (tmp_path / "b" / "out").exists()


def test_with_repeats_the_ranking_ranks_on_the_number_the_rows_show(
    tmp_path: Path, dataset: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A memory whose ranking changes from one search to the next, asked three times: the
    ranking's value is the task's row (the mean over repeats, items as clusters), not the first
    repeat's."""
    suite = tmp_path / "bench.yaml"
    args = ["--dataset", str(dataset), "--no-discover", "-s", "lexical", "-m", "nDCG@10"]
    args += ["-s", "python:repeat_subjects:FlipMemory@flip", "--write-suite", str(suite)]
    assert _bench(tmp_path / "w", *args) == 0
    doc = yaml.safe_load(suite.read_text())
    suite.write_text(yaml.safe_dump({**doc, "repeat": 3}))
    capsys.readouterr()
    store = str(tmp_path / "run.db")
    assert main(["run", str(suite), "--store", store, "--json"]) == 0
    out = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    summary = api.read_run(out["run_id"], store=store).summary
    assert summary is not None
    (ranking,) = [ranking_json(a) for a in summary.aggregates if a.aggregate == "ranking"]
    ranked = {s["name"]: s for s in ranking["systems"]}
    rows = {(r["subject"], r["evaluator"]): r for r in out["results"]}
    first = {m.subject: m.value for m in summary.measures() if m.source == "ir"}
    flip = rows[("flip", "nDCG@10")]
    assert flip["mean"] != pytest.approx(first["flip"])  # the repeats differ from the first
    for name in ("lexical", "flip"):
        row = rows[(name, "nDCG@10")]
        assert ranked[name]["value"] == row["mean"]
        assert ranked[name]["ci"] == [row["ci_low"], row["ci_high"]]


def test_the_default_measures_are_each_named_once(capsys: pytest.CaptureFixture[str]) -> None:
    """`bench systems --help` gave "default: nDCG@10 Recall@10 RR@5 RR@10 nDCG@5 nDCG@10
    nDCG@20 Recall@5 Recall@10": the ranking measures, then evaluate's list again."""
    assert main(["bench", "systems", "--help"]) == 0
    helped = " ".join(capsys.readouterr().out.split())
    listed = helped.split("ranks the systems (default: ", 1)[1].split(")", 1)[0].split()
    assert listed[:2] == ["nDCG@10", "Recall@10"]
    assert len(listed) == len(set(listed))
    assert listed == list(api.BENCH_MEASURES)
