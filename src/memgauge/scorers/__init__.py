"""Evaluators that need no LLM: text matching, token F1, semantic similarity, scripts and
retrieval measures. Build them from specs with `evaluator_from_spec`."""

from memgauge.scorers import judges as judges
from memgauge.scorers.audit import AuditMatch
from memgauge.scorers.base import (
    EVALUATORS,
    EvalContext,
    Evaluator,
    Score,
    evaluator_from_spec,
    register,
    registered,
    to_spec,
)
from memgauge.scorers.f1 import TokenF1, locomo_f1, mem0_f1
from memgauge.scorers.locomo import LoCoMoQA
from memgauge.scorers.retrieval import RetrievalMeasure
from memgauge.scorers.script import ScriptEvaluator
from memgauge.scorers.semantic import SemanticSimilarity
from memgauge.scorers.text import Contains, ExactMatch, IContains, Regex
from memgauge.scorers.write_path import ExtractionFacts, OperationChecks

__all__ = [
    "EVALUATORS",
    "AuditMatch",
    "Contains",
    "EvalContext",
    "Evaluator",
    "ExactMatch",
    "ExtractionFacts",
    "IContains",
    "LoCoMoQA",
    "OperationChecks",
    "Regex",
    "RetrievalMeasure",
    "Score",
    "ScriptEvaluator",
    "SemanticSimilarity",
    "TokenF1",
    "evaluator_from_spec",
    "locomo_f1",
    "mem0_f1",
    "register",
    "registered",
    "to_spec",
]
