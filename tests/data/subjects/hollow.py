"""Memories that hold or return nothing, for the no-silent-zeros checks: `Forgetful` drops what
it is given (its dump lists nothing), `Mute` stores it but every search finds nothing,
`RowIds` returns what it holds under row numbers of its own. None imports memgauge."""

from __future__ import annotations

from typing import Any


class Forgetful:
    def reset(self) -> None:
        pass

    def ingest(self, memories: Any) -> None:
        pass

    def search(self, query: str, k: int) -> list[Any]:
        return []

    def dump(self) -> list[Any]:
        return []


class Mute:
    def __init__(self) -> None:
        self.held: list[Any] = []

    def reset(self) -> None:
        self.held = []

    def ingest(self, memories: Any) -> None:
        self.held += list(memories)

    def search(self, query: str, k: int) -> list[Any]:
        return []


class RowIds(Mute):
    def search(self, query: str, k: int) -> list[Any]:
        return [{"id": f"row-{i}", "text": m.text} for i, m in enumerate(self.held[:k])]
