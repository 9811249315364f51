"""memgauge's Python API: evaluate a dataset against live objects or specs, load a dataset, run a
suite, read a run. Every call goes through the one engine and records its run, exactly like the
command line does (which calls these).

```python
import memgauge

report = memgauge.evaluate("data/demo", {"lexical": "lexical", "mine": MyMemory()})
for m in report.summary.measures():       # every number, with its CI where it has one
    print(m.subject, m.name, m.value, m.ci_low, m.ci_high)
memgauge.read_run(report.run_id).status   # the stored run
```

`store`: None records in the store `MEMGAUGE_STORE` names, else `MEMGAUGE_HOME/results.db`; a
path or URL (`sqlite:///PATH`, `postgresql://...`) records there; `False` keeps the run in memory
only (it cannot be resumed); and any object with the `Recorder` methods works too.

The command line is written on this package alone (with `memgauge.report` to render): every
command's work is one of the functions here, so a script can do what a command does.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from memgauge._util.lazy import lazy_names

# The one declaration of each public name (`X as X`, or an import and an assignment where the
# API renames it): type checkers and IDEs read these; at run time `lazy_names` reads them from
# this file into `__all__` and the table `__getattr__` imports each from on first use, so a
# command imports what its own work needs and no more (`memgauge logs` does not load the
# engine). tests/api/test_api_names.py holds every name to one declaration that resolves.
if TYPE_CHECKING:
    from memgauge.aggregates.attribution import AttributionAggregate as AttributionAggregate
    from memgauge.aggregates.attribution_cause import CAUSES, attribute
    from memgauge.aggregates.ir import DEFAULT_MEASURES as DEFAULT_MEASURES
    from memgauge.aggregates.targets import Requirement as Requirement
    from memgauge.aggregates.targets import requirement as requirement
    from memgauge.api._bench import bench_search as bench_search
    from memgauge.api._bench import bench_versus as bench_versus
    from memgauge.api._bench_systems import SystemsBench as SystemsBench
    from memgauge.api._bench_systems import bench_systems as bench_systems
    from memgauge.api._bench_systems import bench_systems_plan as bench_systems_plan
    from memgauge.api._bench_systems import bench_systems_suite_of as bench_systems_suite_of
    from memgauge.api._bench_systems import run_bench_suite as run_bench_suite
    from memgauge.api._bench_systems import write_bench_suite as write_bench_suite
    from memgauge.api._compare import compare_stored_runs as compare_stored_runs
    from memgauge.api._compare import compare_trec_runs as compare_trec_runs
    from memgauge.api._files import FILE_KINDS as FILE_KINDS
    from memgauge.api._files import Imported as Imported
    from memgauge.api._files import dataset_files as dataset_files
    from memgauge.api._files import import_dataset as import_dataset
    from memgauge.api._files import validate_file as validate_file
    from memgauge.api._flags import add_ab_from_shadow as add_ab_from_shadow
    from memgauge.api._flags import create_flag as create_flag
    from memgauge.api._flags import feature_flags as feature_flags
    from memgauge.api._flags import set_flag as set_flag
    from memgauge.api._health import memory_health as memory_health
    from memgauge.api._judges import calibrate_judge as calibrate_judge
    from memgauge.api._judges import judge_from_spec as judge_from_spec
    from memgauge.api._judges import rejudge as rejudge
    from memgauge.api._llm import close_llm as close_llm
    from memgauge.api._llm import configure_llm as configure_llm
    from memgauge.api._measures import score_trec_run as score_trec_run
    from memgauge.api._online import ab_test_reports as ab_test_reports
    from memgauge.api._online import add_ab_pairs as add_ab_pairs
    from memgauge.api._online import create_ab_test as create_ab_test
    from memgauge.api._online import detect_re_searches as detect_re_searches
    from memgauge.api._online import dump_memories as dump_memories
    from memgauge.api._online import export_golden_set as export_golden_set
    from memgauge.api._online import import_graded as import_graded
    from memgauge.api._online import import_spans as import_spans
    from memgauge.api._online import pause_ab_test as pause_ab_test
    from memgauge.api._online import shadow_summaries as shadow_summaries
    from memgauge.api._online import simulate_sprt_bounds as simulate_sprt_bounds
    from memgauge.api._online import write_annotation_pool as write_annotation_pool
    from memgauge.api._optimize import optimization as optimization
    from memgauge.api._optimize import optimization_best_suite as optimization_best_suite
    from memgauge.api._optimize import optimization_diff as optimization_diff
    from memgauge.api._optimize import optimizations as optimizations
    from memgauge.api._optimize import optimize as optimize
    from memgauge.api._review import add_review_label as add_review_label
    from memgauge.api._review import calibrate_review as calibrate_review
    from memgauge.api._review import fill_annotation_pool as fill_annotation_pool
    from memgauge.api._review import learn_from_review as learn_from_review
    from memgauge.api._review import review_judgments as review_judgments
    from memgauge.api._review import review_labels as review_labels
    from memgauge.api._review import review_to_golden as review_to_golden
    from memgauge.api._review import write_judgments as write_judgments
    from memgauge.api._runfiles import RunFile as RunFile
    from memgauge.api._runfiles import write_run_files as write_run_files
    from memgauge.api._runs import RunConfig as RunConfig
    from memgauge.api._runs import evaluate as evaluate
    from memgauge.api._runs import interim_summary as interim_summary
    from memgauge.api._runs import load_dataset as load_dataset
    from memgauge.api._runs import run_suite as run_suite
    from memgauge.api._runs import write_path_subject as write_path_subject
    from memgauge.api._samplesize import minimum_detectable_effect as minimum_detectable_effect
    from memgauge.api._samplesize import sample_size as sample_size
    from memgauge.api._sessions import batch_validate as batch_validate
    from memgauge.api._sessions import derive_log_signals as derive_log_signals
    from memgauge.api._sessions import log_channel_contribution as log_channel_contribution
    from memgauge.api._sessions import outcome_correlation as outcome_correlation
    from memgauge.api._sessions import record_outcome as record_outcome
    from memgauge.api._sessions import session_report as session_report
    from memgauge.api._store import StoreArg as StoreArg
    from memgauge.api._store import StoreURL as StoreURL
    from memgauge.api._store import export_items as export_items
    from memgauge.api._store import export_runs as export_runs
    from memgauge.api._store import import_runs as import_runs
    from memgauge.api._store import memgauge_home as memgauge_home
    from memgauge.api._store import open_store as open_store
    from memgauge.api._store import read_run as read_run
    from memgauge.api._store import require_store as require_store
    from memgauge.api._store import resolve_run_id as resolve_run_id
    from memgauge.api._store import resolve_run_ids as resolve_run_ids
    from memgauge.api._store import results_path as results_path
    from memgauge.api._store import results_store as results_store
    from memgauge.api._store import store_given_as as store_given_as
    from memgauge.api._store import upgrade_store as upgrade_store
    from memgauge.api._store import viewer_store as viewer_store
    from memgauge.api._synth import MEMORY_SOURCES as MEMORY_SOURCES
    from memgauge.api._synth import Synthesized as Synthesized
    from memgauge.api._synth import read_memories as read_memories
    from memgauge.api._synth import synth as synth
    from memgauge.api._traces import import_traces as import_traces
    from memgauge.api._traces import store_traces as store_traces
    from memgauge.api._traces import stored_trace as stored_trace
    from memgauge.api._traces import stored_traces as stored_traces
    from memgauge.api._track import accept_gate as accept_gate
    from memgauge.api._track import failed_gates as failed_gates
    from memgauge.api._track import gate as gate
    from memgauge.api._track import history as history
    from memgauge.api._track import learnings_query as learnings_query
    from memgauge.api._watch import WatchConfig as WatchConfig
    from memgauge.api._watch import WatchPass as WatchPass
    from memgauge.api._watch import watch_pass as watch_pass
    from memgauge.data.demo import demo_dataset as demo_dataset
    from memgauge.data.detect import DATASET_KINDS as DATASET_KINDS
    from memgauge.data.io import load_judged as load_judged
    from memgauge.data.io import save_retrieval_dataset
    from memgauge.data.models import SEED_CATEGORIES as SEED_CATEGORIES
    from memgauge.data.records import ENDED as ENDED
    from memgauge.data.records import ItemRecord as ItemRecord
    from memgauge.data.records import RunRecord as RunRecord
    from memgauge.data.records import RunSummary as RunSummary
    from memgauge.data.review import LABEL_KINDS as LABEL_KINDS
    from memgauge.data.review import ReviewLabel as ReviewLabel
    from memgauge.metrics import CONVENTIONS as CONVENTIONS
    from memgauge.metrics import Measure as Measure
    from memgauge.metrics import MetricConfig as MetricConfig
    from memgauge.metrics import is_measure as is_measure
    from memgauge.metrics import parse_measure as parse_measure
    from memgauge.metrics.agent import DEFAULT_AGENT_K as DEFAULT_AGENT_K
    from memgauge.metrics.conventions import DEFAULT_DEPTH as DEFAULT_DEPTH
    from memgauge.metrics.measures import TREC_OFFICIAL as TREC_OFFICIAL
    from memgauge.metrics.measures import own_conventions as own_conventions
    from memgauge.metrics.trec_args import TREC_ALL_LEFT_OUT as TREC_ALL_LEFT_OUT
    from memgauge.metrics.trec_args import prints_runid as prints_runid
    from memgauge.metrics.trec_args import trec_eval_measures as trec_eval_measures
    from memgauge.metrics.trec_args import trec_order as trec_order
    from memgauge.metrics.trec_report import format_value as format_value
    from memgauge.metrics.trec_report import trec_eval_report as trec_eval_report
    from memgauge.online.watch import WatchFilter as WatchFilter
    from memgauge.online.watch import WatchState as WatchState
    from memgauge.probes.sources import load_audit_source
    from memgauge.runs.audit import AUDIT_MATCH_METHOD as AUDIT_MATCH_METHOD
    from memgauge.runs.audit import AuditPlan as AuditPlan
    from memgauge.runs.audit import audit_result as audit_result
    from memgauge.runs.audit import plan_audit as plan_audit
    from memgauge.runs.engine import RunReport as RunReport
    from memgauge.runs.kinds.expected_output import audit_suite as audit_suite
    from memgauge.runs.kinds.extraction import extraction_suite as extraction_suite
    from memgauge.runs.kinds.operations import operations_suite as operations_suite
    from memgauge.runs.loadtest import MAX_CLIENTS as MAX_CLIENTS
    from memgauge.runs.loadtest import LoadResult as LoadResult
    from memgauge.runs.outcome import exit_code as exit_code
    from memgauge.runs.outcome import missed_targets as missed_targets
    from memgauge.runs.outcome import target_verdict as target_verdict
    from memgauge.runs.schemas import SCHEMA_KINDS as SCHEMA_KINDS
    from memgauge.runs.schemas import json_schema as json_schema
    from memgauge.runs.suite_compare import compare_runs as compare_runs
    from memgauge.runs.suite_compare import measure_deltas as measure_deltas
    from memgauge.runs.suite_compare import reported_means as reported_means
    from memgauge.runs.suite_compare import unended_note as unended_note
    from memgauge.runs.suite_compare import unpaired_notes as unpaired_notes
    from memgauge.runs.systems import BENCH_MEASURES as BENCH_MEASURES
    from memgauge.stats.agreement import Calibration as Calibration
    from memgauge.stats.sequential import DEFAULT_GRADUATION as DEFAULT_GRADUATION
    from memgauge.stats.sequential import PROB_THRESHOLD as PROB_THRESHOLD
    from memgauge.stats.systems import resolve_correction as resolve_correction
    from memgauge.store.querylog import apply_retention as apply_retention
    from memgauge.store.querylog import bootstrap_judgments as bootstrap_judgments
    from memgauge.store.querylog import harvest
    from memgauge.store.suite_runs import SuiteRunStore as SuiteRunStore
    from memgauge.store.traces import StoredTrace as StoredTrace
    from memgauge.store.traces import TracePage as TracePage
    from memgauge.store.url import SEARCHES as SEARCHES
    from memgauge.store.url import store_url as store_url
    from memgauge.subjects.learnings import learnings_stored as learnings_stored
    from memgauge.subjects.parse import one_spec as one_spec
    from memgauge.subjects.parse import parse_system as parse_system
    from memgauge.subjects.registry import check_subject as check_subject
    from memgauge.track.gate import GateConfig as GateConfig
    from memgauge.track.gate import GateResult as GateResult
    from memgauge.track.gate import sparkline as sparkline
    from memgauge.track.history import MetricSeries as MetricSeries
    from memgauge.track.history import metric_series as metric_series
    from memgauge.track.regressions import learnings_path as learnings_path

    save_dataset = save_retrieval_dataset
    FAILURE_CAUSES = CAUSES
    attribute_failure = attribute
    audit_source = load_audit_source
    harvest_queries = harvest
else:
    lazy_names(globals())
