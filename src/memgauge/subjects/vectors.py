"""A system's stored vectors as a subject of an embedding task: `embed(texts)` looks each text
up in the file the system's store was exported to (`{text, vector}` per line). A text with no
stored vector fails its item ("no stored vector"), never a zero vector."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from memgauge.data.vectors import load_vectors
from memgauge.errors import SubjectError
from memgauge.subjects.recorded import FileReplay

__all__ = ["StoredVectors"]


class StoredVectors(FileReplay):
    """Replays `path`'s vectors by text.

    Args:
        path: the file the system's store was exported to (`{text, vector}` per line)."""

    what = "stored vectors"

    def __init__(self, path: str) -> None:
        super().__init__(path)
        self._vectors = load_vectors(Path(path))

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """The stored vector of each text."""
        missing = [t for t in texts if t not in self._vectors]
        if missing:
            raise SubjectError(f"no stored vector for {missing[0][:80]!r}")
        return [self._vectors[t] for t in texts]
