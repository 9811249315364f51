"""Depth pooling graded by the relevance judge (seed 000's relevance judge, seed 002 section
3.4's pool): the memories in any subject's top `depth` that nobody judged are graded 0-3 by an
LLM instead of all getting one constant grade.

Each graded pair becomes a `Judgment` with source `bootstrapped` and annotator
`relevance:<model>`: added to the qrels of every subject before anything is scored, and kept in
the aggregate's facts (`pool_judge`), so that the run's record says which grades came from the
judge. A pair the judge could not grade stays unjudged (scored as not relevant, as any unjudged
memory is) and is listed with why: never a made-up grade.

The judge is called by the driver, once per distinct (query, memory) pair across subjects; its
calls go through memgauge's LLM client and response cache, so recomputing the aggregate (a
resume) costs nothing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from memgauge.aggregates.ir_facts import PoolFailure, PoolJudgeFacts
from memgauge.data.models import Judgment, RetrievalDataset
from memgauge.errors import UsageError
from memgauge.scorers import evaluator_from_spec
from memgauge.scorers.judges import RelevanceJudge, bootstrap_judgments

__all__ = ["PoolJudged", "judge_pool", "relevance_judge"]


def relevance_judge(spec: str | Mapping[str, Any]) -> RelevanceJudge:
    """The relevance judge a spec names (`relevance`, `{relevance: {model: m}}`); UsageError
    for any other evaluator."""
    built = evaluator_from_spec(spec if isinstance(spec, str) else dict(spec))
    if not isinstance(built, RelevanceJudge):
        raise UsageError(
            f"pool judge {spec!r}: give the relevance judge, e.g. 'relevance' or "
            "'{relevance: {model: gpt-4o-mini}}'"
        )
    return built


class PoolJudged:
    """What the judge made of a pool: the pooled qrels and the record of each grade."""

    def __init__(
        self,
        qrels: dict[str, dict[str, int]],
        judgments: list[Judgment],
        failures: list[tuple[str, str, str]],
        n_pooled: int,
    ) -> None:
        self.qrels, self.judgments, self.failures = qrels, judgments, failures
        self.n_pooled = n_pooled

    def note(self, depth: int) -> str:
        """The line every system's result carries."""
        text = (
            f"pooling: the relevance judge graded {len(self.judgments)} of {self.n_pooled} "
            f"unjudged memories in some system's top {depth} (bootstrapped judgments)"
        )
        if self.failures:
            text += f"; {len(self.failures)} could not be graded and stay unjudged"
        return text

    def facts(self, spec: str | Mapping[str, Any]) -> PoolJudgeFacts:
        """The aggregate's record: counts, every bootstrapped judgment, every failure."""
        return PoolJudgeFacts(
            judge=spec if isinstance(spec, str) else dict(spec),
            n_pooled=self.n_pooled,
            n_graded=len(self.judgments),
            n_failed=len(self.failures),
            judgments=list(self.judgments),
            failures=[
                PoolFailure(query_id=q, memory_id=m, error=why) for q, m, why in self.failures
            ],
        )


def judge_pool(
    dataset: RetrievalDataset,
    qrels: Mapping[str, Mapping[str, int]],
    runs: Sequence[Mapping[str, Sequence[str]]],
    depth: int,
    judge: RelevanceJudge,
) -> PoolJudged:
    """Grade the unjudged memories of judged queries in any run's top `depth`.

    Only queries with judgments are pooled (an unjudged query is not scored at all), and each
    (query, memory) pair is graded once however many runs found it."""
    queries = {q.id: q.text for q in dataset.queries}
    texts = {m.id: m.text for m in dataset.memories}
    pooled = {q: dict(j) for q, j in qrels.items()}
    todo: dict[tuple[str, str], None] = {}
    for run in runs:
        for qid, ids in run.items():
            if qid not in pooled:
                continue
            for mid in ids[:depth]:
                if mid not in pooled[qid] and mid in texts:
                    todo[(qid, mid)] = None
    pairs = [(q, queries.get(q, ""), m, texts[m]) for q, m in todo]
    judgments, failures = bootstrap_judgments(pairs, judge) if pairs else ([], [])
    for j in judgments:
        pooled[j.query_id][j.memory_id] = j.grade
    return PoolJudged(pooled, judgments, failures, len(pairs))
