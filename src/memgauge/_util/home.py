"""Where memgauge keeps its results store and caches."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["embeddings_cache", "memgauge_home"]


def memgauge_home() -> Path:
    """`MEMGAUGE_HOME`, or `~/.memgauge`; read at call time so tests can point it elsewhere."""
    env = os.environ.get("MEMGAUGE_HOME")
    return Path(env).expanduser() if env else Path.home() / ".memgauge"


def embeddings_cache() -> Path:
    """Where embeddings are cached by text hash: `MEMGAUGE_EMBEDDINGS`, else
    `MEMGAUGE_HOME/embeddings` (shared by every store that uses the same home)."""
    env = os.environ.get("MEMGAUGE_EMBEDDINGS")
    return Path(env).expanduser() if env else memgauge_home() / "embeddings"
