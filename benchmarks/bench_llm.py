"""LLM judge throughput, latency hiding, re-run cost and fault tolerance, against the fake
OpenAI-compatible server running in another process (so its CPU is not ours).

    python benchmarks/bench_llm.py            # all four parts, markdown tables on stdout

1. 2,000 rubric-judge calls at 100 ms server latency and concurrency 50: wall time against the
   ideal 2,000 x 0.1 s / 50 = 4 s.
2. Zero-latency server: calls per second and client CPU per call of memgauge's client (judge
   parsing and validation included) against a bare aiohttp loop, the official `openai` SDK and
   an httpx AsyncClient, same calls, same run.
3. A judged suite run twice through the CLI: the second run's wall time and HTTP requests.
4. 20% faulty responses (429, 500, timeouts, malformed JSON, truncated bodies): how every call
   ended, and the most requests any one verdict took.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import aiohttp

from memgauge.llm import context
from memgauge.llm.structured import _response_format
from memgauge.scorers import EvalContext
from memgauge.scorers.judges import RubricJudge
from memgauge.scorers.judges.rubric import RubricVerdict

REPLY = '{"score": 80, "label": "yes", "reasoning": "fine", "issues": [], "strengths": ["ok"]}'


@contextmanager
def fake_server(
    latency: float = 0.0, fault_rate: float = 0.0, timeout_delay: float = 5.0
) -> Iterator[str]:
    """The fake server in a subprocess; yields its base URL."""
    cmd = [
        sys.executable,
        "-m",
        "memgauge.llm",
        "--latency",
        str(latency),
        "--reply",
        REPLY,
        "--fault-rate",
        str(fault_rate),
        "--timeout-delay",
        str(timeout_delay),
    ]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        yield proc.stdout.readline().strip()
    finally:
        proc.terminate()
        proc.communicate(timeout=10)


def server_stats(base_url: str) -> dict[str, Any]:
    with urllib.request.urlopen(base_url.removesuffix("/v1") + "/_stats") as resp:
        data: dict[str, Any] = json.loads(resp.read())
    return data


def _env(base_url: str, concurrency: int, **extra: str) -> None:
    os.environ.update(
        {
            "OPENAI_BASE_URL": base_url,
            "OPENAI_API_KEY": "bench-key",
            "MEMGAUGE_MODEL": "bench",
            "MEMGAUGE_LLM_CONCURRENCY": str(concurrency),
            **extra,
        }
    )
    context.reset()


def _contexts(n: int) -> list[EvalContext]:
    return [
        EvalContext(output=f"answer number {i}", expected=f"answer {i}", input=f"question {i}")
        for i in range(n)
    ]


async def _memgauge(n: int, concurrency: int) -> tuple[float, float, list[Any]]:
    judge = RubricJudge(prompt="Is the answer right?")
    ctxs = _contexts(n)
    t, cpu = time.perf_counter(), time.process_time()
    scores = await asyncio.gather(*(judge.aevaluate(c) for c in ctxs))
    wall, used = time.perf_counter() - t, time.process_time() - cpu
    client: Any = judge.client()
    await client.aclose()
    return wall, used, scores


def judge_bodies(n: int) -> list[dict[str, Any]]:
    """The exact request bodies the rubric judge sends for `_contexts(n)`, prepared ahead:
    the peers send the same bytes, so the server's share of the work is the same for all."""
    judge = RubricJudge(prompt="Is the answer right?")
    fmt = _response_format("json_schema", RubricVerdict, "rubric")
    return [
        {
            "model": "bench",
            "messages": [m.as_dict() for m in judge.template.render(judge.values(c))],
            "temperature": 0.0,
            "response_format": fmt,
        }
        for c in _contexts(n)
    ]


async def _bare_aiohttp(base_url: str, n: int, concurrency: int) -> tuple[float, float]:
    sem = asyncio.Semaphore(concurrency)
    url = base_url + "/chat/completions"
    bodies = judge_bodies(n)
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as session:

        async def one(body: dict[str, Any]) -> None:
            async with sem, session.post(url, json=body) as resp:
                data = await resp.json()
                json.loads(data["choices"][0]["message"]["content"])

        t, cpu = time.perf_counter(), time.process_time()
        await asyncio.gather(*(one(b) for b in bodies))
        return time.perf_counter() - t, time.process_time() - cpu


