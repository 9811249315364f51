"""Outputs recorded in production as a subject (seed 001's and seed 000's "online" phase): the
output of each item is the one recorded for its id, scored after the fact like a live answer.

The file is JSONL (or a JSON/YAML list) of `{case_id (or id), output}`; a later line wins for a
repeated id. An item with no recorded output is a failure of that item ("no output recorded"),
never an empty answer.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

from memgauge.data.traces import load_recorded
from memgauge.errors import SubjectError
from memgauge.subjects.events import Capabilities

__all__ = ["FileReplay", "RecordedSubject"]


class FileReplay:
    """A subject that replays a file (read once; many threads may read it at once)."""

    what: ClassVar[str] = "replayed file"

    def __init__(self, path: str) -> None:
        self.path = str(path)

    @property
    def name(self) -> str:
        """`<what> <file name>`."""
        return f"{self.what} {Path(self.path).name}"

    @property
    def capabilities(self) -> Capabilities:
        """Many threads may read it at once."""
        return Capabilities(concurrent=True)

    @property
    def is_memory(self) -> bool:
        """Nothing to ingest."""
        return False


class RecordedSubject(FileReplay):
    """Replays `path`'s outputs by item id.

    Args:
        path: the file of recorded outputs (JSONL, or a JSON/YAML list, of `{case_id (or
            id), output}`)."""

    what = "recorded outputs"

    def __init__(self, path: str) -> None:
        super().__init__(path)
        self._outputs: dict[str, Any] = load_recorded(Path(path))

    def recorded_output(self, item_id: str) -> Any:
        """The output recorded for `item_id`; SubjectError when there is none."""
        if item_id not in self._outputs:
            raise SubjectError("no output for this case")
        return self._outputs[item_id]
