"""The results store's write throughput per item, on SQLite and on PostgreSQL.

python benchmarks/bench_store.py [--items 5000] [--batch 64] [--postgres URL]
python benchmarks/bench_store.py --before ROOT [--after ROOT] [--rounds 5]   # SQLite only

What a run's recorder does: create the run with every item queued (one transaction), then
record finished items in groups of `--batch` (the writer thread's group commit): per item its
status, an output of ten hits, three verdicts with reasons, and the run's heartbeat; then read
every item back as typed records (what aggregates do). Without `--postgres`, a PostgreSQL
server is started for the benchmark with the tests' helper (tests/pgserver.py: initdb and
pg_ctl, on 127.0.0.1) when its binaries are installed; the server is local, so the figures
are the store's cost, not a network's.

With `--before`, two checkouts of memgauge are compared on SQLite instead, alternating
`--rounds` times in subprocesses (each checkout's own `SuiteRunStore`): min and median per item.
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

from memgauge.data.records import ItemRecord, RunPlan, RunRecord, ScoreRecord
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
            _run("r"),
            RunPlan({"s": {}}, [{"task": "t", "kind": "x", "spec": {}, "n_items": n}], queued),
        )
        t1 = time.perf_counter()
        for start in range(0, n, batch):
            store.record_items("r", done[start : start + batch])
        t2 = time.perf_counter()
        got = store.item_records("r")
        t3 = time.perf_counter()
    assert len(got) == n
    assert all(g.status == "completed" for g in got)
    return {
        "create_us_per_item": (t1 - t0) / n * 1e6,
        "record_us_per_item": (t2 - t1) / n * 1e6,
        "items_per_second": n / (t2 - t1),
        "read_us_per_item": (t3 - t2) / n * 1e6,
    }


_ONE = """
import json, sys, tempfile
sys.path.insert(0, {here!r})
import bench_store
with tempfile.TemporaryDirectory() as t:
    print(json.dumps(bench_store.bench(t + '/r.db', {n}, {batch})))
"""


def versions(before: Path, after: Path, n: int, batch: int, rounds: int) -> None:
    """Alternate the two checkouts on SQLite; print min / median per measure."""
    code = _ONE.format(here=str(Path(__file__).parent), n=n, batch=batch)
    got: dict[str, list[dict[str, float]]] = {"before": [], "after": []}
    for _ in range(rounds):
        for name, root in (("before", before), ("after", after)):
            env = {**os.environ, "PYTHONPATH": str(root / "src")}
            out = subprocess.run(
                [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
            )
            got[name].append(json.loads(out.stdout))
    for name, rows in got.items():
        for key in ("create_us_per_item", "record_us_per_item", "read_us_per_item"):
            values = [r[key] for r in rows]
            print(f"{name} {key}: min {min(values):.0f} median {statistics.median(values):.0f}")
    print(f"load average: {os.getloadavg()[0]:.1f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--items", type=int, default=5_000)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--postgres", default=None, help="a postgresql:// URL (default: start one)")
    ap.add_argument("--before", type=Path, default=None, help="a checkout to compare with")
    ap.add_argument("--after", type=Path, default=Path(__file__).resolve().parents[1])
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    if args.before is not None:
        versions(args.before, args.after, args.items, args.batch, args.rounds)
        return
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
