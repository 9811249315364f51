"""A command for the fork server's tests whose import is slow and loses an exception raised in
it, as imported code can: the SIGTERM that stops a server mid-preload once reached memgauge's
imports inside a `__set_name__` (Python wraps what that raises in a RuntimeError, which the
preload's `except Exception` then took for a missing extra) and the server went on to serve.
Here the import runs finalizers, whose exceptions the interpreter prints and drops; it writes
the file FORK_PROBE_IMPORTING names first, so that a test knows the import has begun."""

from __future__ import annotations

import os
import time
from pathlib import Path


class _Finalized:
    def __del__(self) -> None:
        time.sleep(0.01)


def _import() -> None:
    Path(os.environ["FORK_PROBE_IMPORTING"]).touch()
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        _Finalized()


_import()


def main(argv: list[str]) -> int:
    return 0
