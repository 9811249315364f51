"""The logging SDK's hot path and how fast its rows reach the database.

    python benchmarks/bench_querylog.py [--reps 3] [--calls 100000] [--compare SRC]

1. One process logs into an existing store (made by another process first) `--calls`
   `QueryLog.query` calls (10 result ids, channel contributions),
   each timed alone, then calls `flush()`, which returns once every row is committed. Per run:
   p50 / p99 / worst call, calls/s while logging, rows/s to disk (the rows the database holds
   when `flush()` returns, over the time from the first call until then), rows found in the
   database after `close()` against calls made (lost = calls - rows found; dropped by a full
   buffer counted apart), CPU seconds of the process and of its writer thread, the records
   still buffered when the loop ends and, from then until `flush()` returns, the writer's CPU
   and the time it was neither on a core nor waiting for one (Linux's schedstat: waiting for
   the disk or a lock, which a loaded machine does not inflate), and
   the garbage collector's full passes, wall and the thread's CPU (the worst call is usually one). On a SQLite
   file and on PostgreSQL (a local server started with tests/pgserver.py when its binaries are
   installed; the tests' settings, fsync off), interleaved, each run in a fresh interpreter;
   `--reps` rounds, min and median. `--compare SRC` runs another checkout's `src` (say
   /work/main/src) in the same rounds, alternating with this one.
2. Four processes logging 10,000 queries each into one SQLite file: wall time and rows found.

`--promotions` instead counts, per checkout, the objects the garbage collector moved to its
oldest generation during `--calls` calls and the flush (what makes CPython run full passes, the
worst calls): a count, the same on a loaded machine as on an idle one.

The 1-minute load average is printed before and after: the machine is shared.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve()
SRC = HERE.parents[1] / "src"

WORKER = """
import sys
from memgauge.online.querylog import QueryLog
log = QueryLog(sys.argv[1])
ids = [f"m{i}" for i in range(10)]
for i in range(10000):
    log.query(f"query {i}", session_id=sys.argv[2], result_ids=ids, latency_ms=1.0)
