"""Embedders against real things: the packaged MiniLM weights vs sentence-transformers output,
an OpenAI-compatible endpoint over real HTTP on 127.0.0.1, and the on-disk cache."""

from __future__ import annotations

import json
import shutil
import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from memgauge.embed import CachedEmbedder, MiniLMEmbedder, OpenAIEmbedder, load_embedder
from memgauge.embed.cache import _text_key as _key
from memgauge.embed.minilm_numpy import minilm_model_dir
from memgauge.errors import SubjectError, UnavailableError, UsageError
from memgauge.llm import FakeOpenAIServer, Fault, hashed_embedding

REFERENCE = Path(__file__).resolve().parents[1] / "data" / "embeddings" / "minilm_reference.json"


@pytest.fixture(scope="module")
def minilm() -> MiniLMEmbedder:
    # batches of 4 neighbours by length: the reference's 300-word text still pads the 30-token
    # one beside it to 256 tokens, and the three texts below share one batch; the default 32
    # padded all ten reference texts to 256 tokens (2 CPU-s, 7x the batches of 4)
    return MiniLMEmbedder(batch_size=4)


def test_minilm_matches_sentence_transformers(minilm: MiniLMEmbedder) -> None:
    # The fixture was produced by sentence-transformers 6.2.0 / torch 2.13.0 on the same weights,
    # over texts chosen to hit edge cases: empty, one letter, German, Japanese, emoji, and a
    # 300-word text that is truncated at 256 tokens.
    ref = json.loads(REFERENCE.read_text())
    got = minilm.embed(ref["texts"])
    want = np.asarray(ref["vectors"])
    assert got.shape == (10, 384)
    assert np.abs(got - want).max() < 1e-6
    np.testing.assert_allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-6)


def test_minilm_order_and_batching_do_not_change_vectors(minilm: MiniLMEmbedder) -> None:
    texts = ["short", "a considerably longer sentence about invoices and tax rounding", "mid one"]
    together = minilm.embed(texts)
    alone = np.vstack([minilm.embed([t]) for t in texts])
    np.testing.assert_allclose(together, alone, atol=1e-6)
    assert minilm.embed([]).shape == (0, 384)


def test_minilm_rejects_weights_with_the_wrong_hash(tmp_path: Path) -> None:
    model = tmp_path / "model"
    shutil.copytree(minilm_model_dir(), model, ignore=shutil.ignore_patterns("model.safetensors"))
    (model / "model.safetensors").write_bytes(b"not the weights")
    with pytest.raises(UnavailableError, match="sha256"):
        MiniLMEmbedder(model)


def test_cache_serves_repeats_from_disk_and_survives_damage(tmp_path: Path) -> None:
    with FakeOpenAIServer(dim=16) as server:
        inner = OpenAIEmbedder("fake", base_url=server.base_url, api_key="k")
        cached = CachedEmbedder(inner, tmp_path / "cache")
        first = cached.embed(["alpha beta", "gamma", "alpha beta"])
        assert (cached.hits, cached.misses) == (0, 3)
        assert len(server.requests) == 1  # duplicates are embedded once
        assert server.requests[0]["json"]["input"] == ["alpha beta", "gamma"]
        again = CachedEmbedder(inner, tmp_path / "cache").embed(["gamma", "alpha beta"])
        np.testing.assert_allclose(again, first[[1, 0]], atol=1e-6)
        assert len(server.requests) == 1  # a new instance reads the shards written before
        for shard in (tmp_path / "cache").rglob("*.npz"):
            shard.write_bytes(b"garbage")
        fresh = CachedEmbedder(inner, tmp_path / "cache")
        np.testing.assert_allclose(fresh.embed(["gamma"]), first[[1]], atol=1e-6)
        assert fresh.misses == 1  # a damaged shard is a miss, not an error


def test_cache_shards_hold_two_arrays_and_shards_of_the_format_before_are_read(
    tmp_path: Path,
) -> None:
    class Lengths:
        name = "lengths"
        dim = 3

        def embed(self, texts: Sequence[str]) -> np.ndarray:
            return np.asarray([[len(t), 1.0, 2.0] for t in texts], dtype=np.float64)

    texts = [f"text number {i}" + "x" * i for i in range(40)]
    cached = CachedEmbedder(Lengths(), tmp_path / "cache")
    first = cached.embed(texts)
    shards = sorted((tmp_path / "cache").rglob("*.npz"))
    assert shards
    for shard in shards:
        with np.load(shard) as data:
            # one array of keys and one of vectors, not a zip member per text
            assert sorted(data.files) == ["keys", "vectors"]
            assert data["vectors"].dtype == np.float32
            assert data["vectors"].shape == (len(data["keys"]), 3)
    # a shard as memgauge wrote them before: an array per text hash (and one such entry
    # added beside the two arrays by a version still on that format)
    key = _key(texts[0])
    (old,) = [s for s in shards if s.name == f"{key[:2]}.npz"]
    with np.load(old) as data:
        keys, vectors = data["keys"].astype(str).tolist(), data["vectors"]
    np.savez(old, **dict(zip(keys, vectors, strict=True)))
    extra = _key("added by an older version")
    mixed = next(s for s in shards if s != old)
    with np.load(mixed) as data:
        arrays = {k: data[k] for k in data.files}
    np.savez(mixed, **arrays, **{extra: np.array([9.0, 9.0, 9.0], dtype=np.float32)})
    again = CachedEmbedder(Lengths(), tmp_path / "cache")
    np.testing.assert_array_equal(again.embed(texts), first)
    assert again.misses == 0
    assert again._read(mixed.stem)[extra].tolist() == [9.0, 9.0, 9.0]
    # adding an entry rewrites the old shard in two arrays, its entries kept
    again.embed([next(t for t in (f"new {i}" for i in range(100_000)) if _key(t)[:2] == key[:2])])
    with np.load(old) as data:
        assert sorted(data.files) == ["keys", "vectors"]
        assert set(keys) <= set(data["keys"].astype(str).tolist())


