"""LLM judges, each usable as an evaluator in suites: rubric, QA correctness (LongMemEval,
Mem0-lenient, strict), fact enumeration, pairwise (both orders), deliberation panel, relevance (0-3)."""

from memgauge.scorers.judges.base import JudgeBase, Verdict
from memgauge.scorers.judges.facts import FactsJudge, fact_scores
from memgauge.scorers.judges.pairwise import PairwiseJudge
from memgauge.scorers.judges.panel import PanelJudge
from memgauge.scorers.judges.qa import QAJudge
from memgauge.scorers.judges.relevance import RelevanceJudge, bootstrap_judgments
from memgauge.scorers.judges.rubric import RubricJudge
from memgauge.scorers.judges.templates import TEMPLATES, PromptTemplate, get_template

__all__ = [
    "TEMPLATES",
    "FactsJudge",
    "JudgeBase",
    "PairwiseJudge",
    "PanelJudge",
    "PromptTemplate",
    "QAJudge",
    "RelevanceJudge",
    "RubricJudge",
    "Verdict",
    "bootstrap_judgments",
    "fact_scores",
    "get_template",
]
