"""Whether a run that says `running` is: one judgment for `runs list`, `runs show`, `runs
watch`, the viewer's pages and a report (standard library only: the viewer loads it)."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from memgauge._util.process import host_name, is_alive

__all__ = ["STALE_SECONDS", "liveness"]

STALE_SECONDS = 60.0


def liveness(run: Mapping[str, Any]) -> str | None:
    """Why a run that says `running` may not be: its owner is gone, or silent; else None.

    An owner on this host is checked directly (its pid, and the pid's start time, so a pid
    reused by another process does not count): alive, the run is never called stale, whatever
    its heartbeat's age (an item may take long). An owner on another host cannot be checked:
    a heartbeat older than STALE_SECONDS (a driving process beats every 10 s) says it is silent.
    """
    if run["status"] != "running":
        return None
    pid, host = run.get("pid"), run.get("host")
    if pid and host == host_name():
        if is_alive(int(pid), run.get("pid_start")):
            return None
        return (
            f"process {pid} is gone (killed?); finish it with "
            f"`memgauge run SUITE --resume {run['run_id']}`"
        )
    beat = run.get("heartbeat_at")
    if beat:
        age = (datetime.now(UTC) - datetime.fromisoformat(beat)).total_seconds()
        if age > STALE_SECONDS:
            return (
                f"no heartbeat from process {pid} on host {host} for {age:.0f} s; if it is gone, "
                f"take the run over with `memgauge run SUITE --resume {run['run_id']} --force`"
            )
    return None
