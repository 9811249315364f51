"""A fake REST API on 127.0.0.1 for the CI integrations' comment steps: a real HTTP server (the
code under test speaks HTTP to it as to GitHub or GitLab) that records every request and answers
with what a subclass's `route` returns."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self
from urllib.parse import parse_qs, urlsplit


class FakeREST:
    """`with FakeSub() as api:` serves on `api.url`; `api.requests` lists each request's
    method, path, query, Authorization header, headers (lower-case names) and JSON body."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def _handle(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length)) if length else None
                url = urlsplit(self.path)
                query = parse_qs(url.query)
                fake.requests.append(
                    {
                        "method": self.command,
                        "path": url.path,
                        "query": query,
                        "auth": self.headers.get("Authorization"),
                        "headers": {k.lower(): v for k, v in self.headers.items()},
                        "body": body,
                    }
                )
                headers: dict[str, str] = {}
                code, answer = fake.route(self.command, url.path, query, body, headers)
                raw = json.dumps(answer).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                for name, value in headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(raw)

            do_GET = do_POST = do_PATCH = do_PUT = _handle  # noqa: N815 (http.server names them)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def route(
        self,
        method: str,
        path: str,
        query: dict[str, list[str]],
        body: Any,
        headers: dict[str, str],
    ) -> tuple[int, Any]:
        """The status and JSON body of the answer; response headers go into `headers`."""
        raise NotImplementedError

    def __enter__(self) -> Self:
        # shutdown() waits for serve_forever's next look at its flag: every 0.5 s by default,
        # half a second at the end of every test that used a server
        threading.Thread(target=self.server.serve_forever, args=(0.02,), daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
