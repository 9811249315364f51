"""A memory system in any language, as a child process speaking JSON lines on stdin/stdout.

Protocol (one JSON object per line, UTF-8):

    request:  {"id": 1, "method": "search", "params": {"query": "...", "k": 10, "session": null}}
    response: {"id": 1, "result": [{"id": "m1", "text": "...", "score": 0.9}, ...]}
    or:       {"id": 1, "error": {"message": "what went wrong"}}

Methods: `reset` {}, `ingest` {"memories": [Memory as JSON, ...]}, `flush` {}, `search` as
above (or `{"hits": [...], "pre_expansion": ["m2", ...]}` from a system that expands queries:
the ids it ranked before expansion, for seed 002's query-expansion impact), `dump` {} -> list of memories, and for agents `answer` {"question": "...", "history": [turns] or
null} -> text or {"text": "..."}. Results of reset/ingest/flush are ignored (use null).
Anything the child writes to stderr is kept and shown when it fails. Lines on stdout that are
not JSON responses are an error (log to stderr instead).
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Sequence
from typing import Any

from memgauge._util.imports import suite_dir
from memgauge.data.models import Memory, SessionContext
from memgauge.subjects._process import LineProcess
from memgauge.subjects.protocol import SearchResult
from memgauge.subjects.python_import import search_result
from memgauge.subjects.remote import RemoteSubject

__all__ = ["SubprocessSubject"]


class SubprocessSubject(RemoteSubject):
    """Starts the command once and sends it requests one at a time.

    Args:
        command: the child to start (a command line, split as a shell would, or its argument
            list).
        timeout: seconds to wait for each reply of the child.
        cwd: the child's working directory (relative: to the suite file's directory while a
            suite is run, else to memgauge's); default: the suite file's directory while a
            suite is run (a program beside it is found from anywhere), else memgauge's.
        env: the child's whole environment (it replaces memgauge's); default: memgauge's."""

    def __init__(
        self,
        command: str | Sequence[str],
        *,
        timeout: float = 60.0,
        cwd: str | None = None,
        env: dict[str, str] | None = None,
    ) -> None:
        # a suite's relative paths start in its directory: its `cwd:` too
        suite = suite_dir()
        where = suite if cwd is None else os.path.join(suite, cwd) if suite else cwd
        self._child = LineProcess(command, kind="subprocess", cwd=where, env=env)
        self.argv = self._child.argv
        self.timeout = timeout
        self._next_id = 0

    @property
    def name(self) -> str:
        """`subprocess:<program>`."""
        return self._child.label

    def request(self, method: str, body: dict[str, Any]) -> Any:
        """Send one request and wait for its response."""
        self._next_id += 1
        rid = self._next_id
        self._child.send({"id": rid, "method": method, "params": body})
        # a reply to a request given up on (past its timeout) comes late: dropped, it is not
        # this request's answer (read as one, every later request read the reply before its own)
        response = self._child.receive(
            lambda m: not (isinstance(m.get("id"), int) and m["id"] < rid),
            self.timeout,
            repr(method),
        )
        if response.get("id") != rid:
            raise self._child.error(f"answered {response!r:.200} to request {rid}")
        if "error" in response:
            err = response["error"]
            message = err.get("message") if isinstance(err, dict) else err
            raise self._child.error(f"{method} failed: {message}")
        return response.get("result")

    def ingest(self, memories: Sequence[Memory]) -> None:
        """`ingest` with the memories as JSON."""
        self.request("ingest", {"memories": [m.model_dump(mode="json") for m in memories]})

    def search(self, query: str, k: int, *, session: SessionContext | None = None) -> SearchResult:
        """`search`; the round trip is the latency."""
        t0 = time.perf_counter()
        params = {"query": query, "k": k, "session": session.model_dump() if session else None}
        raw = self.request("search", params)
        return search_result(raw, k, {"total": (time.perf_counter() - t0) * 1000})

    def dump(self) -> list[Memory]:
        """`dump`."""
        raw = self.request("dump", {})
        return [Memory.model_validate(m) for m in raw or []]

    def close(self) -> None:
        """Stop the child."""
        self._child.close()

    def __enter__(self) -> SubprocessSubject:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        # interpreter shutdown or a half-built instance: nothing left to report to
        with contextlib.suppress(Exception):
            self.close()
