"""CPU-seconds of the parts of `evaluate -s lexical`'s summary that evalcpu12 cut, in process,
before against after, interleaved: token counting (`metrics.tokens.token_counts`), a subject's
cost rows (`aggregates.cost_values.costs_of`) and the hits' channels the ir aggregate reads (each
query's row and the agent metrics' top k), and the two aggregates whole (after only).

    python benchmarks/bench_summary_cuts.py --before /tmp/before --dataset DIR [--runs 15]

DIR: a retrieval dataset (`memgauge import locomo ... --out DIR`). It is evaluated once in this
process (this checkout's code, a temporary home) to get the run's records; the before
checkout's modules are loaded from its files under other names, the rest of memgauge shared.
Each part: one warm-up, then `--runs` pairs, before and after alternating; the same result
checked equal each time. Reported: min and median of `time.process_time` per part.
"""

from __future__ import annotations

import argparse
import gc
import importlib.util
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def _load(path: Path, name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _records(dataset: Path) -> dict[str, Any]:
    """summarize_run's inputs of one `evaluate DATASET -s lexical`, run in this process."""
    from memgauge.cli.main import main
    from memgauge.runs import engine

    captured: dict[str, Any] = {}
    summarize = engine.summarize_run

    def spy(items: Any, plan: Any, suite: Any, **kw: Any) -> Any:
        captured.update(items=items, plan=plan, suite=suite)
        return summarize(items, plan, suite, **kw)

    engine.summarize_run = spy
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["MEMGAUGE_HOME"] = tmp
        out = Path(tmp) / "out"
        with open(os.devnull, "w") as devnull:
            stdout, sys.stdout = sys.stdout, devnull
            try:
                main(["evaluate", str(dataset), "-s", "lexical", "--out", str(out), "--quiet"])
            except SystemExit:
                pass
            finally:
                sys.stdout = stdout
    engine.summarize_run = summarize
    return captured


def _pair(
    label: str,
    before: Callable[[], Any],
    after: Callable[[], Any],
    runs: int,
    same: Callable[[Any, Any], bool] | None = None,
) -> None:
    """Time `before` and `after` interleaved, `runs` times each, once their results are the
    same (`_same` unless `same` is given)."""
    assert (same or _same)(before(), after()), label  # and a warm-up of each
    times: dict[str, list[float]] = {"before": [], "after": []}
    for _ in range(runs):
        for name, f in (("before", before), ("after", after)):
            gc.collect()
            t = time.process_time()
            f()
            times[name].append(time.process_time() - t)
    for name, ts in times.items():
        print(f"{label:28s} {name:6s} min {min(ts):.4f}  median {statistics.median(ts):.4f}")


def _same(a: Any, b: Any) -> bool:
    import numpy as np

    if isinstance(a, np.ndarray):
        return bool(np.array_equal(a, b) and a.dtype == b.dtype)
    if hasattr(a, "queries"):  # SubjectCosts
        return a.n_failed == b.n_failed and [vars(q) for q in a.queries] == [
            vars(q) for q in b.queries
        ]
    return bool(a == b)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--before", type=Path, required=True)
    ap.add_argument("--dataset", type=Path, required=True)
    ap.add_argument("--runs", type=int, default=15)
    args = ap.parse_args()
    sys.path.insert(0, str(ROOT / "src"))
    from memgauge.aggregates import cost_values
    from memgauge.aggregates.hits import Found, hit_channels, hits_of
    from memgauge.metrics import tokens
    from memgauge.runs.summary import subjects_of

    old = args.before / "src" / "memgauge"
    old_tokens = _load(old / "metrics" / "tokens.py", "_before_tokens")
    old_costs = _load(old / "aggregates" / "cost_values.py", "_before_cost_values")
    old_costs.token_counts = old_tokens.token_counts  # type: ignore[attr-defined]

    got = _records(args.dataset)
    task, suite = got["plan"][0], got["suite"]
    subjects = subjects_of(task, suite)
    view = task.view(subjects, suite.seed)
    records = [it for it in got["items"] if it.repeat == 0 and it.subject == subjects[0]]
    records.sort(key=lambda r: r.seq)
    dataset = view.dataset
    known = {m.id: m.text for m in dataset.memories}
    qrels = dataset.qrels()
    texts = [t for r in records for _i, t in cost_values._texts(r, known) or ()]
    print(f"{len(records)} records, {len(texts)} hits, {len(set(texts))} distinct texts")

    _pair(
        "token_counts",
        lambda: old_tokens.token_counts(texts, "o200k_base"),
        lambda: tokens.token_counts(texts, "o200k_base"),
        args.runs,
    )
    kw: dict[str, Any] = {
        "encoding": "o200k_base",
        "known": known,
        "qrels": qrels,
        "rel_threshold": 2,
        "accuracy": view.evaluators[0][0] if view.evaluators else None,
        "stage": "total",
    }
    _pair(
        "costs_of",
        lambda: old_costs.costs_of(records, **kw),
        lambda: cost_values.costs_of(records, **kw),
        args.runs,
    )
    hits = [hits_of(r.output) or [] for r in records]

    def channels_before() -> list[Any]:
        found = [Found(h, {}) for h in hits]
        rows = [[hit_channels(h) for h in f.hits] for f in found]
        top = [[hit_channels(h) for h in f.hits[:5]] for f in found]
        return [rows, top]

    def channels_after() -> list[Any]:
        found = [Found(h, {}) for h in hits]
        rows = [f.channels for f in found]
        top = [f.channels[:5] for f in found]
        return [rows, top]

    _pair("ir: hits' channels (rows, top 5)", channels_before, channels_after, args.runs)
    by: dict[str, list[Any]] = {subjects[0]: records}
    # the evaluators' rows as summarize_run asks them: with the aggregates' measures (evalcpu23)
    from memgauge.aggregates import mean

    old_mean = _load(old / "aggregates" / "mean.py", "_before_mean")
    labels = {task.spec.name: [label for label, _e, _w in task.evaluators]}
    measured = {
        (m.subject, m.task, m.name): m
        for a in task.aggregates
        for m in a.compute(view, by).measures
    }
    _pair(
        "summarize_items",
        lambda: old_mean.summarize_items(records, labels, seed=suite.seed, measured=measured),
        lambda: mean.summarize_items(records, labels, seed=suite.seed, measured=measured),
        args.runs,
    )
    for agg in task.aggregates:
        if agg.name in ("ir", "cost"):
            ts = []
            for _ in range(args.runs):
                gc.collect()
                t = time.process_time()
                agg.compute(view, by)
                ts.append(time.process_time() - t)
            print(
                f"{agg.name + ' aggregate (after)':28s}        min {min(ts):.4f}  "
                f"median {statistics.median(ts):.4f}"
            )


if __name__ == "__main__":
    main()
