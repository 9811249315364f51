"""memgauge's Python API: evaluate a dataset against live objects or specs, load a dataset, run a
suite, read a run. Every call goes through the one engine and records its run, exactly like the
command line does (which calls these).

```python
import memgauge

report = memgauge.evaluate("data/demo", {"lexical": "lexical", "mine": MyMemory()})
print(report.summary.measures())          # every number with its CI
memgauge.read_run(report.run_id).status   # the stored run
```

`store`: None records in `MEMGAUGE_HOME/results.db`, a path records there, `False` keeps the run
in memory only (it cannot be resumed), and any object with the `Recorder` methods works too.

The command line is written on this package alone (with `memgauge.report` to render): every
command's work is one of the functions here, so a script can do what a command does.
"""

from __future__ import annotations

from memgauge.aggregates.ir import DEFAULT_MEASURES
from memgauge.api._llm import close_llm, configure_llm
from memgauge.api._runs import (
    AUDIT_MATCH_METHOD,
    evaluate,
    interim_summary,
    load_dataset,
    run_suite,
    write_path_subject,
)
from memgauge.api._store import (
    StoreArg,
    open_store,
    read_run,
    require_store,
    resolve_run_id,
    results_path,
)
from memgauge.api._track import gate, history, learnings_query
from memgauge.data.demo import demo_dataset
from memgauge.data.io import save_retrieval_dataset as save_dataset
from memgauge.data.records import ItemRecord, RunRecord, RunSummary
from memgauge.probes.sources import load_audit_source as audit_source
from memgauge.runs.builders import audit_suite, extraction_suite, operations_suite
from memgauge.runs.engine import RunReport
from memgauge.runs.outcome import exit_code
from memgauge.runs.suite_compare import compare_runs
from memgauge.store.suite_runs import SuiteRunStore
from memgauge.subjects.parse import one_spec, parse_system
from memgauge.track.gate import GateConfig, GateResult, sparkline
from memgauge.track.regressions import learnings_path

__all__ = [
    "AUDIT_MATCH_METHOD",
    "DEFAULT_MEASURES",
    "GateConfig",
    "GateResult",
    "ItemRecord",
    "RunRecord",
    "RunReport",
    "RunSummary",
    "StoreArg",
    "SuiteRunStore",
    "audit_source",
    "audit_suite",
    "close_llm",
    "compare_runs",
    "configure_llm",
    "demo_dataset",
    "evaluate",
    "exit_code",
    "extraction_suite",
    "gate",
    "history",
    "interim_summary",
    "learnings_path",
    "learnings_query",
    "load_dataset",
    "one_spec",
    "open_store",
    "operations_suite",
    "parse_system",
    "read_run",
    "require_store",
    "resolve_run_id",
    "results_path",
    "run_suite",
    "save_dataset",
    "sparkline",
    "write_path_subject",
]
