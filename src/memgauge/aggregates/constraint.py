"""A bound on one run-level measure: the constraint of a constrained objective (`memgauge
optimize --objective recall/Recall@10 --constraint 'context_tokens.p50<=2000'`).

`[TASK/]NAME OP NUMBER`, OP one of `<=`, `<`, `>=`, `>`. NAME is any measure of the run
(`context_tokens.p50` of the cost aggregate, `latency_ms.p95`, an evaluator's mean); TASK
defaults to the objective's. A candidate meets it when its point value compares true; a value
that is n/a never meets it.
"""

from __future__ import annotations

import math
import operator
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Literal, cast

from memgauge.aggregates.targets import parse_measure_ref
from memgauge.data.records import MeasureValue
from memgauge.errors import UsageError

__all__ = ["Constraint", "parse_constraint"]

Bound = Literal["<", "<=", ">", ">="]
_OPS: dict[str, Callable[[float, float], bool]] = {
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}
_TEXT = re.compile(
    r"^\s*(?P<measure>[^<>=]+?)\s*(?P<op><=|>=|<|>)\s*"
    r"(?P<bound>[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*$"
)
#: what Optuna is told of a candidate whose measure is n/a: violated, by a large amount
_NA_VIOLATION = 1e12


@dataclass(frozen=True)
class Constraint:
    """`measure op bound`, of `task` (None: the objective's)."""

    measure: str
    op: Bound
    bound: float
    task: str | None = None

    def text(self) -> str:
        """As it is recorded and shown: `context_tokens.p50 <= 2000`."""
        name = f"{self.task}/{self.measure}" if self.task else self.measure
        return f"{name} {self.op} {self.bound:g}"

    def value_in(self, measures: Iterable[MeasureValue], subject: str, task: str) -> float | None:
        """The constrained measure's value among a run's `measures` (None: n/a or absent)."""
        where = self.task or task
        found = next(
            (m for m in measures if (m.subject, m.task, m.name) == (subject, where, self.measure)),
            None,
        )
        if found is None or found.value is None or math.isnan(found.value):
            return None
        return float(found.value)

    def met(self, value: float | None) -> bool:
        """Whether `value` meets the bound (n/a never does)."""
        return value is not None and _OPS[self.op](value, self.bound)

    def violation(self, value: float | None) -> float:
        """Optuna's constraint value: <= 0 when met (minus the slack), > 0 by how much it is
        missed (a value on a strict bound misses it by the least positive amount)."""
        if value is None:
            return _NA_VIOLATION
        gap = value - self.bound if self.op in ("<", "<=") else self.bound - value
        if self.met(value):
            return min(gap, 0.0)
        return max(gap, math.ulp(max(abs(self.bound), 1.0)))


def parse_constraint(text: str, *, where: str = "--constraint") -> Constraint:
    """`[TASK/]NAME OP NUMBER` -> a Constraint; UsageError naming `where` and the form."""
    found = _TEXT.match(text)
    if found is None:
        raise UsageError(
            f"{where} {text!r}: write [TASK/]MEASURE OP NUMBER with OP one of <=, <, >=, >, "
            "e.g. 'context_tokens.p50<=2000' or 'retrieval/latency_ms.p95<250'"
        )
    ref = parse_measure_ref(found["measure"], where=f"{where} {text!r}")
    if ref.subject is not None:
        raise UsageError(
            f"{where} {text!r}: a constraint bounds the tuned subject's measure; write "
            "[TASK/]MEASURE, without a subject"
        )
    bound = float(found["bound"])
    if not math.isfinite(bound):
        raise UsageError(f"{where} {text!r}: the bound must be a finite number")
    op = cast(Bound, found["op"])
    return Constraint(ref.name, op, bound, ref.task)
