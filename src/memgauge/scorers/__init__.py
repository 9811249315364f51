"""Evaluators that need no LLM: text matching, token F1, semantic similarity, scripts and
retrieval measures. Build them from specs with `evaluator_from_spec`.

The names below load on first use, as in `memgauge.metrics`: a run imports the evaluators it
builds (each found by its entry point), not every evaluator and LLM judge with their modules.
`memgauge.scorers.judges` is a subpackage, imported by name."""

from __future__ import annotations

from typing import TYPE_CHECKING

from memgauge._util.lazy import lazy_names

if TYPE_CHECKING:
    from memgauge.scorers.audit import AuditMatch as AuditMatch
    from memgauge.scorers.base import EVALUATORS as EVALUATORS
    from memgauge.scorers.base import EvalContext as EvalContext
    from memgauge.scorers.base import Evaluator as Evaluator
    from memgauge.scorers.base import Score as Score
    from memgauge.scorers.base import evaluator_from_spec as evaluator_from_spec
    from memgauge.scorers.base import register as register
    from memgauge.scorers.base import registered as registered
    from memgauge.scorers.base import to_spec as to_spec
    from memgauge.scorers.f1 import TokenF1 as TokenF1
    from memgauge.scorers.f1 import locomo_f1 as locomo_f1
    from memgauge.scorers.f1 import mem0_f1 as mem0_f1
    from memgauge.scorers.locomo import LoCoMoQA as LoCoMoQA
    from memgauge.scorers.retrieval import RetrievalMeasure as RetrievalMeasure
    from memgauge.scorers.script import ScriptEvaluator as ScriptEvaluator
    from memgauge.scorers.semantic import SemanticSimilarity as SemanticSimilarity
    from memgauge.scorers.text import Contains as Contains
    from memgauge.scorers.text import ExactMatch as ExactMatch
    from memgauge.scorers.text import IContains as IContains
    from memgauge.scorers.text import Regex as Regex
    from memgauge.scorers.write_path import ExtractionFacts as ExtractionFacts
    from memgauge.scorers.write_path import OperationChecks as OperationChecks
else:
    lazy_names(globals())
