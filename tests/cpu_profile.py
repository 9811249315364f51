"""Where the tests' time goes, per test: an opt-in pytest plug-in and its summary.

    MEMGAUGE_TEST_PROFILE=/tmp/prof.jsonl python -m pytest -p tests.cpu_profile -n auto \\
        --dist loadgroup [TESTS]
    python -m tests.cpu_profile /tmp/prof.jsonl

One JSON line per test (appended; each xdist worker writes its own lines): the worker, its start
and end (wall clock), and CPU-s of its setup, call and teardown, the worker's own and its reaped
children's (resource.getrusage). A child's CPU counts when it is reaped: a server started by a
session-scoped fixture (the docs' fork server, PostgreSQL) counts in the teardown of the
worker's last test. A line per worker at its session's start and end gives its fixed cost
(start-up, collection) and its idle tail. Not a timed test: measuring only.
"""

from __future__ import annotations

import collections
import json
import os
import resource
import sys
import time
from collections.abc import Iterator
from typing import Any

import pytest

_PHASES: dict[str, dict[str, list[float]]] = {}


def _out() -> str | None:
    return os.environ.get("MEMGAUGE_TEST_PROFILE")


def _worker() -> str:
    return os.environ.get("PYTEST_XDIST_WORKER", "main")


def _cpu() -> float:
    own, kids = (
        resource.getrusage(who) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)
    )
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def _write(row: dict[str, Any]) -> None:
    out = _out()
    if out:
        with open(out, "a", encoding="utf-8") as f:
            f.write(json.dumps(row) + "\n")


def _phase(item: pytest.Item, name: str) -> Iterator[None]:
    wall, cpu = time.time(), _cpu()
    try:
        yield
    finally:  # a failing phase raises through here
        _PHASES.setdefault(item.nodeid, {})[name] = [time.time() - wall, _cpu() - cpu]


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Iterator[None]:
    return (yield from _phase(item, "setup"))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    return (yield from _phase(item, "call"))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item) -> Iterator[None]:
    return (yield from _phase(item, "teardown"))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Iterator[object]:
    start = time.time()
    result = yield
    phases = _PHASES.pop(item.nodeid, {})
    cpu = sum(c for _, c in phases.values())
    _write(
        {
            "id": item.nodeid,
            "worker": _worker(),
            "start": start,
            "end": time.time(),
            "cpu": cpu,
            "phases": phases,
        }
    )
    return result


def pytest_sessionstart(session: pytest.Session) -> None:
    _write({"session": "start", "worker": _worker(), "t": time.time(), "cpu": _cpu()})


def pytest_sessionfinish(session: pytest.Session) -> None:
    _write({"session": "end", "worker": _worker(), "t": time.time(), "cpu": _cpu()})


def summary(path: str, top: int = 25) -> str:
    """CPU and wall by file and by test, and each worker's start-up, first and last test."""
    with open(path, encoding="utf-8") as f:
        rows = [json.loads(line) for line in f]
    tests = [r for r in rows if "id" in r]
    lines = [f"{len(tests)} tests, {sum(r['cpu'] for r in tests):.1f} CPU-s in their phases"]
    by_file: dict[str, list[float]] = collections.defaultdict(lambda: [0.0, 0.0, 0])
    for r in tests:
        entry = by_file[r["id"].split("::")[0]]
        entry[0] += r["cpu"]
        entry[1] += r["end"] - r["start"]
        entry[2] += 1
    lines.append("CPU-s  wall-s  tests  file")
    for name, (cpu, wall, n) in sorted(by_file.items(), key=lambda kv: -kv[1][0])[:top]:
        lines.append(f"{cpu:6.1f} {wall:7.1f} {n:6d}  {name}")
    lines.append("CPU-s  wall-s  test (setup/call/teardown: wall, CPU)")
    for r in sorted(tests, key=lambda r: -r["cpu"])[:top]:
        phases = " ".join(f"{k} {w:.1f}/{c:.1f}" for k, (w, c) in r["phases"].items())
        lines.append(f"{r['cpu']:6.1f} {r['end'] - r['start']:7.1f}  {r['id']}  [{phases}]")
    sessions = {(r["worker"], r["session"]): r for r in rows if "session" in r}
    t0 = min([r["t"] for r in sessions.values()] or [min(r["start"] for r in tests)])
    for worker in sorted({r["worker"] for r in tests}):
        mine = [r for r in tests if r["worker"] == worker]
        begin, end = sessions.get((worker, "start")), sessions.get((worker, "end"))
        first, last = min(r["start"] for r in mine), max(r["end"] for r in mine)
        fixed = (
            f", {first - begin['t']:.1f} s from its session's start to its first test"
            if begin
            else ""
        )
        total = f", {end['cpu']:.1f} CPU-s in all" if end else ""
        lines.append(
            f"{worker}: {len(mine)} tests{fixed}, tests from {first - t0:.1f} to {last - t0:.1f} s{total}"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    print(summary(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 25))
