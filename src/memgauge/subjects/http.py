"""A memory system behind HTTP, speaking the protocol in `docs/http-subject.openapi.yaml`.

POST /reset, /ingest, /search and (optionally) /flush and /dump, each with the namespace in the body
(a service without /flush, answering it 404, is searchable once /ingest returns); an agent service
implements POST /answer. 429, 5xx, timeouts and connection errors are retried with jittered
exponential backoff (bounded); other errors fail at once with the service's message. An API key,
when configured, is read from the environment variable named by `api_key_env` and scrubbed from
every error text (`memgauge._util.redact`), the service's own included.
"""

from __future__ import annotations

import math
import os
import time
import uuid
from collections.abc import Sequence
from typing import Any

import httpx

from memgauge._util.redact import redact, register_secret
from memgauge._util.retry import RetriesExhausted, send_with_retries
from memgauge.data.models import Memory, SessionContext
from memgauge.errors import SubjectError, UsageError
from memgauge.subjects.events import Capabilities
from memgauge.subjects.protocol import SearchResult
from memgauge.subjects.python_import import search_result
from memgauge.subjects.remote import RemoteSubject

__all__ = ["HttpSubject"]


class HttpSubject(RemoteSubject):
    """Client of one memory service; a namespace of its own unless one is given.

    Args:
        base_url: the service's address (`http://` or `https://`); each method is POSTed to
            BASE_URL/METHOD.
        namespace: sent in every request's body; default: a new one for each run.
        timeout: the HTTP client's timeout in seconds (to connect, and for each read and
            write of a request).
        max_retries: retries of a request after a 429, a 5xx, a timeout or a connection error
            (jittered exponential backoff); 0: none.
        api_key_env: the environment variable whose value is sent as a bearer token; none:
            no Authorization header.
        batch_size: the most memories sent in one POST /ingest."""

    def __init__(
        self,
        base_url: str,
        *,
        namespace: str | None = None,
        timeout: float = 30.0,
        max_retries: int = 3,
        api_key_env: str | None = None,
        batch_size: int = 500,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        if not base_url.startswith(("http://", "https://")):
            raise UsageError(
                f"http subject: base_url must start with http:// or https://, got {base_url!r}"
            )
        headers = {}
        if api_key_env:
            key = os.environ.get(api_key_env)
            if not key:
                raise UsageError(f"http subject: environment variable {api_key_env} is not set")
            register_secret(key)  # a service may echo it in an error body
            headers["Authorization"] = f"Bearer {key}"
        self.base_url = base_url.rstrip("/")
        self.namespace = namespace or f"memgauge-{uuid.uuid4().hex[:12]}"
        self.max_retries = max_retries
        self.batch_size = batch_size
        self._client = httpx.Client(
            base_url=self.base_url, timeout=timeout, headers=headers, transport=transport
        )

    # httpx.Client is thread-safe: a run may send requests from several threads at once
    capabilities = Capabilities(dump=True, session_context=True, namespaces=True, concurrent=True)

    @property
    def name(self) -> str:
        """`http:<base url>`."""
        return f"http:{self.base_url}"

    def request(self, method: str, body: dict[str, Any]) -> Any:
        """POST /METHOD."""
        return self._post(f"/{method}", body)

    def flush(self) -> None:
        """POST /flush; a service that does not implement it (404) has nothing to wait for."""
        self._post("/flush", {}, optional=True)

    def _post(self, path: str, body: dict[str, Any], *, optional: bool = False) -> Any:
        try:
            resp = send_with_retries(
                lambda: self._client.post(path, json={"namespace": self.namespace, **body}),
                max_retries=self.max_retries,
                base_delay=0.2,
                max_delay=10.0,
            )
        except RetriesExhausted as exc:
            detail = f": {_message(exc.response)}" if exc.response is not None else ""
            if isinstance(exc.error, httpx.ConnectError):  # most often: the service is not up
                detail = (
                    f" (nothing accepts connections at {self.base_url}: is the service running?)"
                )
            raise SubjectError(f"{self.name}{path}: {exc}{detail}") from None
        return self._parse(path, resp, optional=optional)

    def _parse(self, path: str, resp: httpx.Response, *, optional: bool = False) -> Any:
        if resp.status_code == 404 and optional:
            return None
        if resp.status_code == 404:
            raise SubjectError(
                f"{self.name}{path}: 404; the service does not implement {path} of "
                "docs/http-subject.openapi.yaml"
            )
        if not 200 <= resp.status_code < 300:
            raise SubjectError(f"{self.name}{path}: status {resp.status_code}: {_message(resp)}")
        if resp.status_code == 204 or not resp.content:
            return None
        try:
            return resp.json()
        except ValueError:
            raise SubjectError(
                f"{self.name}{path}: the body is not JSON: {redact(resp.text, limit=200)!r}"
            ) from None

    def ingest(self, memories: Sequence[Memory]) -> None:
        """POST /ingest in batches."""
        for i in range(0, len(memories), self.batch_size):
            batch = [m.model_dump(mode="json") for m in memories[i : i + self.batch_size]]
            self._post("/ingest", {"memories": batch})

    def search(self, query: str, k: int, *, session: SessionContext | None = None) -> SearchResult:
        """POST /search; `total` latency is the round trip, the service's own stages are kept."""
        t0 = time.perf_counter()
        body = {"query": query, "k": k, "session": session.model_dump() if session else None}
        data = self._post("/search", body)
        total = (time.perf_counter() - t0) * 1000
        if not isinstance(data, dict) or "hits" not in data:
            raise SubjectError(
                f"{self.name}/search: expected an object with 'hits', got {data!r:.200}"
            )
        stages = data.get("latency_ms")
        latency: dict[str, float] = {}
        for name, ms in stages.items() if isinstance(stages, dict) else ():
            # JSON's NaN and Infinity (which Python's reader takes) and a negative time are no
            # latency either: a p95 over them would be nan, or less than nothing
            if (
                isinstance(ms, bool)
                or not isinstance(ms, int | float)
                or not math.isfinite(ms)
                or ms < 0
            ):
                raise SubjectError(
                    f"{self.name}/search: 'latency_ms' {name!r} is {ms!r:.60}: give each stage's "
                    "milliseconds as a finite number, 0 or more ({'rank': 0.1})"
                )
            latency[f"service_{name}"] = float(ms)
        return search_result(data, k, {**latency, "total": total})

    def dump(self) -> list[Memory]:
        """POST /dump."""
        data = self._post("/dump", {})
        if not isinstance(data, dict) or not isinstance(data.get("memories"), list):
            raise SubjectError(f"{self.name}/dump: expected an object with 'memories'")
        return [Memory.model_validate(m) for m in data["memories"]]

    def close(self) -> None:
        """Close the connection pool."""
        self._client.close()


def _message(resp: httpx.Response) -> str:
    """The error body's message, scrubbed of keys (a service may echo the request's header)."""
    try:
        body = resp.json()
    except ValueError:
        return redact(resp.text, limit=200)
    if isinstance(body, dict) and "error" in body:
        err = body["error"]
        return redact(str(err.get("message") if isinstance(err, dict) else err), limit=200)
    return redact(str(body), limit=200)
