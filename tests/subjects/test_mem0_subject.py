"""mem0 as a subject, for real and offline: mem0ai with a local Qdrant on disk, its LLM and
embedder pointed at the fake OpenAI-compatible server on 127.0.0.1 (scripted replies, hashed
embeddings), telemetry off."""

from __future__ import annotations

import json
import os
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.helpers import lazy_import

os.environ["MEM0_TELEMETRY"] = "False"  # before mem0 is first imported, as the adapter does

from memgauge.data.models import Memory
from memgauge.errors import SubjectError, UnavailableError
from memgauge.llm.fake_server import FakeOpenAIServer
from memgauge.subjects.mem0 import Mem0Subject
from memgauge.subjects.registry import build_subject

lazy_import("mem0", reason="mem0ai is not installed (pip install 'memgauge[mem0]')")

DIM = 64


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer(dim=DIM, keep_alive=False) as srv:
        yield srv


def _config(srv: FakeOpenAIServer, tmp: Path) -> dict[str, Any]:
    endpoint = {"openai_base_url": srv.base_url, "api_key": "sk-test"}
    return {
        "vector_store": {
            "provider": "qdrant",
            "config": {
                "path": str(tmp / "qdrant"),
                "on_disk": True,
                "collection_name": "memgauge",
                "embedding_model_dims": DIM,
            },
        },
        "llm": {"provider": "openai", "config": {"model": "scripted", **endpoint}},
        "embedder": {
            "provider": "openai",
            "config": {"model": "hashed", "embedding_dims": DIM, **endpoint},
        },
        "history_db_path": str(tmp / "history.db"),
    }


MEMS = [
    Memory(id="m1", text="Deploys go out on Tuesdays"),
    Memory(id="m2", text="Never commit secrets to the repository"),
    Memory(id="m3", text="The API listens on port 8080"),
]


def test_search_returns_dataset_ids_and_telemetry_is_off(
    server: FakeOpenAIServer, tmp_path: Path
) -> None:
    subject = build_subject({"mem0": {"config": _config(server, tmp_path)}})
    assert isinstance(subject, Mem0Subject)
    try:
        assert os.environ["MEM0_TELEMETRY"] == "False"
        subject.reset()
        subject.ingest(MEMS)
        result = subject.search("which port does the API listen on", 3)
        assert next(h.id for h in result.hits) == "m3"
        assert {h.id for h in result.hits} == {"m1", "m2", "m3"}
        assert all(h.score is not None for h in result.hits)
        assert [h.rank for h in result.hits] == [1, 2, 3]
        assert sorted(m.id for m in subject.dump()) == ["m1", "m2", "m3"]
        # stored as given: three ADDs, returned by mem0 itself
        assert [(e.kind, e.source) for e in subject.events] == [("ADD", "returned")] * 3
        subject.reset()
        assert subject.dump() == []
    finally:
        subject.close()


def test_inferred_facts_come_from_the_scripted_llm(
    server: FakeOpenAIServer, tmp_path: Path
) -> None:
    subject = Mem0Subject(_config(server, tmp_path), infer=True)
    try:
        server.script(
            [json.dumps({"memory": [{"text": "User likes tea"}, {"text": "User lives in Oslo"}]})]
        )
        subject.ingest([Memory(id="c1", text="I like tea, and I moved to Oslo last year")])
        assert sorted(e.text or "" for e in subject.events) == [
            "User likes tea",
            "User lives in Oslo",
        ]
        assert {e.kind for e in subject.events} == {"ADD"}  # mem0 2.x reports ADD only
        dumped = subject.dump()
        assert sorted(m.text for m in dumped) == ["User likes tea", "User lives in Oslo"]
        assert {m.metadata["from"] for m in dumped} == {"c1"}
    finally:
        subject.close()


def _recall_suite(config: dict[str, Any]) -> dict[str, Any]:
    """A suite of one mem0 subject with `config` on the good bundle, scored by Recall@5."""
    bundle = Path(__file__).resolve().parents[1] / "data" / "good" / "bundle.yaml"
    return {
        "name": "mem0",
        "subjects": {"mem0": {"mem0": {"config": config}}},
        "tasks": [
            {
                "name": "recall",
                "kind": "retrieval",
                "dataset": str(bundle),
                "evaluators": [{"retrieval": "Recall@5"}],
            }
        ],
    }


def test_a_suite_evaluates_mem0_retrieval(
    server: FakeOpenAIServer, tmp_path: Path, run_suite_json: Any
) -> None:
    code, doc = run_suite_json(_recall_suite(_config(server, tmp_path)))
    assert code == 0
    (row,) = doc["results"]
    assert (row["evaluator"], row["mean"], row["n_scored"]) == ("Recall@5", 1.0, 1)


