"""One results store with something of every kind the viewer shows, built once per session by
memgauge's own commands and stores: two runs of an LLM-judged suite (the fake OpenAI server on
127.0.0.1 judging; the second run finds fewer memories, so verdicts change and regress), an
`evaluate` retrieval run, an audit, an extraction and an operations run, an A/B test, a shadow
experiment, a run whose every text is a script or attribute-breaking payload, two
`memgauge optimize` studies: greedy over a lexical memory's config (3 iterations, a holdout),
and a prompt rewrite by the optimizer model of a decider whose name and prompt are payloads,
and kept traces (`logs import-traces --store`): an OTLP agent trace and one whose every text
is a payload."""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from tests.helpers import write_recall_suite

from memgauge.cli.main import main
from memgauge.data.records import Failure, ItemRecord, RunPlan, RunRecord, ScoreRecord
from memgauge.llm import FakeOpenAIServer
from memgauge.online.shadow import diff_rankings
from memgauge.store.ab_tests import ABTestStore
from memgauge.store.shadow import ShadowStore
from memgauge.store.suite_runs import SuiteRunStore
from memgauge.subjects.deciders import DECIDE_PROMPT

DATA = Path(__file__).resolve().parents[1] / "data"
SHARED = Path(__file__).resolve().parents[3] / "shared"
N_JUDGED = 12

#: one payload per way of breaking out of HTML: a tag, an attribute, a URL, an SVG handler
PAYLOADS = {
    "script": "<script>window.__xss=1</script>",
    "attr": '"><img src=x onerror="window.__xss=2">',
    "single": "' onmouseover='window.__xss=3' x='",
    "svg": "<svg onload=window.__xss=4>",
}
XSS = " ".join(PAYLOADS.values())


def judge_rule(payload: dict[str, Any]) -> str:
    """A deterministic judge: yes iff the expected answer occurs in the response."""
    text = "\n".join(m["content"] for m in payload["messages"])
    if "CORRECT ANSWER:" not in text:
        return '{"score": 75, "issues": [], "strengths": ["fine"]}'
    expected = text.split("CORRECT ANSWER:\n", 1)[1].split("\n", 1)[0].strip().lower()
    response = (
        text.split("MODEL'S RESPONSE:\n", 1)[1].lower() if "MODEL'S RESPONSE:" in text else ""
    )
    label = "yes" if expected in response else "no"
    return json.dumps(
        {
            "reasoning": f"the response {'has' if label == 'yes' else 'lacks'} {expected}",
            "label": label,
        }
    )


@dataclass
class ViewerStore:
    """The store and the ids of what is in it."""

    #: the SQLite file, or the PostgreSQL URL (`build_store(root, where=URL)`)
    path: Any
    judged: list[str]
    retrieval: str
    audit: str
    extraction: str
    operations: str
    hostile: str
    ab_test: str
    shadow: str
    optimization: str
    hostile_optimization: str
    #: a kept agent trace (tests/data/traces/otlp_agent.jsonl's first) and one of payloads
    trace: str = "4bf92f3577b34da6a3ce929d0e0e4736"
    hostile_trace: str = "hostile-" + PAYLOADS["script"]


def _run_id(out: str) -> str:
    return str(json.loads(out.strip().splitlines()[-1])["run_id"])


def _judged_suite(root: Path, keep: int) -> Path:
    items = [
        {"id": f"q{i}", "input": f"What is the code for item {i}?", "expected": f"K{i}X"}
        for i in range(N_JUDGED)
    ]
    memories = [
        {"id": f"m{i}", "text": f"The code for item {i} is K{i}X."}
        for i in range(N_JUDGED)
        if i % keep != 0
    ]
    evaluators = [{"qa-judge": "longmemeval"}, "icontains"]
    spec = {"name": "judged", "concurrency": 4, "max_failure_rate": 0.9}
    return write_recall_suite(root, items, memories, evaluators, **spec)


