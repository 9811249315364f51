"""A suite run's own overhead: 10,000 items through an instant Python-import subject, three
deterministic evaluators each, every item recorded in a SQLite store (memgauge) against the
same work in pydantic_evals (no store: it keeps its report in memory).

python benchmarks/bench_run.py [--items 10000]

What is timed for memgauge is `run_suite` end to end: planning, creating the run with all its
items, scheduling, asking the subject, scoring, recording each item, and the summary with
bootstrap CIs. The subject answers instantly, so what is left is the run's overhead.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import yaml

from memgauge.runs.engine import run_suite
from memgauge.runs.suite import load_suite
from memgauge.store.suite_runs import SuiteRunStore

SUBJECT = '''
class Echo:
    """Answers instantly with the question."""

    def answer(self, question):
        return question
'''


def _write_suite(root: Path, n: int, concurrency: int) -> Path:
    (root / "bench_subject.py").write_text(SUBJECT)
    items = [
        {"id": f"i{i:05d}", "input": f"what is item {i}", "expected": f"item {i}"} for i in range(n)
    ]
    (root / "items.jsonl").write_text("".join(json.dumps(it) + "\n" for it in items))
    suite = {
        "name": "overhead",
        "concurrency": concurrency,
        "subjects": {"echo": {"python": {"target": "bench_subject:Echo"}}},
        "tasks": [
            {
                "name": "t",
                "kind": "expected-output",
                "dataset": "items.jsonl",
                "evaluators": ["exact", "contains", {"token_f1": {"variant": "mem0"}}],
            }
        ],
    }
    path = root / "suite.yaml"
    path.write_text(yaml.safe_dump(suite))
    return path


def bench_memgauge(n: int, concurrency: int) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        path = _write_suite(root, n, concurrency)
        sys.path.insert(0, str(root))
        try:
            suite = load_suite(path)
            with SuiteRunStore(root / "results.db") as store:
                t = time.perf_counter()
                report = run_suite(suite, store, suite_path=path)
                elapsed = time.perf_counter() - t
        finally:
            sys.path.remove(str(root))
            sys.modules.pop("bench_subject", None)
    assert report.summary.n_completed == n, report.summary
    return elapsed


def bench_pydantic_evals(n: int, concurrency: int) -> float | None:
    try:
        from pydantic_evals import Case, Dataset
        from pydantic_evals.evaluators import Contains, EqualsExpected, Evaluator, EvaluatorContext
    except ImportError:
        return None

    from memgauge.scorers import mem0_f1

    @dataclass
    class TokenF1(Evaluator):  # type: ignore[type-arg]
        def evaluate(self, ctx: EvaluatorContext) -> float:  # type: ignore[type-arg]
            return float(mem0_f1(str(ctx.output), str(ctx.expected_output)))

    cases = [
        Case(name=f"i{i:05d}", inputs=f"what is item {i}", expected_output=f"item {i}")
        for i in range(n)
    ]
    dataset = Dataset(
        name="overhead",
        cases=cases,
        evaluators=[EqualsExpected(), Contains(value="item"), TokenF1()],
    )

    def echo(question: str) -> str:
        return question

    t = time.perf_counter()
    report = dataset.evaluate_sync(echo, max_concurrency=concurrency, progress=False)
    elapsed = time.perf_counter() - t
    assert len(report.cases) == n
    return elapsed


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--items", type=int, default=10_000)
    args = ap.parse_args()
    n = args.items
    print(f"{n:,} items, an instant subject, 3 deterministic evaluators per item")
    print("| implementation | concurrency | seconds | ms per item |")
    print("|---|---:|---:|---:|")
    for concurrency in (1, 4):
        t = bench_memgauge(n, concurrency)
        print(
            f"| memgauge run (SQLite store, each item recorded) | {concurrency} | {t:.2f} | {t / n * 1000:.3f} |"
        )
    for concurrency in (1, 4):
        peer = bench_pydantic_evals(n, concurrency)
        if peer is None:
            print("| pydantic_evals | - | not installed (pip install pydantic-evals) | |")
            break
        print(
            f"| pydantic_evals Dataset.evaluate_sync (in memory) | {concurrency} | {peer:.2f} | {peer / n * 1000:.3f} |"
        )


if __name__ == "__main__":
    main()
