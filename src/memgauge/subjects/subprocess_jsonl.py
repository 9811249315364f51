"""A memory system in any language, as a child process speaking JSON lines on stdin/stdout.

Protocol (one JSON object per line, UTF-8):

    request:  {"id": 1, "method": "search", "params": {"query": "...", "k": 10, "session": null}}
    response: {"id": 1, "result": [{"id": "m1", "text": "...", "score": 0.9}, ...]}
    or:       {"id": 1, "error": {"message": "what went wrong"}}

Methods: `reset` {}, `ingest` {"memories": [Memory as JSON, ...]}, `flush` {}, `search` as
above, `dump` {} -> list of memories. Results of reset/ingest/flush are ignored (use null).
Anything the child writes to stderr is kept and shown when it fails. Lines on stdout that are
not JSON responses are an error (log to stderr instead).
"""

from __future__ import annotations

import json
import shlex
import subprocess
import threading
import time
from collections import deque
from collections.abc import Sequence
from typing import Any

from memgauge.data.models import Memory, SessionContext
from memgauge.errors import SubjectError, UsageError
from memgauge.subjects.protocol import SearchResult
from memgauge.subjects.python_import import normalise_hits

__all__ = ["SubprocessSubject"]


class SubprocessSubject:
    """Starts the command once and sends it requests one at a time."""

    def __init__(
        self,
        command: str | Sequence[str],
        *,
        timeout: float = 60.0,
        cwd: str | None = None,
        env: dict[str, str] | None = None,
    ) -> None:
        argv = shlex.split(command) if isinstance(command, str) else [str(a) for a in command]
        if not argv:
            raise UsageError("subprocess subject: command is empty")
        self.argv = argv
        self.timeout = timeout
        try:
            self._proc = subprocess.Popen(
                argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                encoding="utf-8",
                bufsize=1,
                cwd=cwd,
                env=env,
            )
        except OSError as exc:
            raise UsageError(f"subprocess subject: cannot start {argv[0]!r}: {exc}") from None
        self._stderr: deque[str] = deque(maxlen=50)
        self._lines: deque[str] = deque()
        self._ready = threading.Condition()
        self._next_id = 0
        self._pumps = [
            threading.Thread(target=self._pump_stderr, daemon=True),
            threading.Thread(target=self._pump_stdout, daemon=True),
        ]
        for t in self._pumps:
            t.start()

    @property
    def name(self) -> str:
        """`subprocess:<program>`."""
        return f"subprocess:{self.argv[0]}"

    def _pump_stderr(self) -> None:
        assert self._proc.stderr is not None
        for line in self._proc.stderr:
            self._stderr.append(line.rstrip("\n"))

    def _pump_stdout(self) -> None:
        assert self._proc.stdout is not None
        for line in self._proc.stdout:
            with self._ready:
                self._lines.append(line)
                self._ready.notify_all()
        with self._ready:
            self._ready.notify_all()

    def _fail(self, message: str) -> SubjectError:
        # give the stderr pump a moment to catch up: what the child said last explains the most
        if self._proc.poll() is not None:
            self._pumps[0].join(timeout=1)
        else:
            time.sleep(0.1)
        tail = "\n".join(self._stderr)
        return SubjectError(f"{self.name}: {message}" + (f"\nits stderr:\n{tail}" if tail else ""))

    def call(self, method: str, params: dict[str, Any]) -> Any:
        """Send one request and wait for its response."""
        if self._proc.poll() is not None:
            raise self._fail(f"the process has exited (code {self._proc.returncode})")
        self._next_id += 1
        rid = self._next_id
        payload = json.dumps({"id": rid, "method": method, "params": params}, default=str)
        assert self._proc.stdin is not None
        try:
            self._proc.stdin.write(payload + "\n")
            self._proc.stdin.flush()
        except (BrokenPipeError, OSError):
            raise self._fail("the process closed its stdin") from None
        deadline = time.monotonic() + self.timeout
        with self._ready:
            while not self._lines:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise self._fail(f"no answer to {method!r} within {self.timeout:g} s")
                if self._proc.poll() is not None and not self._lines:
                    time.sleep(0.05)  # let the pump deliver a last line, then give up
                    if not self._lines:
                        raise self._fail(
                            f"the process exited (code {self._proc.returncode}) during {method!r}"
                        )
                self._ready.wait(timeout=min(left, 0.1))
            line = self._lines.popleft()
        try:
            response = json.loads(line)
        except json.JSONDecodeError:
            raise self._fail(f"wrote a line that is not JSON: {line.strip()[:200]!r}") from None
        if not isinstance(response, dict) or response.get("id") != rid:
            raise self._fail(f"answered {line.strip()[:200]!r} to request {rid}")
        if "error" in response:
            err = response["error"]
            message = err.get("message") if isinstance(err, dict) else err
            raise self._fail(f"{method} failed: {message}")
        return response.get("result")

    def reset(self) -> None:
        """`reset`."""
        self.call("reset", {})

    def ingest(self, memories: Sequence[Memory]) -> None:
        """`ingest` with the memories as JSON."""
        self.call("ingest", {"memories": [m.model_dump(mode="json") for m in memories]})

    def flush(self) -> None:
        """`flush`."""
        self.call("flush", {})

    def search(self, query: str, k: int, *, session: SessionContext | None = None) -> SearchResult:
        """`search`; the round trip is the latency."""
        t0 = time.perf_counter()
        params = {"query": query, "k": k, "session": session.model_dump() if session else None}
        raw = self.call("search", params)
        return SearchResult(normalise_hits(raw, k), {"total": (time.perf_counter() - t0) * 1000})

    def dump(self) -> list[Memory]:
        """`dump`."""
        raw = self.call("dump", {})
        return [Memory.model_validate(m) for m in raw or []]

    def close(self) -> None:
        """Close stdin (the child's cue to exit), wait briefly, kill if it lingers, and release
        the pipes."""
        proc = self._proc
        try:
            if proc.stdin is not None and not proc.stdin.closed:
                proc.stdin.close()
        except OSError:
            pass
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        for t in self._pumps:
            t.join(timeout=1)
        for stream in (proc.stdout, proc.stderr):
            if stream is not None and not stream.closed:
                stream.close()

    def __enter__(self) -> SubprocessSubject:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            if self._proc.poll() is None:
                self._proc.kill()
        except Exception:
            pass
