"""A LongMemEval_S-sized sweep (issue 31 item 5): `memgauge evaluate FILE -s hybrid` serially,
with `--workers 2` and with `--executor dask:local --workers 2`, each with a cold embedding cache
and then a warm one, interleaved.

    python benchmarks/bench_longmemeval_sweep.py [--questions 25] [--reps 3]
        [--distinct 0.5] [--file longmemeval_s.json] [--configs serial,workers2,dask]
        [--src NAME=PATH ...] [--keep DIR]
    python benchmarks/bench_longmemeval_sweep.py --table LOG   # the table of a run's output
    python benchmarks/bench_longmemeval_sweep.py --startup [--questions 500] [--distinct 0.2]
        [--reps 3] [--file longmemeval_s.json]   # a pool worker's start-up alone

`--startup`: what a pool's worker pays before its first shard can run, apart from the imports
every worker pays and the subject it builds: the first shard of a `--workers 2` plan is pickled
as the driver sends it, and a fresh process (`python -c`, the imports included) unpickles it and
plans its task (`runs.shards._planned`), once as the shard is sent (its part: its items and
memories) and once without its part (the worker reads and imports the whole dataset file, as
every worker did before), interleaved; CPU seconds and peak RSS of that process, and the
driver's CPU to pickle the shard.

`--modes warm` (no cold runs): one embedding cache, filled once by a serial run that is not
reported, is read by every run (a warm run writes nothing to it); with `--keep DIR` it is
DIR/emb-shared, kept, and filled only when absent.

The data: LongMemEval's own JSON (a list of questions, each with `haystack_session_ids`,
`haystack_dates`, `haystack_sessions` of `{role, content, has_answer}` turns and
`answer_session_ids`), read by memgauge's importer as a user's file is (paper protocol, turn
level: each question's user turns are its corpus). `--file` measures a real file instead: its
first `--questions` questions are written to the run's file. Without it, a file of LongMemEval_S's
shape is synthesized: `--questions` questions, each over its own haystack of about 48 sessions
of about 10 turns (LongMemEval_S averages 47.7 sessions and 493.5 turns a question), user turns
of about 100 words and assistant turns of about 250 (about 110k tokens a question; LongMemEval_S has about 115k) (words of MiniLM's own vocabulary, so the
tokenizer sees real word pieces), one to three answer sessions per question (ids
`answer_<...>`, their evidence turns marked `has_answer`, as LongMemEval marks them). LongMemEval
builds its haystacks from a shared pool of sessions, so many sessions recur across questions;
`--distinct` is the fraction of the file's haystack sessions that are distinct (1.0: none
recur; the pool scales with `--questions`, so the fraction holds at every size and a scaled-down
run extrapolates linearly).

Cold: an empty embedding cache (MEMGAUGE_EMBEDDINGS) per run; the ONNX graph is built once
beforehand (a one-off of a few seconds, not part of a sweep). Warm: the same configuration run
again on the cache its cold run left. Each run is its own `memgauge` process: its wall time, and
its CPU time (user + system of it and its children, so work on both cores counts twice).
Reported per configuration: min and median of `--reps`, the 1-minute load average before each
run, and the extrapolation to 500 questions, in minutes: the median wall seconds x 500 /
questions (each question is its own corpus, so the work is linear in questions; the fixed
start-up, a few seconds, is counted 500 / questions times too, which overstates a full run),
and the least CPU seconds x 500 / questions / 2: the wall time on two idle cores kept busy,
which a shared machine never gives.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SESSIONS = 48
TURNS = 10.4  # per session on average, user and assistant alternating
QUESTION_TYPES = (
    "single-session-user",
    "single-session-assistant",
    "single-session-preference",
    "multi-session",
    "temporal-reasoning",
    "knowledge-update",
)

# --- the data ------------------------------------------------------------------------------------


def _vocabulary() -> list[str]:
    """Whole words of MiniLM's WordPiece vocabulary (so tokenization is realistic)."""
    from memgauge.embed.minilm_numpy import minilm_model_dir

    vocab = json.loads((minilm_model_dir() / "tokenizer.json").read_text())["model"]["vocab"]
    return sorted(w for w in vocab if w.isalpha() and w.isascii() and len(w) >= 3)


def _words(rng: random.Random, vocab: list[str], median: int) -> str:
    n = max(3, min(4 * median, int(rng.lognormvariate(0, 0.6) * median)))
    return " ".join(rng.choices(vocab, k=n))


