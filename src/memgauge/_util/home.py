"""Where memgauge keeps its results store and caches."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["memgauge_home"]


def memgauge_home() -> Path:
    """`MEMGAUGE_HOME`, or `~/.memgauge`; read at call time so tests can point it elsewhere."""
    env = os.environ.get("MEMGAUGE_HOME")
    return Path(env).expanduser() if env else Path.home() / ".memgauge"
