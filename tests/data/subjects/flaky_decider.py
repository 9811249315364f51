"""A merge decider that keeps an exact duplicate (NOOP), stores anything else (CREATE), and
raises on an incoming memory holding one of `fail_on`: a decider whose calls fail on chosen
cases. It imports nothing from memgauge."""

from __future__ import annotations

from typing import Any


def _words(text: str) -> str:
    return " ".join(text.lower().split())


class FlakyDecider:
    def __init__(self, fail_on: list[str] | None = None) -> None:
        self.fail_on = fail_on or []

    def decide(self, existing: list[dict[str, str]], incoming: dict[str, Any]) -> dict[str, Any]:
        content = str(incoming.get("content", ""))
        if any(word in content for word in self.fail_on):
            raise RuntimeError(f"cannot decide on {content!r}")
        if any(_words(m["content"]) == _words(content) for m in existing):
            return {"action": "NOOP"}
        return {"action": "CREATE", "content": content}


def keep_duplicates_out(existing: list[dict[str, str]], incoming: dict[str, Any]) -> str:
    """The function form, given as the target itself: NOOP on an exact duplicate, else
    CREATE."""
    content = str(incoming.get("content", ""))
    same = any(_words(m["content"]) == _words(content) for m in existing)
    return "NOOP" if same else "CREATE"
