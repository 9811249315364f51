"""The held-out comparison that ends a study: the reported best and the starting configuration,
each scored once on the held-out split (resumed, never redone, after a kill), compared item by
item with a paired bootstrap CI."""

from __future__ import annotations

from typing import TYPE_CHECKING

from memgauge.llm.scope import CallScope
from memgauge.optimize.objective import Evaluation
from memgauge.optimize.state import paired_delta, scored_from_row

if TYPE_CHECKING:
    from memgauge.optimize.study import StudyRunner

__all__ = ["score_holdout"]


def score_holdout(runner: StudyRunner) -> None:
    """Score and compare on the holdout; the study's `holdout` column (None: nothing held
    out)."""
    st = runner.state
    if (
        runner.split is None
        or runner.split.holdout is None
        or st.best is None
        or st.baseline is None
    ):
        runner._set(holdout=None)
        return
    if st.baseline.evaluation.score is None:
        return
    done = {
        (r["step"], r["candidate"]): r
        for r in runner.history.iterations(runner.study_id, phase="holdout")
    }
    scored: dict[str, Evaluation] = {}
    for name, s in (("baseline", st.baseline), ("best", st.best)):
        key = (s.step, s.candidate)
        if key == (st.baseline.step, st.baseline.candidate) and "baseline" in scored:
            scored[name] = scored["baseline"]  # nothing cleared the rule: the baseline
            continue
        prior = done.get(key)
        if prior is not None and prior["status"] != "running":
            scored[name] = scored_from_row(prior).evaluation
            continue
        row = runner._row(s.step, s.candidate, "holdout", s.cand, phase="holdout")
        resume = prior.get("run_id") if prior is not None else None
        if prior is None:
            runner.history.put_iteration(row)
        ev = runner._evaluate(row, s.cand, resume, CallScope(f"{runner.study_id}/holdout"))
        runner.history.put_iteration(runner._finish_row(row, ev, None, None))
        scored[name] = ev
    base, best = scored["baseline"], scored["best"]
    delta, low, high = paired_delta(base.values, best.values, runner.config.seed)
    n = sum(
        1
        for i in set(base.values) & set(best.values)
        if base.values[i] is not None and best.values[i] is not None
    )
    runner._set(
        holdout={
            "best": best.score,
            "baseline": base.score,
            "delta": delta,
            "ci_low": low,
            "ci_high": high,
            "n": n,
            "best_run_id": best.run_id,
            "baseline_run_id": base.run_id,
        }
    )
