"""Which process is which: a pid with its start time, so a recorded owner survives pid reuse.

A pid alone names a process only while it lives: once it exits, the system may give the same
pid to an unrelated process, and `kill -0 PID` would call a dead owner alive. Where the system
tells a process's start (Linux: `/proc/PID/stat` field 22, clock ticks since boot, with the
boot id so that a reboot cannot match either), the owner is recorded as pid + start, and a live
pid whose start differs is another process. Elsewhere `start` is None and the pid alone decides.
"""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass
from pathlib import Path

__all__ = ["ProcessId", "host_name", "is_alive", "process_start", "this_process"]


@dataclass(frozen=True)
class ProcessId:
    """A process on a host: pid, and its start where the system tells it."""

    pid: int
    host: str
    start: str | None


def host_name() -> str:
    """This host's name, as recorded with an owner."""
    return socket.gethostname()


def _boot_id() -> str:
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text(encoding="ascii").strip()
    except OSError:
        return ""


def process_start(pid: int) -> str | None:
    """`boot-id:ticks` when process `pid` started (Linux), or None when unknown or gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="ascii", errors="replace")
    except OSError:
        return None
    # the command name (field 2) is in parentheses and may itself hold spaces or ")"
    fields = stat[stat.rfind(")") + 2 :].split()
    if len(fields) < 20:
        return None
    return f"{_boot_id()}:{fields[19]}"  # field 22 of the whole line


def this_process() -> ProcessId:
    """The calling process."""
    pid = os.getpid()
    return ProcessId(pid, host_name(), process_start(pid))


def _pid_alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, owned by another user
        return True
    except OSError:
        return False
    return True


def is_alive(pid: int, start: str | None) -> bool:
    """Whether process `pid` on this host is alive and is the one that started at `start`
    (when `start` was recorded and this system tells starts)."""
    if not _pid_alive(pid):
        return False
    if start is None:
        return True
    now = process_start(pid)
    # unknown now (no /proc, or the process exited this instant): trust the pid
    return now is None or now == start
