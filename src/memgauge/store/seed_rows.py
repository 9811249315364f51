"""Rows of seed 002's tables built from memgauge's own records, in one place for the stores and
for the migration that created the tables (which backfilled them from older records).

`eval_shadow_runs`: one row per shadowed query, from a `ShadowRunner` comparison (Kendall tau-b
is `rank_correlation`, Jaccard of the top K is `set_overlap`; Spearman rho and the seed's class
are extra columns). A failed treatment call keeps the control's ranking, no treatment ranking,
and the error.

`eval_results`: one row per system of a retrieval run, projected from the run's result JSON (the `memgauge evaluate` / `memgauge demo` result) into the seed's fixed columns.

Fixed-cutoff columns take the measure of that name (`mrr_at_5` is RR@5, `ndcg_at_10` is
nDCG@10, ...) and stay NULL when the run did not compute it. The agent-memory columns take the
first measured cutoff of each metric (the run's `--agent-k`). The interval, deltas and p-value
are those of nDCG@10, the primary metric: `control_system` is the run's baseline system, whose
paired comparison with this system gave them, and `is_significant` is `p_value < alpha` with
the run's alpha. `result_diversity_score` is the seed's intra-list similarity
(1 - unique_folders / result_count): lower is more diverse.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping, Sequence
from typing import Any

import sqlalchemy as sa

from memgauge._util.numbers import ALPHA
from memgauge.store.tables import eval_results

__all__ = [
    "EVAL_RESULTS_COLUMNS",
    "SHADOW_COLUMNS",
    "SHADOW_CONTEXT",
    "UNREAD",
    "ab_test_eval_row",
    "eval_results_rows",
    "insert_eval_results",
    "insert_shadow_row",
    "metric_family",
    "replace_eval_results",
    "shadow_eval_row",
    "shadow_row",
    "shadow_values",
]

_IR = {
    "mrr_at_5": "RR@5",
    "mrr_at_10": "RR@10",
    "ndcg_at_5": "nDCG@5",
    "ndcg_at_10": "nDCG@10",
    "ndcg_at_20": "nDCG@20",
    "recall_at_5": "Recall@5",
    "recall_at_10": "Recall@10",
}
_AGENT = {
    "constitutional_surfacing_rate": "constitutional_surfacing@",
    "importance_weighted_recall": "importance_weighted_recall@",
    "session_personalization_lift": "session_personalization_lift@",
    "causal_chain_completeness": "causal_chain_completeness@",
    "result_diversity_score": "folder_ils@",
}
PRIMARY = "nDCG@10"

#: what `eval_results_rows` never reads of a retrieval result's per-query records: left out
#: of the facts dumped for it (1,536 queries' hits, channels and texts of a LoCoMo run)
UNREAD = {
    "systems": {
        "__all__": {
            "per_query": {
                "__all__": {
                    "text",
                    "intent",
                    "category",
                    "hits",
                    "channels",
                    "relevant",
                    "relevant_channels",
                    "latency_ms",
                    "pre_expansion",
                }
            }
        }
    }
}

#: the columns a row of `eval_results` is written with: all but its generated `id`
EVAL_RESULTS_COLUMNS = tuple(c.name for c in eval_results.columns if c.name != "id")


def metric_family(metric: str) -> str | None:
    """Which of `eval_ab_tests`' running sums a test's metric fills: "mrr" (MRR, RR@k),
    "ndcg" (nDCG@k), or None (neither: those columns stay NULL)."""
    m = metric.lower()
    if m.startswith(("mrr", "rr")):
        return "mrr"
    if m.startswith("ndcg"):
        return "ndcg"
    return None


def _agent(metrics: Mapping[str, Any], prefix: str) -> Mapping[str, Any] | None:
    return next((v for k, v in metrics.items() if k.startswith(prefix)), None)


def _comparison(result: Mapping[str, Any], system: str) -> dict[str, Any]:
    """This system's paired comparison against the run's baseline, if any."""
    for comp in result.get("comparisons") or []:
        if comp.get("candidate") != system:
            continue
        by = {m["measure"]: m for m in comp.get("metrics", [])}
        primary, rr = by.get(PRIMARY), by.get("RR@10")
        # the Holm-corrected p the report shows beside its significance mark
        p = primary.get("p_holm") if primary else None
        alpha = (result.get("settings") or {}).get("alpha", ALPHA)
        return {
            "control_run_id": result["run_id"],
            "control_system": comp.get("baseline"),
            "mrr_delta": rr.get("delta") if rr else None,
            "ndcg_delta": primary.get("delta") if primary else None,
            "p_value": p,
            "is_significant": None if p is None else int(p < alpha),
        }
    return {}


def eval_results_rows(
    result: Mapping[str, Any], run_type: str = "full", feature_id: str | None = None
) -> list[dict[str, Any]]:
    """One `eval_results` row per system that ran (a failed system has no metrics to store)."""
    rows: list[dict[str, Any]] = []
    for s in result.get("systems", []):
        if s.get("status") != "ok":
            continue
        metrics: Mapping[str, Any] = s.get("metrics") or {}
        agent: Mapping[str, Any] = s.get("agent_metrics") or {}
        row: dict[str, Any] = dict.fromkeys(EVAL_RESULTS_COLUMNS)
        row.update(
            run_id=result["run_id"], run_type=run_type, feature_id=feature_id, system=s["name"]
        )
        for col, name in _IR.items():
            row[col] = (metrics.get(name) or {}).get("value")
        for col, prefix in _AGENT.items():
            row[col] = (_agent(agent, prefix) or {}).get("value")
        cold = _agent(agent, "cold_start_mrr_ratio@")
        row["cold_start_mrr"] = ((cold or {}).get("detail") or {}).get("cold_mrr")
        channels = {
            k.split("[", 1)[1].split("]", 1)[0]: v.get("value")
            for k, v in agent.items()
            if k.startswith("channel_contribution[")
        }
        row["channel_contribution_json"] = (
            json.dumps(channels, sort_keys=True) if channels else None
        )
        row["avg_latency_ms"] = ((s.get("latency_ms") or {}).get("total") or {}).get("mean")
        row["query_count"] = int((s.get("counts") or {}).get("n_scored", 0))
        primary = metrics.get(PRIMARY) or {}
        row["confidence_interval_lower"] = primary.get("ci_low")
        row["confidence_interval_upper"] = primary.get("ci_high")
        row.update(_comparison(result, s["name"]))
        row["created_at"] = result["created_at"]
        row["per_query_results"] = json.dumps(
            [
                {
                    "query_id": q["query_id"],
                    "metrics": q.get("metrics", {}),
                    # seed 002's QueryMetrics carries the agent-memory values per query
                    "agent_metrics": q.get("agent_metrics", {}),
                    "error": q.get("error"),
                }
                for q in s.get("per_query", [])
            ],
            sort_keys=True,
        )
        rows.append(row)
    return rows


def insert_eval_results(conn: sqlite3.Connection, result: Mapping[str, Any]) -> int:
    """Insert the rows of one run's result (in the caller's transaction); return how many.
    The hand-run SQLite migrations' helper (the stores use `replace_eval_results`)."""
    rows = eval_results_rows(result)
    conn.executemany(
        f"INSERT INTO eval_results ({', '.join(EVAL_RESULTS_COLUMNS)})"
        f" VALUES ({', '.join('?' * len(EVAL_RESULTS_COLUMNS))})",
        [tuple(r[c] for c in EVAL_RESULTS_COLUMNS) for r in rows],
    )
    return len(rows)


