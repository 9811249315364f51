"""One exit-code policy for every command that runs an evaluation (the README's table):

| code | meaning |
|---:|---|
| 0 | the run completed, every target was met (or none was set), failures within `max_failure_rate` |
| 1 | a target was missed, or a gate failed |
| 2 | bad input (file, line or field named; nothing half-written) |
| 3 | something needed is unavailable (an optional capability, an unreachable judge endpoint) |
| 4 | the subject under test failed: more than `max_failure_rate` of its items |
| 70 | an internal error: a bug in memgauge (the traceback is shown) |
| 130 | interrupted: the run is kept and `--resume ID` finishes it (143: by `kill PID`) |

When several apply, the order is 2 > 3 > 4 > 1. A caller may name subjects as optional (the demo's
systems that need the dense channel, on a machine without an embedder): their being unavailable
is reported but does not make the exit code 3. A target on a measure with no value (n/a) is
missed when the user set it (a suite's `targets:`, `--fail-under`); a seed's own target on a
measure with nothing to measure (no conflict case) is not applicable.
"""

from __future__ import annotations

from collections.abc import Collection

from memgauge.data.records import TargetCheck
from memgauge.runs.engine import RunReport

__all__ = [
    "EXIT_DATA",
    "EXIT_INTERNAL",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "EXIT_SUBJECT",
    "EXIT_TARGET",
    "EXIT_UNAVAILABLE",
    "applicable_targets",
    "exit_code",
    "missed_targets",
    "target_verdict",
]

EXIT_OK = 0
EXIT_TARGET = 1
EXIT_DATA = 2
EXIT_UNAVAILABLE = 3
EXIT_SUBJECT = 4
EXIT_INTERNAL = 70
EXIT_INTERRUPTED = 130


def applicable_targets(report: RunReport) -> list[TargetCheck]:
    """The targets that decide the run: the enforced ones, less a seed's own target on a measure
    with nothing to measure. A target only shown (seed 002's, a seed's with `--no-targets`) does
    not apply: it is drawn beside its value, and never listed as a verdict (JUnit, pytest)."""
    return [
        t
        for t in report.summary.targets
        if t.enforced and not (t.met is None and t.source.startswith("seed"))
    ]


def missed_targets(report: RunReport) -> list[TargetCheck]:
    """The applicable targets the run missed (n/a is missed: the user asked for a number)."""
    return [t for t in applicable_targets(report) if t.met is not True]


def target_verdict(t: TargetCheck, missed: Collection[int]) -> str:
    """Target `t`'s verdict, the one word every listing of targets prints: `met`; `MISSED`
    when the exit code counts it missed (`missed`: the ids of `missed_targets`), `MISSED
    (unmeasured)` when its measure had no value; `unmeasured` for an n/a that decides nothing
    (a seed's own target); `MISSED` for a target only shown, which never decides."""
    if t.met:
        return "met"
    if t.met is None:
        return "MISSED (unmeasured)" if id(t) in missed else "unmeasured"
    return "MISSED"


def exit_code(report: RunReport, *, optional: Collection[str] = ()) -> int:
    """The run's exit code by the policy above (bad input never gets this far: it raises).

    `optional`: subjects whose being unavailable is expected and does not count (they are still
    in the report, and a `--fail-under` on one of their measures is still missed: n/a)."""
    required = set(report.unavailable) - set(optional)
    if required or report.judge_unreachable:
        return EXIT_UNAVAILABLE
    if report.status == "failed":
        return EXIT_SUBJECT
    if report.status == "cancelled":
        return EXIT_INTERRUPTED
    if missed_targets(report):
        return EXIT_TARGET
    return EXIT_OK