"""


def one_run(where: str, calls: int) -> dict[str, Any]:
    """The measurement, in this (fresh) interpreter."""
    import gc

    import numpy as np

    from memgauge.online.querylog import QueryLog

    full_passes: list[float] = []
    # the pass's own CPU (the thread's): under load the wall time also counts the time the
    # scheduler gave other processes while the pass held the GIL
    full_passes_cpu: list[float] = []
    started = [0.0, 0.0]

    def on_gc(phase: str, info: dict[str, Any]) -> None:
        if info["generation"] == 2:
            if phase == "start":
                started[:] = time.perf_counter(), time.thread_time()
            else:
                full_passes.append(time.perf_counter() - started[0])
                full_passes_cpu.append(time.thread_time() - started[1])

    log = QueryLog(where)
    ids = [f"m{i}" for i in range(10)]
    channels = {"fts5": ids[:5], "vector": ids[5:]}
    times = np.empty(calls)
    gc.callbacks.append(on_gc)
    cpu0 = time.process_time()
    t0 = time.perf_counter()
    for i in range(calls):
        t = time.perf_counter_ns()
        log.query(
            f"query {i}",
            session_id="s",
            result_ids=ids,
            channel_contributions=channels,
            latency_ms=2.0,
        )
        times[i] = time.perf_counter_ns() - t
    logged = time.perf_counter() - t0
    backlog = len(log._queries)
    tail_start = _schedstat(log)
    log.flush()
    written = time.perf_counter() - t0
    tail_cpu, tail_queued = (b - a for a, b in zip(tail_start, _schedstat(log), strict=True))
    cpu = time.process_time() - cpu0
    # the writer thread's own CPU (SQLite's work included, with the GIL or without it)
    writer_cpu = time.clock_gettime(time.pthread_getcpuclockid(log._thread.ident or 0))
    gc.callbacks.remove(on_gc)
    at_flush = _rows(where)  # what flush() promised: every row logged before it
    dropped = log.dropped
    log.close()
    found = _rows(where)
    us = times / 1000
    return {
        "p50_us": float(np.percentile(us, 50)),
        "p99_us": float(np.percentile(us, 99)),
        "worst_ms": float(us.max() / 1000),
        "calls_per_s": calls / logged,
        "rows_per_s": at_flush / written,
        "at_flush": at_flush,
        "found": found,
        "lost": calls - dropped - found,
        "dropped": dropped,
        "cpu_s": cpu,
        "writer_cpu_s": writer_cpu,
        "backlog": backlog,
        # the writer's time from the loop's end until flush() returned that was neither on a
        # core nor waiting for one: waiting for the disk (fdatasync) or for a lock
        "tail_blocked_ms": 1000 * (written - logged - tail_cpu - tail_queued),
        "tail_cpu_s": tail_cpu,
        "gc_full": len(full_passes),
        "gc_full_worst_ms": 1000 * max(full_passes, default=0.0),
        "gc_full_worst_cpu_ms": 1000 * max(full_passes_cpu, default=0.0),
    }


def _schedstat(log: Any) -> tuple[float, float]:
    """The writer thread's (seconds on a core, seconds waiting for one): Linux's schedstat."""
    stat = Path(f"/proc/self/task/{log._thread.native_id}/schedstat")
    if not stat.exists():
        return 0.0, 0.0
    ran, queued = stat.read_text().split()[:2]
    return int(ran) / 1e9, int(queued) / 1e9


def promotions(where: str, calls: int) -> dict[str, Any]:
    """Objects moved to the collector's oldest generation while `calls` queries are logged and
    flushed, by type: what makes CPython run a full pass (one comes due once they number a
    quarter of what the last full pass left there). Slow (a set of the oldest generation at
    every pass of the middle one): a measurement of its own, never timed."""
    import collections
    import gc

    from memgauge.online.querylog import QueryLog

    log = QueryLog(where)
    ids = [f"m{i}" for i in range(10)]
    channels = {"fts5": ids[:5], "vector": ids[5:]}
    gc.collect()
    moved: collections.Counter[str] = collections.Counter()
    before: set[int] = set()

    def on_gc(phase: str, info: dict[str, Any]) -> None:
        if info["generation"] != 1:
            return
        if phase == "start":
            before.clear()
            before.update(map(id, gc.get_objects(2)))
        else:
            moved.update(type(o).__name__ for o in gc.get_objects(2) if id(o) not in before)

    gc.callbacks.append(on_gc)
    for i in range(calls):
        log.query(
            f"query {i}", session_id="s", result_ids=ids, channel_contributions=channels,
            latency_ms=2.0,
        )  # fmt: skip
    log.flush()
    gc.callbacks.remove(on_gc)
    log.close()
    return {"promoted": sum(moved.values()), "by_type": dict(moved.most_common(4))}


def _rows(where: str) -> int:
    if "://" not in where:  # a SQLite file: read without the SDK (a checkout may predate LogDB)
        import sqlite3

        con = sqlite3.connect(where)
        try:
            return int(con.execute("SELECT COUNT(*) FROM eval_queries").fetchone()[0])
        finally:
            con.close()
    from memgauge.store.logdb import LogDB

    db = LogDB(where)
    try:
        return int(db.execute("SELECT COUNT(*) FROM eval_queries").fetchone()[0])
    finally:
        db.close()


CREATE = "import sys; from memgauge.online.querylog import QueryLog; QueryLog(sys.argv[1]).close()"


def _child(src: Path, where: str, calls: int, *, mode: str = "--child") -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(src)}
    # the store is made first, by another process: creating one loads SQLAlchemy and Alembic
    # (tens of thousands of objects every full garbage collection would walk), which a
    # process logging into an existing store never does
    subprocess.run([sys.executable, "-c", CREATE, where], env=env, check=True)
    out = subprocess.run(
        [sys.executable, str(HERE), mode, where, "--calls", str(calls)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return dict(json.loads(out.strip().splitlines()[-1]))


def _load() -> str:
    return Path("/proc/loadavg").read_text().split()[0] if Path("/proc/loadavg").exists() else "?"


def _pg_server() -> tuple[Any, str]:
    """(a started server, "yes"), or (None, why not)."""
    sys.path.insert(0, str(HERE.parents[1] / "tests"))
    from pgserver import PGServer, find_bin

    try:
        import psycopg  # noqa: F401
    except ImportError:
        return None, "no psycopg (pip install 'memgauge[postgres]')"
    bindir = find_bin()
    if bindir is None:
        return None, "no initdb / pg_ctl (apt-get install postgresql: /usr/lib/postgresql/*/bin)"
    server = PGServer(bindir)
    server.start()
    return server, f"yes ({bindir})"


def _row(label: str, runs: list[dict[str, Any]]) -> str:
    def mm(key: str, fmt: str, best: Any = min) -> str:
        vals = [r[key] for r in runs]
        return f"{format(best(vals), fmt)} / {format(statistics.median(vals), fmt)}"

    lost = sum(r["lost"] for r in runs)
    found = sum(r["found"] for r in runs)
    return (
        f"| {label} | {mm('rows_per_s', ',.0f', max)} | {mm('p50_us', '.2f')} "
        f"| {mm('p99_us', '.2f')} | {mm('worst_ms', '.1f')} | {mm('calls_per_s', ',.0f', max)} "
        f"| {mm('cpu_s', '.2f')} | {mm('writer_cpu_s', '.2f')} | {mm('gc_full', 'g')} | {mm('gc_full_worst_ms', '.1f')} "
        f"| {mm('gc_full_worst_cpu_ms', '.1f')} "
        f"| {mm('backlog', ',.0f')} | {mm('tail_cpu_s', '.3f')} | {mm('tail_blocked_ms', '.1f')} "
        f"| {found:,} | {lost} |"
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--calls", type=int, default=100_000)
    ap.add_argument("--compare", type=Path, help="another checkout's src, run alternately")
    ap.add_argument("--no-postgres", action="store_true")
    ap.add_argument(
        "--promotions",
        action="store_true",
        help="only count the objects moved to the oldest generation, per checkout",
    )
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--promotions-child", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(one_run(args.child, args.calls)))
        return
    if args.promotions_child:
        print(json.dumps(promotions(args.promotions_child, args.calls)))
        return
    sources = {"this": SRC, **({"compare": args.compare.resolve()} if args.compare else {})}
    if args.promotions:
        print("| code | objects moved to the oldest generation | most of them |")
        print("|---|---:|---|")
        with tempfile.TemporaryDirectory() as tmp:
            for name, src in sources.items():
                got = _child(
                    src, str(Path(tmp) / f"{name}.db"), args.calls, mode="--promotions-child"
                )
                label = "this checkout" if name == "this" else str(args.compare)
                print(f"| {label} | {got['promoted']:,} | {got['by_type']} |")
        return
    server, postgres = (None, "skipped (--no-postgres)") if args.no_postgres else _pg_server()
    print(f"load average before: {_load()}; postgresql: {postgres}")
    results: dict[tuple[str, str], list[dict[str, Any]]] = {}
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for rep in range(args.reps):
                for name, src in sources.items():
                    stores = ["sqlite"] + (["postgresql"] if server else [])
                    for store in stores:
                        where = (
                            str(Path(tmp) / f"{name}-{rep}.db")
                            if store == "sqlite"
                            else str(server.new_database())
                        )
                        run = _child(src, where, args.calls)
                        results.setdefault((name, store), []).append(run)
                        print(
                            f"  rep {rep + 1} {name} {store}: {run['rows_per_s']:,.0f} rows/s,"
                            f" worst {run['worst_ms']:.1f} ms, lost {run['lost']}, load {_load()}",
                            file=sys.stderr,
                        )
    finally:
        if server is not None:
            server.close()
    print(f"load average after: {_load()}\n")
    print(
        "| code, store | rows/s to disk (max / median) | p50 us (min / median) "
        "| p99 us | worst call ms | calls/s while logging (max / median) | CPU s | writer CPU s "
        "| GC full passes | longest GC full pass ms | its CPU ms | backlog at the loop's end "
        "| writer CPU s after it | writer blocked ms after it | rows found | rows lost |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for (name, store), runs in results.items():
        label = f"{'this checkout' if name == 'this' else args.compare}, {store}"
        print(_row(label, runs))

    with tempfile.TemporaryDirectory() as tmp:
        shared = Path(tmp) / "shared.db"
        env = {**os.environ, "PYTHONPATH": str(SRC)}
        subprocess.run([sys.executable, "-c", CREATE, str(shared)], env=env, check=True)
        t = time.perf_counter()
        procs = [
            subprocess.Popen([sys.executable, "-c", WORKER, str(shared), f"s{p}"], env=env)
            for p in range(4)
        ]
        codes = [p.wait() for p in procs]
        wall = time.perf_counter() - t
        import sqlite3

        con = sqlite3.connect(shared)
        rows = con.execute("SELECT COUNT(*) FROM eval_queries").fetchone()[0]
        con.close()
        print("\n| processes | queries each | exit codes | rows found | wall s |")
        print("|---:|---:|---|---:|---:|")
        print(f"| 4 | 10,000 | {codes} | {rows:,} | {wall:.2f} |")


if __name__ == "__main__":
    main()
