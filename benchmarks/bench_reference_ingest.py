"""The reference memory's lane of `evaluate -s lexical` on LoCoMo, two source trees side by
side: per conversation a fresh in-memory lexical `ReferenceMemory` is filled with the
conversation's turns 512 at a time (what a run's `fill_memory` does), then each of its
questions is searched (k = 50, the hybrid's candidates; the lexical run asks 10).

    python benchmarks/bench_reference_ingest.py --before /tmp/oldS --after . \\
        --locomo ../shared/datasets/locomo10.json [--runs 5]

Each tree runs in a child process of its own (its `src` first on the path), the trees
interleaved round by round; a child reports its CPU (process_time) for the ingests and for the
searches, summed over the ten conversations. Figures: min / median over the rounds. The load
average is printed before and after.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

CHILD = """
import json, sys, time
from memgauge.data.importers import import_locomo
from memgauge.subjects.reference import ReferenceMemory
ds, _ = import_locomo(sys.argv[1])
ReferenceMemory.in_memory("lexical").search("warm up", 5)
ingest = search = 0.0
for corpus in dict.fromkeys(m.corpus for m in ds.memories):
    turns = [m for m in ds.memories if m.corpus == corpus]
    questions = [q.text for q in ds.queries if q.corpus == corpus]
    t0 = time.process_time()
    memory = ReferenceMemory.in_memory("lexical")
    memory.reset()
    for s in range(0, len(turns), 512):
        memory.ingest(turns[s : s + 512])
    t1 = time.process_time()
    for q in questions:
        memory.search(q, 50)
    t2 = time.process_time()
    ingest += t1 - t0
    search += t2 - t1
    memory.close()
print(json.dumps({"ingest": ingest, "search": search}))
"""


def _load() -> str:
    return Path("/proc/loadavg").read_text().strip() if Path("/proc/loadavg").exists() else "?"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", required=True)
    parser.add_argument("--after", required=True)
    parser.add_argument("--locomo", required=True)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    trees = {"before": args.before, "after": args.after}
    got: dict[str, list[dict[str, float]]] = {name: [] for name in trees}
    print(f"load before: {_load()}")
    for _ in range(args.runs):
        for name, tree in trees.items():
            env = dict(os.environ, PYTHONPATH=str(Path(tree).resolve() / "src"))
            out = subprocess.run(
                [sys.executable, "-c", CHILD, str(Path(args.locomo).resolve())],
                env=env,
                check=True,
                capture_output=True,
                text=True,
            ).stdout
            got[name].append(json.loads(out.strip().splitlines()[-1]))
    print(f"load after: {_load()}")
    print("| tree | ingest CPU s (min / median) | searches CPU s (min / median) |")
    print("|---|---|---|")
    for name, rounds in got.items():
        cells = [
            f"{min(v):.3f} / {statistics.median(v):.3f}"
            for v in ([r[part] for r in rounds] for part in ("ingest", "search"))
        ]
        print(f"| {name} | {' | '.join(cells)} |")


if __name__ == "__main__":
    main()
