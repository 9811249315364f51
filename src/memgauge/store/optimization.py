"""The history of optimizations (`memgauge optimize`): one row per study, one per candidate.

Schema (migration `0011_optimization_history`):

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
import sqlite3
from collections.abc import Iterator, Mapping
from contextlib import AbstractContextManager
from typing import Any

__all__ = ["ITERATION_COLUMNS", "MIGRATION", "OptimizationHistory"]

MIGRATION = """
CREATE TABLE optimization_studies (
    study_id TEXT PRIMARY KEY,
    suite_name TEXT NOT NULL,
    suite_path TEXT,
    task TEXT NOT NULL,
    measure TEXT NOT NULL,
    subject TEXT NOT NULL,
    strategy TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('running', 'completed', 'cancelled', 'failed')),
    stopped_because TEXT,
    config_json TEXT NOT NULL,
    best_step INTEGER,
    best_candidate INTEGER,
    holdout_json TEXT,
    usage_json TEXT NOT NULL DEFAULT '{}',
    pid INTEGER,
    pid_start TEXT,
    host TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    finished_at TEXT
);
CREATE INDEX idx_optimization_studies_created ON optimization_studies(created_at);
CREATE TABLE optimization_iterations (
    study_id TEXT NOT NULL REFERENCES optimization_studies(study_id) ON DELETE CASCADE,
    phase TEXT NOT NULL CHECK (phase IN ('tune', 'holdout')),
    step INTEGER NOT NULL,
    candidate INTEGER NOT NULL,
    target TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('running', 'completed', 'failed')),
    params_json TEXT NOT NULL,
    texts_json TEXT NOT NULL,
    run_id TEXT,
    score REAL,
    ci_low REAL,
    ci_high REAL,
    delta REAL,
    delta_ci_low REAL,
    delta_ci_high REAL,
    baseline_delta REAL,
    baseline_delta_ci_low REAL,
    baseline_delta_ci_high REAL,
    accepted INTEGER,
    values_json TEXT,
    note TEXT,
    reason TEXT,
    started_at TEXT NOT NULL,
    finished_at TEXT,
    seconds REAL,
    PRIMARY KEY (study_id, phase, step, candidate)
);
CREATE INDEX idx_optimization_iterations_run ON optimization_iterations(run_id)
"""

#: the columns of an iteration row, in table order
ITERATION_COLUMNS = (
    "study_id",
    "phase",
    "step",
    "candidate",
    "target",
    "status",
    "params_json",
    "texts_json",
    "run_id",
    "score",
    "ci_low",
    "ci_high",
    "delta",
    "delta_ci_low",
    "delta_ci_high",
    "baseline_delta",
    "baseline_delta_ci_low",
    "baseline_delta_ci_high",
    "accepted",
    "values_json",
    "note",
    "reason",
    "started_at",
    "finished_at",
    "seconds",
)

_JSON_COLUMNS = {"params_json", "texts_json", "values_json", "config_json", "holdout_json"}
_STUDY_FIELDS = (
    "study_id",
    "suite_name",
    "suite_path",
    "task",
    "measure",
    "subject",
    "strategy",
    "status",
    "stopped_because",
    "config_json",
    "best_step",
    "best_candidate",
    "holdout_json",
    "usage_json",
    "pid",
    "pid_start",
    "host",
    "created_at",
    "updated_at",
    "finished_at",
)


def _dumps(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)


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
    """Studies and their iterations in the results store (SQL only here).

    A mixin of `SuiteRunStore`: it uses the store's connection and its write transaction."""

    _conn: sqlite3.Connection

    def _write(self, conn: sqlite3.Connection | None = None) -> AbstractContextManager[Any]:
        raise NotImplementedError  # the store's

    def create_study(self, study: Mapping[str, Any]) -> None:
        """Record a new study (`study` has the columns of `optimization_studies`; JSON ones
        as values under their names without `_json`)."""
        row = [
            _dumps(study.get(f.removesuffix("_json"), {})) if f.endswith("_json") else study.get(f)
            for f in _STUDY_FIELDS
        ]
        with self._write() as conn:
            conn.execute(
                f"INSERT INTO optimization_studies ({', '.join(_STUDY_FIELDS)}) VALUES "
                f"({', '.join('?' * len(_STUDY_FIELDS))})",
                row,
            )

    def update_study(self, study_id: str, **fields: Any) -> None:
        """Set columns of a study (JSON columns by their name without `_json`)."""
        names, values = [], []
        for key, value in fields.items():
            column = f"{key}_json" if f"{key}_json" in _STUDY_FIELDS else key
            if column not in _STUDY_FIELDS:
                raise ValueError(f"no study column {key!r}")
            names.append(column)
            values.append(
                _dumps(value) if column.endswith("_json") and value is not None else value
            )
        with self._write() as conn:
            conn.execute(
                f"UPDATE optimization_studies SET {', '.join(f'{n} = ?' for n in names)} "
                "WHERE study_id = ?",
                [*values, study_id],
            )

    def put_iteration(self, row: Mapping[str, Any]) -> None:
        """Insert or replace one iteration (`row`: its columns; JSON ones without `_json`)."""
        values = [
            (
                _dumps(row[c.removesuffix("_json")])
                if row.get(c.removesuffix("_json")) is not None
                else None
            )
            if c in _JSON_COLUMNS
            else (None if row.get(c) is None else int(row[c]))
            if c == "accepted"
            else row.get(c)
            for c in ITERATION_COLUMNS
        ]
        with self._write() as conn:
            conn.execute(
                f"INSERT OR REPLACE INTO optimization_iterations ({', '.join(ITERATION_COLUMNS)})"
                f" VALUES ({', '.join('?' * len(ITERATION_COLUMNS))})",
                values,
            )

    def set_iteration_run(
        self, study_id: str, phase: str, step: int, candidate: int, run_id: str
    ) -> None:
        """Record the run of a candidate the moment the engine creates it."""
        with self._write() as conn:
            conn.execute(
                "UPDATE optimization_iterations SET run_id = ? WHERE study_id = ? AND phase = ?"
                " AND step = ? AND candidate = ?",
                (run_id, study_id, phase, step, candidate),
            )

    def get_study(self, study_id: str) -> dict[str, Any] | None:
        """A study's row (without its iterations), or None."""
        found = self._conn.execute(
            f"SELECT {', '.join(_STUDY_FIELDS)} FROM optimization_studies WHERE study_id = ?",
            (study_id,),
        ).fetchone()
        return None if found is None else _row(_STUDY_FIELDS, found)

    def find_study_ids(self, prefix: str) -> list[str]:
        """Ids of the studies starting with `prefix`."""
        escaped = prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        return [
            r[0]
            for r in self._conn.execute(
                "SELECT study_id FROM optimization_studies WHERE study_id LIKE ? ESCAPE '\\'"
                " ORDER BY study_id",
                (escaped + "%",),
            )
        ]

    def list_studies(self, limit: int = 50) -> list[dict[str, Any]]:
        """The latest studies, newest first, each with its iteration count."""
        rows = self._conn.execute(
            f"SELECT {', '.join(_STUDY_FIELDS)} FROM optimization_studies "
            "ORDER BY created_at DESC, study_id DESC LIMIT ?",
            (limit,),
        ).fetchall()
        out = [_row(_STUDY_FIELDS, r) for r in rows]
        for study in out:
            (n,) = self._conn.execute(
                "SELECT COUNT(DISTINCT step) FROM optimization_iterations WHERE study_id = ? AND "
                "phase = 'tune' AND step > 0",
                (study["study_id"],),
            ).fetchone()
            study["n_iterations"] = n
        return out

    def iterations(
        self, study_id: str, *, phase: str | None = "tune", values: bool = True
    ) -> list[dict[str, Any]]:
        """A study's iterations in (phase, step, candidate) order."""
        columns = tuple(c for c in ITERATION_COLUMNS if values or c != "values_json")
        where, args = "study_id = ?", [study_id]
        if phase is not None:
            where += " AND phase = ?"
            args.append(phase)
        rows = self._conn.execute(
            f"SELECT {', '.join(columns)} FROM optimization_iterations WHERE {where} "
            "ORDER BY phase DESC, step, candidate",
            args,
        ).fetchall()
        return [_row(columns, r) for r in rows]

    def study_run_ids(self, study_id: str) -> Iterator[str]:
        """The runs of a study's candidates."""
        for (run_id,) in self._conn.execute(
            "SELECT run_id FROM optimization_iterations WHERE study_id = ? AND run_id IS NOT NULL",
            (study_id,),
        ):
            yield run_id