#: eval_shadow_runs column -> the key of a ShadowRunner comparison it holds (both ways:
#: written by `insert_shadow_row`, read back by `shadow_row`)
SHADOW_KEYS = {
    "query_id": "query_id",
    "control_result_ids": "control",
    "treatment_result_ids": "treatment",
    "rank_correlation": "kendall_tau_b",
    "set_overlap": "jaccard",
    "top_result_changed": "top1_changed",
    "order_differences": "order_differences",
    "mrr_delta": "mrr_delta",
    "ndcg_delta": "ndcg_delta",
    "control_latency_ms": "control_latency_ms",
    "treatment_latency_ms": "treatment_latency_ms",
    "spearman_rho": "spearman_rho",
    "classification": "classification",
}
SHADOW_COLUMNS = (*SHADOW_KEYS, "feature_id", "created_at", "error")
#: revision 0013's columns, each holding the comparison's key of the same name (the hand-run
#: SQLite migrations, which predate them, never write them)
SHADOW_CONTEXT = (
    "intent",
    "session_id",
    "log_level",
    "query_text",
    "control_mrr",
    "treatment_mrr",
    "control_ndcg",
    "treatment_ndcg",
)


def shadow_row(values: Sequence[Any]) -> dict[str, Any]:
    """A comparison as `ShadowRunner` recorded it, from the `SHADOW_KEYS` columns in order."""
    row = dict(zip(SHADOW_KEYS.values(), values, strict=True))
    row["control"] = json.loads(row["control"])
    row["treatment"] = None if row["treatment"] is None else json.loads(row["treatment"])
    row["top1_changed"] = None if row["top1_changed"] is None else bool(row["top1_changed"])
    return row


