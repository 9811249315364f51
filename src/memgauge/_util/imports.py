"""Where a `python:` target's module is found: as `python -m` and pytest find a module.

`python -m` puts the current directory first on `sys.path`, and pytest the directory of a test
file; a `memgauge` console script puts neither (its own `bin` directory instead), so a
`mymemory.py` beside the user was not found. Modules are looked for in the current directory
and, while a suite file is checked or run, first in that file's directory (`import_roots`), then
on `sys.path` (PYTHONPATH, installed packages).

Those directories are on `sys.path` only while one module is imported, so nothing stays behind
for the next run in the same process. A shard's worker resolves from the same directories: the
run's base (the suite's directory) travels with the shard, and a spawned worker starts in the
driver's current directory.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from contextvars import ContextVar
from pathlib import Path
from typing import Any, TypeVar

__all__ = ["import_dirs", "import_from", "import_roots", "rooted", "suite_dir"]

T = TypeVar("T")

#: directories searched before the current one, innermost first (a context variable: two runs
#: going at once in one process each see their own suite's directory)
_ROOTS: ContextVar[tuple[str, ...]] = ContextVar("memgauge_import_roots", default=())
# sys.path is the process's: one import at a time holds the directories on it
_PATH_LOCK = threading.RLock()


@contextlib.contextmanager
def import_roots(*dirs: str | Path) -> Iterator[None]:
    """While inside, `python:` targets resolve modules from `dirs` (a suite file's directory)
    first, then from the current directory and `sys.path`."""
    token = _ROOTS.set((*(str(Path(d).resolve()) for d in dirs), *_ROOTS.get()))
    try:
        yield
    finally:
        _ROOTS.reset(token)


def rooted(fn: Callable[[T], Any], *dirs: str | Path) -> Callable[[T], Any]:
    """`fn` called inside `import_roots(*dirs)` in whichever thread calls it: a context
    variable does not follow work into a thread pool, where subjects are built."""

    def call(arg: T) -> Any:
        with import_roots(*dirs):
            return fn(arg)

    return call


def suite_dir() -> str | None:
    """The directory of the suite being checked or run (innermost), else None: where a
    suite's relative paths start (a `subprocess:` subject's program, as its dataset)."""
    roots = _ROOTS.get()
    return roots[0] if roots else None


def import_dirs() -> list[str]:
    """Where a `python:` target's module is looked for before `sys.path`: the suite's
    directory (while one is checked or run), then the current directory."""
    dirs = list(_ROOTS.get())
    with contextlib.suppress(OSError):  # a current directory that was removed
        dirs.append(os.getcwd())
    return list(dict.fromkeys(dirs))


def import_from(module_name: str, dirs: Sequence[str]) -> Any:
    """`importlib.import_module(module_name)` with `dirs` first on `sys.path` for the while
    (a module imported before is the one in `sys.modules`, as in any import)."""
    with _PATH_LOCK:
        added = [d for d in dirs if d not in sys.path]
        sys.path[:0] = added
        try:
            if added:  # a directory listing cached before the user's file was written
                importlib.invalidate_caches()
            return importlib.import_module(module_name)
        finally:
            for d in added:
                with contextlib.suppress(ValueError):
                    sys.path.remove(d)
