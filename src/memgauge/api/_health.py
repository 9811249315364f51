"""The summary a memory server's `memory_health` tool returns (seed 002 section 6.3 item 7):
the latest evaluation of each kind (evaluate, demo, audit, ...: an audit is no retrieval
evaluation, so the newest run of any kind would hide the one asked about) with its metrics,
their CIs, and its drift against the rolling baseline of its suite's earlier runs; the query
log's volume, the open A/B tests, and the golden set's coverage of seed 002's category targets
(section 2.2: 280 queries, at least 15 per category), with one warning for each shortfall."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from memgauge.api._store import Where, require_store
from memgauge.data.records import MeasureValue, RunRecord
from memgauge.errors import UsageError
from memgauge.online import ab
from memgauge.stats.coverage import (
    GOLDEN_TARGETS,
    GOLDEN_TOTAL,
    MIN_PER_CATEGORY,
    category_coverage,
)
from memgauge.store.ab_tests import ABTestStore
from memgauge.store.logstats import golden_counts, log_volume
from memgauge.store.suite_runs import SuiteRunStore
from memgauge.track.gate import GateConfig, evaluate_gate
from memgauge.track.regressions import kinds_of

__all__ = ["GOLDEN_TARGETS", "GOLDEN_TOTAL", "MIN_PER_CATEGORY", "memory_health"]

_OPEN = ("running", "paused")


#: Kinds of run that are not an evaluation of the system in use: an optimization's candidate
#: runs are trials of its search (`memgauge optimize show` reports the best).
_TRIALS = frozenset({"optimize"})

#: what the drift of each measure shows, as the gate's check has it
_DRIFT = ("baseline", "current", "drop", "threshold", "regressed", "note")


def _evaluations(store: SuiteRunStore, suite: str | None, cfg: GateConfig) -> list[dict[str, Any]]:
    """The latest completed run of each kind, the newest first."""
    out = []
    for kind, run_id in store.latest_completed_by_kind(suite).items():
        run = store.get_run(run_id)
        if kind not in _TRIALS and run is not None and run.summary is not None:
            out.append(_evaluation(store, run, cfg))
    return out


def _unfinished(
    store: SuiteRunStore, suite: str | None, evaluations: list[dict[str, Any]]
) -> list[str]:
    """A warning per kind of run whose newest run ended without completing (it failed, or
    was stopped): the numbers shown for that kind are older than it, or there are none."""
    shown = {ev["kind"]: ev["run_id"] for ev in evaluations}
    out = []
    for kind, (run_id, status, reason) in store.latest_ended_by_kind(suite).items():
        if kind in _TRIALS or status == "completed":
            continue
        why = f": {reason}" if reason else ""
        before = (
            f"the {kind} numbers here are of {shown[kind]}, the latest that completed"
            if kind in shown
            else f"no {kind} run has completed"
        )
        see = "" if run_id in reason else f" (`memgauge runs show {run_id}`)"
        out.append(f"the latest {kind} run {run_id} {status}{why}; {before}{see}")
    return out


def _counts(m: MeasureValue | None) -> dict[str, int | None]:
    """A measure's `n_scored` and `n_failed` (None when the run does not have it)."""
    return {
        "n_scored": None if m is None else m.n_scored,
        "n_failed": None if m is None else m.n_failed,
    }


