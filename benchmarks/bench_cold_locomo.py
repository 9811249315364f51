"""A cold LoCoMo run, end to end, as a user types it: `memgauge import locomo` then
`memgauge evaluate DATASET -s lexical -s hybrid`, each in a fresh MEMGAUGE_HOME and
MEMGAUGE_EMBEDDINGS (no embedding cache, no built ONNX graph).

    python benchmarks/bench_cold_locomo.py [--locomo ../shared/datasets/locomo10.json]
        [--reps 3] [--src NAME=PATH ...] [--hybrid NAME=SPEC ...] [--threads]

`--src NAME=PATH` runs the commands with PATH (a checkout's `src`) first on PYTHONPATH, so two
versions are measured in one session, interleaved (default: this checkout's `src` only). Each
rep reports wall time and CPU time (user + system of the two processes, from the children's
rusage: work on both cores counts twice) and the load average before it; then min and median.
`--hybrid NAME=SPEC` evaluates `-s SPEC` in place of `-s hybrid` (e.g.
`int8=hybrid:embedder=minilm:int8`), each spec given interleaved with the others.

Every run's summary.md is kept and compared: its tables but latency (the run id and every
latency line dropped) must be the same for every version and rep, and the script says whether
they are.

`--threads`: where evaluate's CPU went, by thread: the process's threads are read from
/proc/PID/task every 0.2 s (CPU-s of each, native ones included) and named after the Python
thread that ran on them (`memgauge-onnx` for the embedding's workers, `subject-hybrid` for the
hybrid lane, ...); threads Python did not start (OpenBLAS's, the tokenizer's) are `native`.
A thread that ends between two reads loses up to 0.2 s: the table gives the total seen beside
the rusage total.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: evaluate, naming each Python thread's native id in a file at exit (for `--threads`)
_NAMED_MAIN = """
import atexit, json, os, sys, threading
names = {threading.get_native_id(): "main"}
_run = threading.Thread.run
def _named(self):
    names[threading.get_native_id()] = self.name
    _run(self)
threading.Thread.run = _named
atexit.register(lambda: json.dump(names, open(os.environ["BENCH_THREAD_NAMES"], "w")))
from memgauge.cli.main import main
sys.exit(main(sys.argv[1:]))
"""


def loadavg() -> str:
    """The 1-minute load average."""
    return Path("/proc/loadavg").read_text().split()[0]


def _thread_cpu(pid: int, seen: dict[str, float]) -> None:
    """Each live thread's CPU-s so far, by native id, into `seen`."""
    tick = os.sysconf("SC_CLK_TCK")
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except FileNotFoundError:
        return
    for tid in tids:
        try:
            stat = Path(f"/proc/{pid}/task/{tid}/stat").read_text()
        except (FileNotFoundError, ProcessLookupError):
            continue
        fields = stat[stat.rindex(")") + 2 :].split()
        seen[tid] = (int(fields[11]) + int(fields[12])) / tick


def _by_name(seen: dict[str, float], names_file: Path) -> dict[str, float]:
    names = {str(k): v for k, v in json.loads(names_file.read_text()).items()}
    out: collections.Counter[str] = collections.Counter()
    for tid, cpu in seen.items():
        # pool threads are numbered (memgauge-onnx_0, subject-hybrid_0): one row per pool
        out[re.sub(r"[_-]?\d+$", "", names.get(tid, "native"))] += cpu
    return dict(out)


