"""Eval-to-learning (seed 000): a regression becomes a memory, so that future prompts can be
told what broke before.

On a regression the gate stores one failure memory per regressed metric into a memory subject
(by default the reference memory, lexical, in `$MEMGAUGE_HOME/learnings.db`), tagged
`eval-failure`, the eval name and `regression`, with the seed's metadata (eval name, baseline,
current score, drop, run id, time). `relevant_learnings` returns the past failures most
relevant to a task, formatted for a prompt within a token budget (about 4 characters a token).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from memgauge.data.models import Memory
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


def relevant_learnings(memory: Any, text: str, *, k: int = 5, token_budget: int = 500) -> str:
    """The past failures `memory` finds for `text`, as a prompt section within the budget
    ('' when there are none)."""
    hits = memory.search(text, k).hits
    if not hits:
        return ""
    budget = token_budget * 4
    header = "Past evaluation failures relevant to this task (avoid repeating them):"
    out, used = [header], len(header)
    for h in hits:
        block = f"\n---\n{h.text}"
        if used + len(block) > budget:
            room = budget - used - len("\n---\n") - 3
            if room > 80:
                out.append(f"\n---\n{h.text[:room]}...")
            break
        out.append(block)
        used += len(block)
    return "".join(out)
