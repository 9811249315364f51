"""What a query-log row costs: the logging SDK's call and the writer's batch, per row.

    PYTHONPATH=src python benchmarks/bench_querylog_row.py [--rows 20000] [--repeat 7]

Run it against two checkouts (PYTHONPATH=<checkout>/src) to compare how a row is held (a
plain 18-field tuple before issue 30, the `QueryRow` NamedTuple after). Each figure is the
minimum over `--repeat` runs (timeit's advice: the others measure the machine's other work), in
microseconds per row:

1. `QueryLog.query` with every field given, the writer thread asleep (one hour's flush
   interval), so the call alone is timed: what a memory system's search handler pays;
2. `QueryLogWriter.write` of those rows into a fresh SQLite file (one transaction): the
   writer thread's share, JSON and the insert included;
3. the ways of building a row and of reading it back, alone, with the same 18 values (the
   same in any checkout): before (a tuple literal; the writer unpacked two slices), after (the
   NamedTuple built by tuple.__new__ from a tuple; the writer unpacks it whole), and the two
   forms not taken (QueryRow(...) and reading 18 attributes), each about 0.3-0.5 us more.
   On a shared machine 1 and 2 move by more than a microsecond from run to run; 3 is the
   figure that can resolve 0.3 us.
"""

from __future__ import annotations

import argparse
import tempfile
import timeit
from pathlib import Path
from typing import Any, NamedTuple

from memgauge.online.querylog import QueryLog
from memgauge.store.querylog import QueryLogWriter

IDS = [f"m{i}" for i in range(10)]
CHANNELS = {"fts5": IDS[:5], "vector": IDS[5:]}
FIELDS = {
    "session_id": "s1",
    "result_ids": IDS,
    "channel_contributions": CHANNELS,
    "latency_ms": 2.0,
    "mode": "hybrid",
    "intent": "lookup",
    "trace_id": "t1",
    "category": "intent-specific",
    "fusion_weights": {"fts5": 0.5, "vector": 0.5},
    "quality_proxy": 0.8,
    "fallback": False,
    "fallback_reason": None,
    "degraded": False,
    "stages": [{"stage": "fusion", "input_count": 40, "output_count": 20, "duration_ms": 1.2}],
}


def _hot_path(tmp: Path, rows: int, repeat: int) -> tuple[float, list[Any]]:
    log = QueryLog(tmp / "hot.db", flush_interval=3600.0, max_buffer=rows + 1)
    # the writer stays asleep: a batch's worth buffered would wake it (QueryLog._limit_reached)
    log._limit = log.max_buffer
    best = float("inf")
    logged: list[Any] = []
    try:
        for _ in range(repeat):
            log._queries.clear()
            t = timeit.timeit(lambda: log.query("oauth refresh", **FIELDS), number=rows)
            best = min(best, t / rows)
        logged = list(log._queries)
        log._queries.clear()  # nothing of this is written: only the call was measured
    finally:
        log.close()
    return best * 1e6, logged


def _writer(tmp: Path, logged: list[Any], repeat: int) -> float:
    best = float("inf")
    for i in range(repeat):
        writer = QueryLogWriter(tmp / f"writer{i}.db")
        try:
            best = min(best, timeit.timeit(lambda w=writer: w.write(logged, []), number=1))
        finally:
            writer.close()
    return best / len(logged) * 1e6


class _Row(NamedTuple):
    a: Any
    b: Any
    c: Any
    d: Any
    e: Any
    f: Any
    g: Any
    h: Any
    i: Any
    j: Any
    k: Any
    l: Any  # noqa: E741
    m: Any
    n: Any
    o: Any
    p: Any
    q: Any
    r: Any


def _primitives(repeat: int) -> dict[str, float]:
    names = "abcdefghijklmnopqr"
    env: dict[str, Any] = {"_Row": _Row, "new": tuple.__new__, **{c: c for c in names}}
    args = ", ".join(names)
    env["tup"] = eval(f"({args},)", env)
    env["row"] = _Row(*env["tup"])
    stmts = {
        "build: tuple literal (before)": f"({args},)",
        "build: tuple.__new__(QueryRow, (...)) (after)": f"new(_Row, ({args},))",
        "build: QueryRow(...) (not taken)": f"_Row({args})",
        "read: two slices unpacked, of a tuple (before)": f"{args[:31]} = tup[:11]; {args[33:]} = tup[11:]",
        "read: the whole QueryRow unpacked (after)": f"{args} = row",
        "read: 18 attributes of a QueryRow (not taken)": "; ".join(f"row.{c}" for c in names),
    }
    out = {}
    for label, stmt in stmts.items():
        timer = timeit.Timer(stmt, globals=env)
        number = 200_000
        out[label] = min(timer.repeat(repeat, number)) / number * 1e6
    before = (
        out["build: tuple literal (before)"] + out["read: two slices unpacked, of a tuple (before)"]
    )
    after = (
        out["build: tuple.__new__(QueryRow, (...)) (after)"]
        + out["read: the whole QueryRow unpacked (after)"]
    )
    out["a row built and read, before"] = before
    out["a row built and read, after"] = after
    out["after - before (the budget is 0.3)"] = after - before
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=9)
    args = parser.parse_args()
    import memgauge.store.querylog as store_querylog

    held = "QueryRow" if hasattr(store_querylog, "QueryRow") else "tuple"
    with tempfile.TemporaryDirectory() as tmp:
        call, logged = _hot_path(Path(tmp), args.rows, args.repeat)
        write = _writer(Path(tmp), logged, args.repeat)
    print(
        f"row held as: {held} ({type(logged[0]).__name__}); {args.rows:,} rows, min of {args.repeat}"
    )
    print(f"QueryLog.query, us per call: {call:.3f}")
    print(f"QueryLogWriter.write, us per row: {write:.3f}")
    for label, us in _primitives(args.repeat).items():
        print(f"{label}, us: {us:.3f}")


if __name__ == "__main__":
    main()
