"""Conventions stated beside every number, and `memgauge metrics --conventions trec_eval` equal
to trec_eval (through pytrec_eval) on a random case."""

from __future__ import annotations

import json
import math
import os
import secrets
from pathlib import Path

import numpy as np
import pytest

from memgauge.cli.main import main

pytrec_eval = pytest.importorskip("pytrec_eval")

# memgauge measure -> trec_eval's name for it
TREC_NAMES = {
    "nDCG@10": "ndcg_cut_10",
    "P@5": "P_5",
    "Recall@10": "recall_10",
    "RR": "recip_rank",
    "AP@100": "map_cut_100",
    "R-prec": "Rprec",
    "nDCG": "ndcg",
}


def _random_case(seed: int, tmp: Path) -> tuple[dict, dict, Path, Path]:
    """Graded qrels (0-3, some queries with nothing relevant), a run with tied scores exact in
    float32, some judged queries absent from it and some run-only queries."""
    rng = np.random.default_rng(seed)
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for i in range(120):
        q = f"q{i}"
        pool = [f"d{j}" for j in range(40)]
        judged = rng.choice(pool, size=int(rng.integers(1, 12)), replace=False)
        top = 1 if rng.random() < 0.1 else 4  # a tenth have only grade-0 judgments
        qrels[q] = {
            str(d): int(g) for d, g in zip(judged, rng.integers(0, top, len(judged)), strict=True)
        }
        if rng.random() < 0.1:
            continue  # judged, absent from the run
        returned = rng.choice(pool, size=int(rng.integers(1, 30)), replace=False)
        run[q] = {
            str(d): float(s)
            for d, s in zip(returned, rng.integers(0, 8, len(returned)) / 4, strict=True)
        }
    run["only-in-run"] = {"d1": 1.0}
    qrels_path, run_path = tmp / "qrels.txt", tmp / "run.txt"
    qrels_path.write_text(
        "".join(f"{q} 0 {d} {g}\n" for q, docs in qrels.items() for d, g in docs.items())
    )
    run_path.write_text(
        "".join(
            f"{q} Q0 {d} {rank} {s} t\n"
            for q, docs in run.items()
            for rank, (d, s) in enumerate(docs.items(), 1)
        )
    )
    return qrels, run, qrels_path, run_path


