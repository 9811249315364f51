"""What the golden tests pin: every number the evaluating commands produce, run through the CLI as
a user would, flattened into `{"dotted.key": value}` so that a change in a report's layout is a
change to `extract_*` here, never to the golden files.

The golden files (`*.json` beside this module) were written by `make_golden.py` from the code as
it stood before the run engine was unified, and are not edited afterwards: after a refactor the
numbers must be exactly equal (floats compared with ==, after a JSON round trip, which is exact).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from memgauge.cli.main import main

__all__ = [
    "CASES",
    "DATA",
    "LOCOMO",
    "MEMAUDIT",
    "audit_memaudit",
    "evaluate_demo",
    "evaluate_locomo_lexical",
    "extraction_fixtures",
    "flatten",
    "operations_fixtures",
    "suite_kinds",
]

DATA = Path(__file__).resolve().parents[1] / "data"
SHARED = Path(__file__).resolve().parents[3] / "shared" / "datasets"
LOCOMO = SHARED / "locomo10.json"
MEMAUDIT = SHARED / "memaudit-sample.json"
CASES = {
    "extraction": DATA / "extraction" / "cases.json",
    "operations": DATA / "operations" / "cases.json",
}

Scalar = float | int | str | bool | None


def flatten(value: Any, prefix: str = "") -> dict[str, Scalar]:
    """`{"a": {"b": [1, 2]}}` -> `{"a.b.0": 1, "a.b.1": 2}`; scalars kept as they are."""
    out: dict[str, Scalar] = {}
    if isinstance(value, Mapping):
        for k, v in value.items():
            out.update(flatten(v, f"{prefix}{k}."))
    elif isinstance(value, list | tuple):
        for i, v in enumerate(value):
            out.update(flatten(v, f"{prefix}{i}."))
    else:
        out[prefix.rstrip(".")] = value
    return out


def _cli(args: list[str], ok: tuple[int, ...] = (0,)) -> None:
    code = main(args)
    if code not in ok:
        raise AssertionError(f"memgauge {' '.join(args)} exited {code}")


# --- evaluate ------------------------------------------------------------------------------

_SYSTEM_KEYS = ("metrics", "agent_metrics", "breakdown", "counts")


def extract_evaluate(result: Mapping[str, Any], *, per_query: bool) -> dict[str, Scalar]:
    """Numbers of a `memgauge evaluate` result.json: per system its IR metrics with CIs, agent
    metrics, breakdowns, counts (and per query values and hits when asked), and every paired
    comparison with its p-values."""
    pinned: dict[str, Any] = {"systems": {}, "comparisons": {}}
    for system in result["systems"]:
        entry: dict[str, Any] = {"status": system["status"]}
        for key in _SYSTEM_KEYS:
            entry[key] = system.get(key)
        if per_query:
            entry["per_query"] = {
                q["query_id"]: {"metrics": q["metrics"], "hits": q["hits"], "error": q["error"]}
                for q in system["per_query"]
            }
        pinned["systems"][system["name"]] = entry
    for comp in result.get("comparisons", []):
        pinned["comparisons"][f"{comp['baseline']}|{comp['candidate']}"] = {
            m["measure"]: {k: v for k, v in m.items() if k != "measure"} for m in comp["metrics"]
        }
    return flatten(pinned)


def evaluate_demo(tmp: Path) -> dict[str, Scalar]:
    """`memgauge demo`'s dataset, evaluated with the demo's four systems (seed 0)."""
    out = tmp / "demo"
    _cli(["demo", "--out", str(out), "--no-store"])
    return extract_evaluate(json.loads((out / "result.json").read_text()), per_query=True)


def evaluate_locomo_lexical(tmp: Path) -> dict[str, Scalar]:
    """LoCoMo imported, evaluated with the lexical reference memory (per-conversation corpora)."""
    data = tmp / "locomo"
    _cli(["import", "locomo", str(LOCOMO), "--out", str(data)])
    out = tmp / "locomo-report"
    _cli(["evaluate", str(data), "-s", "lexical", "--out", str(out), "--no-store", "--quiet"])
    return extract_evaluate(json.loads((out / "result.json").read_text()), per_query=False)


# --- write path and audits -----------------------------------------------------------------


def _report(tmp: Path, name: str, args: list[str], file: str) -> dict[str, Any]:
    out = tmp / name
    # the fixtures' deciders and extractors miss the seeds' targets on purpose: since the run
    # engine was unified that is exit 1 (a target missed), and the numbers are what is pinned
    _cli([*args, "--output", str(out)], ok=(0, 1))
    loaded: dict[str, Any] = json.loads((out / file).read_text())
    return loaded


def _extraction_case(case: Mapping[str, Any]) -> dict[str, Any]:
    keys = ("tp", "fp", "fn", "precision", "recall", "f1", "conflict_ok", "minimal_ok", "error")
    return {k: case.get(k) for k in keys}


def extraction_fixtures(tmp: Path) -> dict[str, Scalar]:
    """`memgauge extraction` on the repository's fixtures: recorded-style live extractor
    (NaiveExtractor) with exact and semantic matching."""
    pinned: dict[str, Any] = {}
    for match in ("exact", "semantic"):
        report = _report(
            tmp,
            f"extraction-{match}",
            [
                "extraction",
                str(CASES["extraction"]),
                "--extractor",
                "{python: {target: 'extractors:NaiveExtractor'}}",
                "--match",
                match,
            ],
            "extraction.json",
        )
        summary = {k: report[k] for k in ("precision", "recall", "f1", "conflict", "minimalism")}
        counts = {k: report.get(k) for k in ("n_cases", "n_scored", "n_failed", "tp", "fp", "fn")}
        cases = {c["id"]: _extraction_case(c) for c in report["per_case"]}
        pinned[match] = {"summary": summary, "counts": counts, "cases": cases}
    return flatten(pinned)


def operations_fixtures(tmp: Path) -> dict[str, Scalar]:
    """`memgauge operations` on the repository's fixtures with the no-LLM heuristic decider."""
    report = _report(
        tmp,
        "operations",
        ["operations", str(CASES["operations"]), "--decider", "{heuristic: {}}"],
        "operations.json",
    )
    cases = {
        c["id"]: {
            "action": (c.get("decision") or {}).get("action"),
            "error": c.get("error"),
            "checks": {n: v.get("passed") for n, v in (c.get("checks") or {}).items()},
        }
        for c in report["per_case"]
    }
    pinned = {
        "tiers": report["tiers"],
        "checks": report["checks"],
        "n_cases": report["n_cases"],
        "n_failed": report["n_failed"],
        "cases": cases,
    }
    return flatten(pinned)


