"""The typed results an aggregate shows: a small closed set of shapes, each drawn by its type in
every medium (terminal, Markdown, HTML report and viewer, JSON), never read by key.

```
Table       columns and rows of cells (a value with its CI and count, or text)
Breakdown   one measure by category (rows) per subject (columns)
Confusion   counts of (actual, predicted) labels per subject
Paired      candidate against baseline per measure: means, delta, CI, p-values
Curve       y against x per series (precision at k, calibration), as lines or as a scatter
            (accuracy against context tokens, one dot per subject)
Examples    items with a short text each (failures, worst cases)
```

`FORM` is the stored form of an `AggregateResult`: 1, written before shapes existed, holds only
its `detail` (its aggregate's `shapes_from` draws shapes from it on read); 2 holds `shapes` and
the free `detail` dict; 3 holds `shapes` and the aggregate's typed `facts` (`data.facts`).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field, field_validator

from memgauge._util.model import Model

__all__ = [
    "FORM",
    "Breakdown",
    "Cell",
    "Confusion",
    "Curve",
    "Example",
    "Examples",
    "Paired",
    "PairedRow",
    "Series",
    "Shape",
    "Table",
    "cell",
    "text",
]

FORM = 3


class _Model(Model):
    model_config = ConfigDict(extra="forbid")

    @field_validator("ci", mode="before", check_fields=False)
    @classmethod
    def _bounds(cls, v: Any) -> Any:
        # a stored interval is `[low, high]`, `None`, or `[None, None]` (none computed)
        return None if v is None or (isinstance(v, list | tuple) and None in v) else v


class Cell(_Model):
    """A value with its CI and count, or a text (`text` wins when both are set)."""

    text: str | None = Field(default=None, description="Shown as it is.")
    value: float | None = Field(default=None, description="The number; None with `n`: n/a.")
    ci: tuple[float, float] | None = Field(default=None, description="Its 95% interval.")
    n: int | None = Field(default=None, description="What it was computed from.")
    n_failed: int = Field(default=0, description="What could not be scored.")
    pct: bool = Field(default=False, description="Shown as a percentage.")
    met: bool | None = Field(default=None, description="Whether it meets its target.")
    note: str | None = Field(default=None, description="Why n/a, or what the row means.")


class _Shape(_Model):
    title: str = Field(description="Its heading.")
    note: str | None = Field(default=None, description="One line under the heading.")
    key: str | None = Field(default=None, description="A stable name (the HTML table's id).")


class Table(_Shape):
    """Columns and rows of cells (the first column usually names the row)."""

    type: Literal["table"] = "table"
    columns: list[str] = Field(description="Column headings.")
    rows: list[list[Cell]] = Field(default_factory=list, description="One cell per column.")


class Breakdown(_Shape):
    """One measure by category, per subject."""

    type: Literal["breakdown"] = "breakdown"
    measure: str = Field(description="The measure broken down.")
    by: str = Field(description="What the categories are (category, intent, probe type).")
    subjects: list[str] = Field(description="Column per subject.")
    values: dict[str, list[Cell]] = Field(
        default_factory=dict, description="Category -> one cell per subject."
    )


class Confusion(_Shape):
    """Counts of (actual, predicted) labels, one matrix per subject."""

    type: Literal["confusion"] = "confusion"
    labels: list[str] = Field(description="The labels, rows (actual) and columns (predicted).")
    counts: dict[str, list[list[int]]] = Field(
        default_factory=dict, description="Subject -> counts[actual][predicted]."
    )


class PairedRow(_Model):
    """One measure of a candidate against the baseline, paired on the same items."""

    candidate: str = Field(description="The candidate (or 'after').")
    measure: str = Field(description="The measure.")
    a: float | None = Field(description="Baseline mean.")
    b: float | None = Field(description="Candidate mean.")
    delta: float | None = Field(description="b - a.")
    ci: tuple[float, float] | None = Field(default=None, description="Delta's 95% interval.")
    p: float | None = Field(default=None, description="p-value.")
    p_adjusted: float | None = Field(default=None, description="Corrected p-value.")
    n: int = Field(default=0, description="Paired items.")
    mark: str = Field(default="", description="Significance mark (*, **).")


class Paired(_Shape):
    """Paired comparisons against one baseline."""

    type: Literal["paired"] = "paired"
    baseline: str = Field(description="What every row is compared with.")
    correction: str | None = Field(default=None, description="How p-values were corrected.")
    rows: list[PairedRow] = Field(default_factory=list, description="One per candidate, measure.")


class Series(_Model):
    """One line of a curve (or the dots of one subject in a scatter)."""

    name: str = Field(description="Subject or series name.")
    points: list[tuple[float, float | None]] = Field(description="(x, y); y None: n/a.")
    x_ci: list[tuple[float, float] | None] | None = Field(
        default=None, description="Per point, the 95% interval of x (None: none computed)."
    )
    y_ci: list[tuple[float, float] | None] | None = Field(
        default=None, description="Per point, the 95% interval of y (None: none computed)."
    )
    n: list[int | None] | None = Field(
        default=None, description="Per point, what its y was computed from."
    )


class Curve(_Shape):
    """y against x per series: lines over shared x values, or (`style` scatter) dots on a
    numeric x axis, each with its intervals as whiskers."""

    type: Literal["curve"] = "curve"
    style: Literal["line", "scatter"] = Field(default="line", description="Lines or dots.")
    x: str = Field(description="x axis label.")
    y: str = Field(description="y axis label.")
    series: list[Series] = Field(default_factory=list, description="The lines.")


class Example(_Model):
    """One item shown with a short text."""

    id: str = Field(description="Item id.")
    subject: str | None = Field(default=None, description="Subject, where several ran.")
    text: str = Field(description="What is shown of it.")
    ok: bool | None = Field(default=None, description="Passed / failed / n/a.")


class Examples(_Shape):
    """A list of items: failures, worst cases."""

    type: Literal["examples"] = "examples"
    items: list[Example] = Field(default_factory=list, description="The items.")


Shape = Annotated[
    Table | Breakdown | Confusion | Paired | Curve | Examples, Field(discriminator="type")
]


def cell(
    value: float | None,
    ci: Any = None,
    n: int | None = None,
    n_failed: int = 0,
    *,
    pct: bool = False,
    met: bool | None = None,
    note: str | None = None,
) -> Cell:
    """A value cell from a stored summary's pieces: `ci` as `[low, high]`, `None` or
    `[None, None]` (no interval)."""
    return Cell.model_validate(
        {
            "value": value,
            "ci": ci,
            "n": n,
            "n_failed": n_failed,
            "pct": pct,
            "met": met,
            "note": note,
        }
    )


def text(value: object, note: str | None = None) -> Cell:
    """A text cell."""
    return Cell(text="" if value is None else str(value), note=note)