def _metrics_json(capsys: pytest.CaptureFixture[str], *args: str) -> dict:
    assert main(["metrics", *args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_trec_eval_conventions_equal_pytrec_eval(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    seed = int(os.environ.get("MEMGAUGE_TEST_SEED") or secrets.randbits(32))
    qrels, run, qrels_path, run_path = _random_case(seed, tmp_path)
    flags = [x for m in TREC_NAMES for x in ("-m", m)]
    got = _metrics_json(
        capsys, str(qrels_path), str(run_path), *flags, "--per-query", "--conventions", "trec_eval"
    )
    want = pytrec_eval.RelevanceEvaluator(qrels, set(TREC_NAMES.values())).evaluate(run)
    # trec_eval scores the queries in both files: the same ones memgauge scored
    scored = {q for q, v in got["per_query"].items() if v["nDCG@10"] is not None}
    assert scored == set(want), f"seed {seed}"
    for measure, trec in TREC_NAMES.items():
        for q, values in want.items():
            assert math.isclose(got["per_query"][q][measure], values[trec], abs_tol=1e-12), (
                f"seed {seed}: {q} {measure}"
            )
        mean = sum(v[trec] for v in want.values()) / len(want)
        assert math.isclose(got["aggregate"][measure], mean, abs_tol=1e-12), f"seed {seed}"
    assert got["config"]["conventions"].startswith(
        "relevant: grade >= 1, gain: linear, no relevant document: zero, missing from run: skip"
    )
    # memgauge's own conventions give other numbers on the same files (why they are printed)
    own = _metrics_json(capsys, str(qrels_path), str(run_path), *flags)
    assert own["aggregate"]["nDCG@10"] != got["aggregate"]["nDCG@10"]
    assert own["config"]["conventions"].startswith("relevant: grade >= 2, gain: exp")


def test_a_flag_beside_the_preset_wins(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, _, qrels_path, run_path = _random_case(7, tmp_path)
    args = [str(qrels_path), str(run_path), "--conventions", "trec_eval", "--gain", "exp"]
    config = _metrics_json(capsys, *args)["config"]
    assert (config["preset"], config["rel_threshold"], config["gain"]) == ("trec_eval", 1, "exp")
    assert config["missing_from_run"] == "skip"


def test_the_terminal_output_states_the_conventions(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, _, qrels_path, run_path = _random_case(3, tmp_path)
    assert main(["metrics", str(qrels_path), str(run_path), "--rel-threshold", "3"]) == 0
    out = capsys.readouterr().out
    assert "conventions: relevant: grade >= 3, gain: exp, no relevant document: zero" in out


def test_a_suite_run_states_each_retrieval_evaluators_conventions(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`memgauge run` and `runs show`: below the results, the conventions of each retrieval
    evaluator (from its own arguments) and of the IR aggregate, which takes those its measures
    depend on from the evaluators (nDCG@10's gain, P@5's threshold); in --json, on each row."""
    ds = tmp_path / "ds"
    ds.mkdir()
    (ds / "memories.jsonl").write_text(
        '{"id": "m1", "text": "Alice moved to Lyon"}\n{"id": "m2", "text": "Bob likes tea"}\n'
    )
    (ds / "queries.jsonl").write_text('{"id": "q1", "text": "Where does Alice live"}\n')
    (ds / "judgments.jsonl").write_text('{"query_id": "q1", "memory_id": "m1", "grade": 2}\n')
    suite = tmp_path / "suite.yaml"
    suite.write_text(
        json.dumps(
            {
                "name": "conventions",
                "subjects": {"lexical": {"reference": {"mode": "lexical"}}},
                "tasks": [
                    {
                        "name": "recall",
                        "kind": "retrieval",
                        "dataset": str(ds),
                        "evaluators": [
                            {
                                "spec": {"retrieval": {"measure": "nDCG@10", "gain": "linear"}},
                                "label": "nDCG@10",
                            },
                            {
                                "spec": {"retrieval": {"measure": "P@5", "rel_threshold": 1}},
                                "label": "P@5",
                            },
                        ],
                    }
                ],
            }
        )
    )
    store = str(tmp_path / "r.db")
    assert main(["run", str(suite), "--store", store]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert (
        "task recall / nDCG@10: relevant: grade >= 2, gain: linear, no relevant document: zero"
    ) in out
    assert "task recall / P@5: relevant: grade >= 1, gain: exp, no relevant document: zero" in out
    assert (
        "task recall / IR measures: relevant: grade >= 1, gain: linear, no relevant document: zero"
    ) in out
    assert main(["run", str(suite), "--store", store, "--json"]) == 0
    last = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    rows = last["results"]
    assert {r["evaluator"]: r["conventions"] for r in rows} == {
        "nDCG@10": "relevant: grade >= 2, gain: linear, no relevant document: zero",
        "P@5": "relevant: grade >= 1, gain: exp, no relevant document: zero",
    }
    assert main(["runs", "show", last["run_id"], "--store", store]) == 0
    shown = " ".join(capsys.readouterr().out.split())
    assert "task recall / IR measures: relevant: grade >= 1, gain: linear" in shown


def test_evaluate_says_which_measures_keep_their_own_threshold_in_every_medium(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`evaluate -m P(rel=3)@5`: beside the run's `relevant: grade >= 2`, the terminal,
    summary.md, report.html and the viewer say P(rel=3)@5 keeps grade >= 3 (the same words as
    `memgauge metrics`); it said grade >= 2 beside it everywhere."""
    from starlette.testclient import TestClient

    from memgauge.view.app import create_app

    bundle = Path(__file__).resolve().parents[1] / "data" / "good" / "bundle.yaml"
    out, store = tmp_path / "out", str(tmp_path / "r.db")
    measures = ["-m", "P(rel=3)@5", "-m", "nDCG(gains={1:1,3:9})@10", "-m", "RR@5"]
    args = ["evaluate", str(bundle), "-s", "lexical", *measures, "--out", str(out)]
    assert main([*args, "--store", store]) == 0
    own = (
        "their own conventions: P(rel=3)@5 (relevant: grade >= 3); "
        "nDCG(gains={1:1,3:9})@10 (gain: its table)"
    )
    terminal = " ".join(capsys.readouterr().out.split())
    assert f"no relevant document: zero; {own}" in terminal
    summary = (out / "summary.md").read_text()
    assert f"no relevant document: zero; {own}" in summary.replace("&gt;", ">")
    for html in (
        (out / "report.html").read_text(),
        TestClient(create_app(store))
        .get(f"/runs/{json.loads((out / 'result.json').read_text())['run_id']}")
        .text,
    ):
        text = " ".join(html.replace("&gt;", ">").replace("&#x27;", "'").split())
        assert (
            f"IR measures: relevant: grade >= 2, gain: exp, no relevant document: zero; {own}"
            in (text)
        )
        assert (  # the evaluator's line too
            "/ P(rel=3)@5: relevant: grade >= 2, gain: exp, no relevant document: zero; their own "
            "conventions: P(rel=3)@5 (relevant: grade >= 3)"
        ) in text
