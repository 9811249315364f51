"""Import, in the background, modules a run will need at its end.

`scipy.stats` takes about half a second to import, all of it needed only once the items are
done (the paired tests of the retrieval aggregate). Imported on a thread of its own while the
run goes, it costs next to nothing: the run's threads spend much of their time in SQLite and
NumPy, outside the interpreter lock. A module that fails to import here is imported again,
with its error, where it is used.
"""

from __future__ import annotations

import importlib
import sys
import threading
from collections.abc import Iterable

__all__ = ["preload"]


def preload(modules: Iterable[str]) -> None:
    """Start importing `modules` (those not imported yet) on a daemon thread."""
    missing = [m for m in dict.fromkeys(modules) if m not in sys.modules]
    if missing:
        threading.Thread(
            target=_import, args=(missing,), name="memgauge-preload", daemon=True
        ).start()


def _import(modules: list[str]) -> None:
    for name in modules:
        try:
            importlib.import_module(name)
        except Exception:
            continue
