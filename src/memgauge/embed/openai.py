"""Embeddings from an OpenAI-compatible `/v1/embeddings` endpoint (OpenAI, vLLM, Ollama, ...)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from memgauge._types import FloatArray
from memgauge._util.listing import counted
from memgauge._util.redact import redact, register_secret
from memgauge.errors import SubjectError, UnavailableError

if TYPE_CHECKING:
    # httpx (and, through it, pygments and rich.syntax) is imported by the embedder that
    # calls an endpoint, not by every command that imports memgauge.embed
    import httpx

__all__ = ["OpenAIEmbedder"]


class OpenAIEmbedder:
    """Calls `{base_url}/embeddings` in batches with bounded, jittered retries.

    Configuration: `base_url` or OPENAI_BASE_URL (default https://api.openai.com/v1), the key
    from OPENAI_API_KEY (never logged, and scrubbed from the endpoint's error texts), the model from the argument or
    MEMGAUGE_EMBED_MODEL. Vectors are re-normalised to unit length and ordered by `index`.
    """

    def __init__(
        self,
        model: str | None = None,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        batch_size: int = 128,
        max_retries: int = 4,
        timeout: float = 60.0,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.model = model or os.environ.get("MEMGAUGE_EMBED_MODEL") or "text-embedding-3-small"
        self.base_url = (
            base_url or os.environ.get("OPENAI_BASE_URL") or "https://api.openai.com/v1"
        ).rstrip("/")
        key = api_key if api_key is not None else os.environ.get("OPENAI_API_KEY")
        if not key and "api.openai.com" in self.base_url:
            raise UnavailableError("OPENAI_API_KEY is not set; the OpenAI embedder needs it")
        register_secret(key)  # scrubbed from every error text, should the endpoint echo it
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        import httpx

        self._client = httpx.Client(
            base_url=self.base_url, headers=headers, timeout=timeout, transport=transport
        )
        self.batch_size = batch_size
        self.max_retries = max_retries
        self._dim: int | None = None

    def close(self) -> None:
        """Close pooled connections (a provider keeps them alive between calls)."""
        self._client.close()

    def __del__(self) -> None:
        # an embedder dropped without close() must not leak its keep-alive sockets
        client = getattr(self, "_client", None)
        if client is not None:
            client.close()

    @property
    def name(self) -> str:
        """`openai:<model>@<base url>`."""
        return f"openai:{self.model}@{self.base_url}"

    @property
    def dim(self) -> int:
        """Learned from the first response (one probe call if needed)."""
        if self._dim is None:
            self._dim = int(self._call(["dimension probe"]).shape[1])
        return self._dim

    def _call(self, texts: list[str]) -> FloatArray:
        from memgauge._util.retry import RetriesExhausted, send_with_retries

        try:
            resp = send_with_retries(
                lambda: self._client.post(
                    "/embeddings", json={"model": self.model, "input": texts}
                ),
                max_retries=self.max_retries,
            )
        except RetriesExhausted as exc:
            if exc.response is None:
                raise SubjectError(
                    f"embeddings endpoint {self.base_url} unreachable: {redact(str(exc))}"
                ) from None
            raise SubjectError(
                f"embeddings endpoint {self.base_url} answered {exc.response.status_code} "
                f"after {exc.attempts} attempts"
            ) from None
        return self._parse(resp, len(texts))

    def _parse(self, resp: httpx.Response, n: int) -> FloatArray:
        if resp.status_code != 200:
            raise SubjectError(
                f"embeddings endpoint {self.base_url} answered {resp.status_code}: "
                f"{redact(resp.text, limit=200)}"
            )
        try:
            data = resp.json()["data"]
            rows = sorted(data, key=lambda d: d["index"])
            matrix = np.asarray([r["embedding"] for r in rows], dtype=np.float64)
        except (ValueError, KeyError, TypeError) as exc:
            raise SubjectError(
                f"embeddings endpoint {self.base_url} sent a malformed response "
                f"({type(exc).__name__}: {redact(str(exc), limit=200)})"
            ) from None
        if matrix.ndim != 2 or matrix.shape[0] != n:
            raise SubjectError(
                "embeddings endpoint returned"
                f" {counted(matrix.shape[0] if matrix.ndim else 0, 'vector')}"
                f" for {counted(n, 'text')}"
            )
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        return np.asarray(matrix / np.maximum(norms, 1e-12))

    def embed(self, texts: Sequence[str]) -> FloatArray:
        """Embed in batches of `batch_size`."""
        if not texts:
            return np.zeros((0, self._dim or 0))
        parts = [
            self._call(list(texts[i : i + self.batch_size]))
            for i in range(0, len(texts), self.batch_size)
        ]
        out = np.vstack(parts)
        self._dim = int(out.shape[1])
        return out
