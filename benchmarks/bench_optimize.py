"""`memgauge optimize` on real data: the reference memory's hybrid parameters tuned on LoCoMo
(split by conversation), each strategy's best against iterations, the held-out comparison, the
optimizer's own overhead per iteration beside the run time; and the demo dataset's greedy study.

    python benchmarks/bench_optimize.py [--locomo ../shared/datasets/locomo10.json]
        [--iterations 10] [--strategies greedy,best-of-n,annealing,tpe] [--demo-only]

LoCoMo is read from ../shared and imported into a temporary directory, never into the
repository. Dense search uses the offline MiniLM; its vectors are cached under
MEMGAUGE_HOME/embeddings (the first run embeds 5,882 turns and 1,986 questions once).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

from memgauge import api
from memgauge.data.importers import import_locomo

ROOT = Path(__file__).resolve().parents[1]

SPACE = [
    "k_rrf=int:5..120",
    "candidates=int:10..100",
    "lexical_weight=float:0.25..4:log",
    "dense_weight=float:0.25..4:log",
]


def _suite(where: Path, dataset: Path, name: str) -> Path:
    suite = {
        "name": name,
        "subjects": {"hybrid": {"reference": {"mode": "hybrid"}}},
        "concurrency": 4,
        "tasks": [
            {
                "name": "recall",
                "kind": "retrieval",
                "dataset": str(dataset),
                "k": 10,
                "evaluators": [{"retrieval": "Recall@10"}],
                "aggregates": [],
            }
        ],
    }
    path = where / f"{name}.yaml"
    path.write_text(yaml.safe_dump(suite, sort_keys=False))
    return path


def _study(path: Path, store: Path, strategy: str, iterations: int) -> tuple[dict[str, Any], float]:
    t0 = time.perf_counter()
    data = api.optimize(
        path,
        store=store,
        space=SPACE,
        strategy=strategy,
        max_iterations=iterations,
        holdout=0.3,
        seed=0,
    )
    return data, time.perf_counter() - t0


def _curve(data: dict[str, Any]) -> str:
    """The best tuning score after each iteration."""
    best, out = None, []
    for it in data["iterations"]:
        if it["score"] is not None and (best is None or it["score"] > best):
            best = it["score"]
        if it["candidate"] == 0 or it["step"] == 0:
            out.append(f"{best:.3f}")
    return " ".join(out)


def _report(label: str, data: dict[str, Any], seconds: float) -> None:
    base, best, hold = data["baseline"], data["best"], data["holdout"]
    runs = [it["seconds"] for it in data["iterations"] if it.get("seconds")]
    print(f"\n{label}: {data['strategy']}, {len(runs)} candidate runs, {seconds:.1f} s in all")
    print(f"  split: {data['split']}")
    print(
        f"  tuning: baseline {base['score']:.4f} -> best {best['score']:.4f} (step {best['step']})"
    )
    print(f"  best params: {best['params']}")
    if hold:
        print(
            f"  holdout ({hold['n']} questions): baseline {hold['baseline']:.4f}, best "
            f"{hold['best']:.4f}, paired delta {hold['delta']:+.4f} "
            f"[{hold['ci_low']:+.4f}, {hold['ci_high']:+.4f}]"
        )
    per_run = sum(runs) / len(runs) if runs else 0.0
    overhead = (seconds - sum(runs)) / max(1, len({it["step"] for it in data["iterations"]}))
    print(
        f"  run time per candidate {per_run:.2f} s; optimizer overhead per iteration {overhead:.3f} s"
    )
    print(f"  best R@10 after each iteration: {_curve(data)}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--locomo", default=str(ROOT.parent / "shared" / "datasets" / "locomo10.json"))
    ap.add_argument("--iterations", type=int, default=10)
    ap.add_argument("--strategies", default="greedy,best-of-n,annealing,tpe")
    ap.add_argument("--demo-only", action="store_true")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        where = Path(tmp)
        demo = where / "demo"
        api.save_dataset(api.demo_dataset(), demo)
        path = _suite(where, demo, "demo-tune")
        _study(path, where / "warm.db", "greedy", 1)  # embeddings cached, as the issue asks
        data, seconds = _study(path, where / "demo.db", "greedy", 10)
        _report("demo dataset, greedy x 10, holdout 0.3, embeddings cached", data, seconds)
        if args.demo_only:
            return
        ds, _ = import_locomo(args.locomo)
        locomo = where / "locomo"
        api.save_dataset(ds, locomo)
        path = _suite(where, locomo, "locomo-tune")
        for strategy in args.strategies.split(","):
            data, seconds = _study(path, where / "locomo.db", strategy, args.iterations)
            _report(f"LoCoMo by conversation, {strategy}", data, seconds)


if __name__ == "__main__":
    main()
