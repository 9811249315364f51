"""The logging SDK's hot path and throughput.

    python benchmarks/bench_querylog.py

1. In one process: 100,000 `QueryLog.query` calls (10 result ids, channel contributions),
   each timed alone; p50 / p99 / max per call, then the time until every row is on disk.
2. Four processes logging 10,000 queries each into one SQLite file: wall time and rows found.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from memgauge.online.querylog import QueryLog

WORKER = """
import sys
from memgauge.online.querylog import QueryLog
log = QueryLog(sys.argv[1])
ids = [f"m{i}" for i in range(10)]
for i in range(10000):
    log.query(f"query {i}", session_id=sys.argv[2], result_ids=ids, latency_ms=1.0)
"""


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "log.db"
        log = QueryLog(db)
        ids = [f"m{i}" for i in range(10)]
        channels = {"fts5": ids[:5], "vector": ids[5:]}
        n = 100_000
        times = np.empty(n)
        t_all = time.perf_counter()
        for i in range(n):
            t = time.perf_counter_ns()
            log.query(
                f"query {i}",
                session_id="s",
                result_ids=ids,
                channel_contributions=channels,
                latency_ms=2.0,
            )
            times[i] = time.perf_counter_ns() - t
        logged = time.perf_counter() - t_all
        log.flush()
        written = time.perf_counter() - t_all
        log.close()
        us = times / 1000
        print("| calls | p50 us | p99 us | max us | calls/s (logging) | rows/s (on disk) |")
        print("|---:|---:|---:|---:|---:|---:|")
        print(
            f"| {n:,} | {np.percentile(us, 50):.2f} | {np.percentile(us, 99):.2f} | {us.max():.0f} "
            f"| {n / logged:,.0f} | {n / written:,.0f} |"
        )
        shared = Path(tmp) / "shared.db"
        QueryLog(shared).close()
        t = time.perf_counter()
        procs = [
            subprocess.Popen([sys.executable, "-c", WORKER, str(shared), f"s{p}"]) for p in range(4)
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
