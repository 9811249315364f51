"""Memories for sharded-run tests and benchmarks. They import nothing from memgauge.

`SlowIngestMemory` is the issue's stand-in for a memory that calls an LLM on ingest: keyword
search, paying `per_memory` seconds for every memory it ingests (and `per_search` per search).
`DiesOnce` kills its own process the first time any process ingests into it (a marker file
says it happened), as a worker lost mid-shard.
"""

from __future__ import annotations

import os
import re
import time
from pathlib import Path
from typing import Any

WORD = re.compile(r"\w+")


class SlowIngestMemory:
    def __init__(self, per_memory: float = 0.01, per_search: float = 0.0) -> None:
        self.per_memory, self.per_search = per_memory, per_search
        self.items: dict[str, str] = {}

    def reset(self) -> None:
        self.items = {}

    def ingest(self, memories: list[Any]) -> None:
        for m in memories:
            time.sleep(self.per_memory)
            self.items[m.id] = m.text

    def search(self, query: str, k: int) -> list[dict[str, Any]]:
        if self.per_search:
            time.sleep(self.per_search)
        q = set(WORD.findall(query.lower()))
        scored = [
            (len(q & set(WORD.findall(text.lower()))), mid, text)
            for mid, text in self.items.items()
        ]
        scored.sort(key=lambda x: (-x[0], x[1]))
        return [{"id": mid, "text": text} for n, mid, text in scored[:k] if n]


class DiesOnce(SlowIngestMemory):
    def __init__(self, marker: str, per_memory: float = 0.0) -> None:
        super().__init__(per_memory)
        self.marker = Path(marker)

    def ingest(self, memories: list[Any]) -> None:
        try:
            fd = os.open(self.marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        except FileExistsError:
            super().ingest(memories)
            return
        os.close(fd)
        os._exit(17)  # the worker process dies mid-shard, as kill -9 would end it


class PidMemory(SlowIngestMemory):
    """Adds a line to a file named by its process id in `pids` whenever it ingests (the
    corpus of its first memory): which processes (the driver, or workers) a run's corpora went
    to."""

    def __init__(self, pids: str, per_memory: float = 0.0) -> None:
        super().__init__(per_memory)
        self.pids = Path(pids)

    def ingest(self, memories: list[Any]) -> None:
        with (self.pids / str(os.getpid())).open("a") as fh:
            fh.write(f"{memories[0].corpus if memories else None}\n")
        super().ingest(memories)


class PidOnBuild(SlowIngestMemory):
    """Leaves a file named by its process id in `pids` when it is built: which processes built
    it."""

    def __init__(self, pids: str) -> None:
        super().__init__(0.0)
        (Path(pids) / str(os.getpid())).touch()