def audit_memaudit(tmp: Path) -> dict[str, Scalar]:
    """`memgauge audit` of the memaudit sample, offline: the extractive agent, offline scoring."""
    out = tmp / "audit"
    _cli(
        [
            "audit",
            str(MEMAUDIT),
            "--scoring",
            "offline",
            "--agent",
            "extractive",
            "--output",
            str(out),
            "--store",
            str(tmp / "audit.db"),
            "--no-progress",
        ]
    )
    result = json.loads((out / "results.json").read_text())
    pinned: dict[str, Any] = {"metrics": result["metrics"], "counts": result["counts"]}
    pinned["probes"] = {
        p["id"]: {
            "type": p["type"],
            "correct": p["correct"],
            "answer": p["answer"],
            "detail": p["detail"],
        }
        for p in result["probes"]
    }
    return flatten(pinned)


# --- every task kind through one suite run and its stored form --------------------------------

QA_SUITE = DATA / "suites" / "qa" / "suite.yaml"


def _vectors(path: Path, texts: list[str]) -> Path:
    """Stored vectors that disagree with the reference embedder in a fixed, seeded way."""
    import numpy as np

    rng = np.random.default_rng(3)
    path.write_text(
        "".join(
            json.dumps({"text": t, "vector": rng.normal(size=16).tolist()}) + "\n" for t in texts
        )
    )
    return path


