"""The five registry lookups of a lexical evaluate, each checkout in fresh processes.

    python benchmarks/bench_registry_lookup.py --before OLD --after . [--runs 9]

`evaluate -s lexical` asks the subject registry for `reference`, the kinds for `retrieval`, the
evaluators for `retrieval` and the aggregates for `ir` and `cost`. Each run is a new interpreter
with the checkout's `src` first on its path: the registries' modules and the components'
modules are imported first (not timed), then the five lookups are timed (`time.process_time`),
so what is measured is reading the installed entry points and loading the five names. The two
checkouts alternate.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

SNIPPET = """
import time
from memgauge.subjects.registry import SUBJECTS
from memgauge.runs.kinds.base import KINDS
from memgauge.scorers.base import EVALUATORS
from memgauge.aggregates import AGGREGATES
import memgauge.subjects.reference, memgauge.runs.kinds.retrieval
import memgauge.scorers.retrieval, memgauge.aggregates.ir, memgauge.aggregates.cost
start = time.process_time()
for registry, name in ((SUBJECTS, "reference"), (KINDS, "retrieval"),
                       (EVALUATORS, "retrieval"), (AGGREGATES, "ir"), (AGGREGATES, "cost")):
    registry.get(name)
print(time.process_time() - start)
"""


def _once(tree: Path, snippet: str, *argv: str) -> float:
    """What `snippet` prints (its own timing), run by a new interpreter on `tree`'s `src`."""
    env = {**os.environ, "PYTHONPATH": str(tree.resolve() / "src")}
    out = subprocess.run(
        [sys.executable, "-c", snippet, *argv], env=env, capture_output=True, text=True, check=True
    )
    return float(out.stdout)


def interleaved(before: Path, after: Path, runs: int, snippet: str, *argv: str) -> None:
    """`snippet` in fresh processes, the two checkouts alternating; min / median printed."""
    times: dict[str, list[float]] = {"before": [], "after": []}
    for _ in range(runs):
        times["before"].append(_once(before, snippet, *argv))
        times["after"].append(_once(after, snippet, *argv))
    for name, spent in times.items():
        spent.sort()
        print(f"{name}: {spent[0]:.4f} / {spent[len(spent) // 2]:.4f} CPU-s (min / median)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--before", type=Path, required=True)
    parser.add_argument("--after", type=Path, required=True)
    parser.add_argument("--runs", type=int, default=9)
    args = parser.parse_args()
    interleaved(args.before, args.after, args.runs, SNIPPET)


if __name__ == "__main__":
    main()
