"""People's review of stored runs (`memgauge view --review`): what can be labelled on an item
and what the machine said about each, the order items are reviewed in, and what the labels feed:
the judge's calibration (Cohen's kappa against the machine per reviewer, and between
reviewers) and a dataset's judgments (graded hits as `judgments.jsonl` rows or TREC qrels).

A label's `machine` is what the machine said when it was given, in the label's terms: the
verdict's pass/fail, the dataset's grade of a hit, whether the extraction scorer matched a fact
(correct) or counted it invented or stale (incorrect), whether the operation checks passed
(right) or not (wrong)."""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from pydantic import ValidationError

from memgauge.aggregates.hits import hits_of
from memgauge.data.models import Memory
from memgauge.data.records import ItemRecord, ScoreRecord
from memgauge.data.review import ReviewLabel
from memgauge.errors import UsageError
from memgauge.scorers.extraction import facts_of
from memgauge.stats.agreement import Calibration, calibrate, cohen_kappa
from memgauge.store.review import current_labels

__all__ = [
    "LabelCalibration",
    "Target",
    "calibrate_labels",
    "item_targets",
    "judged_pairs",
    "labels_as_judgments",
    "make_label",
    "override_memories",
    "verdicts_disagree",
]


@dataclass(frozen=True)
class Target:
    """One thing a reviewer can label on an item."""

    kind: str
    #: the hit's memory id, the verdict's evaluator, the fact's index; "" for a decision
    target: str
    #: what is shown to the reviewer: the hit's or fact's text, the verdict's reason
    text: str
    #: the machine's view in the label's terms (see the module docstring); None: none
    machine: str | None
    #: the hit's rank, the verdict's score: shown beside it
    extra: dict[str, Any] = field(default_factory=dict)


def _pass_fail(score: ScoreRecord) -> str | None:
    return None if score.passed is None else ("pass" if score.passed else "fail")


def _fact_targets(item: ItemRecord) -> list[Target]:
    case = next(
        (s.detail["case"] for s in item.scores if isinstance(s.detail.get("case"), Mapping)),
        None,
    )
    if case is None:
        return []
    good = {str(m.get("extracted")) for m in case.get("matched") or () if isinstance(m, Mapping)}
    bad = {str(f) for f in [*(case.get("false_positives") or ()), *(case.get("stale") or ())]}
    out = []
    for i, fact in enumerate(facts_of(item.output)):
        machine = "correct" if fact in good else "incorrect" if fact in bad else None
        out.append(Target("fact", str(i), fact, machine))
    return out


def _operation_target(item: ItemRecord) -> list[Target]:
    score = next((s for s in item.scores if isinstance(s.detail.get("decision"), Mapping)), None)
    if score is None or not isinstance(item.output, Mapping):
        return []
    out = item.output
    text = " ".join(str(out[k]) for k in ("action", "id", "content") if out.get(k) is not None)
    machine = None if score.passed is None else ("right" if score.passed else "wrong")
    return [Target("operation", "", text, machine, {"reason": score.reason})]


def item_targets(item: ItemRecord) -> list[Target]:
    """What a reviewer can label on `item`: its ranked hits (a retrieval item with graded
    expectations), its pass/fail verdicts, its extracted facts and its operation decision."""
    out: list[Target] = []
    hits = hits_of(item.output)
    if hits is not None and isinstance(item.expected, Mapping):
        for rank, h in enumerate(hits, 1):
            hid = str(h.get("id"))
            grade = item.expected.get(hid)
            out.append(
                Target(
                    "hit",
                    hid,
                    str(h.get("text") or ""),
                    str(grade) if isinstance(grade, int) else None,
                    {"rank": h.get("rank", rank)},
                )
            )
    out.extend(
        Target("verdict", s.evaluator, s.reason, _pass_fail(s), {"value": s.value})
        for s in item.scores
        if s.passed is not None
    )
    out.extend(_fact_targets(item))
    out.extend(_operation_target(item))
    return out


