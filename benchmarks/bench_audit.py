"""Audit speed: the whole LoCoMo file offline, and an LLM-backed audit against the fake
OpenAI-compatible server at 50 ms latency (then re-run from the cache).

    python benchmarks/bench_audit.py

1. `memgauge audit locomo10.json` with the extractive baseline (no LLM) and offline matching
   (token F1, expected-token coverage, MiniLM cosine, abstention phrases): all 1,986 probes.
2. `memgauge audit locomo10.json --limit N` with a chat agent shown the whole conversation and
   the QA judge, both served by the fake server (50 ms per call) in another process: probes per
   second; then the same command again, answered from the LLM cache.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import tempfile
import time
from pathlib import Path

from bench_llm import fake_server, server_stats

LOCOMO = Path(__file__).resolve().parents[1].parent / "shared" / "datasets" / "locomo10.json"


def _audit(out: Path, env: dict[str, str], *args: str) -> tuple[float, dict[str, object]]:
    cmd = ["memgauge", "audit", str(LOCOMO), "--output", str(out), "--store", str(out / "r.db")]
    t = time.perf_counter()
    done = subprocess.run(
        [*cmd, *args, "--json", "--no-progress"],
        env=env,
        check=True,
        capture_output=True,
        text=True,
    )
    return time.perf_counter() - t, json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--limit", type=int, default=400)
    ap.add_argument("--concurrency", type=int, default=16)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        env = {**os.environ, "MEMGAUGE_HOME": str(d / "home")}
        for name in ("MEMGAUGE_MODEL", "MEMAUDIT_MODEL"):
            env.pop(name, None)
        wall, res = _audit(d / "offline", env)
        n = sum(c["n_probes"] for c in res["counts"].values())  # type: ignore[attr-defined]
        print("### LoCoMo, offline (extractive baseline, offline matching)\n")
        print("| probes | wall s | probes/s | recall | hallucinated | temporal |")
        print("|---:|---:|---:|---:|---:|---:|")
        m = res["metrics"]
        print(
            f"| {n:,} | {wall:.1f} | {n / wall:.0f} | {m['recall_accuracy']:.3f} | "  # type: ignore[index]
            f"{m['hallucinated_memory_rate']:.3f} | {m['temporal_accuracy']:.3f} |"  # type: ignore[index]
        )
        with fake_server(latency=0.05) as base:
            llm_env = {
                **env,
                "OPENAI_BASE_URL": base,
                "OPENAI_API_KEY": "bench-key",
                "MEMGAUGE_MODEL": "bench",
                "MEMGAUGE_LLM_CONCURRENCY": "64",
            }
            rows = []
            for label in ("first run", "re-run (cached)"):
                before = server_stats(base)["requests"]
                wall, res = _audit(
                    d / "llm",
                    llm_env,
                    "--agent",
                    "chat",
                    "--limit",
                    str(args.limit),
                    "--concurrency",
                    str(args.concurrency),
                )
                rows.append((label, wall, server_stats(base)["requests"] - before))
        print(
            f"\n### LoCoMo, first {args.limit} probes: chat agent (whole conversation) + QA judge, "
            f"fake server at 50 ms, concurrency {args.concurrency}\n"
        )
        print("| run | wall s | probes/s | HTTP requests |")
        print("|---|---:|---:|---:|")
        for label, wall, reqs in rows:
            print(f"| {label} | {wall:.1f} | {args.limit / wall:.0f} | {reqs:,} |")


if __name__ == "__main__":
    main()
