"""`memgauge optimize --constraint` end to end on the reference memory: the candidates' runs
get the cost aggregate, each iteration records its context tokens, and the best meets the
bound; a bad bound is bad input (exit 2, nothing written)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from memgauge import api
from memgauge.aggregates.cost_shapes import CostFacts
from memgauge.cli.main import main

WORDS = ["one", "two", "three", "four", "five", "six", "seven", "eight"]


def _suite(tmp_path: Path) -> Path:
    data = tmp_path / "data"
    data.mkdir()
    rows = {
        "memories": [{"id": f"m{i}", "text": f"apple {w}"} for i, w in enumerate(WORDS)],
        "queries": [{"id": f"q{i}", "text": f"apple {w}"} for i, w in enumerate(WORDS)],
        "judgments": [
            {"query_id": f"q{i}", "memory_id": f"m{i}", "grade": 3} for i in range(len(WORDS))
        ],
    }
    for name, lines in rows.items():
        (data / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines))
    suite = {
        "name": "bounded",
        "subjects": {"memory": {"reference": {"mode": "lexical"}}},
        "tasks": [
            {
                "name": "recall",
                "kind": "retrieval",
                "dataset": "data",
                "k": 6,
                "evaluators": [{"retrieval": {"measure": "Recall@3"}}],
            }
        ],
        "optimization": {"space": {"k": "int:3..6"}, "holdout": 0, "seed": 0},
    }
    path = tmp_path / "suite.yaml"
    path.write_text(yaml.safe_dump(suite, sort_keys=False))
    return path


def test_the_best_meets_the_bound_and_every_iteration_records_its_tokens(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Every search for "apple ..." returns k memories of "apple WORD" (2 o200k_base tokens
    each): the start, k=6, holds 12 tokens and misses `<= 8`; k=3 and k=4 meet it."""
    path, db = _suite(tmp_path), tmp_path / "r.db"
    argv = ["optimize", str(path), "--store", str(db), "--max-iterations", "8", "--json"]
    code = main([*argv, "--constraint", "context_tokens.p50<=8"])
    out, err = capsys.readouterr()
    assert code == 0
    data = json.loads(out.strip().splitlines()[-1])
    assert data["constraint"] == {"text": "context_tokens.p50 <= 8", "best_meets": True}
    by_k = {it["params"]["k"]: it["constraint_value"] for it in data["iterations"]}
    assert dict(by_k.items()) == {k: 2.0 * k for k in by_k}
    assert by_k[6] == 12.0  # the start misses the bound
    assert data["best"]["params"]["k"] <= 4
    assert data["best"]["constraint_value"] <= 8
    # the candidates' runs computed it with the cost aggregate, in the named encoding
    run = api.read_run(data["best"]["run_id"], store=db)
    assert run.summary is not None
    cost = run.summary.aggregate("cost")
    assert cost is not None
    facts = cost.facts_as(CostFacts)
    assert facts is not None
    assert facts.encoding == "o200k_base"
    # and the table (on stderr beside --json) shows the bound beside every candidate
    assert "context_tokens.p50 <= 8" in err
    assert "12 (misses)" in err
    assert "8 (meets)" in err
    assert "constraint: context_tokens.p50 <= 8; the best meets it" in err


@pytest.mark.parametrize(
    ("flag", "message"),
    [
        ("context_tokens.p50 2000", "write [TASK/]MEASURE OP NUMBER"),
        ("context_tokens.p50==2000", "write [TASK/]MEASURE OP NUMBER"),
        ("memory/recall/context_tokens.p50<=9", "without a subject"),
        ("tokens_used<=10", "task 'recall' has no measure 'tokens_used'"),
        ("other/context_tokens.p50<=10", "runs the objective's task ('recall') only"),
    ],
)
def test_a_bad_constraint_exits_2_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], flag: str, message: str
) -> None:
    path, db = _suite(tmp_path), tmp_path / "r.db"
    assert main(["optimize", str(path), "--store", str(db), "--constraint", flag]) == 2
    err = capsys.readouterr().err
    assert message in err
    assert "Traceback" not in err
    assert not db.exists() or not api.optimizations(store=db)