async def _openai_sdk(base_url: str, n: int, concurrency: int) -> tuple[float, float] | None:
    try:
        from openai import AsyncOpenAI
    except ImportError:
        return None
    sem = asyncio.Semaphore(concurrency)
    client = AsyncOpenAI(base_url=base_url, api_key="bench-key", max_retries=0)
    bodies = judge_bodies(n)

    async def one(body: dict[str, Any]) -> None:
        async with sem:
            r = await client.chat.completions.create(**body)
            json.loads(r.choices[0].message.content or "")

    t, cpu = time.perf_counter(), time.process_time()
    await asyncio.gather(*(one(b) for b in bodies))
    out = time.perf_counter() - t, time.process_time() - cpu
    await client.close()
    return out


async def _httpx(base_url: str, n: int, concurrency: int) -> tuple[float, float]:
    import httpx

    sem = asyncio.Semaphore(concurrency)
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    bodies = judge_bodies(n)
    async with httpx.AsyncClient(limits=limits) as client:

        async def one(body: dict[str, Any]) -> None:
            async with sem:
                r = await client.post(base_url + "/chat/completions", json=body)
                json.loads(r.json()["choices"][0]["message"]["content"])

        t, cpu = time.perf_counter(), time.process_time()
        await asyncio.gather(*(one(b) for b in bodies))
        return time.perf_counter() - t, time.process_time() - cpu


def part_latency(n: int, concurrency: int) -> None:
    with fake_server(latency=0.1) as base:
        _env(base, concurrency)
        wall, _cpu, scores = asyncio.run(_memgauge(n, concurrency))
        requests = server_stats(base)["requests"]
    assert all(s.value == 0.8 for s in scores)
    ideal = n * 0.1 / concurrency
    print(f"\n### {n:,} judge calls, 100 ms latency, concurrency {concurrency}\n")
    print("| calls | HTTP requests | wall s | ideal s | wall / ideal |")
    print("|---:|---:|---:|---:|---:|")
    print(f"| {n:,} | {requests:,} | {wall:.2f} | {ideal:.2f} | {wall / ideal:.3f} |")


def part_throughput(n: int, concurrency: int, rounds: int) -> None:
    rows: dict[str, list[tuple[float, float]]] = {}
    runners: dict[str, Callable[[str], Awaitable[tuple[float, float] | None]]] = {
        "bare aiohttp loop (same bodies, prepared ahead; POST + json)": lambda b: _bare_aiohttp(
            b, n, concurrency
        ),
        "memgauge OpenAIClient + rubric judge (structured, validated)": lambda b: _memgauge_wc(
            b, n, concurrency
        ),
        "openai SDK AsyncOpenAI (same bodies)": lambda b: _openai_sdk(b, n, concurrency),
        "httpx AsyncClient (same bodies)": lambda b: _httpx(b, n, concurrency),
    }
    with fake_server() as base:
        _env(base, concurrency)
        for _ in range(rounds):  # interleaved, so drift hits every contender alike
            for name, fn in runners.items():
                got = asyncio.run(fn(base))
                if got is not None:
                    rows.setdefault(name, []).append(got)
    print(f"\n### Client throughput, zero-latency server, {n:,} calls, concurrency {concurrency}\n")
    print("best of", rounds, "rounds\n")
    print("| client | calls/s | client CPU ms per call | vs bare aiohttp |")
    print("|---|---:|---:|---:|")
    bare = n / min(
        w for w, _ in rows["bare aiohttp loop (same bodies, prepared ahead; POST + json)"]
    )
    for name, results in rows.items():
        wall = min(w for w, _ in results)
        cpu = min(c for _, c in results)
        print(f"| {name} | {n / wall:,.0f} | {cpu / n * 1000:.2f} | {n / wall / bare:.0%} |")


async def _memgauge_wc(base: str, n: int, concurrency: int) -> tuple[float, float]:
    wall, cpu, scores = await _memgauge(n, concurrency)
    assert all(s.value == 0.8 for s in scores)
    return wall, cpu


