"""Targets and the one rule that decides them, everywhere: the CLI's `--fail-under`, a suite's
`targets:`, the seeds' targets written beside their aggregates, and the Python API.

The rule: by default the point estimate is compared with the target (`value >= 0.6`). With
`by="ci-upper"`, a minimum target fails only when the whole 95% CI lies below it (the upper bound
is below the target: the run is shown to miss it), and a maximum target (`< 0.2`) only when the
lower bound lies above it. A measure with no value (n/a) never meets a target.

`--fail-under MEASURE=VALUE`: MEASURE is `[SUBJECT/][TASK/]NAME` (`hybrid/recall/Recall@10`,
`recall/Recall@10`, `Recall@10`); a name that matches no measure of the run is a usage error.
"""

from __future__ import annotations

import functools
import math
import operator
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from memgauge.aggregates.base import Target
from memgauge.data.records import MeasureValue, TargetCheck
from memgauge.errors import UsageError, argument
from memgauge.metrics.measures import AGGREGATION, is_measure, parse_measure

__all__ = [
    "By",
    "MeasureRef",
    "Requirement",
    "check_targets",
    "compared_value",
    "meets",
    "parse_fail_under",
    "parse_measure_ref",
    "parse_target",
    "unmatched_error",
]

By = Literal["point", "ci-upper"]
Op = Literal[">", ">=", "<", "<=", "=="]
_OPS: dict[str, Callable[[float, float], bool]] = {
    ">": operator.gt,
    ">=": operator.ge,
    "<": operator.lt,
    "<=": operator.le,
    "==": lambda a, b: math.isclose(a, b, rel_tol=0.0, abs_tol=1e-12),
}
#: the operators `_TARGET` reads, as the type says them
_OP_NAMES: dict[str, Op] = {">": ">", ">=": ">=", "<": "<", "<=": "<=", "==": "=="}
_TARGET = re.compile(r"^\s*(>=|<=|==|>|<)?\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*$")


@dataclass(frozen=True)
class MeasureRef:
    """Measures named as `[SUBJECT/][TASK/]NAME` (`--fail-under`, `gate --measure`): `subject`
    / `task` None match any."""

    name: str
    subject: str | None = None
    task: str | None = None

    def matches(self, m: MeasureValue) -> bool:
        """Whether `m` is one of the measures this names: by its parts (an IR measure by its
        canonical name, however either is spelled: `MRR@5` is `RR@5`, `R(rel=2)@10` is
        `Recall(rel=2)@10`), or, where a subject, task or measure name itself holds a '/'
        (`sentence-transformers/all-MiniLM-L6-v2`), by the whole text being `NAME`,
        `TASK/NAME` or `SUBJECT/TASK/NAME`."""
        if (
            (m.name == self.name or _canonical(m.name) == _canonical(self.name))
            and self.subject in (None, m.subject)
            and self.task in (None, m.task)
        ):
            return True
        if self.subject is not None and self.task is None:
            return False  # not a path (built in code)
        return self.text() in (m.name, f"{m.task}/{m.name}", f"{m.subject}/{m.task}/{m.name}")

    def text(self) -> str:
        """As the user wrote it."""
        return "/".join(x for x in (self.subject, self.task, self.name) if x)


@functools.lru_cache(maxsize=1024)
def _canonical(name: str) -> str:
    """An IR measure's canonical name (`parse_measure`), any other name as it is."""
    return str(parse_measure(name)) if is_measure(name) else name


def parse_measure_ref(text: str, *, where: str, target: float | str | None = None) -> MeasureRef:
    """`[SUBJECT/][TASK/]NAME` -> the measures it names; UsageError naming `where` (and, for a
    name ending in an operator, what to write with `target`, the value it was given). More
    than three parts name a subject, task or measure whose name holds a '/'
    (`MeasureRef.matches` tries every way of reading them)."""
    parts = text.strip().split("/")
    if not all(p.strip() for p in parts):
        raise UsageError(f"{where}: MEASURE is [SUBJECT/][TASK/]NAME, e.g. hybrid/recall/nDCG@10")
    name = parts[-1]
    if name.rstrip()[-1] in "=<>!":
        # `Recall@5==0.5`, `Recall@5<=0.5` read as a measure `Recall@5=` / `Recall@5<`,
        # refused only once the run had ended, its measures listed as if the name were a typo
        raise UsageError(f"{where}: {text.strip()!r} ends in an operator; {_meant(text, target)}")
    base = name.split("@")[0]
    if name.count("@") > 1 and (is_measure(base) or is_measure(f"{base}@1")):
        # `Recall@5@3`: an IR measure with a second cutoff, refused only once the run had ended
        try:
            parse_measure(name)
        except UsageError as exc:
            raise UsageError(f"{where}: {exc}") from None
    task = parts[-2] if len(parts) >= 2 else None
    subject = "/".join(parts[:-2]) if len(parts) >= 3 else None
    return MeasureRef(name, subject, task)


