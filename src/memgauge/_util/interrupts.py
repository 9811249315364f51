"""A block a second Ctrl-C must not break: the bookkeeping that records an interrupted run or
study as cancelled; and which signal interrupted the command, for its exit code (128 + the
signal's number: 130 for Ctrl-C, 143 for `kill PID`, as shells and CI runners read them)."""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator

__all__ = ["as_ctrl_c", "deaf_to_ctrl_c", "interrupted_by", "reset_interruption"]

#: the signal that first interrupted the command through `as_ctrl_c` (empty: none did)
_first: list[int] = []


def as_ctrl_c(signum: int, _frame: object) -> None:
    """A signal handler: the signal stops the command as Ctrl-C does (KeyboardInterrupt,
    wherever the main thread stands), and the first one is remembered (`interrupted_by`)."""
    if not _first:
        _first.append(signum)
    raise KeyboardInterrupt


def interrupted_by(default: int = signal.SIGINT) -> int:
    """The signal that first interrupted the command (`default` when none was seen: Python's
    own SIGINT handler, a Ctrl-C inside a library)."""
    return _first[0] if _first else int(default)


def reset_interruption() -> None:
    """Forget the signal seen (a new command in the same process)."""
    _first.clear()


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
