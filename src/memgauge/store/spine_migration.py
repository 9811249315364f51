"""Migration 0009, one spine: every evaluation is a suite run.

- `suite_runs` gains `kind` (suite, evaluate, demo, extraction, operations, audit); outputs
  gain `extra_json` (what a subject call gave beside its output), verdicts `raw_reply` (a
  judge's reply as the model gave it); `suite_run_setups` keeps how long each reset and ingest
  took.
- Retrieval runs recorded by earlier versions of `memgauge evaluate` in `runs`, `run_systems`
  and `query_results` become suite runs (kind `evaluate`, one retrieval task): their systems are
  the subjects, each query an item with its ranked hits and one verdict per measure, and the
  result's numbers the run's `ir` aggregate. Then the three tables go: one retrieval run is
  stored once.
- `eval_results` (seed 002) is rebuilt as a projection of suite runs: its `run_id` is a suite
  run's (or an A/B test's or shadow experiment's, whose rows those commands write), with no
  foreign key to the retired `runs`, and `p_value` / `is_significant` hold the Holm-corrected
  p-value the report shows.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from typing import Any

from memgauge.store.seed_rows import insert_eval_results

__all__ = ["one_spine"]

_DDL = """
ALTER TABLE suite_runs ADD COLUMN kind TEXT NOT NULL DEFAULT 'suite';
ALTER TABLE suite_run_outputs ADD COLUMN extra_json TEXT;
ALTER TABLE suite_run_scores ADD COLUMN raw_reply TEXT;
CREATE TABLE suite_run_setups (
    run_id TEXT NOT NULL REFERENCES suite_runs(run_id) ON DELETE CASCADE,
    subject TEXT NOT NULL,
    task TEXT NOT NULL,
    corpus TEXT,
    seconds REAL NOT NULL,
    at TEXT NOT NULL
);
CREATE INDEX idx_suite_run_setups ON suite_run_setups(run_id)
"""


def _dumps(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)


def _statements(sql: str) -> list[str]:
    return [s.strip() for s in sql.split(";") if s.strip()]


def _measure_values(system: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    for name, m in (system.get("metrics") or {}).items():
        out.append(
            {
                "subject": system["name"],
                "task": "retrieval",
                "name": name,
                "value": m.get("value"),
                "ci_low": m.get("ci_low"),
                "ci_high": m.get("ci_high"),
                "n_scored": m.get("n_scored", 0),
                "n_failed": m.get("n_failed", 0),
                "source": "ir",
                "kind": "retrieval",
            }
        )
    return out


def _convert(
    conn: sqlite3.Connection, run_id: str, created_at: str, result: dict[str, Any]
) -> None:
    """One retrieval result of the old tables as a suite run."""
    settings = result.get("settings") or {}
    dataset = result.get("dataset") or {}
    systems = result.get("systems") or []
    measures = list(settings.get("measures") or [])
    suite = {
        "schema_version": 1,
        "name": f"evaluate:{dataset.get('name') or 'dataset'}",
        "description": "a `memgauge evaluate` run recorded before runs were unified",
        "subjects": {s["name"]: s.get("spec") or {} for s in systems},
        "tasks": [
            {
                "name": "retrieval",
                "kind": "retrieval",
                "dataset": dataset.get("source"),
                "k": settings.get("k", 20),
                "evaluators": [
                    {"spec": {"retrieval": {"measure": m}}, "label": m} for m in measures
                ],
                "aggregates": [{"ir": {"measures": measures}}],
            }
        ],
        "seed": settings.get("seed", 0),
    }
    canonical = _dumps(suite)
    items: list[tuple[Any, ...]] = []
    outputs: list[tuple[Any, ...]] = []
    scores: list[tuple[Any, ...]] = []
    failures: list[tuple[Any, ...]] = []
    tasks_summary, evaluators_summary = [], []
    for s in systems:
        n_ok = n_failed = 0
        for seq, q in enumerate(s.get("per_query") or []):
            key = (run_id, s["name"], "retrieval", q["query_id"])
            failed = q.get("error") is not None
            n_failed += failed
            n_ok += not failed
            items.append(
                (
                    *key,
                    seq,
                    "failed" if failed else "completed",
                    1,
                    q.get("category"),
                    _dumps({"text": q.get("text", "")}),
                    _dumps(dict.fromkeys(q.get("relevant", []), 3)),
                    created_at,
                )
            )
            if failed:
                failures.append((*key, "subject", "error", str(q["error"]), 1, created_at))
                continue
            hits = [{"id": h, "rank": r} for r, h in enumerate(q.get("hits", []), 1)]
            outputs.append((*key, _dumps(hits), _dumps(q.get("latency_ms") or {})))
            for m, v in (q.get("metrics") or {}).items():
                scores.append((*key, m, v, None, "" if v is None else f"{m} = {v:.3f}", None, "{}"))
        tasks_summary.append(
            {
                "subject": s["name"],
                "task": "retrieval",
                "n_items": n_ok + n_failed,
                "n_completed": n_ok,
                "n_failed": n_failed,
                "n_queued": 0,
                "score": {
                    "mean": None,
                    "ci_low": None,
                    "ci_high": None,
                    "n_scored": 0,
                    "n_failed": n_failed,
                },
            }
        )
        for m, v in (s.get("metrics") or {}).items():
            evaluators_summary.append(
                {
                    "subject": s["name"],
                    "task": "retrieval",
                    "evaluator": m,
                    "mean": v.get("value"),
                    "ci_low": v.get("ci_low"),
                    "ci_high": v.get("ci_high"),
                    "n_scored": v.get("n_scored", 0),
                    "n_failed": v.get("n_failed", 0),
                }
            )
    n_failed_total = sum(t["n_failed"] for t in tasks_summary)
    n_items = len(items)
    summary = {
        "schema_version": 1,
        "n_items": n_items,
        "n_completed": n_items - n_failed_total,
        "n_failed": n_failed_total,
        "n_queued": 0,
        "failure_rate": n_failed_total / n_items if n_items else None,
        "tasks": tasks_summary,
        "evaluators": evaluators_summary,
        "aggregates": [
            {
                "aggregate": "ir",
                "task": "retrieval",
                "measures": [
                    m for s in systems if s.get("status") == "ok" for m in _measure_values(s)
                ],
                "detail": {
                    "measures": measures,
                    "settings": settings,
                    "systems": systems,
                    "comparisons": result.get("comparisons") or [],
                },
            }
        ],
        "targets": [],
        "llm_usage": {},
    }
    conn.execute(
        "INSERT INTO suite_runs(run_id, suite_name, kind, status, created_at, started_at,"
        " finished_at, suite_sha256, suite_json, settings_json, provenance_json, n_items,"
        " summary_json) VALUES (?, ?, 'evaluate', 'completed', ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            run_id,
            suite["name"],
            created_at,
            created_at,
            created_at,
            hashlib.sha256(canonical.encode("utf-8")).hexdigest(),
            canonical,
            _dumps({"seed": settings.get("seed", 0)}),
            _dumps(
                {
                    "memgauge_version": result.get("memgauge_version"),
                    "datasets": {"retrieval": dataset.get("sha256")},
                    "migrated_from": "runs (memgauge evaluate before 0009)",
                }
            ),
            n_items,
            _dumps(summary),
        ),
    )
    conn.executemany(
        "INSERT INTO suite_run_subjects(run_id, subject, spec_json) VALUES (?, ?, ?)",
        [(run_id, s["name"], _dumps(s.get("spec") or {})) for s in systems],
    )
    conn.execute(
        "INSERT INTO suite_run_tasks(run_id, task, kind, dataset, dataset_sha256, spec_json,"
        " n_items) VALUES (?, 'retrieval', 'retrieval', ?, ?, ?, ?)",
        (run_id, dataset.get("source"), dataset.get("sha256"), _dumps(suite["tasks"][0]), n_items),
    )
    conn.executemany(
        "INSERT INTO suite_run_items(run_id, subject, task, item_id, seq, status, attempts,"
        " category, input_json, expected_json, finished_at) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
        items,
    )
    conn.executemany(
        "INSERT INTO suite_run_outputs(run_id, subject, task, item_id, output_json, latency_json)"
        " VALUES (?,?,?,?,?,?)",
        outputs,
    )
    conn.executemany(
        "INSERT INTO suite_run_scores(run_id, subject, task, item_id, evaluator, value, passed,"
        " reason, error, detail_json) VALUES (?,?,?,?,?,?,?,?,?,?)",
        scores,
    )
    conn.executemany(
        "INSERT INTO suite_run_failures(run_id, subject, task, item_id, stage, kind, message,"
        " attempt, at) VALUES (?,?,?,?,?,?,?,?,?)",
        failures,
    )


def one_spine(conn: sqlite3.Connection) -> None:
    """0009 (see the module docstring)."""
    for statement in _statements(_DDL):
        conn.execute(statement)
    old = conn.execute(
        "SELECT run_id, created_at, result_json FROM runs WHERE kind = 'retrieval'"
        " ORDER BY created_at"
    ).fetchall()
    taken = {r[0] for r in conn.execute("SELECT run_id FROM suite_runs")}
    for run_id, created_at, result_json in old:
        if run_id not in taken:
            _convert(conn, run_id, created_at, json.loads(result_json))
    # eval_results: the same columns, no foreign key to `runs`; rows re-projected
    (ddl,) = conn.execute(
        "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'eval_results'"
    ).fetchone()
    indexes = [
        r[0]
        for r in conn.execute(
            "SELECT sql FROM sqlite_master WHERE type = 'index' AND tbl_name = 'eval_results'"
            " AND sql IS NOT NULL"
        )
    ]
    rows = conn.execute("SELECT * FROM eval_results").fetchall()
    cols = [d[1] for d in conn.execute("PRAGMA table_info(eval_results)")]
    conn.execute("DROP TABLE eval_results")
    conn.execute(
        ddl.replace("REFERENCES runs(run_id) ON DELETE CASCADE", "").replace(
            "run_id TEXT NOT NULL ,", "run_id TEXT NOT NULL,"
        )
    )
    for index_sql in indexes:
        conn.execute(index_sql)
    full_ids = {r[0] for r in old}
    keep = [r for r in rows if r[cols.index("run_id")] not in full_ids]
    if keep:
        conn.executemany(
            f"INSERT INTO eval_results ({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))})",
            keep,
        )
    for run_id, created_at, result_json in old:
        result = json.loads(result_json)
        insert_eval_results(conn, {**result, "run_id": run_id, "created_at": created_at})
    for table in ("query_results", "run_systems", "runs"):
        conn.execute(f"DROP TABLE {table}")
