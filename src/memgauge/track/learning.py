"""Eval-to-learning (seed 000): a regression becomes a memory, so that future prompts can be
told what broke before.

On a regression the gate stores one failure memory per regressed metric into a memory subject
(by default the reference memory, lexical, in `$MEMGAUGE_HOME/learnings.db`), tagged
`eval-failure`, the eval name and `regression`, with the seed's metadata (eval name, baseline,
current score, drop, run id, time). Its text has the seed's content: the scores and the drop,
the scorer's context (false positives and false negatives where the evaluator counts them), the
common failure pattern among the failing items, a suggested action, and failing examples.

The SDK function for your own prompts is `relevant_learnings` (also `memgauge.relevant_learnings`;
defined in `subjects.learnings`, because memgauge's own LLM decider, extractor, judges and agents,
which sit below this layer, read learnings too through their `learnings:` argument):

    from memgauge import relevant_learnings

    section = relevant_learnings(None, "memory merge decision", k=3, token_budget=400)
    prompt = base_prompt + ("\n\n" + section if section else "")

`memory` None reads the default learnings memory (`$MEMGAUGE_HOME/learnings.db`; '' when nothing
was ever stored), a string is a `--learn-into` value, anything else a memory subject.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from memgauge.data.models import Memory
from memgauge.subjects.learnings import relevant_learnings
from memgauge.track.gate import MetricCheck

__all__ = ["failure_memory", "relevant_learnings"]


def failure_memory(
    check: MetricCheck,
    *,
    suite: str,
    run_id: str,
    scorer_context: str,
    failing: Sequence[Mapping[str, Any]] = (),
) -> Memory:
    """The memory of one regressed metric (the seed's wording, plus failing examples)."""
    name = f"{suite}/{check.task}/{check.evaluator}"
    lines = [
        f'Eval "{name}" regression detected (subject {check.subject}):',
        f"- Current score: {check.current:.2f}"
        if check.current is not None
        else "- Current score: n/a",
        f"- Baseline (rolling avg): {check.baseline:.2f}" if check.baseline is not None else "",
        f"- Drop: {check.drop:.1%}" if check.drop is not None else "",
        "Scorer context:",
        scorer_context,
    ]
    if failing:
        lines.append("Failing examples:")
        for ex in failing:
            lines.append(
                f"- {ex.get('item_id')}: asked {str(ex.get('input'))[:200]!r}; expected "
                f"{str(ex.get('expected'))[:120]!r}; got {str(ex.get('output'))[:200]!r}"
            )
    text = "\n".join(line for line in lines if line)
    created = datetime.now(UTC)
    digest = hashlib.sha256(f"{run_id}/{name}/{check.subject}".encode()).hexdigest()[:16]
    return Memory(
        id=f"eval-failure-{digest}",
        text=text,
        tier="important",
        folder="eval-failures",
        created_at=created,
        metadata={
            "tags": ["eval-failure", name, "regression"],
            "eval_name": name,
            "subject": check.subject,
            "baseline_score": check.baseline,
            "current_score": check.current,
            "drop_percentage": check.drop,
            "timestamp": created.isoformat(),
            "threshold": check.threshold,
            "run_id": run_id,
        },
    )
