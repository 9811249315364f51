"""How fast `memgauge view` serves a big retrieval run (issue 31 item 7): every page of a store
holding a few `memgauge evaluate -s lexical` runs of a synthetic dataset of 10,000 and of
100,000 queries, before and after a change, in one run.

Each store is built once by memgauge itself (a synthetic dataset of N queries, one memory
judged relevant per query, evaluated `--runs` times into one store: one suite, so the run
page's gate has a baseline). With `--before-src` (the `src` directory of an older memgauge,
e.g. `git worktree add /tmp/before main`), the store is built by that memgauge, its pages are
timed there, and a copy upgraded by this one (`headline_json`, revision 0016) is timed here.
Each page is timed in its own process, before and after interleaved: one request to warm the
process (the runs list: imports, templates), the page's first request (`first`: per-process
caches cold), then `--repeat` more (min and median). A before-page slower than `--limit` s is
requested once. Requests go through Starlette's test client (routing, a read-only store
connection per request, SQL, templates; no network). Run:

    python benchmarks/bench_view_big.py [--sizes 10000,100000] [--runs 3] [--repeat 3]
        [--before-src /tmp/before/src] [--keep DIR] [--differ] [--pages TEXT] [--cpu]
    python benchmarks/bench_view_big.py --record 1000,10000 [--rounds 5] [--before-src ...]

`--differ` adds a last run whose queries are cut to 2 words, so most verdicts differ, and
times its compare page against the run before it: the paired tests' cost (two runs that agree
on every verdict skip them). A run of 10,000 items or more keeps its comparison with the run
before it when recorded (`store.compared_rows`); on a store built by `--before-src`, the
upgraded copy's runs are given what this memgauge's recording would have kept (timed).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"


def _dataset(out: Path, n: int, seed: int = 0) -> None:
    """N queries, each the first words of its own memory (12 random words of 5,000), judged
    relevant (grade 3), written as JSON lines (100,000 through pydantic would be slow)."""
    rng = random.Random(seed)
    words = [f"w{i}" for i in range(5000)]
    out.mkdir(parents=True, exist_ok=True)
    (out / "dataset.yaml").write_text(f"name: synthetic-{n}\n")
    with (
        (out / "memories.jsonl").open("w") as mem,
        (out / "queries.jsonl").open("w") as qs,
        (out / "judgments.jsonl").open("w") as js,
    ):
        for i in range(n):
            text = " ".join(rng.choices(words, k=12))
            mem.write(json.dumps({"id": f"m{i}", "text": text}) + "\n")
            qs.write(json.dumps({"id": f"q{i}", "text": " ".join(text.split()[:5])}) + "\n")
            judged = {"query_id": f"q{i}", "memory_id": f"m{i}", "grade": 3}
            js.write(json.dumps(judged) + "\n")


def _env(src: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(src)}


def build(root: Path, n: int, runs: int, src: Path) -> Path:
    """The store of `runs` evaluations of the N-query dataset, built by the memgauge at `src`
    (kept and reused under `root`)."""
    db = root / "results.db"
    if db.exists():
        return db
    _dataset(root / "data", n)
    for r in range(runs):
        t = time.perf_counter()
        subprocess.run(
            [
                *(sys.executable, "-m", "memgauge", "evaluate", str(root / "data")),
                *("-s", "lexical", "--out", str(root / f"ev{r}"), "--store", str(db), "--quiet"),
            ],
            env=_env(src),
            check=True,
            stdout=subprocess.DEVNULL,
        )
        print(f"  built run {r + 1} of {n:,} queries in {time.perf_counter() - t:.0f} s")
    return db


def build_differing(root: Path, db: Path, src: Path) -> None:
    """A last run in the store that differs from the others on most items: the same memories
    and judgments, each query cut to its first 2 words (the compare page's paired tests then
    resample and flip signs for every measure; two runs that agree skip both)."""
    if (root / "data_differs").exists():
        return
    # a directory named as the first runs' (`evaluate:data`): the same suite, so the
    # differing run is its next run, compared with the one before it from its page
    data = root / "data_differs" / "data"
    data.mkdir(parents=True)
    for name in ("dataset.yaml", "memories.jsonl", "judgments.jsonl"):
        (data / name).write_bytes((root / "data" / name).read_bytes())
    with (root / "data" / "queries.jsonl").open() as src_q, (data / "queries.jsonl").open("w") as q:
        for line in src_q:
            query = json.loads(line)
            query["text"] = " ".join(query["text"].split()[:2])
            q.write(json.dumps(query) + "\n")
    subprocess.run(
        [
            *(sys.executable, "-m", "memgauge", "evaluate", str(data), "-s", "lexical"),
            *("--out", str(root / "ev_differs"), "--store", str(db), "--quiet"),
        ],
        env=_env(src),
        check=True,
        stdout=subprocess.DEVNULL,
    )


def upgraded_copy(db: Path, src: Path) -> Path:
    """A copy of `db` (SQLite's backup: the WAL's pages included) upgraded by this memgauge."""
    copy = db.with_name("after.db")
    if not copy.exists():
        source = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
        target = sqlite3.connect(copy)
        source.backup(target)
        target.close()
        source.close()
        code = "from memgauge.store.suite_runs import SuiteRunStore; SuiteRunStore(%r).close()"
        subprocess.run([sys.executable, "-c", code % str(copy)], env=_env(src), check=True)
    return copy


def keep_comparisons(db: Path, src: Path) -> None:
    """What recording each run with this memgauge keeps (`run_comparison.keep`: a run of
    `compared_rows.KEEP_FROM` items or more, its comparison with the run before it), for the
    runs of a store built by an older one; prints each run's cost (CPU-s of this process)."""
    code = (
        "import json, sqlite3, sys, time\n"
        "from memgauge.runs.run_comparison import keep\n"
        "from memgauge.store.suite_runs import SuiteRunStore\n"
        "db = sys.argv[1]\n"
        "conn = sqlite3.connect(f'file:{db}?mode=ro', uri=True)\n"
        "runs = [r[0] for r in conn.execute('SELECT run_id FROM suite_runs ORDER BY created_at')]\n"
        "conn.close()\n"
        "with SuiteRunStore(db) as store:\n"
        "    for run in runs:\n"
        "        t, c = time.perf_counter(), time.process_time()\n"
        "        kept = keep(store, run)\n"
        "        print(json.dumps([run, kept, time.perf_counter() - t, time.process_time() - c]))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(db)],
        env=_env(src),
        check=True,
        capture_output=True,
        text=True,
    )
    for line in out.stdout.splitlines():
        run, kept, wall, cpu = json.loads(line)
        what = "kept its comparison" if kept else "nothing to keep"
        print(f"  recording's comparison, run {run}: {what}, {wall:.2f} s wall, {cpu:.2f} CPU-s")


