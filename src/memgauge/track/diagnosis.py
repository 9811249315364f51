"""What a failure memory says beyond the numbers (seed 000's stored text): false-positive and
false-negative counts where the evaluator has them, the common pattern among the failing items,
and a suggested action.

- **Counts.** A verdict's `detail.confusion` (`{"fp": n, "fn": m}`: the operation checks' false
  matches and missed paraphrases) or `detail.case` (extraction: facts invented or kept stale,
  facts missed), summed over the task's items. Evaluators with neither get no counts, never 0s.
- **Pattern.** The most common reason among the failing verdicts, with quoted text and numbers
  blanked so that `expected 'C3'` and `expected 'C7'` are one pattern; and, when most failing
  items gave the very same output, that output (an agent answering "no idea" to everything).
- **Action.** One rule per situation, first match wins: failures to score at all point at the
  subject's availability; more false positives than negatives at over-matching; the reverse at
  under-matching; a judge at the outputs it marked down; otherwise at the failing examples.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from memgauge.data.records import ItemRecord, ScoreRecord
from memgauge.track.gate import JUDGE_EVALUATORS

__all__ = ["Diagnosis", "diagnose"]

#: what a false positive / negative is, per evaluator kind (the seed's glosses)
_GLOSS = {
    "operation-checks": ("treated different topics as similar", "missed paraphrases"),
    "extraction": ("facts invented or kept when stale", "stated facts missed"),
}

_QUOTED = re.compile(r"'[^']*'|\"[^\"]*\"")
_NUMBER = re.compile(r"\d+(?:\.\d+)?")


@dataclass(frozen=True)
class Diagnosis:
    """The seed's extra content for one regressed measure."""

    fp: int | None
    fn: int | None
    pattern: str | None
    action: str

    def lines(self, kind: str | None) -> list[str]:
        """The lines for the stored text."""
        out = []
        if self.fp is not None and self.fn is not None:
            fp_gloss, fn_gloss = _GLOSS.get(kind or "", ("", ""))
            out.append(f"False positives: {self.fp}" + (f" ({fp_gloss})" if fp_gloss else ""))
            out.append(f"False negatives: {self.fn}" + (f" ({fn_gloss})" if fn_gloss else ""))
        out.append("")
        out.append(f"Action: {self.action}")
        if self.pattern:
            out.append(f"Common pattern in failures: {self.pattern}")
        return out


def _confusion(sc: ScoreRecord) -> tuple[int, int] | None:
    d = sc.detail
    found = d.get("confusion")
    if isinstance(found, dict):
        return int(found.get("fp", 0)), int(found.get("fn", 0))
    case = d.get("case")
    if isinstance(case, dict) and "fp" in case and "fn" in case:
        return int(case["fp"]), int(case["fn"])
    return None


def _shape(reason: str) -> str:
    return " ".join(_NUMBER.sub("N", _QUOTED.sub("'…'", reason)).split())


def _pattern(failing: Sequence[tuple[ItemRecord, ScoreRecord]]) -> str | None:
    if not failing:
        return None
    n = len(failing)
    parts = []
    reasons = Counter(_shape(sc.error or sc.reason) for _it, sc in failing if sc.error or sc.reason)
    if reasons:
        shape, count = reasons.most_common(1)[0]
        parts.append(f"{shape!r} ({count} of {n} failing items)")
    outputs = Counter(" ".join(str(it.output).split())[:120] for it, _sc in failing)
    same, count = outputs.most_common(1)[0]
    if count > 1 and count * 2 > n:
        parts.append(f"the same output {same!r} in {count} of {n}")
    return "; ".join(parts) or None


def _action(
    subject: str,
    task: str,
    kind: str | None,
    n_errors: int,
    n_failing: int,
    fp: int | None,
    fn: int | None,
) -> str:
    if n_errors and n_errors * 2 >= max(1, n_failing):
        return (
            f"Check that {subject} is reachable and answers in time: {n_errors} of the failing"
            f" items on {task} could not be scored at all."
        )
    if fp is not None and fn is not None and fp != fn:
        if fp > fn:
            return (
                f"Review {subject}'s prompt for {task}: it over-matches (more false positives"
                " than negatives); ask for stricter evidence before acting."
            )
        return (
            f"Review {subject}'s prompt for {task}: it under-matches (more false negatives than"
            " positives); ask it to act on paraphrases and stated facts it now misses."
        )
    if kind in JUDGE_EVALUATORS:
        return (
            f"Read the outputs the judge marked down on {task}, then {subject}'s prompt (or the"
            " judge's rubric, if the verdicts look wrong)."
        )
    return f"Compare {subject}'s failing outputs on {task} with their expected values below."


def diagnose(
    items: Sequence[ItemRecord],
    evaluator: str | None,
    kind: str | None,
    failed: Sequence[ItemRecord],
) -> Diagnosis:
    """The diagnosis of one regressed measure from its task's items (`failed`: the items the
    evaluator failed, every one of them)."""
    verdicts = [(it, sc) for it in items if evaluator and (sc := it.verdict(evaluator)) is not None]
    counts = [c for _it, sc in verdicts if (c := _confusion(sc)) is not None]
    fp = sum(c[0] for c in counts) if counts else None
    fn = sum(c[1] for c in counts) if counts else None
    failing_ids = {it.key for it in failed}
    failing = [(it, sc) for it, sc in verdicts if it.key in failing_ids]
    n_errors = sum(1 for it in items if it.status == "failed") + sum(
        1 for _it, sc in failing if sc.error is not None or sc.value is None
    )
    subject = items[0].subject if items else "the subject"
    task = items[0].task if items else "the task"
    return Diagnosis(
        fp, fn, _pattern(failing), _action(subject, task, kind, n_errors, len(failed), fp, fn)
    )
