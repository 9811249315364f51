"""`memgauge optimize` (seed 004's optimization loop): tune a suite subject's configuration,
texts, tools or code for one task's objective, each candidate an ordinary recorded run,
accepted on paired comparisons, checked on a held-out split, its history in the store.

Optuna (`memgauge[optimize]`) is the search machinery; see `study` for the loop and its accept
rules, `config` for the spec's resolution, `split` for the validation split.
"""

from __future__ import annotations

from memgauge.optimize.config import StudyConfig, resolve_config
from memgauge.optimize.history import MemoryHistory, study_json
from memgauge.optimize.objective import (
    Candidate,
    CandidateRun,
    Evaluation,
    SuiteObjective,
    evaluation_of,
)
from memgauge.optimize.run import diff_iterations, find_study, run_optimization, run_study
from memgauge.optimize.space import INSTALL

__all__ = [
    "INSTALL",
    "Candidate",
    "CandidateRun",
    "Evaluation",
    "MemoryHistory",
    "StudyConfig",
    "SuiteObjective",
    "diff_iterations",
    "evaluation_of",
    "find_study",
    "resolve_config",
    "run_optimization",
    "run_study",
    "study_json",
]