def pages(db: Path) -> dict[str, str]:
    """The pages timed: the newest run (its id), the one before it (baseline, compare)."""
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    rows = conn.execute(
        "SELECT run_id, suite_name FROM suite_runs ORDER BY created_at DESC LIMIT 3"
    ).fetchall()
    conn.close()
    differs = None
    if (db.parent / "data_differs").exists():  # the newest run is the one that differs
        differs = rows.pop(0)[0]
    (rid, suite), (other, _) = rows[:2]
    n = int(db.parent.name)
    extra = {"compare two runs that differ": f"/compare?a={rid}&b={differs}"} if differs else {}
    return {
        "runs list": "/",
        "run page": f"/runs/{rid}",
        "items, first page": f"/runs/{rid}/items",
        "items, last page": f"/runs/{rid}/items?page={n // 50}",
        "items, changed vs previous run": f"/runs/{rid}/items?show=changed&baseline={other}",
        "items, search": f"/runs/{rid}/items?q=w123&sort=score",
        "one item": f"/runs/{rid}/item?subject=lexical&task=retrieval&item=q{n // 2}",
        "trends": f"/trends?suite={suite}",
        "compare two runs": f"/compare?a={other}&b={rid}",
        **extra,
    }


def _child(db: str, url: str, repeat: int, limit: float) -> None:
    """Time one page in this process; print its times (ms) as JSON."""
    from starlette.testclient import TestClient

    from memgauge.view.app import create_app

    with TestClient(create_app(db)) as client:
        assert client.get("/").status_code == 200
        times, cpu = [], []
        for _ in range(1 + repeat):
            t, c = time.perf_counter(), time.process_time()
            r = client.get(url)
            times.append((time.perf_counter() - t) * 1000)
            cpu.append((time.process_time() - c) * 1000)  # every thread of the process
            assert r.status_code == 200, r.text[:500]
            if times[0] > limit * 1000:
                break
    print(json.dumps({"times": times, "cpu": cpu, "bytes": len(r.content)}))


def _time(src: Path, db: Path, url: str, repeat: int, limit: float) -> dict[str, object]:
    out = subprocess.run(
        [sys.executable, __file__, "--child", str(db), url, str(repeat), str(limit)],
        env=_env(src),
        check=True,
        capture_output=True,
        text=True,
    )
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


def _cells(found: dict[str, object] | None, key: str = "times") -> list[str]:
    """`first` and `min / median` of one side's times (ms): wall, or CPU with `key="cpu"`."""
    if found is None:
        return []
    times = [float(t) for t in found[key]]  # type: ignore[attr-defined]
    rest = times[1:]
    if not rest:
        return [f"{times[0]:,.0f}", "(requested once)"]
    return [f"{times[0]:,.0f}", f"{min(rest):,.0f} / {statistics.median(rest):,.0f}"]


