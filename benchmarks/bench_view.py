"""How fast `memgauge view` serves a 10,000-item run: the run page, the first items page, and
a filtered and searched items page, each measured through the real application (Starlette's
test client: routing, the read-only store, SQL, templates; no network), median of repeats.

The run is written through the store's own API: 10,000 items of one subject and task, two
evaluators each (one deciding pass/fail), outputs long enough to be stored deflated (so the
search reads them through the decoding SQL function), one item in ten failing, and a summary
computed from the items as the engine computes an interim one. Run:

    python benchmarks/bench_view.py [--items 10000] [--repeat 7]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from starlette.testclient import TestClient

from memgauge.api import interim_summary
from memgauge.data.records import ItemRecord, RunPlan, RunRecord, ScoreRecord
from memgauge.store.suite_runs import SuiteRunStore
from memgauge.view.app import create_app


def build(db: Path, n: int) -> str:
    """A completed run of `n` items in the store at `db`; its id."""
    run_id = "20260101-000000-bench"
    suite = {
        "name": "bench-view",
        "subjects": {"memory": {"reference": {"mode": "lexical"}}},
        "tasks": [
            {
                "name": "recall",
                "kind": "expected-output",
                "dataset": "items.jsonl",
                "evaluators": ["icontains", "token_f1"],
            }
        ],
    }
    run = RunRecord(
        run_id=run_id,
        suite_name="bench-view",
        created_at="2026-01-01T00:00:00+00:00",
        suite_sha256="0" * 64,
        suite=suite,
        provenance={"memgauge_version": "bench"},
    )
    items = [
        ItemRecord(
            subject="memory",
            task="recall",
            item_id=f"q{i:05d}",
            seq=i,
            category=("recall", "temporal", "conflict")[i % 3],
            input={"text": f"What did the user say about project {i} and its deadline?"},
            expected=f"answer {i}",
        )
        for i in range(n)
    ]
    with SuiteRunStore(db) as store:
        store.create_run(
            run,
            RunPlan(
                suite["subjects"],
                [
                    {
                        "task": "recall",
                        "kind": "expected-output",
                        "spec": suite["tasks"][0],
                        "n_items": n,
                    }
                ],
                items,
            ),
        )
        store.claim_run(run_id, {"token": "t", "pid": 1, "host": "h"}, expect=None)
        done = []
        for it in items:
            i = it.seq
            ok = i % 10 != 0
            output = (f"answer {i} " if ok else "I do not know. ") + "context " * 80
            done.append(
                it.model_copy(
                    update={
                        "status": "completed",
                        "attempts": 1,
                        "output": output,
                        "latency_ms": {"total": 12.5},
                        "duration_ms": 12.5 + i % 7,
                        "score": 1.0 if ok else 0.0,
                        "scores": [
                            ScoreRecord(
                                evaluator="icontains",
                                value=1.0 if ok else 0.0,
                                passed=ok,
                                reason=f"output {'does' if ok else 'does not'} contain 'answer {i}'",
                            ),
                            ScoreRecord(
                                evaluator="token_f1",
                                value=0.5 if ok else 0.0,
                                reason="token F1 = 0.5",
                            ),
                        ],
                    }
                )
            )
        for start in range(0, n, 1000):
            store.record_items(run_id, done[start : start + 1000])
        stored = store.get_run(run_id)
        assert stored is not None
        store.set_summary(run_id, interim_summary(stored, done, {}))
        store.set_status(run_id, "completed", owner="t")
    return run_id


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--items", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "r.db"
        t0 = time.perf_counter()
        run_id = build(db, args.items)
        print(f"built {args.items} items in {time.perf_counter() - t0:.1f} s")
        pages = {
            "run page": f"/runs/{run_id}",
            "items, first page": f"/runs/{run_id}/items",
            "items, failures + search": f"/runs/{run_id}/items?show=failures&q=not+contain&sort=score",
            "items, page 150": f"/runs/{run_id}/items?page=150",
        }
        with TestClient(create_app(db)) as client:
            print(f"| page ({args.items:,} items) | median ms | max ms | bytes |")
            print("|---|---:|---:|---:|")
            for name, url in pages.items():
                client.get(url)  # warm: imports, template compilation
                times = []
                size = 0
                for _ in range(args.repeat):
                    t = time.perf_counter()
                    r = client.get(url)
                    times.append((time.perf_counter() - t) * 1000)
                    assert r.status_code == 200, r.text[:500]
                    size = len(r.content)
                print(f"| {name} | {statistics.median(times):.0f} | {max(times):.0f} | {size:,} |")


if __name__ == "__main__":
    main()
