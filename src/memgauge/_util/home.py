"""Where memgauge keeps its results store and caches."""

from __future__ import annotations

import errno
import os
from pathlib import Path

__all__ = ["memgauge_home"]


def memgauge_home() -> Path:
    """`MEMGAUGE_HOME`, or `~/.memgauge`; read at call time so tests can point it elsewhere."""
    env = os.environ.get("MEMGAUGE_HOME")
    if not env:
        return Path.home() / ".memgauge"
    home = Path(env).expanduser()
    if home.exists() and not home.is_dir():  # else "File exists" from a mkdir deep inside
        raise NotADirectoryError(  # the CLI's path errors: exit 2, naming it
            errno.ENOTDIR,
            "MEMGAUGE_HOME is not a directory: point it at a directory (made if missing), or "
            "unset it for ~/.memgauge",
            str(home),
        )
    return home
