"""What the subjects in another process (`http`, `subprocess`) share: the protocol's requests
that carry nothing of their own (reset, flush) and the agent's answer, each one request through
the subject's transport (`request`)."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from memgauge.data.models import Turn
from memgauge.subjects.protocol import Answer
from memgauge.subjects.python_import import normalise_answer

__all__ = ["RemoteSubject"]


class RemoteSubject:
    """A subject reached by requests (a method name and a JSON body, a JSON result back)."""

    def request(self, method: str, body: dict[str, Any]) -> Any:
        """The result of one request (the transport's: an HTTP POST, a JSON line)."""
        raise NotImplementedError

    def reset(self) -> None:
        """`reset`."""
        self.request("reset", {})

    def flush(self) -> None:
        """`flush`."""
        self.request("flush", {})

    def answer(self, question: str, *, history: Sequence[Turn] | None = None) -> Answer:
        """`answer` with `{question, history}` (`history` as JSON turns, null when not given):
        `{"text": ...}` or the text back; the round trip is its latency."""
        t0 = time.perf_counter()
        turns = [t.model_dump(mode="json") for t in history] if history is not None else None
        raw = self.request("answer", {"question": question, "history": turns})
        return normalise_answer(raw, (time.perf_counter() - t0) * 1000)
