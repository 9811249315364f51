"""The keyword memory (keyword_memory.py) as an HTTP service implementing
docs/http-subject.openapi.yaml on 127.0.0.1: one memory per namespace, with injectable failures.
The HTTP subject's tests drive it, and the docs' tests stand it in for a reader's own service."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from keyword_memory import KeywordMemory


class Service:
    """One KeywordMemory per namespace, plus injectable failures."""

    def __init__(self) -> None:
        self.spaces: dict[str, KeywordMemory] = {}
        self.fail: list[tuple[int, Any]] = []
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.auth: list[str | None] = []
        self.expands = False
        self.latency_ms: Any = {"rank": 0.1}  # what /search says its stages took

    def handle(self, path: str, body: dict[str, Any]) -> tuple[int, Any]:
        self.calls.append((path, body))
        if self.fail:
            return self.fail.pop(0)
        mem = self.spaces.setdefault(body["namespace"], KeywordMemory())
        if path == "/reset":
            mem.reset()
            return 204, None
        if path == "/ingest":
            mem.ingest(body["memories"])
            return 200, {"ok": True}
        if path == "/flush":
            return 200, None
        if path == "/search":
            hits = mem.search(body["query"], body["k"])
            # a service that expands queries says what it ranked before (here: the reverse)
            before = {"pre_expansion": [h["id"] for h in reversed(hits)]} if self.expands else {}
            return 200, {"hits": hits, "latency_ms": self.latency_ms, **before}
        if path == "/dump":
            return 200, {"memories": mem.dump()}
        if path == "/answer":
            return 200, {"text": mem.answer(body["question"])}
        return 404, {"error": "no route"}


@contextmanager
def serve() -> Iterator[tuple[Service, str]]:
    """A Service listening on a free port of 127.0.0.1: the service and its base URL."""
    svc = Service()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["content-length"])))
            svc.auth.append(self.headers.get("authorization"))
            status, payload = svc.handle(self.path, body)
            data = (
                b""
                if payload is None
                else (
                    payload.encode() if isinstance(payload, str) else json.dumps(payload).encode()
                )
            )
            self.send_response(status)
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    # polled every 20 ms, not 0.5 s: shutdown() waits for serve_forever's next poll
    thread = threading.Thread(target=httpd.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    try:
        yield svc, f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()