def _evaluate_cpu(src: Path, data: Path, db: Path, out: Path) -> tuple[float, float]:
    """One `memgauge evaluate -s lexical` of `data` into `db` by the memgauge at `src`: wall
    and CPU seconds (the child's user + system)."""
    before = os.times()
    t = time.perf_counter()
    subprocess.run(
        [
            *(sys.executable, "-m", "memgauge", "evaluate", str(data), "-s", "lexical"),
            *("--out", str(out), "--store", str(db), "--quiet"),
        ],
        env=_env(src),
        check=True,
        stdout=subprocess.DEVNULL,
    )
    wall = time.perf_counter() - t
    after = os.times()
    cpu = (after.children_user - before.children_user) + (
        after.children_system - before.children_system
    )
    return wall, cpu


def record(root: Path, sizes: list[int], rounds: int, before_src: Path | None) -> None:
    """What recording a run costs, before and after, interleaved: each round evaluates the
    N-query dataset into a store of each code that already holds a run of it (so a finished
    run has a run before it: the comparison is kept from `compared_rows.KEEP_FROM` items)."""
    sides = [("before", before_src), ("after", SRC)] if before_src else [("after", SRC)]
    for n in sizes:
        data = root / f"record{n}" / "data"
        if not data.exists():
            _dataset(data, n)
        times: dict[str, list[tuple[float, float]]] = {name: [] for name, _ in sides}
        for name, src in sides:  # each store's first run: the one the timed runs follow
            _evaluate_cpu(src, data, root / f"record{n}" / f"{name}.db", root / "ev")
        for _ in range(rounds):
            for name, src in sides:
                db = root / f"record{n}" / f"{name}.db"
                times[name].append(_evaluate_cpu(src, data, db, root / "ev"))
        with open("/proc/loadavg") as f:
            load = " ".join(f.read().split()[:3])
        cells = []
        for name, _ in sides:
            walls = [w for w, _ in times[name]]
            cpus = [c for _, c in times[name]]
            cells.append(
                f"{name}: wall {min(walls):.2f} / {statistics.median(walls):.2f} s,"
                f" CPU {min(cpus):.2f} / {statistics.median(cpus):.2f} s"
            )
        print(f"record {n:,} queries (min / median of {rounds}; load {load}): " + "; ".join(cells))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--limit", type=float, default=20.0)
    parser.add_argument("--before-src", type=Path)
    parser.add_argument("--keep", type=Path, help="build the stores here, and reuse them")
    parser.add_argument(
        "--differ", action="store_true", help="add a run that differs (its compare page too)"
    )
    parser.add_argument("--pages", help="time only the pages whose names hold this text")
    parser.add_argument("--cpu", action="store_true", help="CPU times too (every thread's)")
    parser.add_argument(
        "--record", help="instead: time recording runs of these sizes (e.g. 1000,10000)"
    )
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    if args.record:
        where = args.keep or Path(tempfile.mkdtemp())
        record(where, [int(s) for s in args.record.split(",")], args.rounds, args.before_src)
        return
    tmp = None
    root = args.keep
    if root is None:
        tmp = tempfile.mkdtemp()
        root = Path(tmp)
    try:
        for n in (int(s) for s in args.sizes.split(",")):
            where = root / str(n)
            where.mkdir(parents=True, exist_ok=True)
            builder = args.before_src or SRC
            db = build(where, n, args.runs, builder)
            if args.differ:
                build_differing(where, db, builder)
            after = upgraded_copy(db, SRC) if args.before_src else db
            if args.before_src:  # what this memgauge's recording keeps with each run
                keep_comparisons(after, SRC)
            with open("/proc/loadavg") as f:
                load = f.read().split()[:3]
            conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
            (runs,) = conn.execute("SELECT COUNT(*) FROM suite_runs").fetchone()
            conn.close()
            print(f"\n{n:,} queries, {runs} runs; load before: {' '.join(load)}")
            before_head = "| before: first | before: min / median " if args.before_src else ""
            head = f"{before_head}| after: first | after: min / median "
            cpu_head = head.replace("before:", "before CPU:").replace("after:", "after CPU:")
            cols = (4 if args.before_src else 2) * (2 if args.cpu else 1)
            print(f"| page {head}{cpu_head if args.cpu else ''}| bytes |")
            print("|---|" + "---:|" * cols + "---:|")
            for name, url in pages(after).items():
                if args.pages and args.pages not in name:
                    continue
                old = None
                if args.before_src:
                    old = _time(args.before_src, db, url, args.repeat, args.limit)
                new = _time(SRC, after, url, args.repeat, args.limit)
                row = [name, *_cells(old), *_cells(new)]
                if args.cpu:
                    row += [*_cells(old, "cpu"), *_cells(new, "cpu")]
                row.append(f"{new['bytes']:,}")
                print("| " + " | ".join(row) + " |", flush=True)
            with open("/proc/loadavg") as f:
                print(f"load after: {' '.join(f.read().split()[:3])}")
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        _child(sys.argv[2], sys.argv[3], int(sys.argv[4]), float(sys.argv[5]))
    else:
        main()
