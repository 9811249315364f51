"""Extractors for tests: a naive one (every user sentence becomes a fact, nothing is ever
replaced) and a function form (a `python:` target is a factory: `make_unchanged` returns the
function)."""

from __future__ import annotations

import re
from typing import Any


class NaiveExtractor:
    """Keeps the memory and adds every user sentence: invents on chit-chat, never resolves
    conflicts. What a careless extractor does."""

    def extract(self, conversation: list[Any], existing_memory: list[str]) -> list[str]:
        out = list(existing_memory)
        for turn in conversation:
            if turn.role == "user":
                out += [s.strip() for s in re.split(r"(?<=[.!?])\s+", turn.content) if s.strip()]
        return out


def unchanged(conversation: list[Any], existing_memory: list[str]) -> str:
    """Returns the memory unchanged, as bullet text."""
    return "\n".join(f"- {m}" for m in existing_memory)


def unchanged_or_nothing(
    conversation: list[Any], existing_memory: list[str] | None = None, *, bullet: str = "-"
) -> str:
    """`unchanged` with the existing memory optional (none: nothing kept) and an option."""
    return "\n".join(f"{bullet} {m}" for m in existing_memory or ())


def make_unchanged() -> Any:
    """A factory returning the function form."""
    return unchanged
