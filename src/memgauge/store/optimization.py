"""The history of optimizations (`memgauge optimize`): one row per study, one per candidate.

Schema (Alembic revision 0012, `store/tables.py`; the hand-run migration
0011_optimization_history in stores made before Alembic):

`optimization_studies`: one optimization.
- `study_id` (`opt-YYYYmmdd-HHMMSS-xxxxxxxx`), `suite_name`, `suite_path`, `task`, `measure`
  (the objective `TASK/MEASURE`), `subject` (the suite subject tuned), `strategy`;
- `status`: running, completed, cancelled (Ctrl-C / kill: resumable) or failed;
  `stopped_because`: max-iterations, target-score, patience, time-budget, cost-budget,
  exhausted, interrupted, or an error;
- `config_json`: the resolved configuration a resume rebuilds the study from (space, budgets,
  targets, threshold, the split's item ids or corpora, the starting subject spec);
- `best_step`, `best_candidate`: the reported best (the baseline, step 0, when nothing
  cleared the threshold against it); `holdout_json`: the final comparison on the held-out
  split `{best, baseline, delta, ci_low, ci_high, n, best_run_id, baseline_run_id}` or NULL;
- `usage_json`: the optimizer model's own LLM usage (text targets); the candidates' is their
  runs' (`suite_run_usage`);
- `pid`, `pid_start`, `host`: the process driving it (a resume refuses a live one);
  `created_at`, `updated_at`, `finished_at` (UTC, ISO 8601).

`optimization_iterations`: one candidate evaluation; primary key (`study_id`, `phase`, `step`,
`candidate`).
- `phase`: `tune` (the search, on the tuning split) or `holdout` (the final comparison: step 0
  the baseline, and the best's step);
- `step`: 0 is the starting configuration, 1.. the iterations; `candidate`: 0.. within a step
  (best-of-n runs several at once);
- `target`: what was changed (baseline, config, instructions, prompts, tools, code);
- `params_json` (every searched FIELD -> value), `texts_json` (text FIELDs -> text);
- `status`: running (its run may be unfinished: resumed, never redone), completed, failed;
- `run_id`: the candidate's run in `suite_runs` (NULL only before the run is created);
- `score`, `ci_low`, `ci_high`: the objective's mean with its 95% bootstrap CI (NULL: n/a);
- `delta`, `delta_ci_low`, `delta_ci_high`: the paired difference against the best (the
  chain's current candidate under annealing) when it was proposed; `baseline_delta*`: against
  the starting configuration;
- `accepted`: 1 or 0 under greedy, best-of-n and annealing; NULL under tpe and random (no
  accept step) and for the baseline;
- `values_json`: item id -> the objective's value (NULL for an item that failed), what the
  paired comparisons are computed from; `note`, `reason`; `started_at`, `finished_at`, `seconds`.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa

from memgauge.store.dialect import upsert
from memgauge.store.tables import optimization_iterations as iterations_t
from memgauge.store.tables import optimization_studies as studies_t
from memgauge.store.tables import stored_json

__all__ = ["ITERATION_COLUMNS", "OptimizationHistory"]

#: the columns of an iteration row, in table order (`tables.optimization_iterations`)
ITERATION_COLUMNS = tuple(c.name for c in iterations_t.columns)

_ITERATION_KEY = ("study_id", "phase", "step", "candidate")
_JSON_COLUMNS = {"params_json", "texts_json", "values_json", "config_json", "holdout_json"}
_STUDY_FIELDS = tuple(c.name for c in studies_t.columns)


def _row(names: tuple[str, ...], row: tuple[Any, ...]) -> dict[str, Any]:
    """A row as a mapping, JSON columns parsed and `_json` dropped from their names."""
    out: dict[str, Any] = {}
    for name, value in zip(names, row, strict=True):
        if name.endswith("_json"):
            out[name.removesuffix("_json")] = json.loads(value) if value is not None else None
        elif name == "accepted":
            out[name] = None if value is None else bool(value)
        else:
            out[name] = value
    return out


class OptimizationHistory:
    """Studies and their iterations in the results store, on either dialect (SQL only here).

    A mixin of `SuiteRunStore`: it uses the store's read and write transactions."""

    if TYPE_CHECKING:  # the store's (`Store._read`, `SuiteRunStore._write`), after this in the MRO

        def _read(self) -> AbstractContextManager[sa.Connection]: ...

        def _write(
            self, conn: sa.Connection | None = None
        ) -> AbstractContextManager[sa.Connection]: ...

    def create_study(self, study: Mapping[str, Any]) -> None:
        """Record a new study (`study` has the columns of `optimization_studies`; JSON ones
        as values under their names without `_json`)."""
        row = {
            f: stored_json(study.get(f.removesuffix("_json"), {}))
            if f.endswith("_json")
            else study.get(f)
            for f in _STUDY_FIELDS
        }
        with self._write() as conn:
            conn.execute(sa.insert(studies_t).values(row))

    def update_study(self, study_id: str, **fields: Any) -> None:
        """Set columns of a study (JSON columns by their name without `_json`)."""
        values: dict[str, Any] = {}
        for key, value in fields.items():
            column = f"{key}_json" if f"{key}_json" in _STUDY_FIELDS else key
            if column not in _STUDY_FIELDS:
                raise ValueError(f"no study column {key!r}")
            values[column] = (
                stored_json(value) if column.endswith("_json") and value is not None else value
            )
        with self._write() as conn:
            conn.execute(
                sa.update(studies_t).where(studies_t.c.study_id == study_id).values(values)
            )

    def put_iteration(self, row: Mapping[str, Any]) -> None:
        """Insert or replace one iteration (`row`: its columns; JSON ones without `_json`)."""
        values: dict[str, Any] = {}
        for c in ITERATION_COLUMNS:
            given = row.get(c.removesuffix("_json"))
            if c in _JSON_COLUMNS:
                values[c] = None if given is None else stored_json(given)
            elif c == "accepted":
                values[c] = None if row.get(c) is None else int(row[c])
            else:
                values[c] = row.get(c)
        with self._write() as conn:
            conn.execute(upsert(conn, iterations_t, _ITERATION_KEY), values)

    def set_iteration_run(
        self, study_id: str, phase: str, step: int, candidate: int, run_id: str
    ) -> None:
        """Record the run of a candidate the moment the engine creates it."""
        i = iterations_t.c
        with self._write() as conn:
            conn.execute(
                sa.update(iterations_t)
                .where(
                    i.study_id == study_id,
                    i.phase == phase,
                    i.step == step,
                    i.candidate == candidate,
                )
                .values(run_id=run_id)
            )

    def get_study(self, study_id: str) -> dict[str, Any] | None:
        """A study's row (without its iterations), or None."""
        columns = [studies_t.c[f] for f in _STUDY_FIELDS]
        with self._read() as conn:
            found = conn.execute(
                sa.select(*columns).where(studies_t.c.study_id == study_id)
            ).first()
        return None if found is None else _row(_STUDY_FIELDS, tuple(found))

    def find_study_ids(self, prefix: str) -> list[str]:
        """Ids of the studies starting with `prefix`; an empty prefix names none."""
        if not prefix:
            return []
        s = studies_t.c
        with self._read() as conn:
            rows = conn.execute(
                sa.select(s.study_id)
                .where(s.study_id.startswith(prefix, autoescape=True))
                .order_by(s.study_id)
            ).all()
        return [str(r[0]) for r in rows]

    def list_studies(self, limit: int = 50) -> list[dict[str, Any]]:
        """The latest studies, newest first, each with its iteration count."""
        s, i = studies_t.c, iterations_t.c
        n_steps = (
            sa.select(sa.func.count(sa.distinct(i.step)))
            .where(i.study_id == s.study_id, i.phase == "tune", i.step > 0)
            .scalar_subquery()
        )
        with self._read() as conn:
            rows = conn.execute(
                sa.select(*(s[f] for f in _STUDY_FIELDS), n_steps)
                .order_by(s.created_at.desc(), s.study_id.desc())
                .limit(limit)
            ).all()
        return [
            {**_row(_STUDY_FIELDS, tuple(r)[: len(_STUDY_FIELDS)]), "n_iterations": int(r[-1] or 0)}
            for r in rows
        ]

    def iterations(
        self, study_id: str, *, phase: str | None = "tune", values: bool = True
    ) -> list[dict[str, Any]]:
        """A study's iterations in (phase, step, candidate) order."""
        i = iterations_t.c
        columns = tuple(c for c in ITERATION_COLUMNS if values or c != "values_json")
        stmt = sa.select(*(i[c] for c in columns)).where(i.study_id == study_id)
        if phase is not None:
            stmt = stmt.where(i.phase == phase)
        with self._read() as conn:
            rows = conn.execute(stmt.order_by(i.phase.desc(), i.step, i.candidate)).all()
        return [_row(columns, tuple(r)) for r in rows]

    def iteration_of_run(self, run_id: str) -> dict[str, Any] | None:
        """The study, phase, step and candidate whose run `run_id` is (None: no study's);
        a holdout run of the baseline that is also the best is the first of its rows."""
        i = iterations_t.c
        with self._read() as conn:
            row = conn.execute(
                sa.select(i.study_id, i.phase, i.step, i.candidate)
                .where(i.run_id == run_id)
                .order_by(i.phase.desc(), i.step, i.candidate)
                .limit(1)
            ).first()
        if row is None:
            return None
        return {"study_id": row[0], "phase": row[1], "step": row[2], "candidate": row[3]}

    def study_run_ids(self, study_id: str) -> Iterator[str]:
        """The runs of a study's candidates."""
        i = iterations_t.c
        with self._read() as conn:
            rows = conn.execute(
                sa.select(i.run_id).where(i.study_id == study_id, i.run_id.is_not(None))
            ).all()
        for (run_id,) in rows:
            yield str(run_id)