def _session(rng: random.Random, vocab: list[str], evidence: bool) -> list[dict[str, Any]]:
    turns: list[dict[str, Any]] = []
    n = max(2, round(rng.gauss(TURNS, 2)))
    marked = rng.randrange(n // 2) if evidence else -1
    for t in range(n):
        user = t % 2 == 0
        turn: dict[str, Any] = {
            "role": "user" if user else "assistant",
            "content": _words(rng, vocab, 100 if user else 250),
        }
        if evidence:
            turn["has_answer"] = user and t // 2 == marked
        turns.append(turn)
    return turns


def synthesize(questions: int, distinct: float, seed: int = 0) -> list[dict[str, Any]]:
    """`questions` questions of LongMemEval_S's shape (see the module's docstring)."""
    rng = random.Random(seed)
    vocab = _vocabulary()
    fillers = questions * (SESSIONS - 2)
    pool_size = max(SESSIONS, round(distinct * fillers)) if distinct < 1 else 0
    pool = [_session(rng, vocab, False) for _ in range(pool_size)]
    out = []
    for q in range(questions):
        qid = f"{q:08x}"
        n = max(10, int(rng.gauss(SESSIONS, 4)))
        k = rng.randint(1, 3)
        ids, sessions = [], []
        for s in range(n - k):
            if pool:
                p = rng.randrange(len(pool))
                ids.append(f"sharegpt_{p:06d}")
                sessions.append(pool[p])
            else:
                ids.append(f"ultrachat_{qid}_{s}")
                sessions.append(_session(rng, vocab, False))
        answers = [f"answer_{qid}_{a + 1}" for a in range(k)]
        for a, sid in enumerate(answers):
            at = rng.randrange(len(ids) + 1)
            ids.insert(at, sid)
            sessions.insert(at, _session(rng, vocab, True))
            del a
        evidence = next(t for t in sessions[ids.index(answers[0])] if t.get("has_answer"))
        out.append(
            {
                "question_id": qid,
                "question_type": QUESTION_TYPES[q % len(QUESTION_TYPES)],
                "question": " ".join(evidence["content"].split()[:8]) + "?",
                "answer": evidence["content"].split()[0],
                "question_date": "2023/05/30 (Tue) 10:00",
                "haystack_session_ids": ids,
                "haystack_dates": [
                    f"2023/05/{1 + i * 28 // len(ids):02d} (Mon) 09:00" for i in range(len(ids))
                ],
                "haystack_sessions": sessions,
                "answer_session_ids": answers,
            }
        )
    return out


def shape(data: list[dict[str, Any]]) -> str:
    """Questions, sessions and turns per question, and how many sessions are distinct."""
    sessions = [len(q["haystack_sessions"]) for q in data]
    turns = [sum(len(s) for s in q["haystack_sessions"]) for q in data]
    distinct = len({sid for q in data for sid in q["haystack_session_ids"]})
    users = {
        t["content"] for q in data for s in q["haystack_sessions"] for t in s if t["role"] == "user"
    }
    all_users = sum(
        1 for q in data for s in q["haystack_sessions"] for t in s if t["role"] == "user"
    )
    return (
        f"{len(data)} questions, {statistics.mean(sessions):.1f} sessions and "
        f"{statistics.mean(turns):.1f} turns a question ({sum(turns)} turns); "
        f"{distinct} of {sum(sessions)} sessions distinct; "
        f"{len(users)} of {all_users} user turns distinct"
    )


# --- a worker's start-up -------------------------------------------------------------------------

_WORKER = (
    "import pickle, sys; from memgauge.runs import shards; "
    "shard = pickle.load(open(sys.argv[1], 'rb')); task = shards._planned(shard); "
    "print(len(task.items), len(task.memories or ())); "
    # its own peak (ru_maxrss would keep the driver's, which it was forked from before exec)
    "print(next(ln.split()[1] for ln in open('/proc/self/status') if ln.startswith('VmHWM')))"
)


def _child(cmd: list[str]) -> tuple[float, float, str]:
    """CPU seconds and peak RSS (MB) of one worker, and the items and memories it planned."""
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    out = proc.stdout.read()
    _pid, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode:
        raise SystemExit(f"{' '.join(cmd)} exited {proc.returncode}")
    counts, peak = out.strip().splitlines()
    return usage.ru_utime + usage.ru_stime, int(peak) / 1024, counts


def startup(file: Path, reps: int, tmp: Path) -> None:
    """A pool worker's start-up with its shard's part and without (see the docstring)."""
    import dataclasses
    import pickle

    sys.path.insert(0, str(ROOT / "src"))
    from memgauge.runs.kinds.retrieval import evaluate_suite
    from memgauge.runs.plan import plan_suite
    from memgauge.runs.shards import WorkerLLM, plan_shards

    suite = evaluate_suite(file, [("hybrid", {"reference": {"mode": "hybrid"}})])
    plan = plan_suite(suite, file.parent)
    pending = {("hybrid", t.spec.name, it.id) for t in plan for it in t.items}
    shards = plan_shards(
        plan,
        suite,
        ["hybrid"],
        pending,
        base=file.parent,
        concurrency=4,
        workers=2,
        llm=WorkerLLM(),
    )
    first = dataclasses.replace(shards[0], driver="a pool worker")
    kinds = {"with its part": first, "reading the file": dataclasses.replace(first, part=None)}
    sent: dict[str, Path] = {}
    for name, shard in kinds.items():
        t0 = time.process_time()
        blob = pickle.dumps(shard)
        cpu = time.process_time() - t0
        sent[name] = tmp / f"{len(sent)}.pickle"
        sent[name].write_bytes(blob)
        print(
            f"{name}: {len(shards)} shards, the first pickled in {cpu:.3f} CPU-s, {len(blob):,} bytes"
        )
    rows: dict[str, list[tuple[float, float, float]]] = {}
    env_src = str(ROOT / "src")
    for rep in range(reps):
        for name, path in sent.items():
            load = loadavg()
            cmd = [sys.executable, "-c", _WORKER, str(path)]
            os.environ["PYTHONPATH"] = env_src
            cpu, rss, out = _child(cmd)
            rows.setdefault(name, []).append((cpu, rss, load))
            print(
                f"rep {rep + 1} {name}: {cpu:.2f} CPU-s, {rss:.0f} MB (items, memories: {out};"
                f" load {load:.1f} before)",
                flush=True,
            )
    print("| a worker's start-up | CPU s min | CPU s median | peak RSS MB | load 1 min before |")
    print("|---|---:|---:|---:|---|")
    for name, got in rows.items():
        cpus = [c for c, _r, _l in got]
        print(
            f"| {name} | {min(cpus):.2f} | {statistics.median(cpus):.2f} "
            f"| {max(r for _c, r, _l in got):.0f} | {', '.join(f'{ld:.1f}' for *_x, ld in got)} |"
        )


# --- the runs ------------------------------------------------------------------------------------

CONFIGS = {
    "serial": [],
    "workers2": ["--workers", "2"],
    "dask": ["--executor", "dask:local", "--workers", "2"],
}


def loadavg() -> float:
    """The 1-minute load average."""
    return os.getloadavg()[0]


def run(src: str, file: Path, extra: list[str], env: dict[str, str], out: Path) -> dict[str, float]:
    """One `memgauge evaluate FILE -s hybrid`: wall and CPU seconds, load before."""
    load = loadavg()
    cmd = [sys.executable, "-m", "memgauge", "evaluate", str(file), "-s", "hybrid"]
    cmd += ["--no-store", "--quiet", "--out", str(out), *extra]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run(
        cmd, env={**env, "PYTHONPATH": src}, capture_output=True, text=True, check=False
    )
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(cmd)} exited {proc.returncode}: {proc.stderr[-3000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"wall": wall, "cpu": cpu, "load": load}


def table(rows: dict[str, list[dict[str, float]]], questions: int) -> str:
    """Min and median per configuration, and the 500-question extrapolation."""
    out = [
        "| configuration | wall s min | wall s median | CPU s min | CPU s median "
        "| speed-up vs serial (median wall) | 500 questions, min: median wall scaled "
        "| 500 questions, min: least CPU scaled / 2 cores | load 1 min before |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    scale = 500 / questions / 60
    for name, runs in rows.items():
        walls = [r["wall"] for r in runs]
        cpus = [r["cpu"] for r in runs]
        *version, _config, mode = name.split(" ")
        ref = rows.get(" ".join([*version, "serial", mode]))
        speed = (
            f"{statistics.median(r['wall'] for r in ref) / statistics.median(walls):.2f}x"
            if ref
            else "-"
        )
        out.append(
            f"| {name} | {min(walls):.1f} | {statistics.median(walls):.1f} | {min(cpus):.1f} "
            f"| {statistics.median(cpus):.1f} | {speed} "
            f"| {statistics.median(walls) * scale:.1f} |"
            f" {min(cpus) * scale / 2:.1f} |"
            f" {', '.join(format(r['load'], '.1f') for r in runs)} |"
        )
    return "\n".join(out)


def from_log(path: str) -> tuple[dict[str, list[dict[str, float]]], int]:
    """The runs a earlier invocation printed (its first line gives the questions)."""
    lines = Path(path).read_text().splitlines()
    rows: dict[str, list[dict[str, float]]] = {}
    for line in lines:
        m = re.match(r"rep \d+ (.+): wall ([\d.]+) s, CPU ([\d.]+) s \(load ([\d.]+)", line)
        if m:
            got = {"wall": float(m[2]), "cpu": float(m[3]), "load": float(m[4])}
            rows.setdefault(m[1], []).append(got)
    return rows, int(lines[0].split()[0])


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--questions", type=int, default=25)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--distinct", type=float, default=0.5)
    ap.add_argument("--file", help="a LongMemEval file (longmemeval_s.json) to read instead")
    ap.add_argument("--configs", default="serial,workers2,dask")
    ap.add_argument("--modes", default="cold,warm")
    ap.add_argument("--src", action="append", default=[], help="NAME=PATH, repeatable")
    ap.add_argument("--keep", help="write the file here (and keep it) instead of a temp dir")
    ap.add_argument("--table", metavar="LOG", help="print the table of an earlier run's output")
    ap.add_argument("--startup", action="store_true", help="a pool worker's start-up alone")
    args = ap.parse_args(argv)
    if args.table:
        print(table(*from_log(args.table)))
        return
    if args.startup:
        with tempfile.TemporaryDirectory() as tmp:
            data = (
                json.loads(Path(args.file).read_text())[: args.questions]
                if args.file
                else synthesize(args.questions, args.distinct)
            )
            file = Path(tmp) / "longmemeval_s.json"
            file.write_text(json.dumps(data))
            del data
            print(f"{args.questions} questions, {file.stat().st_size / 1e6:.0f} MB", flush=True)
            startup(file, args.reps, Path(tmp))
        return
    sources = dict(s.split("=", 1) for s in args.src) or {"this": str(ROOT / "src")}
    configs = [c.strip() for c in args.configs.split(",") if c.strip()]
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    with tempfile.TemporaryDirectory() as tmp:
        t = Path(tmp)
        if args.file:
            data = json.loads(Path(args.file).read_text())[: args.questions]
        else:
            data = synthesize(args.questions, args.distinct)
        file = Path(args.keep) / "longmemeval_s.json" if args.keep else t / "longmemeval_s.json"
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_text(json.dumps(data))
        print(shape(data), flush=True)
        env = {**os.environ, "MEMGAUGE_HOME": str(t / "home")}
        # build the ONNX graph once: a one-off, not part of a sweep
        subprocess.run(
            [
                sys.executable,
                "-c",
                "from memgauge.embed.minilm_onnx import MiniLMOnnxEmbedder as M; M()",
            ],
            env={**env, "PYTHONPATH": next(iter(sources.values()))},
            check=True,
        )
        rows: dict[str, list[dict[str, float]]] = {}
        shared = None
        if "cold" not in modes:
            # warm runs alone: one cache, filled once by a serial run (not reported), read by all
            shared = (Path(args.keep) if args.keep else t) / "emb-shared"
        if shared is not None and not shared.exists():
            got = run(
                next(iter(sources.values())),
                file,
                [],
                {**env, "MEMGAUGE_EMBEDDINGS": str(shared)},
                t / "out",
            )
            print(f"fill (serial, cold): wall {got['wall']:.1f} s, CPU {got['cpu']:.1f} s")
        for rep in range(args.reps):
            for name, src in sources.items():
                for config in configs:  # interleaved: a burst of load falls on each alike
                    cache = shared or t / f"emb-{name}-{config}-{rep}"
                    for mode in modes:
                        if mode == "cold":
                            shutil.rmtree(cache, ignore_errors=True)
                        label = " ".join([*([name] if len(sources) > 1 else []), config, mode])
                        got = run(
                            src,
                            file,
                            CONFIGS[config],
                            {**env, "MEMGAUGE_EMBEDDINGS": str(cache)},
                            t / "out",
                        )
                        rows.setdefault(label, []).append(got)
                        print(
                            f"rep {rep + 1} {label}: wall {got['wall']:.1f} s, CPU "
                            f"{got['cpu']:.1f} s (load {got['load']:.1f} before)",
                            flush=True,
                        )
                    if shared is None:
                        shutil.rmtree(cache, ignore_errors=True)
        print(table(rows, len(data)))


if __name__ == "__main__":
    main()
