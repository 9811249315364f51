"""How a study that found nothing to compare ends: as an error with the exit code of its cause.

A study whose candidates partly failed is a result (the best, and each failure with its reason).
One with nothing to compare is not: its starting configuration failed (bad input when the task
or the subject refused it, exit 2; the subject failing its run, exit 4), or the task or the
subject refused every candidate the search proposed (its space, or its proposer, is bad input:
exit 2, naming the `--space` flag or the block's file and line).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from memgauge.errors import MemgaugeError, SubjectError, UsageError
from memgauge.optimize.state import REFUSED

if TYPE_CHECKING:
    from memgauge.optimize.study import StudyRunner

__all__ = ["nothing_found"]


def nothing_found(runner: StudyRunner) -> MemgaugeError | None:
    """The error the study ends in (see the module docstring); None when it has a result."""
    see = f"see `memgauge optimize show {runner.study_id}`"
    base = runner.state.baseline
    if base is not None and base.evaluation.score is None:
        ev = base.evaluation
        why = f"the starting configuration failed: {ev.reason or 'no item could be scored'}"
        return UsageError(f"{why}; {see}") if ev.invalid else SubjectError(f"{why}; {see}")
    rows = runner.history.iterations(runner.study_id, values=False)
    tried = [r for r in rows if r["step"]]
    if not tried or not all(r["status"] == "failed" and r.get("note") == REFUSED for r in tried):
        return None
    targets = sorted({str(r.get("target")) for r in tried})
    where = (
        runner.config.space_source or "the search space"
        if set(targets) <= {"config", "tools"}
        else f"the candidates proposed for {', '.join(targets)}"
    )
    return UsageError(
        f"{where}: the task or the subject refused each of the {len(tried)} candidate(s) the "
        f"search proposed (the first: {tried[0].get('reason')}); {see}"
    )