def make_label(
    item: ItemRecord,
    run_id: str,
    reviewer: str,
    *,
    kind: str,
    target: str = "",
    grade: int | str | None = None,
    action: str | None = None,
    label: str | None = None,
    note: str = "",
) -> ReviewLabel:
    """`reviewer`'s label of `target` on `item` of run `run_id`, with what the machine said of
    it: a hit's `grade` (0-3), a verdict's `action` (confirm: the verdict's own pass/fail;
    override: the other), a fact's or a decision's `label`. A UsageError naming what is wrong
    for a target the item does not have or a value its kind does not take."""
    found = next((t for t in item_targets(item) if (t.kind, t.target) == (kind, target)), None)
    if found is None:
        raise UsageError(f"this item has no {kind or 'label kind'} {target!r} to label")
    fields: dict[str, Any] = {}
    if kind == "hit":
        if str(grade) not in ("0", "1", "2", "3"):
            raise UsageError(f"a hit's grade is 0, 1, 2 or 3; got {grade!r}")
        fields["grade"] = int(str(grade))
    elif kind == "verdict":
        if action not in ("confirm", "override"):
            raise UsageError(f"a verdict is confirmed or overridden; got {action!r}")
        if found.machine is None:
            raise UsageError("this verdict has no pass/fail to confirm or override")
        flip = {"pass": "fail", "fail": "pass"}
        fields["label"] = found.machine if action == "confirm" else flip[found.machine]
    else:
        fields["label"] = label or ""
    try:
        return ReviewLabel(
            run_id=run_id,
            subject=item.subject,
            task=item.task,
            item_id=item.item_id,
            repeat=item.repeat,
            kind=kind,
            target=target,
            reviewer=reviewer,
            machine=found.machine,
            note=note,
            **fields,
        )
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        msg = first["msg"].removeprefix("Value error, ")  # a validator's own words
        raise UsageError(f"{where + ': ' if where else ''}{msg}") from None


def verdicts_disagree(item: ItemRecord) -> bool:
    """Whether the item's pass/fail verdicts disagree among themselves (a judge failing what
    a string check passes): a person's view settles it."""
    return len({s.passed for s in item.scores if s.passed is not None}) > 1


@dataclass(frozen=True)
class LabelCalibration:
    """The machine against people's labels of one kind: per reviewer, and between reviewers."""

    kind: str
    #: reviewer -> their current labels against the machine's view on the same targets
    per_reviewer: dict[str, Calibration]
    #: each pair of reviewers: {a, b, n (targets both labelled), kappa}
    between: list[dict[str, Any]]
    #: labels with no machine view to compare with (counted apart, never guessed)
    n_without_machine: int

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return {
            "kind": self.kind,
            "per_reviewer": {r: c.as_dict() for r, c in self.per_reviewer.items()},
            "between": self.between,
            "n_without_machine": self.n_without_machine,
        }


def _labelled(lab: ReviewLabel) -> tuple[str, ...]:
    """What `lab` is a label of: a hit's, the dataset's (query, memory) pair, one judgment
    whichever run or repeat it was graded on (as the export reads it); any other's, its target
    on its run's item (another run's verdict is another verdict)."""
    if lab.kind == "hit":
        return (lab.source_id, lab.target)
    return (lab.run_id, lab.subject, lab.task, lab.item_id, lab.target)


def calibrate_labels(labels: Sequence[ReviewLabel], kind: str = "verdict") -> LabelCalibration:
    """Each reviewer's current labels of `kind` against what the machine said (confusion
    matrix, accuracy with its Wilson interval, Cohen's kappa), and Cohen's kappa between each
    pair of reviewers on the things both labelled (a hit graded on two runs or repeats is one
    thing, its latest grade counted once)."""
    by_reviewer: dict[str, dict[tuple[str, ...], ReviewLabel]] = {}
    for lab in current_labels(labels):  # in the order given: a later one of a thing wins
        if lab.kind == kind:
            by_reviewer.setdefault(lab.reviewer, {})[_labelled(lab)] = lab
    per_reviewer = {}
    for reviewer, mine in sorted(by_reviewer.items()):
        compared = [lab for lab in mine.values() if lab.machine is not None]
        per_reviewer[reviewer] = calibrate(
            [lab.value for lab in compared], [str(lab.machine) for lab in compared]
        )
    between = []
    for a, b in itertools.combinations(sorted(by_reviewer), 2):
        both = sorted(set(by_reviewer[a]) & set(by_reviewer[b]))
        between.append(
            {
                "a": a,
                "b": b,
                "n": len(both),
                "kappa": cohen_kappa(
                    [by_reviewer[a][k].value for k in both], [by_reviewer[b][k].value for k in both]
                ),
            }
        )
    return LabelCalibration(
        kind=kind,
        per_reviewer=per_reviewer,
        between=between,
        n_without_machine=sum(
            lab.machine is None for mine in by_reviewer.values() for lab in mine.values()
        ),
    )


