"""Two checkouts of memgauge, side by side on the same machine in the same run: `memgauge
evaluate` on LoCoMo end to end, and the suite run's own overhead (`bench_run.py`'s memgauge
rows), alternating before/after so that load drifts hit both alike.

    git worktree add /tmp/before <commit>
    python benchmarks/bench_versions.py --before /tmp/before --after . [--runs 3]

Each `evaluate` run gets a fresh MEMGAUGE_HOME (so no run reads another's store) that shares
one embeddings cache, warmed first; the LoCoMo file is imported once with the after checkout.
Reported: min and median wall seconds of `--runs` runs each, the ratio after/before, and the
load average before and after.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MEASURES = ("Recall@5", "Recall@10", "Recall@25")


def _env(root: Path, home: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(root / "src")
    env["MEMGAUGE_HOME"] = str(home)
    return env


def _evaluate(root: Path, dataset: Path, cache: Path) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        (home / "embeddings").symlink_to(cache)
        cmd = [sys.executable, "-m", "memgauge.cli.main", "evaluate", str(dataset)]
        for s in ("lexical", "dense", "hybrid"):
            cmd += ["-s", s]
        for m in MEASURES:
            cmd += ["-m", m]
        cmd += ["--k", "25", "--out", str(home / "out"), "--quiet"]
        t = time.perf_counter()
        subprocess.run(cmd, env=_env(root, home), check=True, capture_output=True)
        return time.perf_counter() - t


_ROW = re.compile(r"\| memgauge run [^|]*\| (\d+) \| ([\d.]+) \| ([\d.]+) \|")


def _run_overhead(root: Path, items: int) -> dict[int, float]:
    """ms per item by concurrency, from that checkout's own bench_run.py."""
    with tempfile.TemporaryDirectory() as tmp:
        out = subprocess.run(
            [sys.executable, str(root / "benchmarks" / "bench_run.py"), "--items", str(items)],
            env=_env(root, Path(tmp)),
            check=True,
            capture_output=True,
            text=True,
        ).stdout
    return {int(c): float(ms) for c, _s, ms in _ROW.findall(out)}


def _stats(values: list[float]) -> str:
    return f"{min(values):.2f} / {statistics.median(values):.2f}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", type=Path, required=True, help="checkout root before")
    ap.add_argument("--after", type=Path, default=ROOT, help="checkout root after")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--locomo", type=Path, default=ROOT.parent / "shared/datasets/locomo10.json")
    ap.add_argument("--items", type=int, default=10_000, help="bench_run.py items")
    ap.add_argument("--skip-run", action="store_true", help="only the evaluate comparison")
    ap.add_argument(
        "--embeddings",
        type=Path,
        default=Path(os.environ["MEMGAUGE_HOME"]) / "embeddings"
        if "MEMGAUGE_HOME" in os.environ
        else None,
        help="an embeddings cache to share (default: MEMGAUGE_HOME/embeddings)",
    )
    args = ap.parse_args()
    before, after = args.before.resolve(), args.after.resolve()
    print(f"load average at start: {os.getloadavg()[0]:.2f}")
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        dataset = work / "locomo"
        # the caller's cache of LoCoMo's vectors, if it has one (else the warm-up embeds them)
        cache = args.embeddings or work / "embeddings"
        cache.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [
                *(sys.executable, "-m", "memgauge.cli.main", "import", "locomo"),
                *(str(args.locomo), "--out", str(dataset)),
            ],
            env=_env(after, work),
            check=True,
            capture_output=True,
        )
        print("warming the embeddings cache ...", flush=True)
        _evaluate(after, dataset, cache)
        times: dict[str, list[float]] = {"before": [], "after": []}
        for _ in range(args.runs):
            for label, root in (("before", before), ("after", after)):
                times[label].append(_evaluate(root, dataset, cache))
        print(
            "\n`memgauge evaluate` on LoCoMo (lexical, dense, hybrid; 1,536 judged questions; "
            "every query recorded in SQLite), wall seconds"
        )
        print("| checkout | min / median | runs |")
        print("|---|---:|---:|")
        for label in ("before", "after"):
            print(f"| {label} | {_stats(times[label])} | {len(times[label])} |")
        ratio = min(times["after"]) / min(times["before"])
        print(f"after / before (min): {ratio:.2f}")
        if not args.skip_run:
            per: dict[str, dict[int, list[float]]] = {"before": {}, "after": {}}
            for _ in range(args.runs):
                for label, root in (("before", before), ("after", after)):
                    for c, ms in _run_overhead(root, args.items).items():
                        per[label].setdefault(c, []).append(ms)
            print(f"\nrun overhead, bench_run.py ({args.items:,} items), ms per item")
            print("| checkout | concurrency | min / median |")
            print("|---|---:|---:|")
            for label in ("before", "after"):
                for c, values in sorted(per[label].items()):
                    print(f"| {label} | {c} | {_stats(values)} |")
    print(f"\nload average at end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
