"""Small agents for suite-run tests. They import nothing from memgauge, as a user's would not.

`LookupAgent` answers from a table of keyword -> answer; it can be told to fail, hang, or
take a little time on chosen questions, so runs can be tested for failures, timeouts and
kill -9 mid-run; with `calls_file` it logs every question it is asked.
"""

from __future__ import annotations

import time
from typing import Any


class LookupAgent:
    def __init__(
        self,
        answers: dict[str, str] | None = None,
        fail_on: list[str] | None = None,
        hang_on: list[str] | None = None,
        delay: float = 0.0,
        hang_for: float = 5.0,
        calls_file: str | None = None,
    ) -> None:
        self.answers = answers or {}
        self.fail_on = fail_on or []
        self.hang_on = hang_on or []
        self.delay = delay
        self.hang_for = hang_for
        # one line per question asked, appended (several processes may share it)
        self.calls_file = calls_file

    def answer(self, question: str, history: list[Any] | None = None) -> str:
        if self.calls_file:
            with open(self.calls_file, "a", encoding="utf-8") as f:
                f.write(question + "\n")
        if any(word in question for word in self.fail_on):
            raise RuntimeError(f"cannot answer {question!r}")
        if any(word in question for word in self.hang_on):
            time.sleep(self.hang_for)
        if self.delay:
            time.sleep(self.delay)
        if history:
            said = " ".join(t["content"] if isinstance(t, dict) else t.content for t in history)
            return said
        for key, value in self.answers.items():
            if key.lower() in question.lower():
                return value
        return "I don't know"


class EchoAgent:
    """Answers every question with the question: instant, for overhead benchmarks."""

    def answer(self, question: str) -> str:
        return question
