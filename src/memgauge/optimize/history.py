"""Where a study keeps its history: the results store (`store.optimization`), or, for a study
kept in memory (`store=False`, tests on synthetic objectives), `MemoryHistory`, which has the
same methods over dicts. `study_json` is the one reader both `optimize` and `optimize show`
print from, so a resumed study reports exactly like an uninterrupted one.
"""

from __future__ import annotations

import copy
import threading
from collections.abc import Mapping
from typing import Any, Protocol

from memgauge.aggregates.constraint import parse_constraint
from memgauge.store.tables import ITERATION_SCORES

__all__ = ["History", "MemoryHistory", "study_json"]


class History(Protocol):
    """What a study writes and reads (`memgauge.store.optimization.OptimizationHistory`)."""

    def create_study(self, study: Mapping[str, Any]) -> None: ...

    def update_study(self, study_id: str, **fields: Any) -> None: ...

    def put_iteration(self, row: Mapping[str, Any]) -> None: ...

    def set_iteration_run(
        self, study_id: str, phase: str, step: int, candidate: int, run_id: str
    ) -> None: ...

    def get_study(self, study_id: str) -> dict[str, Any] | None: ...

    def iterations(
        self, study_id: str, *, phase: str | None = "tune", values: bool = True
    ) -> list[dict[str, Any]]: ...


class MemoryHistory:
    """A history in memory (see the module docstring)."""

    def __init__(self) -> None:
        self.studies: dict[str, dict[str, Any]] = {}
        self.rows: dict[tuple[str, str, int, int], dict[str, Any]] = {}
        self._lock = threading.Lock()

    def create_study(self, study: Mapping[str, Any]) -> None:
        with self._lock:
            self.studies[str(study["study_id"])] = copy.deepcopy(dict(study))

    def update_study(self, study_id: str, **fields: Any) -> None:
        with self._lock:
            self.studies[study_id].update(copy.deepcopy(fields))

    def put_iteration(self, row: Mapping[str, Any]) -> None:
        key = (str(row["study_id"]), str(row["phase"]), int(row["step"]), int(row["candidate"]))
        with self._lock:
            self.rows[key] = copy.deepcopy(dict(row))

    def set_iteration_run(
        self, study_id: str, phase: str, step: int, candidate: int, run_id: str
    ) -> None:
        with self._lock:
            self.rows[(study_id, phase, step, candidate)]["run_id"] = run_id

    def get_study(self, study_id: str) -> dict[str, Any] | None:
        with self._lock:
            found = self.studies.get(study_id)
            return copy.deepcopy(found) if found is not None else None

    def iterations(
        self, study_id: str, *, phase: str | None = "tune", values: bool = True
    ) -> list[dict[str, Any]]:
        with self._lock:
            rows = [
                copy.deepcopy(r)
                for (s, p, _st, _c), r in sorted(
                    self.rows.items(), key=lambda kv: (kv[0][1] != "tune", kv[0][2], kv[0][3])
                )
                if s == study_id and (phase is None or p == phase)
            ]
        if not values:
            for r in rows:
                r.pop("values", None)
        return rows


#: what each iteration shows (beside `params`, and `texts` when a text is tuned)
_SHOWN = (
    "step",
    "candidate",
    "target",
    "status",
    *ITERATION_SCORES,
    "accepted",
    "run_id",
    "note",
    "reason",
    "seconds",
    "constraint_value",
)


def _meets(constraint: str, row: Mapping[str, Any] | None) -> bool | None:
    """Whether an iteration (a row) meets the study's constraint (None: no row)."""
    if row is None:
        return None
    return parse_constraint(constraint, where="constraint").met(row.get("constraint_value"))


