"""A LoCoMo run's storing replayed: its items recorded in batches, then its summary kept.

python benchmarks/bench_store_run.py --source DB --before ROOT [--after ROOT] [--rounds 5]
python benchmarks/bench_store_run.py --evaluate DIR --before ROOT [--after ROOT] [--rounds 5]

`--source` is a results store holding one finished run (e.g. after `memgauge evaluate loc -s
lexical`). Each round, each checkout in its own subprocess (alternating) reads that run's items
and summary, creates the run with the same plan in a fresh store, records the items in batches
of `--batch` (154, evalcpu13's group commit under load; an idle evaluate records 230-420 at a
time) and keeps the summary, timing each part with `time.process_time` (least of `--repeat` in
the process; the collector's threshold as the CLI sets it). The stored rows of every table (but
the run's heartbeat and times) are hashed, so the checkouts' rows are compared too. Prints min
and median per part and checkout.

With `--evaluate DIR` (a dataset `memgauge import locomo` wrote), each round runs `memgauge
evaluate DIR -s lexical --quiet` in each checkout instead, with `time.thread_time` around the
store's `create_run`, `record_items` (the recorder's thread) and `set_summary`, summed per run,
and the process's CPU from the command's start.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

_CHILD = r"""
import gc, hashlib, json, sys, tempfile, time
import sqlalchemy as sa
from memgauge._util.gcquiet import GC_THRESHOLD
from memgauge.data.records import RunPlan
from memgauge.store.suite_runs import SuiteRunStore

source, batch, repeat = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
gc.set_threshold(max(gc.get_threshold()[0], GC_THRESHOLD), *gc.get_threshold()[1:])  # as the CLI
src = SuiteRunStore(source, read_only=True)
run_id = src.list_runs(1)[0]["run_id"]
run = src.get_run(run_id)
items = src.item_records(run_id)
plan = RunPlan(src.subjects(run_id), src.tasks(run_id),
               [i.model_copy(update={"status": "queued", "scores": [], "failures": [],
                                     "output": None}) for i in items])
best = {"plan": 1e9, "record": 1e9, "summary": 1e9}
digest = ""
for _ in range(repeat):
    with tempfile.TemporaryDirectory() as d:
        store = SuiteRunStore(f"{d}/r.db")
        t = time.process_time()
        store.create_run(run.model_copy(update={"summary": None}), plan)
        best["plan"] = min(best["plan"], time.process_time() - t)
        t = time.process_time()
        for start in range(0, len(items), batch):
            store.record_items(run_id, items[start:start + batch])
        best["record"] = min(best["record"], time.process_time() - t)
        t = time.process_time()
        store.set_summary(run_id, run.summary)
        best["summary"] = min(best["summary"], time.process_time() - t)
        h = hashlib.sha256()
        with store._read() as c:
            for table in sorted(sa.inspect(c).get_table_names()):
                cols = [x["name"] for x in sa.inspect(c).get_columns(table)
                        if x["name"] not in ("heartbeat_at", "created_at", "at")]
                order = ", ".join(cols)
                for row in c.execute(sa.text(f"SELECT {order} FROM {table} ORDER BY {order}")):
                    h.update(repr(tuple(bytes(v) if isinstance(v, memoryview) else v
                                        for v in row)).encode())
        digest = h.hexdigest()[:16]
        store.close() if hasattr(store, "close") else None
print(json.dumps({**best, "digest": digest}))
"""

_EVALUATE = r"""
import json, os, sys, tempfile, time
from memgauge.store.suite_runs import SuiteRunStore
spent = {"plan": 0.0, "record": 0.0, "summary": 0.0}
for part, name in (("plan", "create_run"), ("record", "record_items"), ("summary", "set_summary")):
    def timed(*a, _f=getattr(SuiteRunStore, name), _p=part, **k):
        t = time.thread_time()
        try:
            return _f(*a, **k)
        finally:
            spent[_p] += time.thread_time() - t
    setattr(SuiteRunStore, name, timed)
home = tempfile.mkdtemp()
os.environ["MEMGAUGE_HOME"] = home
sys.argv = ["memgauge", "evaluate", sys.argv[1], "-s", "lexical", "--quiet", "--out", home + "/out"]
from memgauge.cli.main import run
start = time.process_time()
try:
    run()
except SystemExit:
    pass
spent["command"] = time.process_time() - start
print(json.dumps({**spent, "digest": ""}))
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    where = ap.add_mutually_exclusive_group(required=True)
    where.add_argument("--source", help="a store holding one finished run, to replay")
    where.add_argument("--evaluate", help="a LoCoMo dataset directory, to evaluate")
    ap.add_argument("--before", type=Path, required=True)
    ap.add_argument("--after", type=Path, default=Path(__file__).resolve().parents[1])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--batch", type=int, default=154)
    args = ap.parse_args()
    found: dict[str, dict[str, list[float]]] = {"before": {}, "after": {}}
    digests: dict[str, set[str]] = {"before": set(), "after": set()}
    for _ in range(args.rounds):
        for name, root in (("before", args.before), ("after", args.after)):
            env = {**os.environ, "PYTHONPATH": str(root.resolve() / "src")}
            child = (
                [_EVALUATE, args.evaluate]
                if args.evaluate
                else [_CHILD, args.source, str(args.batch), str(args.repeat)]
            )
            out = subprocess.run(
                [sys.executable, "-c", *child],
                env=env,
                check=True,
                capture_output=True,
                text=True,
            ).stdout
            got = json.loads(out.strip().splitlines()[-1])
            digests[name].add(got.pop("digest"))
            for part, secs in got.items():
                found[name].setdefault(part, []).append(secs)
    print(f"load: {os.getloadavg()[0]:.1f}")
    for name in found:
        for part, secs in found[name].items():
            print(f"{name:6} {part:8} min {min(secs):.3f}  median {statistics.median(secs):.3f}")
        if not args.evaluate:
            print(f"{name:6} rows digest {sorted(digests[name])}")


if __name__ == "__main__":
    main()
