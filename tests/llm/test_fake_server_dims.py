"""`python -m memgauge.llm`, the offline stand-in the README names, as a third-party client
meets it: mem0's default embedder and vector store expect text-embedding-3-small's 1536
dimensions, and the server answered 64 whatever was asked (`{mem0: {}}` then failed every
item on 'Vector dimension error: expected dim: 1536, got 64')."""

from __future__ import annotations

import subprocess
import sys

import httpx


def test_the_server_s_embedding_size_is_set_and_a_request_s_dimensions_honoured() -> None:
    with subprocess.Popen(
        [sys.executable, "-m", "memgauge.llm", "--dim", "1536"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as proc:
        try:
            assert proc.stdout is not None
            base = proc.stdout.readline().strip()
            assert base.startswith("http://127.0.0.1:"), proc.communicate(timeout=30)[1]
            with httpx.Client(base_url=base, timeout=30) as client:
                plain = client.post("/embeddings", json={"model": "m", "input": ["a b", "c"]})
                one = {"model": "m", "input": "a", "dimensions": 8}
                sized = client.post("/embeddings", json=one)
            assert [len(d["embedding"]) for d in plain.json()["data"]] == [1536, 1536]
            assert [len(d["embedding"]) for d in sized.json()["data"]] == [8]
        finally:
            proc.terminate()
            proc.communicate(timeout=30)
