"""LLM judges, each usable as an evaluator in suites: rubric, QA correctness (LongMemEval,
Mem0-lenient, strict), fact enumeration, pairwise (both orders), deliberation panel."""

from memgauge.scorers.judges.base import JudgeBase, Verdict
from memgauge.scorers.judges.facts import FactsJudge, fact_scores
from memgauge.scorers.judges.pairwise import PairwiseJudge
from memgauge.scorers.judges.panel import PanelJudge
from memgauge.scorers.judges.qa import QAJudge
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
    "RubricJudge",
    "Verdict",
    "fact_scores",
    "get_template",
]
