"""Systems ranked on one task, as a memory-system benchmark prints them: by the primary measure
with its CI, beside the median context tokens and latency; a system that stored nothing,
returned nothing or failed is named as such and not ranked.

It computes no number of its own: it reads the results of the task's aggregates listed before it
(`after`), the IR aggregate's measure (value, 95% CI, count) and the cost aggregate's
`context_tokens.p50` and `latency_ms.p50`, so the table shows the very numbers the IR and cost
tables show. Why a system is unranked comes from its item records: the `empty_memory` failures
`runs.hollow` records (its dump listed nothing after ingest: not asked, "stored nothing"; every
search found nothing: asked, "returned nothing"), or no value of the measure (its calls failed).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from memgauge._util.listing import counted
from memgauge.aggregates.base import Target, TaskView, shaped
from memgauge.aggregates.cost_shapes import CostFacts
from memgauge.aggregates.facts import RankingFacts
from memgauge.aggregates.ir_facts import IrFacts
from memgauge.data.records import AggregateResult, ItemRecord, MeasureValue
from memgauge.data.shapes import Cell, Shape, Table, cell, text
from memgauge.errors import EmptyMemoryError

__all__ = ["RETURNED_NOTHING", "STORED_NOTHING", "RankingAggregate"]

STORED_NOTHING = "stored nothing"
RETURNED_NOTHING = "returned nothing"
_EMPTY = EmptyMemoryError.failure_kind


@dataclass(frozen=True)
class RankingAggregate:
    """The task's subjects ranked by `measure` (module docstring).

    Attributes:
        measure: the IR aggregate's measure to rank by; None: its first measure.
    """

    measure: str | None = None
    name: ClassVar[str] = "ranking"
    title: ClassVar[str] = "Systems ranked"
    needs_detail: ClassVar[bool] = False

    def measure_names(self, task: TaskView) -> list[str]:
        """None: the numbers it shows are the IR and cost aggregates' own."""
        return []

    def targets(self, task: TaskView) -> list[Target]:
        """None."""
        return []

    def compute(self, task: TaskView, items: Mapping[str, Sequence[ItemRecord]]) -> AggregateResult:
        """The ranking without the other aggregates' results: every system unranked (n/a)."""
        return self.after(task, items, [])

    def after(
        self,
        task: TaskView,
        items: Mapping[str, Sequence[ItemRecord]],
        earlier: Sequence[AggregateResult],
    ) -> AggregateResult:
        """The ranking, reading `earlier` (the task's aggregates computed before this one)."""
        found = {(a.aggregate, m.subject, m.name): m for a in earlier for m in a.measures}
        ir = next((a for a in earlier if a.aggregate == "ir"), None)
        cost = next((a for a in earlier if a.aggregate == "cost"), None)
        measure = self.measure or _first_measure(ir) or "n/a"
        cost_facts = cost.facts_as(CostFacts) if cost is not None else None
        encoding = str(cost_facts.encoding) if cost_facts is not None else None
        rows = [
            _system(subject, items.get(subject, ()), measure, found) for subject in task.subjects
        ]
        ranked = sorted(
            (r for r in rows if r["status"] == "ranked"), key=lambda r: (-r["value"], r["name"])
        )
        # equal values share a rank (1, 1, 3): a tie listed by name is not an order
        for place, row in enumerate(ranked, 1):
            tied = place > 1 and ranked[place - 2]["value"] == row["value"]
            row["rank"] = ranked[place - 2]["rank"] if tied else place
        unranked = [r for r in rows if r["status"] != "ranked"]
        detail = {
            "task": task.name,
            "measure": measure,
            "encoding": encoding,
            "systems": [*ranked, *unranked],
        }
        return shaped(self, task, [], detail, facts=RankingFacts.model_validate(detail))

    @staticmethod
    def shapes_from(detail: Mapping[str, Any]) -> list[Shape]:
        """The ranking table: ranked systems first, then the unranked with why."""
        measure = str(detail.get("measure"))
        encoding = detail.get("encoding") or "n/a"
        rows: list[list[Cell]] = []
        for s in detail.get("systems", []):
            rank = s.get("rank")
            rows.append(
                [
                    text(rank if rank is not None else "-"),
                    text(s["name"]),
                    cell(s.get("value"), s.get("ci"), s.get("n"), s.get("n_failed", 0)),
                    _number(s.get("tokens_p50"), 0),
                    _number(s.get("latency_p50"), 1),
                    text(_status(s)),
                ]
            )
        return [
            Table(
                title=f"{detail.get('task')}: systems ranked by {measure}",
                note=f"{measure} with its 95% bootstrap CI and count; median context tokens "
                f"({encoding}) and latency per query; a system that stored nothing, returned "
                "nothing or failed is not ranked",
                key=f"ranking-{detail.get('task')}",
                columns=["rank", "system", measure, f"tokens p50 ({encoding})", "ms p50", "status"],
                rows=rows,
            )
        ]