@dataclass(frozen=True)
class Requirement:
    """A target aimed at measures: `subject` / `task` None match any."""

    name: str
    target: Target
    subject: str | None = None
    task: str | None = None

    def matches(self, m: MeasureValue) -> bool:
        """Whether this requirement applies to `m`."""
        return MeasureRef(self.name, self.subject, self.task).matches(m)

    def text(self) -> str:
        """The measures it names, as the user wrote them."""
        return MeasureRef(self.name, self.subject, self.task).text()


def parse_target(text: float | str, *, where: str, measure: str | None = None) -> tuple[Op, float]:
    """`0.6` (at least), `'> 0.95'`, `'< 0.2'` -> (op, value); UsageError naming `where`.
    With `measure` a retrieval measure (RR@5, nDCG@10: every one lies between 0 and 1 but the
    counts), a target outside 0..1 is refused: it could never be met, or never be missed."""
    if isinstance(text, bool):
        raise UsageError(f"{where}: a target is a number or 'OP NUMBER', not {text!r}")
    op: Op = ">="
    if isinstance(text, int | float):
        value = float(text)
    else:
        _refuse_backwards(str(text), where)
        m = _TARGET.match(str(text))
        if m is None:
            raise UsageError(f"{where}: {text!r} is not a target; write 0.6, '>= 0.6' or '< 0.2'")
        op, value = _OP_NAMES[m.group(1) or ">="], float(m.group(2))
    if not math.isfinite(value):
        raise UsageError(f"{where}: the target must be a finite number")
    if measure is not None and not 0.0 <= value <= 1.0 and _proportion(measure):
        raise UsageError(
            f"{where}: {measure} lies between 0 and 1, so a target of {value:g} would "
            + ("never be met" if (value > 1.0) == (op in (">", ">=", "==")) else "always be met")
            + ("; write a share as a fraction (0.6 for 60%)" if value > 1.0 else "")
        )
    return op, value


def _refuse_backwards(text: str, where: str, measure: str | None = None) -> None:
    """UsageError for a target starting `=>` or `=<` (`--fail-under Recall@5=>0.5`, whose
    TARGET after MEASURE= is `>0.5`, `measure` given): read as a strict `>`, it most likely
    meant `>=`."""
    m = re.match(r"\s*=([<>])(?!=)\s*(.*)", text, re.S)
    if m is None:
        return
    op, rest = m.group(1), m.group(2).strip() or "N"
    least, more = ("at least", "more") if op == ">" else ("at most", "less")
    ge, gt = f"{op}= {rest}", f"{op} {rest}"
    if measure is not None:  # the forms --fail-under reads unambiguously
        # `Recall@5= => 0.5`: the measure was read up to the '=' of `=>`, its separator in it
        name = measure.strip().removesuffix("=").rstrip()
        ge, gt = f"{name}={op}={rest}", f"'{name}= {op} {rest}'"
    raise UsageError(
        f"{where}: '={op}' is no operator: write {ge} ({least}) or {gt} (strictly {more})"
    )


#: what a target of each operator means, for the advice that says how to write one
_MEANING = {">=": "at least", "<=": "at most", "==": "exactly"}


def _meant(text: str, target: float | str | None) -> str:
    """What to write for `text`, a measure ending in an operator (`Recall@5=` of
    `Recall@5==0.5`: the '=' that follows was read as the separator), given `target`."""
    measure = text.strip().rstrip("=<>!").rstrip()
    tail = text.strip()[len(measure) :].strip()  # `=`, `<` (its `=` the separator) or `<=`
    op = tail if len(tail) > 1 else tail + "="
    value = f"{target:g}" if isinstance(target, int | float) else str(target or "").strip()
    value = value if value and not value.startswith(tuple("=<>!")) else "N"
    if op not in _MEANING:  # `!=`
        return (
            f"'{op}' is no target's operator: one of >=, >, <=, <, == after MEASURE= (e.g."
            f" {measure}=<= {value})"
        )
    return (
        f"the operator belongs to the target, after MEASURE=: write {measure}={op}{value}"
        f" ({_MEANING[op]} {value}) with --fail-under, {{{measure!r}: '{op} {value}'}} as a"
        " threshold"
    )


