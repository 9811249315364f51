"""A fake OpenAI-compatible HTTP server on 127.0.0.1, for tests and offline demos.

It speaks enough of the API for memgauge's clients: `POST /v1/embeddings` returns deterministic
hashed bag-of-words vectors (texts that share words are similar, so dense search over them
behaves like a weak real model), and `POST /v1/chat/completions` returns scripted replies. It
can inject failures (status codes, delays, malformed bodies) to test retries and error paths.
Real HTTP on a real socket: the code under test runs exactly as it would against a provider.

    with FakeOpenAIServer() as server:
        embedder = OpenAIEmbedder("fake-embed", base_url=server.base_url, api_key="k")
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
import time
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np

__all__ = ["FakeOpenAIServer", "Fault", "hashed_embedding"]

_WORD = re.compile(r"\w+", re.UNICODE)


def hashed_embedding(text: str, dim: int = 64) -> list[float]:
    """A unit vector: each lowercase word adds +-1 at a hashed position (the hashing trick)."""
    v = np.zeros(dim)
    for word in _WORD.findall(text.lower()):
        h = hashlib.blake2b(word.encode(), digest_size=8).digest()
        v[int.from_bytes(h[:4], "little") % dim] += 1.0 if h[4] & 1 else -1.0
    norm = float(np.linalg.norm(v))
    if norm == 0:
        v[0] = 1.0
        norm = 1.0
    return [float(x) for x in v / norm]


@dataclass(frozen=True)
class Fault:
    """What the next matching request gets instead of a normal answer."""

    status: int = 500
    body: str = '{"error": {"message": "injected failure"}}'
    delay: float = 0.0
    headers: tuple[tuple[str, str], ...] = ()


class FakeOpenAIServer:
    """Serve the fake API on 127.0.0.1 (a free port) in a background thread."""

    def __init__(self, *, dim: int = 64, api_key: str | None = None) -> None:
        self.dim = dim
        self.api_key = api_key
        self.requests: list[dict[str, Any]] = []
        self.replies: deque[str] = deque()
        self._faults: deque[Fault] = deque()
        self._lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        """`http://127.0.0.1:<port>/v1`."""
        if self._httpd is None:
            raise RuntimeError("server not started")
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def fail(self, *faults: Fault) -> None:
        """Queue faults: each of the next requests gets one, in order."""
        with self._lock:
            self._faults.extend(faults)

    def script(self, replies: Iterable[str]) -> None:
        """Queue chat replies (message content), served in order; then 'OK'."""
        with self._lock:
            self.replies.extend(replies)

    def start(self) -> FakeOpenAIServer:
        """Bind and serve."""
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length)
                server._handle(self, raw)

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Shut down and release the port."""
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> FakeOpenAIServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _send(
        self, h: BaseHTTPRequestHandler, status: int, body: str, headers: Iterable[tuple[str, str]]
    ) -> None:
        data = body.encode()
        h.send_response(status)
        h.send_header("content-type", "application/json")
        h.send_header("content-length", str(len(data)))
        for k, v in headers:
            h.send_header(k, v)
        h.end_headers()
        h.wfile.write(data)

    def _handle(self, h: BaseHTTPRequestHandler, raw: bytes) -> None:
        with self._lock:
            fault = self._faults.popleft() if self._faults else None
        try:
            payload = json.loads(raw or b"{}")
        except json.JSONDecodeError:
            payload = {"_raw": raw.decode(errors="replace")}
        with self._lock:
            self.requests.append({"path": h.path, "json": payload})
        if fault is not None:
            time.sleep(fault.delay)
            self._send(h, fault.status, fault.body, fault.headers)
            return
        if self.api_key is not None and h.headers.get("authorization") != f"Bearer {self.api_key}":
            self._send(h, 401, '{"error": {"message": "invalid api key"}}', ())
            return
        if h.path.rstrip("/").endswith("/embeddings"):
            inputs = payload.get("input", [])
            texts = [inputs] if isinstance(inputs, str) else list(inputs)
            data = [
                {"object": "embedding", "index": i, "embedding": hashed_embedding(t, self.dim)}
                for i, t in enumerate(texts)
            ]
            body = {"object": "list", "data": data, "model": payload.get("model", "fake")}
            self._send(h, 200, json.dumps(body), ())
        elif h.path.rstrip("/").endswith("/chat/completions"):
            with self._lock:
                content = self.replies.popleft() if self.replies else "OK"
            body = {
                "id": "chatcmpl-fake",
                "object": "chat.completion",
                "model": payload.get("model", "fake"),
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": content},
                        "finish_reason": "stop",
                    }
                ],
                "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
            }
            self._send(h, 200, json.dumps(body), ())
        else:
            self._send(h, 404, '{"error": {"message": "no such route"}}', ())