def _stored_run(tmp: Path, suite: Path, store: Path) -> dict[str, Any]:
    from contextlib import redirect_stdout
    from io import StringIO

    _cli(["run", str(suite), "--store", str(store), "--no-progress"], ok=(0, 1))
    buf = StringIO()
    with redirect_stdout(buf):
        _cli(["runs", "list", "--store", str(store), "--json"])
    run_id = json.loads(buf.getvalue())[0]["run_id"]
    buf = StringIO()
    with redirect_stdout(buf):
        _cli(["runs", "show", run_id, "--store", str(store), "--json"])
    shown: dict[str, Any] = json.loads(buf.getvalue())
    return shown


def _summary_numbers(shown: Mapping[str, Any]) -> dict[str, Any]:
    summary = shown["summary"]
    evaluators = {
        f"{r['subject']}|{r['task']}|{r['evaluator']}": {
            k: r[k] for k in ("mean", "ci_low", "ci_high", "n_scored", "n_failed", "pass_rate")
        }
        for r in summary["evaluators"]
    }
    tasks = {
        f"{t['subject']}|{t['task']}": {
            "n_items": t["n_items"],
            "n_completed": t["n_completed"],
            "n_failed": t["n_failed"],
            "score": {k: t["score"].get(k) for k in ("mean", "ci_low", "ci_high", "n_scored")},
        }
        for t in summary["tasks"]
    }
    measures = {
        f"{a['task']}|{a['aggregate']}|{m['subject']}|{m['name']}": {
            k: m.get(k) for k in ("value", "ci_low", "ci_high", "n_scored", "n_failed")
        }
        for a in summary["aggregates"]
        for m in a["measures"]
    }
    return {"evaluators": evaluators, "tasks": tasks, "measures": measures}


def suite_kinds(tmp: Path) -> dict[str, Scalar]:
    """A suite run of every task kind (expected-output, script, retrieval; knowledge-graph
    triples; embedding pairs against the offline MiniLM), as `runs show --json` gives it back
    from the store: per evaluator, per task and per aggregate measure."""
    pinned = {"qa": _summary_numbers(_stored_run(tmp, QA_SUITE, tmp / "qa.db"))}
    pairs = [
        json.loads(line) for line in (DATA / "embeddings" / "pairs.jsonl").read_text().splitlines()
    ]
    texts = sorted({p[s] for p in pairs for s in ("a", "b")})
    suite = {
        "name": "write-kinds",
        "max_failure_rate": 0.5,
        "subjects": {
            "writer": {"recorded": {"path": str(DATA / "graph" / "outputs.jsonl")}},
            "vectors": {"stored-vectors": {"path": str(_vectors(tmp / "v.jsonl", texts))}},
        },
        "tasks": [
            {
                "name": "kg",
                "kind": "expected-output",
                "subjects": ["writer"],
                "dataset": str(DATA / "graph" / "items.jsonl"),
                "evaluators": ["kg-triples"],
                "aggregates": ["kg"],
            },
            {
                "name": "vectors",
                "kind": "embedding",
                "subjects": ["vectors"],
                "dataset": str(DATA / "embeddings" / "pairs.jsonl"),
                "evaluators": ["embedding-pair"],
                "aggregates": [{"embedding": {"k": 1}}],
            },
        ],
    }
    path = tmp / "write-kinds.json"
    path.write_text(json.dumps(suite))
    pinned["write"] = _summary_numbers(_stored_run(tmp, path, tmp / "w.db"))
    return flatten(pinned)


PINS: dict[str, Callable[[Path], dict[str, Scalar]]] = {
    "evaluate_demo": evaluate_demo,
    "evaluate_locomo_lexical": evaluate_locomo_lexical,
    "extraction_fixtures": extraction_fixtures,
    "operations_fixtures": operations_fixtures,
    "audit_memaudit": audit_memaudit,
    "suite_kinds": suite_kinds,
}
