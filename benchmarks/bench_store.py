"""The results store's write throughput per item, on SQLite and on PostgreSQL.

python benchmarks/bench_store.py [--items 5000] [--batch 64] [--postgres URL]

What a run's recorder does: create the run with every item queued (one transaction), then
record finished items in groups of `--batch` (the writer thread's group commit): per item its
status, an output of ten hits, three verdicts with reasons, and the run's heartbeat; then read
every item back as typed records (what aggregates do). Without `--postgres`, a PostgreSQL
server is started for the benchmark with the tests' helper (tests/pgserver.py: initdb and
pg_ctl, on 127.0.0.1) when its binaries are installed; the server is local, so the figures
are the store's cost, not a network's.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from memgauge.data.records import ItemRecord, RunRecord, ScoreRecord
from memgauge.store.suite_runs import SuiteRunStore


def _run(run_id: str) -> RunRecord:
    return RunRecord(
        run_id=run_id,
        suite_name="bench",
        suite_sha256="0" * 64,
        suite={"name": "bench"},
    )


def _done(i: int) -> ItemRecord:
    return ItemRecord(
        subject="s",
        task="t",
        item_id=f"i{i:06d}",
        seq=i,
        status="completed",
        attempts=1,
        output=[{"id": f"m{i}-{r}", "rank": r, "score": 1 / r} for r in range(1, 11)],
        latency_ms={"total": 1.25},
        scores=[
            ScoreRecord(evaluator=e, value=0.5, passed=True, reason=f"{e} matched")
            for e in ("exact", "contains", "token_f1")
        ],
    )


def bench(where: str, n: int, batch: int) -> dict[str, Any]:
    """Seconds to create, record and read back `n` items in the store at `where`."""
    queued = [
        ItemRecord(subject="s", task="t", item_id=f"i{i:06d}", seq=i, input={"text": str(i)})
        for i in range(n)
    ]
    done = [_done(i) for i in range(n)]
    with SuiteRunStore(where) as store:
        t0 = time.perf_counter()
        store.create_run(
            _run("r"), {"s": {}}, [{"task": "t", "kind": "x", "spec": {}, "n_items": n}], queued
        )
        t1 = time.perf_counter()
        for start in range(0, n, batch):
            store.record_items("r", done[start : start + batch])
        t2 = time.perf_counter()
        got = store.item_records("r")
        t3 = time.perf_counter()
    assert len(got) == n and all(g.status == "completed" for g in got)
    return {
        "create_us_per_item": (t1 - t0) / n * 1e6,
        "record_us_per_item": (t2 - t1) / n * 1e6,
        "items_per_second": n / (t2 - t1),
        "read_us_per_item": (t3 - t2) / n * 1e6,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--items", type=int, default=5_000)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--postgres", default=None, help="a postgresql:// URL (default: start one)")
    args = ap.parse_args()
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        results["sqlite"] = bench(str(Path(tmp) / "r.db"), args.items, args.batch)
    server = None
    url = args.postgres
    if url is None:
        sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
        from pgserver import PGServer, find_bin

        bindir = find_bin()
        if bindir is not None:
            server = PGServer(bindir)
            server.start()
            url = server.new_database()
    try:
        if url is not None:
            results["postgresql"] = bench(url, args.items, args.batch)
    finally:
        if server is not None:
            server.close()
    print(json.dumps({"items": args.items, "batch": args.batch, **results}, indent=2))


if __name__ == "__main__":
    main()
