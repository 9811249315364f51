"""Issue 18 item 8: the write pipeline beyond facts (seed 004), on the one engine through the
CLI: knowledge-graph triples (P / R / F1 over normalized triples, entities and relations) and
embedding quality (nearest-neighbour agreement of stored vectors with the reference embedder on
known-similar and known-different pairs)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml

from memgauge import api
from memgauge.cli.main import main
from memgauge.llm import FakeOpenAIServer
from memgauge.llm.fake_server import hashed_embedding
from memgauge.scorers.graph import normalize_entity, normalize_relation, triples_of

DATA = Path(__file__).resolve().parents[1] / "data"
BAD = DATA / "bad"


def _run(tmp_path: Path, capsys: pytest.CaptureFixture[str], suite: dict[str, Any]) -> Any:
    """`memgauge run` the suite; exit code, the run's aggregate measures by (subject, name)."""
    path = tmp_path / "suite.yaml"
    path.write_text(yaml.safe_dump(suite))
    code = main(["run", str(path), "--store", str(tmp_path / "r.db"), "--json"])
    cap = capsys.readouterr()
    lines = cap.out.strip().splitlines()
    measures: dict[tuple[str, str], Any] = {}
    if code == 0:
        run = api.read_run(json.loads(lines[-1])["run_id"], store=tmp_path / "r.db")
        assert run.summary is not None
        for agg in run.summary.aggregates:
            measures.update({(m.subject, m.name): m.model_dump() for m in agg.measures})
    return code, measures, cap.out + cap.err


def test_relations_and_entities_are_compared_normalized() -> None:
    assert normalize_relation("worksAt") == normalize_relation("WORKS_AT") == "works at"
    assert normalize_relation("works-at") == "works at"
    assert normalize_entity("The  Kuzu-DB.") == "kuzu db"
    assert triples_of("(a, r, b)\n- c | s | d") == [("a", "r", "b"), ("c", "s", "d")]
    with pytest.raises(ValueError, match="not a triple"):
        triples_of([["a", "b"]])


def test_knowledge_graph_triples_precision_recall_f1_per_level(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite = {
        "name": "kg",
        "max_failure_rate": 0.5,
        "subjects": {"writer": {"recorded": {"path": str(DATA / "graph" / "outputs.jsonl")}}},
        "tasks": [
            {
                "name": "kg",
                "kind": "expected-output",
                "dataset": str(DATA / "graph" / "items.jsonl"),
                "evaluators": ["kg-triples"],
                "aggregates": ["kg"],
            }
        ],
    }
    code, m, text = _run(tmp_path, capsys, suite)
    assert code == 0, text
    # triples: employer 2/2 (WORKS_AT, basedIn, ACME, "Lisbon." all normalize), callers 1 + 1
    # invented, storage 1 + 1 missed: TP 4, FP 1, FN 1
    assert m[("writer", "triples.precision")]["value"] == pytest.approx(0.8)
    assert m[("writer", "triples.recall")]["value"] == pytest.approx(0.8)
    assert m[("writer", "triples.f1")]["value"] == pytest.approx(0.8)
    # entities: TP 7, FP 1 (logAudit), FN 1 (code symbols); relations: TP 4, FN 1 (stores)
    assert m[("writer", "entities.precision")]["value"] == pytest.approx(7 / 8)
    assert m[("writer", "relations.precision")]["value"] == 1.0
    assert m[("writer", "relations.recall")]["value"] == pytest.approx(0.8)
    f1 = m[("writer", "triples.f1")]
    assert f1["n_scored"] == 3
    assert f1["n_failed"] == 1  # the prose output is a recorded failure, not zero triples
    assert f1["ci_low"] <= 0.8 <= f1["ci_high"]
    assert m[("writer", "triples.f1_macro")]["value"] == pytest.approx((1 + 2 / 3 + 2 / 3) / 3)


def _stored(path: Path, texts: list[str], scramble: bool) -> Path:
    rng = np.random.default_rng(3)
    rows = []
    for t in texts:
        vec = rng.normal(size=64).tolist() if scramble else hashed_embedding(t)
        rows.append(json.dumps({"text": t, "vector": vec}))
    path.write_text("\n".join(rows) + "\n")
    return path


def test_stored_vectors_agree_with_the_reference_embedder_or_not(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], llm_server: FakeOpenAIServer
) -> None:
    lines = (DATA / "embeddings" / "pairs.jsonl").read_text().splitlines()
    pairs = [json.loads(line) for line in lines]
    texts = sorted({p[s] for p in pairs for s in ("a", "b")})
    suite = {
        "name": "embeddings",
        "subjects": {
            # the same vectors the reference gives (the fake server's hashed embeddings)
            "faithful": {
                "stored-vectors": {"path": str(_stored(tmp_path / "good.jsonl", texts, False))}
            },
            "scrambled": {
                "stored-vectors": {"path": str(_stored(tmp_path / "bad.jsonl", texts, True))}
            },
        },
        "tasks": [
            {
                "name": "vectors",
                "kind": "embedding",
                "dataset": str(DATA / "embeddings" / "pairs.jsonl"),
                "evaluators": [{"embedding-pair": {"embedder": "openai:fake-embed"}}],
                "aggregates": [{"embedding": {"k": 1}}],
            }
        ],
    }
    code, m, text = _run(tmp_path, capsys, suite)
    assert code == 0, text
    assert m[("faithful", "nn_agreement")]["value"] == 1.0
    assert m[("faithful", "pair_agreement")]["value"] == 1.0
    assert m[("faithful", "auc")]["value"] == m[("faithful", "auc_reference")]["value"]
    assert m[("faithful", "auc_reference")]["value"] == 1.0  # the pairs share words or not
    assert m[("scrambled", "nn_agreement")]["value"] < 0.5
    assert (
        m[("scrambled", "pair_accuracy")]["value"]
        < m[("scrambled", "pair_accuracy_reference")]["value"]
    )
    assert m[("scrambled", "pair_accuracy")]["n_scored"] == 6
    embedded = [
        r["json"]["input"] for r in llm_server.requests if r["path"].endswith("/embeddings")
    ]
    assert embedded  # the reference vectors came from the embedder, not from the stored file


@pytest.mark.parametrize(
    ("name", "where"),
    [
        ("embedding_pairs_bad_label.jsonl", "embedding_pairs_bad_label.jsonl:2: label"),
        ("stored_vectors_ragged.jsonl", "stored_vectors_ragged.jsonl:3: vector"),
    ],
)
def test_bad_pairs_and_vectors_exit_2_naming_file_line_and_field(
    name: str, where: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pairs = BAD / name if name.startswith("embedding") else DATA / "embeddings" / "pairs.jsonl"
    vectors = (
        BAD / name
        if name.startswith("stored")
        else _stored(tmp_path / "good.jsonl", ["the graph runs on kuzu"], False)
    )
    suite = {
        "name": "bad",
        "subjects": {"s": {"stored-vectors": {"path": str(vectors)}}},
        "tasks": [
            {
                "name": "v",
                "kind": "embedding",
                "dataset": str(pairs),
                "evaluators": ["embedding-pair"],
            }
        ],
    }
    code, _, text = _run(tmp_path, capsys, suite)
    assert code == 2, text
    assert where in text
    assert "Traceback" not in text
    assert main(["validate", str(BAD / name)]) == 2
    assert where in capsys.readouterr().err
