"""Paths memgauge reads from the environment: a cache's, checked to be one before use."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Literal

from memgauge.errors import UsageError

__all__ = ["embeddings_cache", "env_path", "memgauge_home"]


def memgauge_home() -> Path:
    """`MEMGAUGE_HOME`, or `~/.memgauge`; read at call time so tests can point it elsewhere. A
    value that is no directory (a file, a FIFO) is refused naming it (`env_path`), not met
    later as "File exists" from a mkdir deep inside."""
    given = env_path("MEMGAUGE_HOME", "directory", "~/.memgauge")
    return given if given is not None else Path.home() / ".memgauge"


def embeddings_cache() -> Path:
    """Where embeddings are cached by text hash: `MEMGAUGE_EMBEDDINGS`, else
    `MEMGAUGE_HOME/embeddings` (shared by every store that uses the same home)."""
    given = env_path("MEMGAUGE_EMBEDDINGS", "directory", "MEMGAUGE_HOME/embeddings")
    return given if given is not None else memgauge_home() / "embeddings"


def env_path(variable: str, kind: Literal["directory", "file"], otherwise: str) -> Path | None:
    """The path the environment variable `variable` holds (None when unset or empty), made
    if missing; UsageError naming the variable and its value as given when something else than
    a `kind` is there (a file where a directory belongs, a directory or a FIFO where a file
    does): a cache there was skipped or failed far from the cause. `otherwise`: what memgauge
    uses when it is unset."""
    value = os.environ.get(variable)
    if not value:
        return None
    path = Path(value).expanduser()
    try:
        mode = path.stat().st_mode
    except OSError:
        return path  # missing (made when written), or unreadable: its own error, with its path
    ok = stat.S_ISDIR(mode) if kind == "directory" else stat.S_ISREG(mode)
    if not ok:
        found = (
            "a directory"
            if stat.S_ISDIR(mode)
            else "a regular file"
            if stat.S_ISREG(mode)
            else "no regular file (a FIFO, socket or device)"
        )
        raise UsageError(
            f"{variable}={value}: is {found}; point it at a {kind} (made if missing), or unset"
            f" it for {otherwise}"
        )
    return path
