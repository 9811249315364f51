"""A block a second Ctrl-C must not break: the bookkeeping that records an interrupted run or
study as cancelled."""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator

__all__ = ["deaf_to_ctrl_c"]


@contextlib.contextmanager
def deaf_to_ctrl_c() -> Iterator[None]:
    """SIGINT ignored while an interrupted run (or optimization study) is recorded as
    cancelled: a second Ctrl-C a few milliseconds after the first landed in that write, left
    it 'running' with no owner and said only 'aborted' (no id to resume). SIGTERM too where a
    handler of Python's takes it (the CLI's raises KeyboardInterrupt, as Ctrl-C: `kill PID`);
    left to its default action, it ends the process as it always did. Only the main thread
    can set a handler."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    deaf = [signal.SIGINT]
    if callable(signal.getsignal(signal.SIGTERM)):
        deaf.append(signal.SIGTERM)
    previous = {sig: signal.signal(sig, signal.SIG_IGN) for sig in deaf}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