def test_a_run_leaves_nothing_in_the_store_its_config_names(
    server: FakeOpenAIServer, tmp_path: Path, run_suite_json: Any
) -> None:
    """Each run works under a mem0 user of its own; closing the subject deletes that user's
    memories, so a store the spec names (a user's own Qdrant) does not gain the dataset's
    memories once per run under users nobody reads again. A user named in the spec keeps them."""
    from qdrant_client import QdrantClient

    config = _config(server, tmp_path)
    suite = _recall_suite(config)

    def stored() -> dict[str, int]:
        client = QdrantClient(path=str(tmp_path / "qdrant"))
        try:
            points, _ = client.scroll("memgauge", limit=1000, with_payload=True)
        finally:
            client.close()
        users: dict[str, int] = {}
        for point in points:
            user = str((point.payload or {}).get("user_id"))
            users[user] = users.get(user, 0) + 1
        return users

    for _ in range(2):
        code, _doc = run_suite_json(suite)
        assert code == 0
    assert stored() == {}
    suite["subjects"] = {"mem0": {"mem0": {"config": config, "user_id": "alice"}}}
    code, _doc = run_suite_json(suite)
    assert code == 0
    assert set(stored()) == {"alice"}


def _delete_all_of_mem0ai_1_0_5(
    self: Any, user_id: str | None = None, agent_id: str | None = None, run_id: str | None = None
) -> dict[str, str]:
    """`Memory.delete_all` as mem0ai 1.0.0 to 1.0.5 released it (mem0/memory/main.py; mem0
    issue #3928, fixed in 1.0.6): the user's memories, then `vector_store.reset()`, which
    drops the whole collection."""
    filters = {
        k: v for k, v in {"user_id": user_id, "agent_id": agent_id, "run_id": run_id}.items() if v
    }
    if not filters:
        raise ValueError("At least one filter is required to delete all memories.")
    memories = self.vector_store.list(filters=filters)[0]
    for memory in memories:
        self._delete_memory(memory.id)
    self.vector_store.reset()
    return {"message": "Memories deleted successfully!"}


def test_a_run_keeps_the_other_users_memories_in_the_store_its_config_names(
    server: FakeOpenAIServer, tmp_path: Path, run_suite_json: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The subject deletes its own user's memories one by one, never through mem0's
    `delete_all`: `mem0ai>=1.0` installs 1.0.0 to 1.0.5 too, whose `delete_all` resets the
    whole collection, and a run (its reset before ingesting, its close) wiped every memory of
    the application's users in the store the spec names."""
    import mem0
    from qdrant_client import QdrantClient

    config = _config(server, tmp_path)
    app = mem0.Memory.from_config(config)
    app.add([{"role": "user", "content": "alice lives in Oslo"}], user_id="alice", infer=False)
    app.vector_store.client.close()
    del app
    monkeypatch.setattr(mem0.Memory, "delete_all", _delete_all_of_mem0ai_1_0_5)
    code, _doc = run_suite_json(_recall_suite(config))
    assert code == 0
    client = QdrantClient(path=str(tmp_path / "qdrant"))
    try:
        points, _ = client.scroll("memgauge", limit=1000, with_payload=True)
    finally:
        client.close()
    assert [(p.payload or {}).get("user_id") for p in points] == ["alice"]


def test_mem0_inferring_nothing_is_a_memory_that_holds_nothing(
    server: FakeOpenAIServer, tmp_path: Path, run_suite_json: Any
) -> None:
    """With `infer: true` and a model that answers no JSON, mem0 stores nothing: every item
    is an `empty_memory` failure and the run exits 4, never Recall 0 with exit 0."""
    bundle = Path(__file__).resolve().parents[1] / "data" / "good" / "bundle.yaml"
    config = _config(server, tmp_path)
    suite = {
        "name": "mem0",
        "subjects": {"mem0": {"mem0": {"config": config, "infer": True}}},
        "tasks": [
            {
                "name": "recall",
                "kind": "retrieval",
                "dataset": str(bundle),
                "evaluators": [{"retrieval": "Recall@5"}],
            }
        ],
    }
    code, doc = run_suite_json(suite)  # the fake model answers "OK" to fact extraction
    assert code == 4
    (row,) = doc["results"]
    assert (row["mean"], row["n_scored"], row["n_failed"]) == (None, 0, 1)
    assert "subject mem0: 1 of 1 item failed (100%: 1 empty_memory)" in doc["reason"]


def test_without_mem0_the_subject_is_unavailable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "mem0", None)
    with pytest.raises(UnavailableError, match=r"pip install 'memgauge\[mem0\]'"):
        Mem0Subject()


def test_a_mem0_that_cannot_start_leaves_no_temporary_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """mem0's defaults with no OpenAI key: from_config fails, and the temporary directory made
    for its local Qdrant goes with it (every such run left an empty memgauge-mem0-* behind)."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    with pytest.raises(SubjectError, match="mem0 could not start"):
        Mem0Subject()
    assert list(tmp_path.iterdir()) == []