def _proportion(name: str) -> bool:
    """Whether `name` is a retrieval measure with values from 0 to 1 (the counts are not)."""
    return is_measure(name) and parse_measure(name).name not in AGGREGATION


#: `MEASURE=TARGET`: the target is what follows the first '=' after which only an operator
#: and a value remain (`x=<= 0.1` is x, `<= 0.1`; a name with '=' in it keeps it)
_FAIL_UNDER = re.compile(r"^(.+?)=((?:\s*(?:>=|<=|==|>|<))?[^=<>]*)$", re.S)


def parse_fail_under(text: str) -> Requirement:
    """`[SUBJECT/][TASK/]NAME=VALUE` -> a minimum target set by `--fail-under`; VALUE may be a
    target with its operator (`hallucinated_memory_rate=<= 0.1`), as the pytest plug-in's
    thresholds are."""
    found = _FAIL_UNDER.match(text)
    measure, raw = found.groups() if found else ("", "")
    where = argument("fail_under", repr(text))
    if not measure.strip() or not raw.strip():
        raise UsageError(
            f"{where}: write MEASURE=VALUE, e.g. Recall@10=0.6 or hybrid/recall/Recall@10=0.6"
        )
    # the separator's '=' and an operator after it: `Recall@5=>0.5`, `=<`
    _refuse_backwards(text[len(measure) :], where, measure)
    return requirement(measure, raw.strip(), where=where)


def requirement(measure: str, target: float | str, *, where: str) -> Requirement:
    """The target `target` (`parse_target`) on the measures `measure` names
    (`[SUBJECT/][TASK/]NAME`), set by `--fail-under` or a threshold given apart from its
    measure (the pytest plug-in's); UsageError naming `where`."""
    ref = parse_measure_ref(measure, where=where, target=target)
    op, value = parse_target(target, where=where, measure=ref.name)
    return Requirement(ref.name, Target(ref.name, op, value, "--fail-under"), ref.subject, ref.task)


def meets(
    value: float | None,
    ci_low: float | None,
    ci_high: float | None,
    op: str,
    target: float,
    by: By = "point",
) -> tuple[bool | None, float | None]:
    """Whether a measure meets a target by the rule, and the number compared (None: n/a)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None, None
    compared = compared_value(value, ci_low, ci_high, op, by)
    return _OPS[op](compared, target), compared


def compared_value(
    value: float, ci_low: float | None, ci_high: float | None, op: str, by: By
) -> float:
    """The number the rule compares with a target: the point estimate, or with `ci-upper` the
    CI bound on the favourable side (the upper bound for a minimum target, the lower for a
    maximum), the point estimate when the measure has no CI."""
    if by != "ci-upper":
        return value
    bound = ci_high if op in (">", ">=", "==") else ci_low
    return value if bound is None else bound


def check_targets(
    measures: Sequence[MeasureValue],
    requirements: Iterable[Requirement],
    *,
    by: By = "point",
) -> list[TargetCheck]:
    """Every requirement against every measure it applies to (one that matches none yields
    nothing here: `unmatched_error` says so for the ones the user named)."""
    out: list[TargetCheck] = []
    for req in requirements:
        for m in (m for m in measures if req.matches(m)):
            ok, compared = meets(m.value, m.ci_low, m.ci_high, req.target.op, req.target.value, by)
            out.append(
                TargetCheck(
                    subject=m.subject,
                    task=m.task,
                    measure=m.name,
                    op=req.target.op,
                    target=req.target.value,
                    value=m.value,
                    bound=compared if by == "ci-upper" else None,
                    by=by,
                    met=ok,
                    source=req.target.source,
                    enforced=req.target.enforced,
                )
            )
    return out


def unmatched_error(
    measures: Sequence[MeasureValue],
    requirements: Iterable[Requirement | MeasureRef],
    flag: str | None = None,
) -> UsageError | None:
    """The error for measures the user named (`--fail-under`, `gate --measure`) that match no
    measure of the run (a typo must not pass silently), or None when every one matches.
    `flag`: what named them (default: `--fail-under`, from Python `fail_under`)."""
    missing = [req.text() for req in requirements if not any(req.matches(m) for m in measures)]
    if not missing:
        return None
    # the headline measures first: a run's secondary ones (agent-memory, cost) run to dozens
    names = {f"{m.subject}/{m.task}/{m.name}": m.primary for m in measures}
    known = sorted(names, key=lambda n: (not names[n], n))
    return UsageError(
        f"{flag or argument('fail_under')} {', '.join(missing)}: no such measure in this run; it has "
        + ", ".join(known[:20])
        + (" ..." if len(known) > 20 else "")
    )
