"""memgauge's Python API: evaluate a dataset against live objects or specs, load a dataset, run a
suite, read a run. Every call goes through the one engine and records its run, exactly like the
command line does (which calls these).

```python
import memgauge

report = memgauge.evaluate("data/demo", {"lexical": "lexical", "mine": MyMemory()})
print(report.summary.measures())          # every number with its CI
memgauge.read_run(report.run_id).status   # the stored run
```

`store`: None records in the store `MEMGAUGE_STORE` names, else `MEMGAUGE_HOME/results.db`; a
path or URL (`sqlite:///PATH`, `postgresql://...`) records there; `False` keeps the run in memory
only (it cannot be resumed); and any object with the `Recorder` methods works too.

The command line is written on this package alone (with `memgauge.report` to render): every
command's work is one of the functions here, so a script can do what a command does.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from memgauge.aggregates.ir import DEFAULT_MEASURES
    from memgauge.api._bench import bench_search
    from memgauge.api._compare import compare_stored_runs, compare_trec_runs
    from memgauge.api._files import FILE_KINDS, Imported, import_dataset, validate_file
    from memgauge.api._flags import add_ab_from_shadow, create_flag, feature_flags, set_flag
    from memgauge.api._health import memory_health
    from memgauge.api._judges import calibrate_judge, judge_from_spec, rejudge
    from memgauge.api._llm import close_llm, configure_llm
    from memgauge.api._measures import score_trec_run
    from memgauge.api._online import (
        ab_test_reports,
        add_ab_pairs,
        create_ab_test,
        detect_re_searches,
        dump_memories,
        export_golden_set,
        import_graded,
        import_spans,
        pause_ab_test,
        shadow_summaries,
        write_annotation_pool,
    )
    from memgauge.api._optimize import optimization, optimization_diff, optimizations, optimize
    from memgauge.api._runfiles import RunFile, write_run_files
    from memgauge.api._runs import (
        RunConfig,
        evaluate,
        interim_summary,
        load_dataset,
        run_suite,
        write_path_subject,
    )
    from memgauge.api._samplesize import sample_size
    from memgauge.api._sessions import (
        batch_validate,
        derive_log_signals,
        log_channel_contribution,
        outcome_correlation,
        record_outcome,
        session_report,
    )
    from memgauge.api._store import (
        StoreArg,
        StoreURL,
        existing_store,
        export_runs,
        import_runs,
        open_store,
        read_run,
        require_store,
        resolve_run_id,
        results_path,
        results_store,
        upgrade_store,
        viewer_store,
    )
    from memgauge.api._track import accept_gate, gate, history, learnings_query
    from memgauge.data.demo import demo_dataset
    from memgauge.data.detect import DATASET_KINDS
    from memgauge.data.io import load_judged
    from memgauge.data.io import save_retrieval_dataset as save_dataset
    from memgauge.data.records import ItemRecord, RunRecord, RunSummary
    from memgauge.metrics import CONVENTIONS, MetricConfig, parse_measure
    from memgauge.metrics.conventions import DEFAULT_DEPTH
    from memgauge.metrics.measures import TREC_OFFICIAL
    from memgauge.metrics.trec_report import format_value, trec_eval_report
    from memgauge.probes.sources import load_audit_source as audit_source
    from memgauge.runs.audit import AUDIT_MATCH_METHOD, AuditPlan, audit_result, plan_audit
    from memgauge.runs.builders import audit_suite, extraction_suite, operations_suite
    from memgauge.runs.engine import RunReport
    from memgauge.runs.loadtest import MAX_CLIENTS, LoadResult
    from memgauge.runs.outcome import exit_code, missed_targets
    from memgauge.runs.schemas import SCHEMA_KINDS, json_schema
    from memgauge.runs.suite_compare import compare_runs
    from memgauge.stats.samplesize import minimum_detectable_effect
    from memgauge.stats.systems import resolve_correction
    from memgauge.store.querylog import apply_retention, bootstrap_judgments
    from memgauge.store.querylog import harvest as harvest_queries
    from memgauge.store.suite_runs import SuiteRunStore
    from memgauge.subjects.parse import one_spec, parse_system
    from memgauge.subjects.specs import check_subject
    from memgauge.track.gate import GateConfig, GateResult, sparkline
    from memgauge.track.history import MetricSeries, metric_series
    from memgauge.track.regressions import learnings_path

__all__ = [
    "AUDIT_MATCH_METHOD",
    "CONVENTIONS",
    "DATASET_KINDS",
    "DEFAULT_DEPTH",
    "DEFAULT_MEASURES",
    "FILE_KINDS",
    "MAX_CLIENTS",
    "SCHEMA_KINDS",
    "TREC_OFFICIAL",
    "AuditPlan",
    "GateConfig",
    "GateResult",
    "Imported",
    "ItemRecord",
    "LoadResult",
    "MetricConfig",
    "MetricSeries",
    "RunConfig",
    "RunFile",
    "RunRecord",
    "RunReport",
    "RunSummary",
    "StoreArg",
    "StoreURL",
    "SuiteRunStore",
    "ab_test_reports",
    "accept_gate",
    "add_ab_from_shadow",
    "add_ab_pairs",
    "apply_retention",
    "audit_result",
    "audit_source",
    "audit_suite",
    "batch_validate",
    "bench_search",
    "bootstrap_judgments",
    "calibrate_judge",
    "check_subject",
    "close_llm",
    "compare_runs",
    "compare_stored_runs",
    "compare_trec_runs",
    "configure_llm",
    "create_ab_test",
    "create_flag",
    "demo_dataset",
    "derive_log_signals",
    "detect_re_searches",
    "dump_memories",
    "evaluate",
    "existing_store",
    "exit_code",
    "export_golden_set",
    "export_runs",
    "extraction_suite",
    "feature_flags",
    "format_value",
    "gate",
    "harvest_queries",
    "history",
    "import_dataset",
    "import_graded",
    "import_runs",
    "import_spans",
    "interim_summary",
    "json_schema",
    "judge_from_spec",
    "learnings_path",
    "learnings_query",
    "load_dataset",
    "load_judged",
    "log_channel_contribution",
    "memory_health",
    "metric_series",
    "minimum_detectable_effect",
    "missed_targets",
    "one_spec",
    "open_store",
    "operations_suite",
    "optimization",
    "optimization_diff",
    "optimizations",
    "optimize",
    "outcome_correlation",
    "parse_measure",
    "parse_system",
    "pause_ab_test",
    "plan_audit",
    "read_run",
    "record_outcome",
    "rejudge",
    "require_store",
    "resolve_correction",
    "resolve_run_id",
    "results_path",
    "results_store",
    "run_suite",
    "sample_size",
    "save_dataset",
    "score_trec_run",
    "session_report",
    "set_flag",
    "shadow_summaries",
    "sparkline",
    "trec_eval_report",
    "upgrade_store",
    "validate_file",
    "viewer_store",
    "write_annotation_pool",
    "write_path_subject",
    "write_run_files",
]

#: name -> the module that defines it (`module:attribute` where the API renames it). Each is
#: loaded on first use, so a command imports what its own work needs and no more (`memgauge
#: logs` does not load the engine).
_LAZY: dict[str, str] = {
    "AUDIT_MATCH_METHOD": "memgauge.runs.audit",
    "AuditPlan": "memgauge.runs.audit",
    "DATASET_KINDS": "memgauge.data.detect",
    "DEFAULT_DEPTH": "memgauge.metrics.conventions",
    "DEFAULT_MEASURES": "memgauge.aggregates.ir",
    "FILE_KINDS": "memgauge.api._files",
    "GateConfig": "memgauge.track.gate",
    "GateResult": "memgauge.track.gate",
    "Imported": "memgauge.api._files",
    "ItemRecord": "memgauge.data.records",
    "LoadResult": "memgauge.runs.loadtest",
    "MAX_CLIENTS": "memgauge.runs.loadtest",
    "MetricConfig": "memgauge.metrics",
    "CONVENTIONS": "memgauge.metrics",
    "MetricSeries": "memgauge.track.history",
    "RunConfig": "memgauge.api._runs",
    "RunRecord": "memgauge.data.records",
    "RunReport": "memgauge.runs.engine",
    "RunSummary": "memgauge.data.records",
    "SCHEMA_KINDS": "memgauge.runs.schemas",
    "StoreArg": "memgauge.api._store",
    "SuiteRunStore": "memgauge.store.suite_runs",
    "ab_test_reports": "memgauge.api._online",
    "add_ab_from_shadow": "memgauge.api._flags",
    "create_flag": "memgauge.api._flags",
    "feature_flags": "memgauge.api._flags",
    "set_flag": "memgauge.api._flags",
    "add_ab_pairs": "memgauge.api._online",
    "apply_retention": "memgauge.store.querylog",
    "audit_result": "memgauge.runs.audit",
    "audit_source": "memgauge.probes.sources:load_audit_source",
    "audit_suite": "memgauge.runs.builders",
    "bench_search": "memgauge.api._bench",
    "bootstrap_judgments": "memgauge.store.querylog",
    "calibrate_judge": "memgauge.api._judges",
    "check_subject": "memgauge.subjects.specs",
    "close_llm": "memgauge.api._llm",
    "compare_runs": "memgauge.runs.suite_compare",
    "compare_stored_runs": "memgauge.api._compare",
    "compare_trec_runs": "memgauge.api._compare",
    "configure_llm": "memgauge.api._llm",
    "create_ab_test": "memgauge.api._online",
    "demo_dataset": "memgauge.data.demo",
    "detect_re_searches": "memgauge.api._online",
    "dump_memories": "memgauge.api._online",
    "evaluate": "memgauge.api._runs",
    "exit_code": "memgauge.runs.outcome",
    "export_golden_set": "memgauge.api._online",
    "extraction_suite": "memgauge.runs.builders",
    "accept_gate": "memgauge.api._track",
    "gate": "memgauge.api._track",
    "harvest_queries": "memgauge.store.querylog:harvest",
    "history": "memgauge.api._track",
    "import_dataset": "memgauge.api._files",
    "import_graded": "memgauge.api._online",
    "import_spans": "memgauge.api._online",
    "interim_summary": "memgauge.api._runs",
    "json_schema": "memgauge.runs.schemas",
    "judge_from_spec": "memgauge.api._judges",
    "learnings_path": "memgauge.track.regressions",
    "learnings_query": "memgauge.api._track",
    "load_dataset": "memgauge.api._runs",
    "load_judged": "memgauge.data.io",
    "metric_series": "memgauge.track.history",
    "minimum_detectable_effect": "memgauge.stats.samplesize",
    "missed_targets": "memgauge.runs.outcome",
    "one_spec": "memgauge.subjects.parse",
    "open_store": "memgauge.api._store",
    "operations_suite": "memgauge.runs.builders",
    "optimization": "memgauge.api._optimize",
    "optimization_diff": "memgauge.api._optimize",
    "optimizations": "memgauge.api._optimize",
    "optimize": "memgauge.api._optimize",
    "parse_measure": "memgauge.metrics",
    "parse_system": "memgauge.subjects.parse",
    "pause_ab_test": "memgauge.api._online",
    "plan_audit": "memgauge.runs.audit",
    "read_run": "memgauge.api._store",
    "resolve_correction": "memgauge.stats.systems",
    "rejudge": "memgauge.api._judges",
    "require_store": "memgauge.api._store",
    "resolve_run_id": "memgauge.api._store",
    "results_path": "memgauge.api._store",
    "run_suite": "memgauge.api._runs",
    "sample_size": "memgauge.api._samplesize",
    "TREC_OFFICIAL": "memgauge.metrics.measures",
    "format_value": "memgauge.metrics.trec_report",
    "trec_eval_report": "memgauge.metrics.trec_report",
    "save_dataset": "memgauge.data.io:save_retrieval_dataset",
    "score_trec_run": "memgauge.api._measures",
    "shadow_summaries": "memgauge.api._online",
    "sparkline": "memgauge.track.gate",
    "upgrade_store": "memgauge.api._store",
    "viewer_store": "memgauge.api._store",
    "results_store": "memgauge.api._store",
    "import_runs": "memgauge.api._store",
    "export_runs": "memgauge.api._store",
    "existing_store": "memgauge.api._store",
    "StoreURL": "memgauge.api._store",
    "validate_file": "memgauge.api._files",
    "write_annotation_pool": "memgauge.api._online",
    "write_path_subject": "memgauge.api._runs",
    "memory_health": "memgauge.api._health",
    "batch_validate": "memgauge.api._sessions",
    "derive_log_signals": "memgauge.api._sessions",
    "log_channel_contribution": "memgauge.api._sessions",
    "outcome_correlation": "memgauge.api._sessions",
    "record_outcome": "memgauge.api._sessions",
    "session_report": "memgauge.api._sessions",
    "write_run_files": "memgauge.api._runfiles",
    "RunFile": "memgauge.api._runfiles",
}


def __getattr__(name: str) -> Any:
    target = _LAZY.get(name)
    if target is None:
        raise AttributeError(f"module 'memgauge.api' has no attribute {name!r}")
    module, _, attribute = target.partition(":")
    value = getattr(importlib.import_module(module), attribute or name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