SUITE = """
name: judged-rerun
concurrency: 16
subjects:
  memory: {reference: {mode: lexical}}
tasks:
  - name: recall
    kind: expected-output
    dataset: items.jsonl
    memories: memories.jsonl
    k: 1
    evaluators: [{qa-judge: strict}, {rubric: "Is it helpful?"}]
"""


def part_rerun(n_items: int) -> None:
    with tempfile.TemporaryDirectory() as tmp, fake_server() as base:
        d = Path(tmp)
        (d / "suite.yaml").write_text(SUITE)
        with open(d / "items.jsonl", "w") as f:
            for i in range(n_items):
                f.write(
                    json.dumps({"id": f"q{i}", "input": f"code of item {i}?", "expected": f"K{i}X"})
                    + "\n"
                )
        with open(d / "memories.jsonl", "w") as f:
            for i in range(n_items):
                f.write(
                    json.dumps({"id": f"m{i}", "text": f"The code of item {i} is K{i}X."}) + "\n"
                )
        env = {
            **os.environ,
            "OPENAI_BASE_URL": base,
            "OPENAI_API_KEY": "bench-key",
            "MEMGAUGE_MODEL": "bench",
            "MEMGAUGE_LLM_CACHE": str(d / "llm-cache.db"),
            "MEMGAUGE_HOME": str(d / "home"),
        }
        cmd = ["memgauge", "run", str(d / "suite.yaml"), "--store", str(d / "r.db"), "--json"]
        timings = []
        for _ in range(2):
            before = server_stats(base)["requests"]
            t = time.perf_counter()
            subprocess.run(cmd, env=env, check=True, capture_output=True)
            timings.append((time.perf_counter() - t, server_stats(base)["requests"] - before))
    print(
        f"\n### The same judged suite run twice ({n_items} items, 2 judges each), CLI end to end\n"
    )
    print("| run | wall s | HTTP requests |")
    print("|---|---:|---:|")
    for name, (wall, reqs) in zip(("first", "second (cached)"), timings, strict=True):
        print(f"| {name} | {wall:.2f} | {reqs:,} |")


def part_faults(n: int, concurrency: int) -> None:
    with fake_server(fault_rate=0.2, timeout_delay=2.0) as base:
        _env(base, concurrency, MEMGAUGE_LLM_TIMEOUT="1", MEMGAUGE_LLM_RETRIES="4")
        t = time.perf_counter()
        _wall, _cpu, scores = asyncio.run(_memgauge(n, concurrency))
        wall = time.perf_counter() - t
        stats = server_stats(base)
    scored = [s for s in scores if s.error is None]
    failed = [s for s in scores if s.error is not None]
    assert all(s.value == 0.8 for s in scored)  # only real verdicts become scores
    assert all(s.value is None and s.reason for s in failed)
    most = max(s.detail.get("requests", 0) for s in scores)
    routes: dict[str, int] = {}
    for s in scored:
        routes[s.detail["route"]] = routes.get(s.detail["route"], 0) + 1
    print(f"\n### {n:,} judge calls with 20% faulty responses, concurrency {concurrency}\n")
    print(
        "| calls | scored | failed (reason recorded) | HTTP requests | faults injected | most requests for one verdict | wall s |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|")
    print(
        f"| {n:,} | {len(scored):,} | {len(failed):,} | {stats['requests']:,} | "
        f"{sum(stats['faults'].values()):,} {dict(sorted(stats['faults'].items()))} | {most} | {wall:.1f} |"
    )
    print("\nroutes of the scored verdicts:", dict(sorted(routes.items())))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--calls", type=int, default=2000)
    ap.add_argument("--concurrency", type=int, default=50)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--items", type=int, default=500)
    ap.add_argument("--part", choices=["latency", "throughput", "rerun", "faults"], action="append")
    args = ap.parse_args()
    parts = args.part or ["latency", "throughput", "rerun", "faults"]
    if "latency" in parts:
        part_latency(args.calls, args.concurrency)
    if "throughput" in parts:
        part_throughput(args.calls, args.concurrency, args.rounds)
    if "rerun" in parts:
        part_rerun(args.items)
    if "faults" in parts:
        part_faults(1000, args.concurrency)


if __name__ == "__main__":
    main()
