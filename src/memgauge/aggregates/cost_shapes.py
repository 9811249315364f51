"""What the cost aggregate draws: accuracy against context tokens and against latency, one dot
per subject with its CIs as whiskers, as the memory-system write-ups plot them (Zep's LongMemEval
results: accuracy beside the median context and p50 latency; Mem0's paper: accuracy against
tokens and latency per system), and the same numbers as a table.

x is the subject's median per query (context tokens in the aggregate's encoding; latency in ms
at its stage), y its mean accuracy (the accuracy evaluator's verdicts), each with its 95%
bootstrap CI. A subject with no context (an agent answering) has no dot on the token chart; one
with no accuracy or no latency none on the charts that need it: a missing dot, never one at 0.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import ConfigDict, Field

from memgauge._util.model import Model
from memgauge.data.facts import Facts
from memgauge.data.records import MeasureValue
from memgauge.data.shapes import Cell, Curve, Series, Shape, Table, cell, text
from memgauge.stats.bootstrap import ConfidenceInterval

__all__ = ["CostFacts", "CostQuery", "CostSystem", "cost_point", "cost_shapes", "measures_table"]


class CostQuery(Model):
    """One query's context and cost (`cost_values.QueryCost.row`)."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(description="The item (query).")
    context_tokens: int | None = Field(default=None, description="Its context's tokens.")
    hits: int | None = Field(default=None, description="Hits in its context.")
    latency_ms: float | None = Field(default=None, description="At the aggregate's stage.")
    accuracy: float | None = Field(default=None, description="The accuracy verdict.")
    llm_tokens: int | None = Field(default=None, description="The subject's own LLM tokens.")
    token_usage_ratio: float | None = Field(default=None, description="Tokens / budget.")
    pressure_level: str | None = Field(default=None, description="Its pressure level.")
    hits_cut: int | None = Field(default=None, description="Hits the budget cut.")
    relevant_cut: int | None = Field(default=None, description="Relevant hits it cut.")


class CostSystem(Model):
    """One subject's queries and their accounting."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(description="The subject.")
    n_queries: int = Field(description="Queries answered.")
    n_failed: int = Field(description="Queries failed.")
    n_no_context: int = Field(description="Answered with no context (an agent's answer).")
    per_query: list[CostQuery] = Field(default_factory=list, description="Each query's.")
    pressure: dict[str, int] | None = Field(
        default=None, description="Queries per pressure level (with a budget)."
    )


class CostFacts(Facts):
    """What programs read of a cost aggregate's result beside its measures: how its numbers
    were counted (the ranking's and the cost table's headings name the encoding) and each
    subject's queries."""

    model_config = ConfigDict(extra="ignore")

    encoding: str | None = Field(default=None, description="The tokenizer's encoding.")
    budget: int | None = Field(default=None, description="The context's token budget.")
    stage: str | None = Field(default=None, description="The latency's stage.")
    accuracy: str | None = Field(default=None, description="The accuracy evaluator's label.")
    systems: list[CostSystem] = Field(default_factory=list, description="One per subject.")


#: the x of each chart: its key in a stored point, the measure it is, how its axis is named
_AXES = (
    ("context_tokens", "context_tokens.p50", "context tokens per query (median, {encoding})"),
    ("latency_ms", "latency_ms.p50", "latency per query (ms, median, stage {stage})"),
)


def _value(ci: ConfidenceInterval | MeasureValue | None) -> dict[str, Any] | None:
    """A number as the detail keeps it: value, CI (None: none computed) and count."""
    if ci is None:
        return None
    if isinstance(ci, MeasureValue):
        value, low, high, n = ci.value, ci.ci_low, ci.ci_high, ci.n_scored
    else:
        value, low, high, n = ci.mean, ci.low, ci.high, ci.n
    return {
        "value": value,
        "ci": None if low is None or high is None else [low, high],
        "n": n,
    }


def cost_point(
    subject: str, accuracy: ConfidenceInterval | None, measures: Sequence[MeasureValue]
) -> dict[str, Any]:
    """One subject's dot, as the aggregate's detail stores it (`points`): its accuracy and the
    x measures of `_AXES`, each a value with its CI and count (None where it has none)."""
    by = {m.name: m for m in measures}
    return {
        "name": subject,
        "accuracy": _value(accuracy),
        **{key: _value(by.get(name)) for key, name, _label in _AXES},
    }


def _pair(v: Any) -> tuple[float, float] | None:
    return None if not v or v.get("ci") is None else (float(v["ci"][0]), float(v["ci"][1]))


def _cell(v: Any) -> Cell:
    if v is None:
        return text("-")
    return cell(v.get("value"), v.get("ci"), v.get("n"))


def cost_shapes(detail: Mapping[str, Any]) -> list[Shape]:
    """The table and the two scatter charts of a cost aggregate's stored `detail` (none for
    a result stored before it kept `points`, nor for a task without an accuracy evaluator)."""
    points = detail.get("points") or []
    accuracy = detail.get("accuracy")
    if not points or accuracy is None:
        return []
    encoding, stage = detail.get("encoding"), detail.get("stage")
    labels = [label.format(encoding=encoding, stage=stage) for _key, _name, label in _AXES]
    table = Table(
        title=f"{accuracy} against context tokens ({encoding}) and latency (ms)",
        note="per subject: mean accuracy, and the median per query of its context tokens and"
        " latency, each with its 95% CI",
        key="cost-accuracy",
        columns=["subject", str(accuracy), *labels],
        rows=[
            [text(p["name"]), _cell(p.get("accuracy")), *(_cell(p.get(k)) for k, _n, _l in _AXES)]
            for p in points
        ],
    )
    shapes: list[Shape] = [table]
    for (name, _measure, _label), x_label in zip(_AXES, labels, strict=True):
        series = [
            Series(
                name=p["name"],
                points=[(float(p[name]["value"]), float(p["accuracy"]["value"]))],
                x_ci=[_pair(p[name])],
                y_ci=[_pair(p["accuracy"])],
                n=[p["accuracy"].get("n")],
            )
            for p in points
            if (p.get(name) or {}).get("value") is not None
            and (p.get("accuracy") or {}).get("value") is not None
        ]
        if series:
            what = "context tokens" if name.startswith("context") else "latency"
            shapes.append(
                Curve(
                    title=f"{accuracy} against {what}",
                    note="one dot per subject; whiskers: 95% CIs",
                    key=f"cost-{what.replace(' ', '-')}",
                    style="scatter",
                    x=x_label,
                    y=str(accuracy),
                    series=series,
                )
            )
    return shapes


def measures_table(measures: Sequence[MeasureValue]) -> Table:
    """Every cost measure, a row per measure and a column per subject (what a report showed of
    the aggregate before it drew charts)."""
    subjects = list(dict.fromkeys(m.subject for m in measures))
    rows: dict[str, list[Cell]] = {}
    for m in measures:
        row = rows.setdefault(m.name, [text(m.name), *(text("-") for _ in subjects)])
        row[1 + subjects.index(m.subject)] = cell(
            m.value, (m.ci_low, m.ci_high), m.n_scored, m.n_failed, note=m.note
        )
    return Table(
        title="cost",
        note="mean or measure with its 95% CI and count",
        columns=["measure", *subjects],
        rows=list(rows.values()),
    )