def cold_run(
    src: str, locomo: str, *, hybrid: str = "hybrid", threads: bool = False
) -> tuple[float, float, str, dict[str, float]]:
    """Wall and CPU seconds of import + evaluate with empty caches, the summary.md written,
    and (with `threads`) evaluate's CPU-s by thread name."""
    with tempfile.TemporaryDirectory() as tmp:
        t = Path(tmp)
        env = {
            **os.environ,
            "PYTHONPATH": src,
            "MEMGAUGE_HOME": str(t / "home"),
            "MEMGAUGE_EMBEDDINGS": str(t / "embeddings"),
            "BENCH_THREAD_NAMES": str(t / "threads.json"),
        }
        cli = [sys.executable, "-m", "memgauge"]
        evaluate = [sys.executable, "-c", _NAMED_MAIN] if threads else cli
        quiet = ["--out", str(t / "ev"), "--no-store", "--quiet"]
        commands = [
            [*cli, "import", "locomo", locomo, "--out", str(t / "loc")],
            [*evaluate, "evaluate", str(t / "loc"), "-s", "lexical", "-s", hybrid, *quiet],
        ]
        seen: dict[str, float] = {}
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        for cmd in commands:
            proc = subprocess.Popen(cmd, env=env, cwd=tmp, stdout=subprocess.DEVNULL)
            while proc.poll() is None:
                if threads and cmd is commands[-1]:
                    _thread_cpu(proc.pid, seen)
                time.sleep(0.2)
            if proc.returncode != 0:
                raise subprocess.CalledProcessError(proc.returncode, cmd)
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        summary = (t / "ev" / "summary.md").read_text()
        by_thread = _by_name(seen, t / "threads.json") if threads else {}
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, summary, by_thread


def without_latency(summary: str) -> str:
    """summary.md without what differs from run to run: the run id and time, and latency."""
    kept: list[str] = []
    skipping = False
    for line in summary.splitlines():
        if line.startswith(("## ", "**")):  # a section, or a chart's title
            skipping = "latency" in line.lower() and "accuracy" not in line
        if skipping or line.startswith("run `") or "latency" in line:
            continue
        kept.append(line)
    return "\n".join(kept)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--locomo", default=str(ROOT.parent / "shared" / "datasets" / "locomo10.json"))
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--src", action="append", default=[], help="NAME=PATH, repeatable")
    ap.add_argument("--hybrid", action="append", default=[], help="NAME=SPEC, repeatable")
    ap.add_argument("--threads", action="store_true", help="evaluate's CPU by thread")
    args = ap.parse_args()
    paths = dict(s.split("=", 1) for s in args.src) or {"this": str(ROOT / "src")}
    specs = dict(s.split("=", 1) for s in args.hybrid) or {"hybrid": "hybrid"}
    # every version with every hybrid spec, named "version" or "version spec-name"
    sources = {
        (f"{v} {h}" if len(specs) > 1 else v): (path, spec)
        for v, path in paths.items()
        for h, spec in specs.items()
    }
    walls: dict[str, list[float]] = {n: [] for n in sources}
    cpus: dict[str, list[float]] = {n: [] for n in sources}
    tables: dict[str, set[str]] = {n: set() for n in sources}
    for rep in range(args.reps):
        for name, (src, spec) in sources.items():  # interleaved: the load falls on each alike
            load = loadavg()
            wall, cpu, summary, by_thread = cold_run(
                src, args.locomo, hybrid=spec, threads=args.threads
            )
            walls[name].append(wall)
            cpus[name].append(cpu)
            tables[name].add(without_latency(summary))
            print(
                f"rep {rep + 1} {name}: wall {wall:.1f} s, CPU {cpu:.1f} s "
                f"(load {load} before, {loadavg()} after)",
                flush=True,
            )
            if by_thread:
                total = sum(by_thread.values())
                rows = sorted(by_thread.items(), key=lambda kv: -kv[1])
                print("  evaluate's CPU-s by thread: " + ", ".join(f"{k} {v:.2f}" for k, v in rows))
                print(f"  (seen {total:.1f} of the two commands' {cpu:.1f})", flush=True)
    print("| version | wall min (s) | wall median (s) | CPU min (s) | CPU median (s) |")
    print("|---|---:|---:|---:|---:|")
    for name in sources:
        w, c = walls[name], cpus[name]
        print(
            f"| {name} | {min(w):.1f} | {statistics.median(w):.1f} | {min(c):.1f} "
            f"| {statistics.median(c):.1f} |"
        )
    for spec in specs.values():  # a spec's tables are the same whatever the version
        distinct = set().union(*(tables[n] for n, (_, s) in sources.items() if s == spec))
        print(
            f"summary.md without latency, -s {spec}: "
            + ("identical in every run" if len(distinct) == 1 else f"{len(distinct)} different")
        )


if __name__ == "__main__":
    main()