def shadow_values(experiment: str, row: Mapping[str, Any], created_at: str) -> dict[str, Any]:
    """One shadow comparison as an `eval_shadow_runs` row (column -> value)."""
    cols = {col: row.get(key) for col, key in SHADOW_KEYS.items()}
    treatment, top1 = row.get("treatment"), row.get("top1_changed")
    cols["query_id"] = str(row["query_id"])
    cols["control_result_ids"] = json.dumps(list(row.get("control") or []))
    cols["treatment_result_ids"] = None if treatment is None else json.dumps(list(treatment))
    cols["top_result_changed"] = None if top1 is None else int(top1)
    error = row.get("error")
    if error is None and treatment is None:
        error = "no treatment ranking was recorded"
    cols.update(feature_id=experiment, created_at=created_at, error=error)
    return {c: cols[c] for c in SHADOW_COLUMNS}


def insert_shadow_row(
    conn: sqlite3.Connection, experiment: str, row: Mapping[str, Any], created_at: str
) -> None:
    """Insert one shadow comparison (in the caller's transaction; the hand-run SQLite
    migrations' helper: the stores write through SQLAlchemy)."""
    values = tuple(shadow_values(experiment, row, created_at).values())
    conn.execute(
        f"INSERT INTO eval_shadow_runs ({', '.join(SHADOW_COLUMNS)})"
        f" VALUES ({', '.join('?' * len(SHADOW_COLUMNS))})",
        values,
    )


_COLUMN_OF = {name: col for col, name in _IR.items()}


def replace_eval_results(
    conn: sa.Connection, run_id: str, rows: Sequence[Mapping[str, Any]]
) -> None:
    """Replace the `eval_results` rows of `run_id` (in the caller's transaction)."""
    conn.execute(sa.delete(eval_results).where(eval_results.c.run_id == run_id))
    if rows:
        conn.execute(
            sa.insert(eval_results), [{c: r.get(c) for c in EVAL_RESULTS_COLUMNS} for r in rows]
        )


def ab_test_eval_row(
    test: Mapping[str, Any], pairs: Sequence[Mapping[str, Any]], created_at: str
) -> dict[str, Any]:
    """An A/B test as one `eval_results` row (`run_type` ab_test, `feature_id` the test): the
    treatment's mean of the test's metric in its column (`mrr_at_10` for RR@10 ...), the paired
    delta against the control, the sample count; `is_significant` is the SPRT's decision (1
    treatment better, 0 no difference, NULL still running). An SPRT has no p-value: NULL."""
    row: dict[str, Any] = dict.fromkeys(EVAL_RESULTS_COLUMNS)
    name, metric = str(test["feature_id"]), str(test["metric"])
    n = len(pairs)
    treatment = [float(p["treatment"]) for p in pairs]
    control = [float(p["control"]) for p in pairs]
    delta = (sum(treatment) - sum(control)) / n if n else None
    column = _COLUMN_OF.get(metric)
    if column is not None and n:
        row[column] = sum(treatment) / n
    family = metric_family(metric)
    decision = (test.get("state") or {}).get("decision")
    latencies = [
        float(p["treatment_latency_ms"]) for p in pairs if p.get("treatment_latency_ms") is not None
    ]
    row.update(
        run_id=f"ab:{name}",
        run_type="ab_test",
        feature_id=name,
        system="treatment",
        query_count=n,
        control_system="control",
        mrr_delta=delta if family == "mrr" else None,
        ndcg_delta=delta if family == "ndcg" else None,
        avg_latency_ms=sum(latencies) / len(latencies) if latencies else None,
        is_significant={"treatment_better": 1, "no_difference": 0}.get(str(decision)),
        created_at=created_at,
        per_query_results=json.dumps(
            [
                {"query_id": p["query_id"], "control": p["control"], "treatment": p["treatment"]}
                for p in pairs
            ],
            sort_keys=True,
        ),
    )
    return row


def shadow_eval_row(
    experiment: str, rows: Sequence[Mapping[str, Any]], created_at: str
) -> dict[str, Any]:
    """A shadow experiment as one `eval_results` row (`run_type` shadow, `feature_id` the
    experiment): mean MRR and nDCG deltas over the judged comparisons, the treatment's mean
    latency, the number of comparisons."""
    row: dict[str, Any] = dict.fromkeys(EVAL_RESULTS_COLUMNS)

    def mean(key: str) -> float | None:
        values = [float(r[key]) for r in rows if r.get(key) is not None]
        return sum(values) / len(values) if values else None

    row.update(
        run_id=f"shadow:{experiment}",
        run_type="shadow",
        feature_id=experiment,
        system="treatment",
        query_count=len(rows),
        control_system="control",
        mrr_delta=mean("mrr_delta"),
        ndcg_delta=mean("ndcg_delta"),
        avg_latency_ms=mean("treatment_latency_ms"),
        created_at=created_at,
    )
    return row
