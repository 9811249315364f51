"""memgauge: measure whether an LLM agent's memory works.

The public API (each name is loaded on first use, so `import memgauge` stays cheap):

- `evaluate(dataset, systems, ...)`: memory search on a retrieval dataset, as a recorded run;
- `run_suite(suite_or_path, ...)`: a suite (subjects x tasks), as a recorded run;
- `read_run(run_id, ...)`: a recorded run with its summary;
- `load_dataset(path)`: a retrieval dataset;
- `relevant_learnings(memory, text, ...)`: past evaluation failures for a prompt;
- the records they return: `RunReport`, `RunRecord`, `RunSummary`, `ItemRecord`,
  `ScoreRecord`, `Failure`, `MeasureValue`, `TargetCheck`;
- the errors: `MemgaugeError`, `UsageError`, `DataError`, `Problem`, `UnavailableError`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from memgauge._util.lazy import lazy_table
from memgauge._version import __version__
from memgauge.errors import DataError, MemgaugeError, Problem, UnavailableError, UsageError

__all__ = [
    "DataError",
    "Failure",
    "ItemRecord",
    "MeasureValue",
    "MemgaugeError",
    "Problem",
    "RunRecord",
    "RunReport",
    "RunSummary",
    "ScoreRecord",
    "TargetCheck",
    "UnavailableError",
    "UsageError",
    "__version__",
    "evaluate",
    "load_dataset",
    "read_run",
    "relevant_learnings",
    "run_suite",
]

# name -> module that defines it (loaded on first access)
_LAZY = {
    "evaluate": "memgauge.api",
    "run_suite": "memgauge.api",
    "read_run": "memgauge.api",
    "load_dataset": "memgauge.api",
    "RunReport": "memgauge.api",
    "relevant_learnings": "memgauge.track.learning",
    "Failure": "memgauge.data.records",
    "ItemRecord": "memgauge.data.records",
    "MeasureValue": "memgauge.data.records",
    "RunRecord": "memgauge.data.records",
    "RunSummary": "memgauge.data.records",
    "ScoreRecord": "memgauge.data.records",
    "TargetCheck": "memgauge.data.records",
}

if TYPE_CHECKING:
    from memgauge.api import RunReport, evaluate, load_dataset, read_run, run_suite
    from memgauge.data.records import (
        Failure,
        ItemRecord,
        MeasureValue,
        RunRecord,
        RunSummary,
        ScoreRecord,
        TargetCheck,
    )
    from memgauge.track.learning import relevant_learnings


lazy_table(globals(), _LAZY)
