"""The reference memory on a real SQLite database: FTS5 lexical, dense, RRF hybrid."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from memgauge.cli.main import main
from memgauge.data.models import Memory, SessionContext
from memgauge.embed import MiniLMEmbedder, OpenAIEmbedder
from memgauge.errors import UnavailableError, UsageError
from memgauge.llm import FakeOpenAIServer
from memgauge.store.memory_index import fts_query
from memgauge.subjects.fusion import fuse
from memgauge.subjects.reference import ReferenceMemory, ReferenceMemoryConfig

MEMS = [
    Memory(id="tax", text="Tax is rounded half-even per invoice line.", session="s5"),
    Memory(id="chart", text="Revenue charts are rounded to whole euros.", session="s6"),
    Memory(id="stripe", text="Payments go through Stripe with signed webhooks.", session="s5"),
    Memory(id="rule", text="Never commit secrets to the repository.", tier="constitutional"),
    Memory(id="pg", text="Billing data moves to PostgreSQL for row-level security.", folder="b"),
]


@pytest.fixture(scope="module")
def minilm() -> MiniLMEmbedder:
    return MiniLMEmbedder()


def test_fts_query_neutralises_fts5_syntax() -> None:
    assert fts_query('tax AND "NEAR(x y)" OR -foo* ^bar col:val') == (
        '"tax" OR "near" OR "x" OR "y" OR "foo" OR "bar" OR "col" OR "val"'
    )
    assert fts_query("what is the") == '"what" OR "is" OR "the"'  # only stopwords: keep them
    assert fts_query("?!  ...") is None


@pytest.mark.parametrize(
    "query", ['"', "AND", "NOT tax", "tax*", "(", "a:b", "NEAR(", "'; DROP TABLE memories; --"]
)
def test_lexical_search_never_raises_on_hostile_text(query: str) -> None:
    mem = ReferenceMemory.in_memory("lexical")
    mem.ingest(MEMS)
    result = mem.search(query, 5)
    assert isinstance(result.hits, list)
    assert len(mem.dump()) == len(MEMS)


def test_lexical_search_ranks_by_bm25_and_reports_channels_and_latency() -> None:
    mem = ReferenceMemory.in_memory("lexical")
    mem.ingest(MEMS)
    result = mem.search("how is tax rounded on an invoice", 3)
    assert [h.id for h in result.hits][:2] == ["tax", "chart"]
    top = result.hits[0]
    assert top.rank == 1
    assert top.channels == ("lexical",)
    assert top.channel_ranks == {"lexical": 1}
    assert top.score is not None
    assert top.score > result.hits[1].score  # type: ignore[operator]
    assert top.text == MEMS[0].text
    assert set(result.latency_ms) == {"lexical", "search", "total"}
    assert mem.search("", 3).hits == []


def test_stemming_matches_inflections() -> None:
    mem = ReferenceMemory.in_memory("lexical")
    mem.ingest(MEMS)
    assert mem.search("payment", 1).hits[0].id == "stripe"  # porter: payments -> payment


def test_dense_and_hybrid_with_the_offline_model(minilm: MiniLMEmbedder) -> None:
    dense = ReferenceMemory.in_memory("dense", minilm)
    dense.ingest(MEMS)
    # no shared word with the stripe memory: only the dense channel can find it
    assert dense.search("card processor callbacks", 1).hits[0].id == "stripe"
    hybrid = ReferenceMemory.in_memory("hybrid", minilm)
    hybrid.ingest(MEMS)
    result = hybrid.search("rounded tax", 5)
    assert result.hits[0].id == "tax"
    assert result.hits[0].channels == ("dense", "lexical")
    stages = {"embed", "embed_cached", "lexical", "dense", "fusion", "search", "total"}
    assert set(result.latency_ms) <= stages
    assert {"lexical", "dense", "fusion", "search", "total"} <= set(result.latency_ms)
    assert len({"embed", "embed_cached"} & set(result.latency_ms)) == 1
    dense_only = [h for h in result.hits if h.channels == ("dense",)]
    assert dense_only  # memories without a shared word still arrive through the dense channel


def test_rrf_fusion_formula_and_tie_order() -> None:
    ranked = {"lexical": [("a", 0.0), ("b", 0.0)], "dense": [("b", 0.0), ("c", 0.0)]}
    fused = fuse(ranked, "rrf", weights={"lexical": 1, "dense": 1}, k_rrf=60)
    scores = {mid: s for mid, s, _ in fused}
    assert scores["b"] == pytest.approx(1 / 62 + 1 / 61)
    assert scores["a"] == pytest.approx(1 / 61)
    assert [m for m, _, _ in fused] == ["b", "a", "c"]
    assert {m: r for m, _, r in fused}["b"] == {"lexical": 2, "dense": 1}
    tie = fuse({"x": [("p", 0.0)], "y": [("o", 0.0)]}, "rrf", weights={}, k_rrf=60)
    assert [m for m, _, _ in tie] == ["o", "p"]  # equal scores: id ascending


def test_session_boost_lifts_the_session_memories() -> None:
    plain = ReferenceMemory.in_memory("lexical")
    boosted = ReferenceMemory.in_memory("lexical", session_boost=5.0)
    for m in (plain, boosted):
        m.ingest(MEMS)
    ctx = SessionContext(session_id="s6", working_memory_ids=[], turn_number=3)
    assert plain.search("rounded tax", 2, session=ctx).hits[0].id == "tax"
    assert boosted.search("rounded tax", 2, session=ctx).hits[0].id == "chart"
    assert boosted.search("rounded tax", 2).hits[0].id == "tax"  # no context, no boost


def test_pinned_constitutional_memories_come_first() -> None:
    mem = ReferenceMemory.in_memory("lexical", pin_constitutional=True)
    mem.ingest(MEMS)
    hits = mem.search("rounded tax", 3).hits
    assert [h.id for h in hits][:2] == ["rule", "tax"]
    assert hits[0].channels == ("pinned",)


def test_the_lexical_channel_alone_is_searched_k_deep(monkeypatch: pytest.MonkeyPatch) -> None:
    """Lexical with nothing to reorder its hits asks FTS5's ranking for the k it returns (its
    top k are the first k of any deeper list, ties by id included); a session boost or pinning
    reorders, so they search `candidates` deep as hybrid does. The hits are the same."""
    tied = [Memory(id=f"t{i}", text="invoice line") for i in range(8)]
    for settings, session, depth in [
        ({}, None, 3),
        ({"session_boost": 1.0}, SessionContext(session_id="s5"), 50),
        ({"session_boost": 1.0}, None, 3),
        ({"pin_constitutional": True}, None, 50),
    ]:
        mem = ReferenceMemory.in_memory("lexical", **settings)
        mem.ingest([*MEMS, *tied])
        asked: list[int] = []
        search = mem._index.search_lexical

        def spy(text: str, limit: int, search: Any = search, asked: list[int] = asked) -> Any:
            asked.append(limit)
            return search(text, limit)

        monkeypatch.setattr(mem._index, "search_lexical", spy)
        hits = mem.search("invoice line tax", 3, session=session).hits
        assert asked == [depth], settings
        deep = mem._index.search_lexical("invoice line tax", 50)
        if depth == 3:
            assert [(h.id, h.score) for h in hits] == deep[:3]
            assert [h.id for h in hits] == ["tax", "t0", "t1"]


def test_reset_reingest_upsert_and_namespaces(tmp_path: Path) -> None:
    db = str(tmp_path / "mem.db")
    a = ReferenceMemory(ReferenceMemoryConfig(mode="lexical", path=db, namespace="a"))
    b = ReferenceMemory(ReferenceMemoryConfig(mode="lexical", path=db, namespace="b"))
    a.ingest(MEMS)
    b.ingest(MEMS[:1])
    assert len(a.dump()) == 5
    assert len(b.dump()) == 1
    a.ingest([Memory(id="tax", text="Tax is truncated, not rounded.")])  # same id replaces
    assert {m.id: m.text for m in a.dump()}["tax"] == "Tax is truncated, not rounded."
    assert a.search("truncated", 1).hits[0].id == "tax"
    a.reset()
    assert a.dump() == []
    assert len(b.dump()) == 1
    a.close()
    reopened = ReferenceMemory(ReferenceMemoryConfig(mode="lexical", path=db, namespace="b"))
    assert reopened.search("rounded", 1).hits[0].id == "tax"  # it persisted on disk


def test_dense_channel_is_unavailable_without_an_embedder() -> None:
    with pytest.raises(UnavailableError, match="dense channel unavailable"):
        ReferenceMemory(ReferenceMemoryConfig(mode="hybrid"))


def test_config_rejects_nonsense() -> None:
    with pytest.raises(UsageError):
        ReferenceMemoryConfig(mode="magic")  # type: ignore[arg-type]
    with pytest.raises(UsageError):
        ReferenceMemoryConfig(session_boost=-1)


def test_dense_search_through_an_openai_compatible_endpoint() -> None:
    with FakeOpenAIServer(dim=64) as server:
        emb = OpenAIEmbedder("fake", base_url=server.base_url, api_key="k")
        mem = ReferenceMemory.in_memory("dense", emb)
        mem.ingest(MEMS)
        assert mem.search("Stripe webhooks", 1).hits[0].id == "stripe"


class _SlowEmbedder:
    """Sleeps 50 ms per call: the time must land in the embedding stage only."""

    name = "slow-test"
    dim = 8

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        import time

        time.sleep(0.05)
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, t in enumerate(texts):
            out[i, len(t) % self.dim] = 1.0
        return out


def test_query_embedding_is_its_own_stage_and_says_whether_the_cache_answered(
    tmp_path: Path,
) -> None:
    from memgauge.embed.cache import CachedEmbedder

    mem = ReferenceMemory.in_memory("hybrid", CachedEmbedder(_SlowEmbedder(), tmp_path / "emb"))
    mem.ingest(MEMS)
    first = mem.search("rounded tax", 3).latency_ms
    assert first["embed"] >= 50
    for stage in ("lexical", "dense", "fusion", "search"):
        assert first[stage] < 50, stage  # the sleep is in no search stage
    assert first["total"] >= first["embed"]
    again = mem.search("rounded tax", 3).latency_ms  # the same query: the cache answers
    assert "embed" not in again
    assert again["embed_cached"] < 50
    assert "embed" not in mem.search("", 3).latency_ms  # nothing to embed
    lexical = ReferenceMemory.in_memory("lexical")
    lexical.ingest(MEMS)
    assert set(lexical.search("tax", 3).latency_ms) == {"lexical", "search", "total"}


@pytest.mark.parametrize(
    "settings",
    [
        {},
        {"fusion": "combsum"},
        {"fusion": "combmnz", "normalization": "z-score"},
        {"fusion": "wsum", "normalization": "max", "lexical_weight": 2.0, "dense_weight": 0.5},
        {"fusion": "isr"},
        {"fusion": "log_isr"},
        {"fusion": "rbc", "rbc_phi": 0.6},
        {"fusion": "rrf", "k_rrf": 5, "dense_weight": 3.0},
    ],
)
def test_hybrid_fuses_its_channels_by_the_configured_method(
    settings: dict[str, Any], minilm: MiniLMEmbedder
) -> None:
    depth = 4
    hybrid = ReferenceMemory.in_memory("hybrid", minilm, candidates=depth, **settings)
    lexical = ReferenceMemory.in_memory("lexical", candidates=depth)
    dense = ReferenceMemory.in_memory("dense", minilm, candidates=depth)
    for m in (hybrid, lexical, dense):
        m.ingest(MEMS)
    query = "how is tax rounded for payments"
    channels = {
        name: [(h.id, h.score or 0.0) for h in m.search(query, depth).hits]
        for name, m in (("lexical", lexical), ("dense", dense))
    }
    expected = fuse(
        channels,
        settings.get("fusion", "rrf"),
        normalization=settings.get("normalization"),
        weights={
            "lexical": settings.get("lexical_weight", 1.0),
            "dense": settings.get("dense_weight", 1.0),
        },
        k_rrf=settings.get("k_rrf", 60),
        rbc_phi=settings.get("rbc_phi"),
    )
    hits = hybrid.search(query, depth).hits
    assert [(h.id, h.score, h.channel_ranks) for h in hits] == expected[:depth]


def test_fusion_settings_a_method_does_not_read_are_refused_in_code_and_on_the_command_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(UsageError, match="normalization: fusion rrf reads ranks only"):
        ReferenceMemoryConfig(normalization="min-max")
    with pytest.raises(UsageError, match="dense_weight: fusion combsum is unweighted"):
        ReferenceMemoryConfig(fusion="combsum", dense_weight=2.0)
    spec = "reference:mode=hybrid,fusion=isr,normalization=z-score"
    data = Path(__file__).resolve().parents[1] / "data" / "good" / "bundle.yaml"
    db = tmp_path / "r.db"
    assert main(["evaluate", str(data), "-s", spec, "--store", str(db)]) == 2
    err = capsys.readouterr().err
    assert f"--system '{spec}': reference.normalization: fusion isr reads ranks only" in err
    assert "Traceback" not in err
    assert not db.exists()


def test_every_field_of_a_memory_is_stored_as_given() -> None:
    """Ingest then dump gives each field back in its place (rows are built positionally)."""
    memory = Memory(
        id="m1",
        text="Tax is rounded half-even.",
        tier="constitutional",
        folder="billing",
        session="s5",
        corpus="c2",
        created_at=datetime(2024, 5, 8, 13, 56),
        metadata={"speaker": "Ana", "turn": 3},
    )
    mem = ReferenceMemory.in_memory("lexical")
    mem.ingest([memory])
    assert mem.dump() == [memory]
    mem.close()