def _first_measure(ir: AggregateResult | None) -> str | None:
    if ir is None:
        return None
    facts = ir.facts_as(IrFacts)
    if facts is not None and facts.settings.measures:
        return facts.settings.measures[0]
    return ir.measures[0].name if ir.measures else None


def _number(v: Any, digits: int) -> Cell:
    # a median of whole tokens or of milliseconds: the CI and count are the cost table's
    return text("n/a" if v is None else f"{v:,.{digits}f}")


def _status(s: Mapping[str, Any]) -> str:
    status = "" if s["status"] == "ranked" else str(s["status"])
    note = s.get("note")
    return f"{status}: {note}" if status and note else status or note or ""


def _system(
    subject: str,
    rows: Sequence[ItemRecord],
    measure: str,
    found: Mapping[tuple[str, str, str], MeasureValue],
) -> dict[str, Any]:
    # with repeats, the mean over them with items as clusters (what the task's rows show)
    value = found.get(("repeats", subject, measure)) or found.get(("ir", subject, measure))
    tokens = found.get(("cost", subject, "context_tokens.p50"))
    latency = found.get(("cost", subject, "latency_ms.p50"))
    out: dict[str, Any] = {
        "name": subject,
        "rank": None,
        "value": value.value if value is not None else None,
        "ci": [value.ci_low, value.ci_high] if value is not None else None,
        "n": value.n_scored if value is not None else 0,
        "n_failed": value.n_failed if value is not None else 0,
        "tokens_p50": tokens.value if tokens is not None else None,
        "latency_p50": latency.value if latency is not None else None,
        "n_items": len(rows),
        "note": None,
    }
    empty = [
        r for r in rows if r.status == "failed" and r.failures and r.failures[-1].kind == _EMPTY
    ]
    failed = [r for r in rows if r.status == "failed"]
    # an empty store is said before any score: its items are failures, never 0s
    not_asked = [r for r in empty if r.output is None]
    if not_asked:
        out["status"] = STORED_NOTHING
        out["note"] = (
            f"its store held no memory after ingest; {len(not_asked)} of {counted(len(rows), 'query', 'queries')} not"
            " asked"
        )
    elif empty:
        out["status"] = RETURNED_NOTHING
        out["note"] = f"0 hits in {len(empty)} of {counted(len(rows), 'search', 'searches')}"
    elif out["value"] is None and not failed:
        out["status"] = "not measured"
        out["note"] = f"no {measure} in the task's results"
    elif out["value"] is None:
        out["status"] = "failed"
        # its first line whole: a cut at a fixed width dropped the remedy and ended a list of
        # examples mid-way, as if complete
        last = (
            failed[-1].failures[-1].describe().splitlines()[0]
            if failed and failed[-1].failures
            else None
        )
        out["note"] = f"{len(failed)} of {counted(len(rows), 'query', 'queries')} failed" + (
            f" ({last})" if last else ""
        )
    else:
        out["status"] = "ranked"
        if failed:
            out["note"] = (
                f"{len(failed)} of {counted(len(rows), 'query', 'queries')} failed, not scored"
            )
    return out
