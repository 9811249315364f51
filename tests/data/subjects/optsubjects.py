"""Subjects for `memgauge optimize` tests. They import nothing from memgauge, as a user's would
not.

`ToolAgent` answers arithmetic questions with the tools it is allowed: `calc` computes,
`noise` garbles the answer, `shout` upper-cases it; only `[calc]` answers right.

`HangingAgent` answers "add A B" with `offset` added; once `hang_file` exists it writes
`hung_file` (the test knows a candidate's run is under way) and sleeps, for kill -9 mid-study.
"""

from __future__ import annotations

import os
import threading
import time
from typing import Any


def _sum(question: str) -> int:
    _op, a, b = question.split()
    return int(a) + int(b)


class ToolAgent:
    def __init__(self, tools: list[str] | None = None) -> None:
        self.tools = list(tools or [])

    def answer(self, question: str, history: list[Any] | None = None) -> str:
        out = str(_sum(question)) if "calc" in self.tools else "?"
        if "noise" in self.tools:
            out += " ~"
        if "shout" in self.tools:
            out = out.upper() + "!"
        return out


class OffsetAgent:
    """Answers `add A B` with A + B + offset: right only at offset 0. Each answer is logged to
    `calls_file`; while `hang_file` exists, the `hang_at`-th answer hangs after writing
    `hung_file`."""

    def __init__(
        self,
        offset: int = 0,
        calls_file: str | None = None,
        hang_file: str | None = None,
        hung_file: str | None = None,
        hang_at: int = 0,
    ) -> None:
        self.offset = offset
        self.calls_file, self.hang_file, self.hung_file = calls_file, hang_file, hung_file
        self.hang_at = hang_at

    def answer(self, question: str, history: list[Any] | None = None) -> str:
        n = 0
        if self.calls_file:
            with open(self.calls_file, "a", encoding="utf-8") as f:
                f.write(f"{self.offset} {question}\n")
            with open(self.calls_file, encoding="utf-8") as f:
                n = sum(1 for _ in f)
        if self.hang_file and os.path.exists(self.hang_file) and n >= self.hang_at:
            if self.hung_file:
                with open(self.hung_file, "w", encoding="utf-8") as f:
                    f.write(str(os.getpid()))
            time.sleep(600)
        return str(_sum(question) + self.offset)


class WobblyAgent:
    """OffsetAgent asked again (`repeat: N`): at offset 0 right on the first ask of a question
    and on every third after it, one off on the others, and failing the second ask of
    `add 0 1`: repeats that vary and partly fail."""

    def __init__(self, offset: int = 0) -> None:
        self.offset = offset
        self.asked: dict[str, int] = {}
        self.lock = threading.Lock()

    def answer(self, question: str, history: list[Any] | None = None) -> str:
        with self.lock:
            n = self.asked.get(question, 0)
            self.asked[question] = n + 1
        if question == "add 0 1" and n == 1:
            raise RuntimeError("wobbly: the second ask of add 0 1")
        right = _sum(question) + self.offset
        return str(right if n % 3 == 0 else right + 1)
