"""What the terminal view and `summary.md` say under their agent-memory table: why each n/a
metric is n/a (its aggregate's reason, never a bare 0), and what each metric measures (its one
line in `metrics.agent.AGENT_METRIC_DEFINITIONS`, written once for every medium)."""

from __future__ import annotations

import re
from collections.abc import Sequence

from memgauge.aggregates.retrieval_result import SystemResult
from memgauge.metrics.agent import agent_metric_definition

__all__ = ["DEFINITIONS_HEADING", "definitions", "na_reasons"]

#: The line before the definitions; K is the cutoff each metric's name carries.
DEFINITIONS_HEADING = "What they measure (K: the cutoff in the metric's name)"


def na_reasons(names: Sequence[str], systems: Sequence[SystemResult]) -> list[str]:
    """One line per n/a metric and reason: `folder_ils@5 is n/a for lexical, dense: no memory
    in the dataset has a folder`; systems with the same reason share the line."""
    lines = []
    for name in names:
        by_reason: dict[str, list[str]] = {}
        for s in systems:
            a = s.agent_metrics.get(name)
            if a is not None and a.value is None and a.note:
                by_reason.setdefault(a.note, []).append(s.name)
        for reason, who in by_reason.items():
            lines.append(f"{name} is n/a for {', '.join(who)}: {reason}")
    return lines


def definitions(names: Sequence[str]) -> list[tuple[str, str]]:
    """(label, definition) for the metrics in `names`, once per metric: the variants of one
    (`tier_precision[critical]@5`, `tier_precision[normal]@5`) share a line, labelled
    `tier_precision[*]@5`."""
    out: dict[str, str] = {}
    for name in names:
        text = agent_metric_definition(name)
        if text is not None:
            out.setdefault(re.sub(r"\[[^\]]*\]", "[*]", name), text)
    return list(out.items())