#: what the scripted optimizer model appends to the prompt it is shown; the decider answers
#: NOOP (right, for the duplicates below) only when its prompt has it
RULE = "A memory that repeats a stored one is NOOP."


def llm_rule(payload: dict[str, Any]) -> str:
    """The fake server's replies: the optimizer model, the LLM decider, else the judge."""
    last = payload["messages"][-1]["content"]
    if last.startswith("You improve"):
        shown = last.split("<<<\n", 1)[1].rsplit("\n>>>", 1)[0]
        return json.dumps({"text": shown + "\n" + RULE})
    if last.startswith("You manage a memory store"):
        action = "NOOP" if RULE in last else "CREATE"
        return json.dumps({"action": action, "id": None, "content": "x", "reason": "scripted"})
    return judge_rule(payload)


def _study_id(argv: list[str]) -> str:
    import contextlib
    import io

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        code = main([*argv, "--json"])
    assert code == 0, (argv, code, buf.getvalue()[-2000:])
    return str(json.loads(buf.getvalue().strip().splitlines()[-1])["id"])


def config_study(root: Path, db: Path | str) -> str:
    """Greedy over a lexical memory's `pin_constitutional` and `candidates`, 3 iterations,
    Recall@3 on 12 queries (4 held out). The start pins 2 constitutional memories into every
    top 3 (Recall@3 0.5); unpinning finds both relevant memories (1.0)."""
    n = 12
    bundle = {
        "name": "codes",
        "memories": [
            {"id": f"rule{j}", "text": f"house rule {j}", "tier": "constitutional"}
            for j in range(2)
        ]
        + [
            m
            for i in range(n)
            for m in (
                {"id": f"a{i}", "text": f"the code for item {i} is K{i}"},
                {"id": f"b{i}", "text": f"item {i} also has a backup code B{i}"},
            )
        ],
        "queries": [{"id": f"q{i}", "text": f"what code does item {i} have"} for i in range(n)],
        "judgments": [
            j
            for i in range(n)
            for j in (
                {"query_id": f"q{i}", "memory_id": f"a{i}", "grade": 3},
                {"query_id": f"q{i}", "memory_id": f"b{i}", "grade": 2},
            )
        ],
    }
    (root / "codes.yaml").write_text(yaml.safe_dump(bundle))
    block = {
        "subject": "lexical",
        "objective": "retrieval/Recall@3",
        "strategy": "greedy",
        "maxIterations": 3,
        "holdout": 0.3,
        "seed": 2,
        "space": {"candidates": "int:1..4", "pin_constitutional": "choice:true,false"},
    }
    suite = {
        "name": "tune-lexical",
        "subjects": {"lexical": {"reference": {"mode": "lexical", "pin_constitutional": True}}},
        "tasks": [
            {
                "name": "retrieval",
                "kind": "retrieval",
                "dataset": "codes.yaml",
                "k": 3,
                "evaluators": [{"retrieval": "Recall@3"}],
                "optimization": block,
            }
        ],
    }
    path = root / "tune.yaml"
    path.write_text(yaml.safe_dump(suite, sort_keys=False))
    return _study_id(["optimize", str(path), "--store", str(db)])


def hostile_study(root: Path, db: Path | str) -> str:
    """The optimizer model rewrites the prompt of a decider named by every payload, whose
    prompt ends with every payload (greedy, 3 iterations, a holdout)."""
    cases = [
        {
            "id": f"dup-{i}",
            "scenario": "exact duplicate",
            "existing": [{"id": f"mem_{i}", "content": f"fact number {i}"}],
            "incoming": {"content": f"fact number {i}"},
            "expected": {"action": "NOOP"},
        }
        for i in range(6)
    ]
    (root / "cases.json").write_text(json.dumps({"cases": cases}))
    subject = f"decider {XSS}"
    suite = {
        "name": "tune-prompt",
        "subjects": {
            subject: {"llm-decider": {"model": "fake-judge", "prompt": f"{DECIDE_PROMPT}\n{XSS}"}}
        },
        "tasks": [
            {
                "name": "ops",
                "kind": "operations",
                "dataset": "cases.json",
                "evaluators": ["operation-checks"],
            }
        ],
        "optimization": {
            "subject": subject,
            "targets": ["prompts"],
            "texts": ["prompt"],
            "strategy": "greedy",
            "holdout": 0.3,
            "maxIterations": 3,
            "optimizer": {"model": "fake-judge"},
        },
    }
    path = root / "tune-prompt.yaml"
    path.write_text(yaml.safe_dump(suite, sort_keys=False))
    return _study_id(["optimize", str(path), "--store", str(db)])


