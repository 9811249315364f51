"""The rows of an item's agent-memory metrics table, written here instead of in
`_item_detail.html`: a LoCoMo report draws 1,000 items of 14 metrics, and the template's loop
escaped each metric's name and definition again for every item. A metric's header cell is
the same on every item: it is built once per name. The markup is the template's, byte for
byte; every value is escaped as autoescape escapes it (`hit_table.escape_text`)."""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from markupsafe import Markup

from memgauge.metrics.agent import agent_metric_definition
from memgauge.report.fmt import fmt_num
from memgauge.view.hit_table import escape_text

__all__ = ["agent_metric_rows"]


@lru_cache(maxsize=1024)
def _head(name: str) -> str:
    d = agent_metric_definition(name)
    definition = f'<div class="meta definition">{escape_text(d)}</div>' if d else ""
    return f"<tr><th>{escape_text(name)}{definition}</th>"


def agent_metric_rows(metrics: Mapping[str, Any]) -> Markup:
    """The `<tr>` rows of a query's agent-metric values (name -> value)."""
    # a formatted number (`0.123`, `n/a`) has nothing to escape
    return Markup(
        "".join(
            f'{_head(name)}<td class="num">{fmt_num(v)}</td></tr>' for name, v in metrics.items()
        )
    )
