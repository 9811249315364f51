"""An agent that answers in a chosen shape, as a user's or a plug-in's agent might: plain text,
its own object with `.text`, a dict with "text", or something memgauge cannot read. It imports
nothing from memgauge."""

from __future__ import annotations

from typing import Any


class Said:
    """An answer type of the agent's own (not memgauge's `Answer`)."""

    def __init__(self, text: Any) -> None:
        self.text = text


class ReplyAgent:
    def __init__(self, shape: str, text: str = "port 8080") -> None:
        self.shape = shape
        self.text = text

    def answer(self, question: str, history: list[Any] | None = None) -> Any:
        return {
            "str": self.text,
            "object": Said(self.text),
            "dict": {"text": self.text, "source": "table"},
            "int": 42,
            "none": None,
            "dict-without-text": {"answer": self.text},
            "object-with-int-text": Said(7),
        }[self.shape]
