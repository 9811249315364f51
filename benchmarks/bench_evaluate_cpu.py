"""CPU-seconds of `memgauge evaluate DATASET -s lexical` on LoCoMo, end to end (interpreter
start, imports, planning, ingest, searches, scoring, the store, the summary and the three report
files), for one or two checkouts side by side, runs interleaved so that load drifts hit both.

    git worktree add /tmp/before <commit>
    python benchmarks/bench_evaluate_cpu.py --before /tmp/before --after . [--runs 3]
        [--locomo ../shared/datasets/locomo10.json] [--store new|existing|both]

The LoCoMo file is imported once (with the after checkout) into a temporary directory; nothing
is written beside it. Each run is a fresh process; its CPU time is the user + system time of
that process and its children (`os.wait4`). `--store new`: every run starts a new store (its
schema created, as a first run does); `existing`: every run gets a copy of a store already at
the current schema, holding one earlier run, in a home holding what that run kept there (the
templates compiled, the token counts), as every later run does. Bytecode: each checkout's `src` is compiled
first and the runs may read it (PYTHONDONTWRITEBYTECODE is cleared for them), as an installed
package runs; `--no-compile` keeps the environment's setting. Reported: min and median of the
runs per checkout and store, and the 1-minute load average before each run.
"""

from __future__ import annotations

import argparse
import compileall
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
IMPORT = [sys.executable, "-m", "memgauge.cli.main", "import", "locomo"]


def _env(src: Path, home: Path, compiled: bool) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(src)
    env["MEMGAUGE_HOME"] = str(home)
    if compiled:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def _cpu_of(cmd: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(user + system CPU-seconds, wall seconds) of `cmd`, its children included."""
    t = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t
    proc.returncode = os.waitstatus_to_exitcode(status)
    err = proc.stderr.read().decode() if proc.stderr else ""
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} exited {proc.returncode}:\n{err}")
    return usage.ru_utime + usage.ru_stime, wall


def _evaluate(src: Path, dataset: Path, store: Path | None, compiled: bool) -> tuple[float, float]:
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home"
        home.mkdir()
        if store is not None:
            # a home a run has used: its store, and what it kept there (the templates
            # compiled, the token counts)
            shutil.copytree(store.parent, home, dirs_exist_ok=True)
        cmd = [sys.executable, "-m", "memgauge.cli.main", "evaluate", str(dataset)]
        cmd += ["-s", "lexical", "--out", str(Path(tmp) / "out"), "--quiet"]
        return _cpu_of(cmd, _env(src, home, compiled))


def _load() -> float:
    return os.getloadavg()[0]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--before", type=Path, default=None, help="a checkout to compare against")
    ap.add_argument("--after", type=Path, default=ROOT)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--locomo", default=str(ROOT.parent / "shared" / "datasets" / "locomo10.json"))
    ap.add_argument("--store", choices=("new", "existing", "both"), default="both")
    ap.add_argument("--no-compile", dest="compiled", action="store_false")
    args = ap.parse_args()
    if not Path(args.locomo).exists():
        raise SystemExit(f"{args.locomo}: no LoCoMo file there; give its path with --locomo")
    checkouts = {"after": args.after.resolve() / "src"}
    if args.before is not None:
        checkouts = {"before": args.before.resolve() / "src", **checkouts}
    stores = ("new", "existing") if args.store == "both" else (args.store,)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        dataset = work / "locomo"
        env = _env(checkouts["after"], work / "import-home", args.compiled)
        subprocess.run(
            [*IMPORT, args.locomo, "--out", str(dataset)],
            env=env,
            check=True,
            capture_output=True,
        )
        if args.compiled:
            for src in checkouts.values():
                compileall.compile_dir(src, quiet=1)
        made: dict[str, Path] = {}
        for name, src in checkouts.items():
            # a warm-up run each (file caches, bytecode), whose store (at this checkout's
            # schema, one run in it) is copied into each `existing` run
            home = work / f"store-{name}"
            home.mkdir()
            cmd = [sys.executable, "-m", "memgauge.cli.main", "evaluate", str(dataset)]
            cmd += ["-s", "lexical", "--out", str(work / f"out-{name}"), "--quiet"]
            _cpu_of(cmd, _env(src, home, args.compiled))
            made[name] = home / "results.db"
        cpu: dict[tuple[str, str], list[float]] = {}
        wall: dict[tuple[str, str], list[float]] = {}
        loads: dict[tuple[str, str], list[float]] = {}
        for _ in range(args.runs):
            for store in stores:
                for name, src in checkouts.items():
                    key = (name, store)
                    loads.setdefault(key, []).append(_load())
                    c, w = _evaluate(
                        src, dataset, made[name] if store == "existing" else None, args.compiled
                    )
                    cpu.setdefault(key, []).append(c)
                    wall.setdefault(key, []).append(w)
    print(f"bytecode compiled: {args.compiled}; runs: {args.runs}; CPU = user + system")
    print(
        "| checkout | store | CPU-s min | CPU-s median | wall s min | wall s median | load 1 min |"
    )
    print("|---|---|---:|---:|---:|---:|---|")
    for (name, store), values in cpu.items():
        print(
            f"| {name} | {store} | {min(values):.2f} | {statistics.median(values):.2f} | "
            f"{min(wall[(name, store)]):.2f} | {statistics.median(wall[(name, store)]):.2f} | "
            f"{', '.join(f'{x:.1f}' for x in loads[(name, store)])} |"
        )


if __name__ == "__main__":
    main()
