"""What reading and storing a big retrieval run's summary costs, before and after aggregates kept
typed facts instead of a free detail dict (issue 30 item 2).

`python benchmarks/bench_facts.py --n 5000 --before-src BEFORE/src --rounds 2`: one
`evaluate -s lexical` of an N-query synthetic dataset (bench_view_big's) stored by each code,
then, each in its own process, interleaved: the summary read (`get_run`), the headline and the
query rows, the result.json model (`retrieval_result`) and the summary stored again
(`set_summary`); min / median of 5 (3 for set_summary) in ms.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from bench_view_big import build


def child(db: Path) -> None:
    from memgauge.report.retrieval import retrieval_result
    from memgauge.store.headline import headline, query_rows
    from memgauge.store.suite_runs import SuiteRunStore

    copy = db.with_name("copy.db")
    shutil.copy(db, copy)
    out: dict[str, tuple[int, int]] = {}

    def timed(name: str, f: object, n: int = 5) -> None:
        xs = []
        for _ in range(n):
            t = time.perf_counter()
            f()  # type: ignore[operator]
            xs.append(time.perf_counter() - t)
        out[name] = (round(min(xs) * 1000), round(statistics.median(xs) * 1000))

    with SuiteRunStore(copy) as store:
        (row,) = store.list_runs()
        rid = row["run_id"]
        timed("read the summary", lambda: store.get_run(rid))
        run = store.get_run(rid)
        assert run is not None
        assert run.summary is not None
        s = run.summary
        timed("headline and query rows", lambda: (headline(s), query_rows(s)))
        timed("result.json model", lambda: retrieval_result(store.get_run(rid)))  # type: ignore[arg-type]
        timed("store it again", lambda: store.set_summary(rid, store.get_run(rid).summary), 3)  # type: ignore[union-attr]
    print(json.dumps(out))


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--n", type=int, default=5000)
    p.add_argument("--before-src", type=Path, required=True)
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--child", type=Path)
    a = p.parse_args()
    if a.child:
        child(a.child)
        return
    after = Path(__file__).resolve().parents[1] / "src"
    root = Path(tempfile.mkdtemp(prefix="bench-facts-"))
    dbs = {
        name: build(root / name, a.n, 1, src)
        for name, src in (("before", a.before_src), ("after", after))
    }
    for _ in range(a.rounds):
        for name, src in (("before", a.before_src), ("after", after)):
            env = {**os.environ, "PYTHONPATH": str(src)}
            cmd = [sys.executable, __file__, "--before-src", str(a.before_src)]
            got = subprocess.run(
                [*cmd, "--child", str(dbs[name])], env=env, check=True, capture_output=True
            )
            print(name, got.stdout.decode().strip(), flush=True)
    shutil.rmtree(root)


if __name__ == "__main__":
    main()