def hostile_run(store: SuiteRunStore) -> str:
    """A run whose every text the viewer shows is a payload: suite, subject, task, evaluator,
    item id, category, input, output and its hits' texts, expected, reason, raw reply, failure,
    file names, provenance, model name."""
    run_id = "20000101-000000-hostile"
    subject, task, evaluator = f"subj {XSS}", f"task {XSS}", f"eval {XSS}"
    suite = {
        "name": f"suite {XSS}",
        "subjects": {subject: {"python": {"target": f"mod:{XSS}"}}},
        "tasks": [{"name": task, "kind": "retrieval", "dataset": f"data {XSS}.jsonl"}],
    }
    run = RunRecord(
        run_id=run_id,
        suite_name=suite["name"],
        status="queued",
        created_at="2000-01-01T00:00:00+00:00",
        suite_sha256="0" * 64,
        suite=suite,
        suite_path=f"/tmp/{XSS}/suite.yaml",
        provenance={"memgauge_version": "0.1.0", "note": XSS, "prompts": {XSS: XSS}},
    )
    items = [
        ItemRecord(
            subject=subject,
            task=task,
            item_id=f"item {XSS} {i}",
            seq=i,
            category=f"cat {XSS}",
            input={"text": f"query {XSS}"},
            expected={f"mem {XSS}": 3, "other": 0},
        )
        for i in range(2)
    ]
    store.create_run(
        run,
        RunPlan(
            suite["subjects"],
            [
                {
                    "task": task,
                    "kind": "retrieval",
                    "dataset": f"data {XSS}.jsonl",
                    "dataset_sha256": XSS,
                    "spec": suite["tasks"][0],
                    "n_items": 2,
                }
            ],
            items,
        ),
    )
    done = [
        items[0].model_copy(
            update={
                "status": "completed",
                "attempts": 1,
                "output": [{"id": f"mem {XSS}", "text": f"memory {XSS}", "score": 0.5}],
                "latency_ms": {f"stage {XSS}": 1.0},
                "scores": [
                    ScoreRecord(
                        evaluator=evaluator,
                        value=0.0,
                        passed=False,
                        reason=f"reason {XSS}",
                        raw_reply=f"raw {XSS}",
                        detail={"judge": "qa-judge", "template_hash": XSS, "route": XSS},
                    )
                ],
                "score": 0.0,
            }
        ),
        items[1].model_copy(
            update={
                "status": "failed",
                "attempts": 1,
                "failures": [Failure(stage="subject", kind=f"Kind{XSS}", message=f"failed {XSS}")],
            }
        ),
    ]
    store.claim_run(run_id, {"token": "t", "pid": 1, "host": "h"}, expect=None)
    store.record_items(run_id, done)
    store.record_failure(
        run_id, {"subject": subject, "task": task, "stage": "setup", "kind": "x", "message": XSS}
    )
    store.record_usage(run_id, f"model {XSS}", {"calls": 1, "prompt_tokens": 3})
    store.set_status(run_id, "completed", owner="t")
    return run_id


