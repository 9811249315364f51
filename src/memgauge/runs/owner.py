"""One process drives a run at a time.

The run's row records its owner: a token for the driving attempt, the pid and host, the pid's
start time (so a pid given later to an unrelated process is not taken for the owner) and a
heartbeat. Before driving a run, a process decides whether the recorded owner may be displaced:

- the owner's pid is alive on this host (and started when recorded): refuse, naming the pid;
- it is dead (kill -9, a crash): take over, no flag needed;
- it is on another host, which this host cannot check: take over only with `force`.

The takeover itself is a compare-and-swap in the store (`claim_run(expect=token read)`), so of
two processes resuming a run at once exactly one drives it; the other is refused.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from memgauge._util.process import host_name, is_alive, this_process
from memgauge.errors import UsageError, argument

__all__ = ["HEARTBEAT_SECONDS", "check_owner", "driving", "lost", "new_owner", "refused"]

#: how often a driving process beats the run's heartbeat, at least (liveness for other hosts)
HEARTBEAT_SECONDS = 10.0

#: tokens of the runs this process is driving now (a run left `running` by an earlier call in
#: this same process that died of an error is not driven any more, though the pid is alive)
driving: set[str] = set()


def new_owner() -> dict[str, Any]:
    """This process as a run's owner, with a fresh token."""
    me = this_process()
    return {"token": uuid.uuid4().hex, "pid": me.pid, "host": me.host, "pid_start": me.start}


def _since(stamp: str | None) -> str:
    if not stamp:
        return "never"
    age = (datetime.now(UTC) - datetime.fromisoformat(stamp)).total_seconds()
    return f"{age:.0f} s ago"


def check_owner(stored: Mapping[str, Any], *, force: bool = False) -> None:
    """Raise UsageError when the run's recorded owner may still be driving it (see module)."""
    pid, host = stored.get("pid"), stored.get("host")
    if stored["status"] != "running" or not pid:
        return
    run_id = stored["run_id"]
    me = this_process()
    if host == me.host:
        same = int(pid) == me.pid and stored.get("pid_start") == me.start
        if same and stored.get("owner") not in driving:
            return  # left running by an earlier call in this process that died of an error
        if is_alive(int(pid), stored.get("pid_start")):
            raise UsageError(
                f"{argument('resume', run_id)}: process {pid} on this host is driving this run (heartbeat "
                f"{_since(stored.get('heartbeat_at'))}); one process drives a run at a time: "
                f"follow it with `memgauge runs watch {run_id}`, or stop it (`kill {pid}`) "
                "and resume again"
            )
        return
    if not force:
        raise UsageError(
            f"{argument('resume', run_id)}: process {pid} on host {host} is driving this run (heartbeat "
            f"{_since(stored.get('heartbeat_at'))}), and this host cannot tell whether it is "
            f"alive; if it is gone, take the run over with"
            f" {argument('resume', run_id)} and {argument('force', True)}"
        )


def refused(run_id: str, current: Mapping[str, Any] | None) -> UsageError:
    """The error for a takeover that another process won."""
    return UsageError(
        f"{argument('resume', run_id)}: {_who(current)} took this run over first; one process drives a "
        f"run at a time: follow it with `memgauge runs watch {run_id}`"
    )


def lost(run_id: str, current: Mapping[str, Any] | None) -> UsageError:
    """The error for a driving process whose run was taken over (`--force` elsewhere)."""
    return UsageError(
        f"run {run_id} was taken over by {_who(current)} (--force); this process stops driving it"
    )


def _who(current: Mapping[str, Any] | None) -> str:
    if not current or not current.get("pid"):
        return "another process"
    host = current.get("host")
    where = "this host" if host == host_name() else f"host {host}"
    return f"process {current['pid']} on {where}"
