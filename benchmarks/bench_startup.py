"""Start-up CPU of the command line: `memgauge --help` and `memgauge validate FILE`, beyond a bare
interpreter.

    python benchmarks/bench_startup.py [--runs 7]

Each command runs as a fresh process; its CPU time (user + system, from the children's rusage)
is the minimum over `--runs` runs, and `python -c pass` measured the same way is subtracted. CPU
rather than wall time: the machine is shared, and CPU time is what an import costs.
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GOOD = ROOT / "tests" / "data" / "good"

COMMANDS = [
    ["--help"],
    ["validate", str(GOOD / "qrels.txt")],
    ["validate", str(GOOD / "conversations.jsonl")],
    ["validate", str(GOOD / "suite.yaml")],
]


def cpu_seconds(cmd: list[str], runs: int) -> float:
    """The least CPU time (user + system) `cmd` took over `runs` runs."""
    best = float("inf")
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        spent = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        best = min(best, spent)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    bare = cpu_seconds([sys.executable, "-c", "pass"], args.runs)
    print(
        f"| command | CPU s | beyond `python -c pass` |\n|---|---:|---:|\n| `python -c pass` | {bare:.3f} | |"
    )
    for command in COMMANDS:
        spent = cpu_seconds([sys.executable, "-m", "memgauge", *command], args.runs)
        shown = " ".join(Path(c).name if "/" in c else c for c in command)
        print(f"| `memgauge {shown}` | {spent:.3f} | {spent - bare:.3f} |")


if __name__ == "__main__":
    main()
