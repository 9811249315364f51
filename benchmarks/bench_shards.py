"""Sharded runs against a serial one, end to end through the command line (issue 17).

    python benchmarks/bench_shards.py locomo [--reps 3] [--per-memory 0.01]
    python benchmarks/bench_shards.py sweep [--corpora 500] [--turns 500] [--reps 1]

`locomo`: LoCoMo (`../shared/datasets/locomo10.json`, imported into a temporary directory) with
the issue's stand-in for a memory that calls an LLM on ingest: keyword search paying 10 ms per
ingested memory (`tests/data/subjects/shard_subjects.py:SlowIngestMemory`). `memgauge evaluate`
serially, with `--workers 2` (a process pool), and with `--executor dask:local --workers 2` (a
Dask LocalCluster the command starts and stops: its start-up is in the wall time).

`sweep`: a synthetic dataset shaped like LongMemEval_S (one question per corpus over its own
haystack of ~`turns` turns) on the reference memory (lexical: SQLite FTS5), serial against
`--workers 2`.

Each configuration runs as its own `memgauge` process; wall time is the process's, and peak
memory is the largest sum of the resident sets of that process and its children (sampled every
50 ms: worker processes and a Dask cluster included). Reported: min and median of `--reps`,
with the 1-minute load average before each run (the machine is shared).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import psutil

ROOT = Path(__file__).resolve().parents[1]
SUBJECTS = ROOT / "tests" / "data" / "subjects"
LOCOMO = ROOT.parent / "shared" / "datasets" / "locomo10.json"


def _env() -> dict[str, str]:
    path = os.pathsep.join([str(SUBJECTS), str(ROOT / "src"), os.environ.get("PYTHONPATH", "")])
    return {**os.environ, "PYTHONPATH": path}


def _measure(args: list[str], env: dict[str, str]) -> dict[str, float]:
    """Run `memgauge ARGS`: wall seconds and peak resident MiB of it and its children."""
    load = os.getloadavg()[0]
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "memgauge.cli.main", *args],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    root = psutil.Process(proc.pid)
    peak = 0
    while proc.poll() is None:
        total = 0
        try:
            for p in [root, *root.children(recursive=True)]:
                with contextlib.suppress(psutil.Error):
                    total += p.memory_info().rss
        except psutil.Error:
            pass
        peak = max(peak, total)
        time.sleep(0.05)
    wall = time.perf_counter() - t0
    err = proc.stderr.read().decode() if proc.stderr else ""
    if proc.returncode not in (0, 1):
        raise SystemExit(f"memgauge {' '.join(args)} exited {proc.returncode}: {err[-2000:]}")
    return {"seconds": wall, "peak_mib": peak / 2**20, "load": load}


def _table(rows: dict[str, list[dict[str, float]]], base: str) -> str:
    ref = statistics.median(r["seconds"] for r in rows[base])
    out = [
        "| configuration | wall s (min) | wall s (median) | speed-up (median) "
        "| peak MiB (min) | peak MiB (median) | load 1 min |",
        "|---|---:|---:|---:|---:|---:|---|",
    ]
    for name, runs in rows.items():
        secs = [r["seconds"] for r in runs]
        mib = [r["peak_mib"] for r in runs]
        loads = ", ".join(f"{r['load']:.1f}" for r in runs)
        out.append(
            f"| {name} | {min(secs):.1f} | {statistics.median(secs):.1f} "
            f"| {ref / statistics.median(secs):.2f}x | {min(mib):.0f} "
            f"| {statistics.median(mib):.0f} | {loads} |"
        )
    return "\n".join(out)


def _configs(data: Path, spec: str, out: Path, dask: bool) -> dict[str, list[str]]:
    common = ["evaluate", str(data), "-s", spec, "--no-store", "--no-progress"]
    common += ["--out", str(out), "--concurrency", "4"]
    configs = {"serial": common, "--workers 2": [*common, "--workers", "2"]}
    if dask:
        configs["--executor dask:local --workers 2"] = [
            *common,
            "--executor",
            "dask:local",
            "--workers",
            "2",
        ]
    return configs


def _run(configs: dict[str, list[str]], reps: int) -> dict[str, list[dict[str, float]]]:
    env = _env()
    rows: dict[str, list[dict[str, float]]] = {name: [] for name in configs}
    for _ in range(reps):  # interleaved, so a burst of load on the machine hits all alike
        for name, args in configs.items():
            rows[name].append(_measure(args, env))
            print(name, rows[name][-1], file=sys.stderr)
    return rows


def locomo(reps: int, per_memory: float) -> None:
    """LoCoMo with the slow stand-in subject: serial, process pool, Dask."""
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "locomo"
        subprocess.run(
            [
                sys.executable,
                "-m",
                "memgauge.cli.main",
                "import",
                "locomo",
                str(LOCOMO),
                "--out",
                str(data),
            ],
            env=_env(),
            check=True,
            stdout=subprocess.DEVNULL,
        )
        spec_file = Path(tmp) / "slow.json"
        target = "shard_subjects:SlowIngestMemory"
        spec_file.write_text(
            json.dumps({"python": {"target": target, "kwargs": {"per_memory": per_memory}}})
        )
        rows = _run(_configs(data, f"{spec_file}@slow", Path(tmp) / "out", True), reps)
    print(_table(rows, "serial"))


def _sweep_dataset(out: Path, corpora: int, turns: int, seed: int = 0) -> None:
    """A LongMemEval_S-shaped dataset: one question per corpus, judged against 1-3 turns of
    its own haystack of about `turns` turns (written as JSON lines directly: 250,000 memories
    through pydantic would take longer than the run)."""
    rng = random.Random(seed)
    words = [f"w{i}" for i in range(5000)]
    out.mkdir(parents=True)
    (out / "dataset.yaml").write_text("name: lme-s-shaped\n")
    with (
        (out / "memories.jsonl").open("w") as mem,
        (out / "queries.jsonl").open("w") as qs,
        (out / "judgments.jsonl").open("w") as js,
    ):
        for c in range(corpora):
            corpus = f"q{c:04d}"
            n = max(1, int(rng.gauss(turns, turns * 0.1)))
            texts = [" ".join(rng.choices(words, k=12)) for _ in range(n)]
            for t, text in enumerate(texts):
                row = {"id": f"{corpus}:s{t // 10}:t{t}", "text": text, "corpus": corpus}
                mem.write(json.dumps(row) + "\n")
            evidence = rng.sample(range(n), k=min(n, rng.randint(1, 3)))
            question = " ".join(texts[evidence[0]].split()[:6])
            qs.write(json.dumps({"id": corpus, "text": question, "corpus": corpus}) + "\n")
            for t in evidence:
                judged = {"query_id": corpus, "memory_id": f"{corpus}:s{t // 10}:t{t}", "grade": 3}
                js.write(json.dumps(judged) + "\n")


def sweep(corpora: int, turns: int, reps: int) -> None:
    """The LongMemEval_S-shaped sweep on the reference memory, serial against sharded."""
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "sweep"
        _sweep_dataset(data, corpora, turns)
        rows = _run(_configs(data, "lexical", Path(tmp) / "out", False), reps)
    print(f"{corpora} corpora x ~{turns} turns, one question each")
    print(_table(rows, "serial"))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="what", required=True)
    lo = sub.add_parser("locomo")
    lo.add_argument("--reps", type=int, default=3)
    lo.add_argument("--per-memory", type=float, default=0.01)
    sw = sub.add_parser("sweep")
    sw.add_argument("--corpora", type=int, default=500)
    sw.add_argument("--turns", type=int, default=500)
    sw.add_argument("--reps", type=int, default=1)
    ns: Any = parser.parse_args(argv)
    if ns.what == "locomo":
        locomo(ns.reps, ns.per_memory)
    else:
        sweep(ns.corpora, ns.turns, ns.reps)


if __name__ == "__main__":
    main()
