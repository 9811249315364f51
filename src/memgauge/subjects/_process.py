"""A child process spoken to in lines of JSON: start it, send a message, wait for the reply
that matches, keep the tail of its stderr for error messages, close it cleanly."""

from __future__ import annotations

import json
import shlex
import subprocess
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from typing import Any

from memgauge.errors import SubjectError, UsageError

__all__ = ["LineProcess"]


class LineProcess:
    """Spawns `command` with pipes; stdout is read line by line by a background thread."""

    def __init__(
        self,
        command: str | Sequence[str],
        *,
        kind: str,
        cwd: str | None = None,
        env: dict[str, str] | None = None,
    ) -> None:
        argv = shlex.split(command) if isinstance(command, str) else [str(a) for a in command]
        if not argv:
            raise UsageError(f"{kind} subject: command is empty")
        self.argv = argv
        self.label = f"{kind}:{argv[0]}"  # names the child in every error
        try:
            self.proc = subprocess.Popen(
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
            raise UsageError(f"{kind} subject: cannot start {argv[0]!r}: {exc}") from None
        self._stderr: deque[str] = deque(maxlen=50)
        self._lines: deque[str] = deque()
        self._heard = False  # whether the child has written any line to stdout yet
        self._ready = threading.Condition()
        self._pumps = [
            threading.Thread(target=self._pump_stderr, daemon=True),
            threading.Thread(target=self._pump_stdout, daemon=True),
        ]
        for t in self._pumps:
            t.start()

    def _pump_stderr(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self._stderr.append(line.rstrip("\n"))

    def _pump_stdout(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            with self._ready:
                self._lines.append(line)
                self._heard = True
                self._ready.notify_all()
        with self._ready:
            self._ready.notify_all()

    def error(self, message: str) -> SubjectError:
        """A SubjectError with the child's last stderr lines."""
        # give the stderr pump a moment: what the child said last explains the most
        if self.proc.poll() is not None:
            self._pumps[0].join(timeout=1)
        else:
            time.sleep(0.1)
        tail = "\n".join(self._stderr)
        return SubjectError(f"{self.label}: {message}" + (f"\nits stderr:\n{tail}" if tail else ""))

    def send(self, message: dict[str, Any]) -> None:
        """Write one JSON line."""
        if self.proc.poll() is not None:
            raise self.error(f"the process has exited (code {self.proc.returncode})")
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write(json.dumps(message, default=str) + "\n")
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError):
            raise self.error("the process closed its stdin") from None

    def receive(
        self,
        matches: Callable[[dict[str, Any]], bool],
        timeout: float,
        what: str,
        *,
        others: Callable[[dict[str, Any]], None] | None = None,
    ) -> dict[str, Any]:
        """The next JSON line for which `matches` is true; lines that do not match (e.g.
        notifications, or requests the child sends) go to `others`, or are skipped. Not-JSON,
        exit or timeout raise SubjectError."""
        deadline = time.monotonic() + timeout
        while True:
            with self._ready:
                while not self._lines:
                    left = deadline - time.monotonic()
                    if left <= 0:
                        # a pipe is block-buffered: a child that never flushes is never heard
                        unheard = (
                            ""
                            if self._heard
                            else "; it has answered nothing yet: does it flush "
                            "its stdout after each line (print(..., flush=True))?"
                        )
                        raise self.error(f"no answer to {what} within {timeout:g} s{unheard}")
                    if self.proc.poll() is not None:
                        self._pumps[1].join(timeout=0.2)
                        if not self._lines:
                            raise self.error(
                                f"the process exited (code {self.proc.returncode}) during {what}"
                            )
                        break
                    self._ready.wait(timeout=min(left, 0.1))
                line = self._lines.popleft()
            try:
                message = json.loads(line)
            except json.JSONDecodeError:
                raise self.error(
                    f"wrote a line that is not JSON: {line.strip()[:200]!r}; stdout is for JSON "
                    "responses only: write logs to stderr"
                ) from None
            if isinstance(message, dict) and matches(message):
                return message
            if isinstance(message, dict) and others is not None:
                others(message)

    def close(self) -> None:
        """Close stdin (the child's cue to exit), wait, kill if it lingers, release pipes."""
        proc = self.proc
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