def hostile_traces(root: Path) -> Path:
    """A Phoenix span export of one trace whose every text (ids, names, session, query, hits,
    tool call, model, answer, error) is a payload."""
    tid = ViewerStore.hostile_trace

    def span(n: int, kind: str, **attrs: Any) -> dict[str, Any]:
        return {
            "name": f"{kind.lower()} {XSS}",
            "span_kind": kind,
            "parent_id": None if n == 1 else f"{PAYLOADS['attr']}1",
            "start_time": f"2024-07-01T10:00:0{n}.000+00:00",
            "end_time": f"2024-07-01T10:00:0{n + 1}.500+00:00",
            "status_code": "ERROR" if kind == "LLM" else "OK",
            "status_message": XSS if kind == "LLM" else "",
            "context.span_id": f"{PAYLOADS['attr']}{n}",
            "context.trace_id": tid,
            **{f"attributes.{k}": v for k, v in attrs.items()},
        }

    spans = [
        span(1, "AGENT", **{"session.id": XSS, "input.value": XSS, "output.value": XSS}),
        span(
            2,
            "RETRIEVER",
            **{
                "input.value": XSS,
                "retrieval.documents": [{"document.id": XSS, "document.score": 0.5}],
            },
        ),
        span(3, "TOOL", **{"tool.name": XSS, "input.value": XSS, "output.value": XSS}),
        span(4, "LLM", **{"llm.model_name": XSS, "output.value": XSS}),
    ]
    path = root / "hostile_traces.jsonl"
    path.write_text("".join(json.dumps(s) + "\n" for s in spans))
    return path


def build_store(root: Path, where: str | None = None) -> ViewerStore:
    """Fill `root/r.db`, or the store at `where` (a PostgreSQL URL), with the same commands
    (see the module docstring)."""
    db: Any = root / "r.db" if where is None else where
    out: dict[str, Any] = {}
    with FakeOpenAIServer(api_key="k") as srv, pytest.MonkeyPatch.context() as mp:
        srv.respond(llm_rule)
        mp.setenv("MEMGAUGE_HOME", str(root / "home"))
        mp.setenv("MEMGAUGE_LLM_CACHE", str(root / "llm-cache.db"))
        mp.setenv("OPENAI_BASE_URL", srv.base_url)
        mp.setenv("OPENAI_API_KEY", "k")
        mp.setenv("MEMGAUGE_MODEL", "fake-judge")
        judged = []
        for keep in (3, 2):
            sub = root / f"judged{keep}"
            sub.mkdir()
            suite = _judged_suite(sub, keep)
            code = _cli(["run", str(suite), "--store", str(db), "--json"])
            judged.append(code)
        out["judged"] = judged
        _cli(
            [
                "evaluate",
                str(DATA / "good" / "bundle.yaml"),
                "-s",
                "lexical",
                "-s",
                "hybrid",
                "--out",
                str(root / "ev"),
                "--store",
                str(db),
                "--quiet",
            ],
            json_out=False,
        )
        with SuiteRunStore(db) as store:
            out["retrieval"] = store.list_runs(1)[0]["run_id"]
        out["operations"] = _cli(
            [
                "operations",
                str(DATA / "operations" / "cases.json"),
                "--decider",
                "{heuristic: {}}",
                "--store",
                str(db),
                "--json",
            ]
        )
        out["extraction"] = _cli(
            [
                "extraction",
                str(DATA / "extraction" / "cases.json"),
                "--extractor",
                "{memory-extractor: {memory: {reference: {mode: lexical}}}}",
                "--match",
                "exact",
                "--store",
                str(db),
                "--json",
            ],
            ok=(0, 1),
        )
        out["audit"] = _cli(
            [
                "audit",
                str(SHARED / "datasets" / "memaudit-sample.json"),
                "--output",
                str(root / "audit"),
                "--store",
                str(db),
                "--json",
                "--no-progress",
                "--scoring",
                "offline",
            ]
        )
        (root / "opt").mkdir()
        out["optimization"] = config_study(root / "opt", db)
        out["hostile_optimization"] = hostile_study(root / "opt", db)
    with SuiteRunStore(db) as store:
        out["hostile"] = hostile_run(store)
    for traces in (DATA / "traces" / "otlp_agent.jsonl", hostile_traces(root)):
        assert main(["logs", "import-traces", str(traces), "--store", str(db)]) == 0
    with ABTestStore(db) as ab:
        from memgauge.online.ab_report import sprt_of

        config = {
            "delta": 0.05,
            "alpha": 0.05,
            "beta": 0.2,
            "min_samples": 30,
            "improvement": 0.02,
            "max_latency_increase": 0.1,
        }
        sprt = sprt_of(config)
        ab.create(
            "graph-boost", "ndcg@10", config, {}, upper_bound=sprt.upper, lower_bound=sprt.lower
        )
        pairs = [
            {
                "query_id": f"q{i}",
                "control": 0.5 + (i % 5) / 20,
                "treatment": 0.6 + (i % 7) / 20,
                "control_latency_ms": 10.0,
                "treatment_latency_ms": 11.0,
                "constitutional_delta": 0.0,
            }
            for i in range(80)
        ]
        from memgauge.stats.sequential import SPRTState

        state = sprt.update(SPRTState(), [p["treatment"] - p["control"] for p in pairs])
        ab.add("graph-boost", pairs, lambda stored, new: state.as_dict())
    with ShadowStore(db) as shadow:
        for i in range(6):
            control = [f"m{j}" for j in range(5)]
            treatment = control[::-1] if i % 2 else control
            shadow.record_shadow(
                "rerank-v2",
                {
                    "query_id": f"q{i}",
                    "control": control,
                    "treatment": treatment,
                    "control_latency_ms": 5.0,
                    "treatment_latency_ms": 6.0,
                    **diff_rankings(control, treatment).as_dict(),
                },
            )
    return ViewerStore(path=db, ab_test="graph-boost", shadow="rerank-v2", **out)


