"""Loading a dataset directory as `evaluate` does, each checkout in fresh processes.

    python benchmarks/bench_dataset_load.py --before OLD --after . --dataset DIR [--runs 9]

`DIR`: a dataset directory (`memgauge import locomo ../shared/datasets/locomo10.json --out
DIR`). Each run is a new interpreter with the checkout's `src` first on its path and the
collector's first threshold the console script's (`GC_THRESHOLD`); the dataset's modules are
imported first (not timed), then `load_retrieval_dataset(DIR)` is timed (`time.process_time`,
its collections included). The two checkouts alternate.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from bench_registry_lookup import interleaved

SNIPPET = """
import gc, sys, time
from memgauge._util.gcquiet import GC_THRESHOLD
from memgauge.data.io import load_retrieval_dataset
gc.set_threshold(GC_THRESHOLD, *gc.get_threshold()[1:])
start = time.process_time()
load_retrieval_dataset(sys.argv[1])
print(time.process_time() - start)
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--before", type=Path, required=True)
    parser.add_argument("--after", type=Path, required=True)
    parser.add_argument("--dataset", type=Path, required=True)
    parser.add_argument("--runs", type=int, default=9)
    args = parser.parse_args()
    interleaved(args.before, args.after, args.runs, SNIPPET, str(args.dataset.resolve()))


if __name__ == "__main__":
    main()
