"""`_util/redact.py` on a LoCoMo evaluate's texts: before against after, in one process.

    python benchmarks/bench_redact.py --before OLD --after . [--runs 7]

A lexical evaluate of LoCoMo asks `redactor()` once per item (1,536) and redacts each item's
seven verdict reasons (`Recall@10 = 1.000`...: 10,752 texts, none with a secret or a cue word).
Each checkout's `redact.py` is loaded from its tree under its own name; the two are timed
interleaved (CPU, `time.process_time`), and their outputs compared.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

from bench_summary_cuts import _load

MEASURES = ("Recall@5", "Recall@10", "RR@5", "RR@10", "nDCG@5", "nDCG@10", "MAP@10")


def _workload(module: Any, items: int) -> list[str]:
    out = []
    for i in range(items):
        clean = module.redactor()
        out += [clean(f"{m} = {(i * 7 + j) % 5 / 4:.3f}") for j, m in enumerate(MEASURES)]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--before", type=Path, required=True)
    parser.add_argument("--after", type=Path, required=True)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--items", type=int, default=1536)
    args = parser.parse_args()
    tail = Path("src/memgauge/_util/redact.py")
    modules = {
        "before": _load(args.before / tail, "redact_before"),
        "after": _load(args.after / tail, "redact_after"),
    }
    outputs = {k: _workload(m, args.items) for k, m in modules.items()}
    assert outputs["before"] == outputs["after"], "the outputs differ"
    times: dict[str, list[float]] = {k: [] for k in modules}
    for _ in range(args.runs):
        for name, module in modules.items():
            start = time.process_time()
            _workload(module, args.items)
            times[name].append(time.process_time() - start)
    for name, spent in times.items():
        spent.sort()
        print(f"{name}: {spent[0]:.4f} / {spent[len(spent) // 2]:.4f} CPU-s (min / median)")


if __name__ == "__main__":
    main()
