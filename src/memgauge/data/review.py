"""A person's label of one thing in a stored run (`memgauge view --review`): a retrieval hit's
grade, a confirmation or override of a judge's verdict, an extracted fact's correctness, a
memory operation's decision. Validated here, so a bad form is refused with a message before
anything is written."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import ConfigDict, Field, StringConstraints, model_validator

from memgauge._util.model import Model
from memgauge.data.records import repeat_source

__all__ = ["LABELS", "LABEL_KINDS", "MAX_REVIEWER", "ReviewLabel"]

#: what a label is about
LABEL_KINDS = ("hit", "verdict", "fact", "operation")

#: the labels each kind takes (a hit takes a grade instead); the first is the "good" one
LABELS: dict[str, tuple[str, ...]] = {
    "verdict": ("pass", "fail"),
    "fact": ("correct", "incorrect"),
    "operation": ("right", "wrong"),
}

#: the longest reviewer name (and run, item, target name) a label holds
MAX_REVIEWER = 200
_Name = Annotated[str, StringConstraints(min_length=1, max_length=MAX_REVIEWER)]


class ReviewLabel(Model):
    """One reviewer's label, as stored in `review_labels` (a later one by the same reviewer on
    the same target supersedes it; both stay in the history)."""

    model_config = ConfigDict(extra="forbid")

    run_id: _Name = Field(description="The run the labelled item belongs to.")
    subject: str = Field(description="The item's subject.")
    task: str = Field(description="The item's task.")
    item_id: str = Field(description="The item's id in its task.")
    kind: Literal["hit", "verdict", "fact", "operation"] = Field(
        description="What is labelled: a ranked hit, a verdict, an extracted fact, a decision."
    )
    target: str = Field(
        default="",
        max_length=2000,
        description="Which one: the hit's memory id, the verdict's evaluator, the fact's index"
        " in the output; empty for an item's operation decision.",
    )
    reviewer: _Name = Field(description="Who labelled it.")
    grade: int | None = Field(default=None, ge=0, le=3, description="A hit's grade, 0-3.")
    label: str | None = Field(
        default=None, description="pass/fail (verdict), correct/incorrect, right/wrong."
    )
    machine: str | None = Field(
        default=None,
        description="What the machine said when the label was given, in the same terms (the"
        " judge's pass/fail, the recorded grade, the scorer's view of the fact or decision);"
        " None when it said nothing.",
    )
    note: str = Field(default="", max_length=10000, description="The reviewer's note.")
    created_at: str = Field(default="", description="UTC time it was given (ISO 8601).")
    repeat: int = Field(
        default=0,
        ge=0,
        description="Which repeat of its item the labelled item is (`repeat: N`; read from the"
        " run's item, not stored with the label).",
    )

    @property
    def source_id(self) -> str:
        """The dataset's id of the labelled item: a repeat's (`ID#rR`) is its item's, so a hit
        graded on any repeat is one judgment of the query."""
        return repeat_source(self.item_id, self.repeat)

    @model_validator(mode="after")
    def _fits_its_kind(self) -> ReviewLabel:
        if self.kind == "hit":
            if self.grade is None:
                raise ValueError("a hit's label is a grade, 0-3")
            if self.label is not None:
                raise ValueError("a hit takes a grade, not a label")
            if not self.target:
                raise ValueError("a hit's label names the memory (target)")
            return self
        allowed = LABELS[self.kind]
        if self.grade is not None:
            raise ValueError(
                f"{_article(self.kind)} {self.kind} takes a label ({', '.join(allowed)}),"
                " not a grade"
            )
        if self.label not in allowed:
            raise ValueError(
                f"{_article(self.kind)} {self.kind}'s label is one of {', '.join(allowed)};"
                f" got {self.label!r}"
            )
        if self.kind == "verdict" and not self.target:
            raise ValueError("a verdict's label names the evaluator (target)")
        return self

    @property
    def value(self) -> str:
        """The label as one text: the grade of a hit, else the label."""
        return str(self.grade) if self.kind == "hit" else str(self.label)

    @property
    def disagrees(self) -> bool:
        """Whether the reviewer said otherwise than the machine did."""
        return self.machine is not None and self.machine != self.value


def _article(word: str) -> str:
    """'an' before a vowel ("an operation"), else 'a'."""
    return "an" if word[:1] in "aeiou" else "a"