def judged_pairs(
    labels: Sequence[ReviewLabel], reviewer: str | None = None
) -> dict[tuple[str, str], dict[str, int]]:
    """(query id, memory id) -> reviewer -> grade: each reviewer's latest grade of each hit
    (across runs and repeats: the same query of the same dataset in another run, or on another
    repeat of the run, is the same pair)."""
    out: dict[tuple[str, str], dict[str, int]] = {}
    for lab in labels:  # oldest first: a later grade overwrites the reviewer's earlier one
        if lab.kind != "hit" or lab.grade is None or reviewer not in (None, lab.reviewer):
            continue
        out.setdefault((lab.source_id, lab.target), {})[lab.reviewer] = lab.grade
    return out


def labels_as_judgments(
    labels: Sequence[ReviewLabel], reviewer: str | None = None
) -> tuple[list[dict[str, Any]], int]:
    """The graded hits as a retrieval dataset's `judgments.jsonl` rows `{query_id, memory_id,
    grade}` (the item id is the query id), sorted; and how many pairs reviewers graded
    differently. With `reviewer`, that reviewer's grades; else, where reviewers differ, the
    lower median of their grades (two reviewers at 1 and 3: 1; the conservative grade)."""
    rows, conflicts = [], 0
    for (qid, mid), grades in sorted(judged_pairs(labels, reviewer).items()):
        values = sorted(grades.values())
        conflicts += len(set(values)) > 1
        rows.append({"query_id": qid, "memory_id": mid, "grade": values[(len(values) - 1) // 2]})
    return rows, conflicts


_SAID = {"verdict": "verdict", "fact": "extracted fact", "operation": "operation decision"}


def override_memories(labels: Sequence[ReviewLabel]) -> list[Memory]:
    """A learning (seed 000's eval-to-learning) per current label in which a reviewer said
    otherwise than the machine about a verdict, a fact or an operation decision: what the
    machine said, what the person said and their note, so that a judge, extractor or decider
    given `learnings:` is told where people overrode it. The id is a hash of the label's
    target, reviewer and value: storing the same override again adds nothing."""
    out = []
    for lab in current_labels(labels):
        if lab.kind == "hit" or not lab.disagrees:
            continue
        what = _SAID[lab.kind]
        name = f"{lab.task}/{lab.target}" if lab.kind == "verdict" else lab.task
        lines = [
            f'Reviewer override of a {what} ("{name}", subject {lab.subject}, item'
            f" {lab.item_id}, run {lab.run_id}):",
            f"- The machine said: {lab.machine}",
            f"- Reviewer {lab.reviewer} says: {lab.value}",
            f"- Note: {lab.note}" if lab.note else "",
        ]
        key = "/".join(
            (lab.run_id, lab.subject, lab.task, lab.item_id, lab.kind, lab.target, lab.reviewer)
        )
        digest = hashlib.sha256(f"{key}={lab.value}".encode()).hexdigest()[:16]
        out.append(
            Memory(
                id=f"review-override-{digest}",
                text="\n".join(line for line in lines if line),
                tier="important",
                folder="review-overrides",
                created_at=datetime.now(UTC),
                metadata={
                    "tags": ["review-override", lab.kind, name],
                    "run_id": lab.run_id,
                    "item_id": lab.item_id,
                    "reviewer": lab.reviewer,
                    "machine": lab.machine,
                    "label": lab.value,
                    "labelled_at": lab.created_at,
                },
            )
        )
    return out