def _cli(argv: list[str], ok: tuple[int, ...] = (0,), *, json_out: bool = True) -> str:
    import contextlib
    import io

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        code = main(argv)
    assert code in ok, (argv, code, buf.getvalue()[-2000:])
    return _run_id(buf.getvalue()) if json_out else ""


def snapshot(db: Path) -> tuple[list[tuple[Any, ...]], dict[str, int]]:
    """The store's schema revision and its row count per table."""
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        migrations = conn.execute("SELECT * FROM alembic_version").fetchall()
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        counts = {t: conn.execute(f'SELECT COUNT(*) FROM "{t}"').fetchone()[0] for t in tables}
    finally:
        conn.close()
    return migrations, counts


def one_query_run(url: str, tmp_path: Path, *, k: int) -> tuple[str, Any]:
    """`memgauge evaluate` of one query over `k` memories (its code a1, and a backup b1 for k
    2) into the store at `url`: the run's id and its one item (q1)."""
    from memgauge.store.run_pages import RunReader

    memories = [{"id": "a1", "text": "the code for item 1 is K1"}]
    memories += [{"id": "b1", "text": "item 1 also has a backup code B1"}][: k - 1]
    dataset = tmp_path / "codes.yaml"
    dataset.write_text(
        yaml.safe_dump(
            {
                "name": "codes",
                "memories": memories,
                "queries": [{"id": "q1", "text": "what code does item 1 have"}],
                "judgments": [{"query_id": "q1", "memory_id": "a1", "grade": 3}],
            }
        )
    )
    argv = ["evaluate", str(dataset), "-s", "lexical", "--k", str(k), "-m", f"Recall@{k}"]
    assert main([*argv, "--store", url, "--quiet"]) == 0
    with RunReader(url) as reader:
        run = str(reader.runs_overview()[0]["run_id"])
        return run, reader.item_records(run, detail=False)[0]


def confirm_form(run: str, token: str) -> dict[str, str]:
    """The review form that confirms the judge's verdict on q1 of run `run` (the store's
    LLM-judged suite: subject memory, task recall, judge qa-judge), with its CSRF `token`."""
    return {
        "csrf": token,
        "run": run,
        "subject": "memory",
        "task": "recall",
        "item": "q1",
        "kind": "verdict",
        "target": "qa-judge",
        "action": "confirm",
    }