def _evaluation(store: SuiteRunStore, run: RunRecord, cfg: GateConfig) -> dict[str, Any]:
    history = store.suite_history(run.suite_name, headline=True, before=run)
    # the gate's rule, read only: health never records a verdict
    result = evaluate_gate(run, history, cfg, kinds_of(run), store.failed_gates(run.suite_name))
    # each number with its counts, as the run reports it (the gate reads the same measures)
    assert run.summary is not None  # _evaluations reads completed runs with a summary
    counted = {(m.subject, m.task, m.name): m for m in run.summary.measures()}
    return {
        "kind": run.kind,
        "run_id": run.run_id,
        "suite": run.suite_name,
        "created_at": run.created_at,
        "metrics": [
            {
                "subject": c.subject,
                "task": c.task,
                "measure": c.evaluator,
                "value": c.current,
                "ci": list(c.ci) if c.ci else None,
                **_counts(counted.get((c.subject, c.task, c.evaluator))),
            }
            for c in result.checks
        ],
        "drift": {
            "status": result.status if result.baseline_runs else "no baseline",
            "baseline_runs": result.baseline_runs,
            "regressed": [
                f"{c.subject}/{c.task}/{c.evaluator}" for c in result.checks if c.regressed
            ],
            "metrics": [
                {
                    "subject": c.subject,
                    "task": c.task,
                    "measure": c.evaluator,
                    **{k: getattr(c, k) for k in _DRIFT},
                }
                for c in result.checks
            ],
            "warnings": result.warnings,
        },
    }


def _coverage(counts: dict[str | None, int]) -> tuple[dict[str, Any], list[str]]:
    """The golden set against seed 002's targets (`stats.coverage`, the rule `evaluate` applies
    to its dataset too), and its warnings: each shortfall once, or one warning for a golden set
    not started."""
    coverage, warnings = category_coverage(counts, "golden set", seed_targets=True)
    if coverage["queries"] == 0:
        return coverage, [
            f"golden set: no query yet (seed 002 asks for {GOLDEN_TOTAL}, at least"
            f" {MIN_PER_CATEGORY} per category): harvest judged queries from the log with"
            " `memgauge logs harvest STORE`"
        ]
    return coverage, warnings


def memory_health(
    store: Where = None,
    *,
    suite: str | None = None,
    logs: Where = None,
    now: datetime | None = None,
    config: GateConfig | None = None,
) -> dict[str, Any]:
    """The health summary (see the module docstring) of results store `store` (it must
    exist), whose query log is there too unless `logs` names another store. `suite`: the
    latest runs of this suite, not of any. JSON-ready; `latest_evaluations` is a list, one
    entry per kind of run, the newest first; n/a parts are None, with `warnings` saying what is
    short or missing, each once."""
    url = require_store(store)
    log_url = require_store(logs) if logs is not None else url
    when = now or datetime.now(UTC)
    warnings: list[str] = []
    # only read: opened as they are (a store at another schema is refused, never migrated)
    with SuiteRunStore(url, read_only=True) as opened:
        evaluations = _evaluations(opened, suite, config or GateConfig())
        unfinished = _unfinished(opened, suite, evaluations)
    if not evaluations:
        if suite is not None and not unfinished:
            raise UsageError(f"no completed run of suite {suite!r} in {url}")
        if not unfinished:
            warnings.append(
                "no completed evaluation in the store: run `memgauge evaluate` or `run`"
            )
    warnings += unfinished
    for ev in evaluations:
        if ev["drift"]["regressed"]:
            warnings.append(
                f"drift: the latest {ev['kind']} run {ev['run_id']} regressed against its"
                " baseline: " + ", ".join(ev["drift"]["regressed"])
            )
    with ABTestStore(url, read_only=True) as tests:
        open_tests = [
            {k: r[k] for k in ("name", "status", "metric", "n_pairs", "mean_delta", "decision")}
            for r in (ab.ab_report(tests, n) for n in tests.names())
            if r["status"] in _OPEN
        ]
    volume = log_volume(log_url, when)
    if volume["eval_queries"]["last_24h"] == 0:
        warnings.append("logging: no query logged in the last 24 hours")
    coverage, short = _coverage(golden_counts(log_url))
    return {
        "generated_at": when.isoformat(),
        "store": str(url),
        "latest_evaluations": evaluations,
        "logging": volume,
        "ab_tests": open_tests,
        "golden_set": coverage,
        "warnings": warnings + short,
    }