class _Gated:
    """Vectors from text lengths; the first call waits until a second call has begun."""

    name = "gated"
    dim = 4

    def __init__(self) -> None:
        self.calls: list[list[str]] = []
        self.started = threading.Event()
        self.second = threading.Event()

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.calls.append(list(texts))
        if len(self.calls) == 1:
            self.started.set()
            self.second.wait(timeout=10)
        else:
            self.second.set()
        return np.asarray([[len(t), 1.0, 0.0, 0.0] for t in texts], dtype=np.float64)


def test_cache_embeds_a_text_two_threads_want_at_once_only_once(tmp_path: Path) -> None:
    inner = _Gated()
    cached = CachedEmbedder(inner, tmp_path / "cache")
    out: dict[str, np.ndarray] = {}

    def first() -> None:
        out["a"] = cached.embed(["one", "three"])

    a = threading.Thread(target=first)
    a.start()
    assert inner.started.wait(timeout=10)
    # "three" is being embedded by the first thread: this one embeds "sixteen" only, and
    # waits for "three" rather than embedding it again
    out["b"] = cached.embed(["three", "sixteen"])
    a.join()
    assert inner.calls == [["one", "three"], ["sixteen"]]
    assert out["a"][:, 0].tolist() == [3.0, 5.0]
    assert out["b"][:, 0].tolist() == [5.0, 7.0]
    assert (cached.misses, cached.hits) == (3, 1)
    # warm embeds ahead, in chunks, once per text, and writes the shards
    cached.warm(["nine", "one", "nine", "ten", "eleven"], chunk=2)
    assert inner.calls[2:] == [["nine"], ["ten", "eleven"]]
    again = CachedEmbedder(inner, tmp_path / "cache")
    assert again.embed(["ten", "sixteen", "three"])[:, 0].tolist() == [3.0, 7.0, 5.0]
    assert again.misses == 0
    stop = threading.Event()
    stop.set()
    cached.warm(["never"], stop=stop)
    assert inner.calls[-1] == ["ten", "eleven"]


def test_openai_embedder_over_http_normalises_and_orders() -> None:
    with FakeOpenAIServer(dim=32, api_key="sekret") as server:
        emb = OpenAIEmbedder("fake-embed", base_url=server.base_url, api_key="sekret", batch_size=2)
        out = emb.embed(["one two", "two three", "three four", "four"])
        assert out.shape == (4, 32)
        np.testing.assert_allclose(out[3], hashed_embedding("four", 32), atol=1e-12)
        assert [len(r["json"]["input"]) for r in server.requests] == [2, 2]
        assert emb.dim == 32
        assert emb.name == f"openai:fake-embed@{server.base_url}"


def test_openai_embedder_retries_then_succeeds_and_fails_clearly() -> None:
    with FakeOpenAIServer(dim=8) as server:
        server.fail(Fault(503), Fault(429, headers=(("retry-after", "0"),)))
        emb = OpenAIEmbedder("m", base_url=server.base_url, api_key="k", max_retries=3)
        emb_fast = emb
        assert emb_fast.embed(["x"]).shape == (1, 8)
        assert len(server.requests) == 3
        server.fail(*[Fault(500)] * 3)
        failing = OpenAIEmbedder("m", base_url=server.base_url, api_key="k", max_retries=2)
        with pytest.raises(SubjectError, match="answered 500 after 3 attempts"):
            failing.embed(["y"])
        server.fail(Fault(200, body='{"data": "nonsense"}'))
        with pytest.raises(SubjectError, match="malformed"):
            failing.embed(["z"])


def test_openai_embedder_wrong_key_is_not_retried_and_key_is_not_echoed() -> None:
    with FakeOpenAIServer(dim=8, api_key="right") as server:
        emb = OpenAIEmbedder("m", base_url=server.base_url, api_key="wrong-key-123")
        with pytest.raises(SubjectError, match="401") as info:
            emb.embed(["x"])
        assert "wrong-key-123" not in str(info.value)
        assert len(server.requests) == 1


def test_openai_embedder_unreachable_endpoint() -> None:
    emb = OpenAIEmbedder("m", base_url="http://127.0.0.1:9/v1", api_key="k", max_retries=0)
    with pytest.raises(SubjectError, match="unreachable"):
        emb.embed(["x"])


def test_openai_needs_a_key_for_the_real_service(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(UnavailableError, match="OPENAI_API_KEY"):
        OpenAIEmbedder()


def test_load_embedder_specs() -> None:
    assert isinstance(load_embedder("minilm"), MiniLMEmbedder)
    with pytest.raises(UsageError, match="unknown embedder"):
        load_embedder("word2vec")
