"""Outputs recorded in production as a subject (seed 001's and seed 000's "online" phase): the
output of each item is the one recorded for its id, scored after the fact like a live answer.

The file is JSONL (or a JSON/YAML list) of `{case_id (or id), output}`; a later line wins for a
repeated id. An item with no recorded output is a failure of that item ("no output recorded"),
never an empty answer.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from memgauge.data.io import load_recorded
from memgauge.errors import SubjectError
from memgauge.subjects.events import Capabilities

__all__ = ["RecordedSubject"]


class RecordedSubject:
    """Replays `path`'s outputs by item id."""

    def __init__(self, path: str) -> None:
        self.path = str(path)
        self._outputs: dict[str, Any] = load_recorded(Path(path))

    @property
    def name(self) -> str:
        """`recorded outputs <file name>`."""
        return f"recorded outputs {Path(self.path).name}"

    @property
    def capabilities(self) -> Capabilities:
        """Many threads may read it at once."""
        return Capabilities(concurrent=True)

    @property
    def is_memory(self) -> bool:
        """Nothing to ingest."""
        return False

    def recorded_output(self, item_id: str) -> Any:
        """The output recorded for `item_id`; SubjectError when there is none."""
        if item_id not in self._outputs:
            raise SubjectError("no output for this case")
        return self._outputs[item_id]