def _no_holdout(study: Mapping[str, Any]) -> str | None:
    """Why a study has no held-out comparison (None: it has one)."""
    if study.get("holdout"):
        return None
    held = ((study.get("config") or {}).get("split_resolved") or {}).get("holdout")
    if not held:
        return "nothing held out"
    status = study.get("status")
    if status == "completed":
        return "nothing held out"  # a study stored before the split was recorded
    if status == "running":
        return "not scored yet: the study is running"
    if status == "cancelled":
        return (
            f"not scored: the study was interrupted before its end; `memgauge optimize "
            f"--resume {study.get('study_id')}` finishes it"
        )
    return f"not scored: the study is {status}"


def _best_note(study: Mapping[str, Any], iterations: list[dict[str, Any]]) -> str | None:
    """Why the best is the starting configuration (None: it is not, or there is no best)."""
    done = [it for it in iterations if it.get("status") == "completed"]
    if study.get("best_step") != 0 or not any(it["step"] == 0 for it in done):
        return None
    start = "the starting configuration: "
    if any(it["step"] > 0 for it in done):
        return start + "nothing cleared the threshold against it"
    status = study.get("status")
    if status == "running":
        return start + "no other candidate has finished yet"
    if status == "cancelled":
        return start + "the study was cancelled before another candidate finished"
    return start + "no other candidate finished"


def study_json(history: History, study_id: str) -> dict[str, Any]:
    """A study as `memgauge optimize --json` prints it: id, strategy, objective, every
    iteration, the best and the baseline, the holdout comparison, why it stopped."""
    study = history.get_study(study_id)
    if study is None:
        raise KeyError(study_id)
    config = study.get("config") or {}
    with_texts = bool(config.get("texts"))
    constraint = config.get("constraint")
    rows = history.iterations(study_id, values=False)
    iterations = []
    for r in rows:
        shown: dict[str, Any] = {"step": r["step"], "params": r.get("params") or {}}
        shown.update({k: r.get(k) for k in _SHOWN})
        if shown["status"] == "running" and study.get("status") == "cancelled":
            # its run stopped with the study (the row stays `running` for --resume to finish)
            shown["status"] = "cancelled"
        if constraint is not None:
            shown["constraint_met"] = _meets(constraint, r)
        if with_texts:
            shown["texts"] = r.get("texts") or {}
        iterations.append(shown)
    best = next(
        (
            r
            for r in rows
            if r["step"] == study.get("best_step") and r["candidate"] == study.get("best_candidate")
        ),
        None,
    )
    base = next((r for r in rows if r["step"] == 0), None)

    def scored(r: Mapping[str, Any] | None) -> dict[str, Any] | None:
        if r is None:
            return None
        out = {
            "step": r["step"],
            "candidate": r["candidate"],
            "params": r.get("params") or {},
            "score": r.get("score"),
            "ci_low": r.get("ci_low"),
            "ci_high": r.get("ci_high"),
            "run_id": r.get("run_id"),
        }
        if constraint is not None:
            out["constraint_value"] = r.get("constraint_value")
        if with_texts:
            out["texts"] = r.get("texts") or {}
        return out

    return {
        "id": study_id,
        "status": study.get("status"),
        "strategy": study.get("strategy"),
        "objective": f"{study.get('task')}/{study.get('measure')}",
        "subject": study.get("subject"),
        "suite": study.get("suite_name"),
        "split": config.get("split_described"),
        "notices": config.get("notices") or [],
        "iterations": iterations,
        "best": scored(best),
        "baseline": scored(base),
        # why the best is the start: none cleared the threshold, or none other finished
        "best_note": _best_note(study, iterations),
        "holdout": study.get("holdout") or None,  # {} until the study reaches its end
        # why `holdout` is null: nothing held out, or a study that did not reach its end
        "holdout_note": _no_holdout(study),
        "stopped_because": study.get("stopped_because"),
        # the bound of a constrained objective (`optimize.feasible`), and whether the best
        # meets it (False: no candidate did, and the best is the start, which misses it)
        "constraint": None
        if constraint is None
        else {"text": constraint, "best_meets": _meets(constraint, best)},
        # the optimizer model's own calls (text targets), per model with cost_usd; the
        # candidates' spend is their runs'
        "optimizer_usage": study.get("usage") or {},
    }
