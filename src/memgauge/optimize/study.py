"""The optimization loop: propose, score as runs, compare paired, accept, record, stop.

Step 0 scores the starting configuration (the baseline) on the tuning split. Each step then
changes one target (round-robin over the study's targets): the config space through an Optuna
sampler asked for a trial (`space`), a text through the optimizer model, the tools' subset
through the sampler, code through the hook (`proposers`). Every candidate is compared, item
by item, with the current point (paired delta and its bootstrap CI, `stats.paired_compare`)
and with the baseline.

Accept rules (the threshold is an absolute difference on the objective's 0-1 scale):
- greedy: a candidate whose paired improvement over the best is > 0 and >= the threshold (and,
  with `require_significance`, whose CI excludes 0) becomes the point the search continues from;
- best-of-n: the same for the best of the step's N candidates, scored concurrently;
- annealing: a candidate that clears the rule is accepted; any other is accepted with
  probability exp(delta / T), delta <= 0 its paired difference from the current point,
  T = temperature * cooling^(step-1), drawn from a generator seeded by (seed, step);
- tpe, random: no accept step; every result is told to the sampler.

Under every strategy the reported best is the highest-scoring candidate whose paired
improvement over the baseline clears the same rule; the baseline when none does. The study
stops at `maxIterations`, at `targetScore`, after `patience` steps without a new best, past the
wall-clock or cost budget, when a finite space is exhausted, or on Ctrl-C (`interrupted`: the
study is kept as cancelled and `--resume ID` continues it). Then the best and the baseline are
scored once on the held-out split and compared, paired.

A bad candidate does not stop the search: one the task or the subject refuses before its run
(`Evaluation.invalid`, note `refused before its run`), or one its proposer could not make
(`Candidate.unusable`, note `proposal refused`), is a failed row with its reason, told to the
sampler as failed, never accepted. The study itself fails when nothing could be compared: the
baseline failed, or every candidate the search proposed was refused (`ending`).

Resumable: every candidate's row is written (`running`, with its params) before its run
starts and gets its run id the moment the engine creates the run. A resume replays the finished
rows into the strategy's state, finishes unfinished runs with the engine's own `--resume`, and
never scores a finished candidate again.
"""

from __future__ import annotations

import contextlib
import math
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

import numpy as np

from memgauge._util.clock import utc_now
from memgauge._util.interrupts import deaf_to_ctrl_c
from memgauge._util.process import host_name, this_process
from memgauge.llm.scope import CallScope
from memgauge.optimize import space as spaces
from memgauge.optimize.config import StudyConfig, baseline_params
from memgauge.optimize.ending import nothing_found
from memgauge.optimize.feasible import (
    constraint_of,
    feasibility,
    known_constraint_attrs,
    tell_constraint,
)
from memgauge.optimize.history import History
from memgauge.optimize.holdout import score_holdout
from memgauge.optimize.objective import Candidate, CandidateRun, Evaluation, Objective
from memgauge.optimize.spend import close_proposers, optimizer_usage, usage_cost
from memgauge.optimize.split import Split, split_items
from memgauge.optimize.state import (
    LOCAL,
    REFUSED,
    UNUSABLE,
    Proposer,
    Quiet,
    Scored,
    State,
    StudyProgress,
    paired_delta,
    scored_from_row,
)

__all__ = ["Proposer", "StudyProgress", "StudyRunner", "paired_delta"]


class StudyRunner:
    """Runs (or resumes) one study; see the module docstring."""

    def __init__(
        self,
        config: StudyConfig,
        objective: Objective,
        history: History,
        *,
        suite_path: str | None = None,
        proposers: Mapping[str, Proposer] | None = None,
        progress: StudyProgress | None = None,
        clock: Callable[[], float] = time.monotonic,
        record_extra: Mapping[str, Any] | None = None,
    ) -> None:
        self.config, self.objective, self.history = config, objective, history
        self.record_extra = dict(record_extra or {})
        self.suite_path = suite_path
        self.proposers = dict(proposers or {})
        self.progress = progress or Quiet()
        self.clock = clock
        self.space = config.search_space()
        self.constraint = constraint_of(config.constraint)
        self.study_id = ""
        self.state = State()
        #: the optimizer model's usage recorded by earlier processes of a resumed study
        self.prior_usage: dict[str, dict[str, Any]] = {}
        self.split: Split | None = None
        self.optuna_study: Any = None
        self.sampler: Any = None
        self.started = clock()
        #: seconds spent scoring candidates and spent by the optimizer itself, this process
        self.timing = {"evaluate": 0.0, "optimizer": 0.0, "steps": 0.0}
        self._deltas: dict[tuple[int, int], tuple[float | None, float | None, float | None]] = {}
        self._alive: list[Evaluation] = []

    # --- the accept rule ---------------------------------------------------------------------

    def _delta(
        self, a: Evaluation, b: Evaluation
    ) -> tuple[float | None, float | None, float | None]:
        """`paired_delta` of two evaluations, computed once per pair (a step asks it of the
        same pair for the row, the accept rule and the best)."""
        key = (id(a), id(b))
        found = self._deltas.get(key)
        if found is None:
            found = paired_delta(a.values, b.values, self.config.seed)
            # the evaluations are kept alive with the key, so an id is never reused meanwhile
            self._deltas[key] = found
            self._alive.extend((a, b))
        return found

    def _clears(self, delta: float | None, low: float | None) -> bool:
        if delta is None or delta <= 0 or delta < self.config.threshold - 1e-12:
            return False
        return not self.config.require_significance or (low is not None and low > 0)

    # --- recording ---------------------------------------------------------------------------

    def _row(
        self, step: int, candidate: int, target: str, cand: Candidate, phase: str = "tune"
    ) -> dict[str, Any]:
        row = {
            "study_id": self.study_id,
            "phase": phase,
            "step": step,
            "candidate": candidate,
            "target": target,
            "status": "running",
            "params": cand.params,
            "texts": cand.texts,
            "started_at": utc_now(),
        }
        if cand.unusable is not None:  # so that a resume knows it for what it is
            row.update(note=UNUSABLE, reason=cand.unusable)
        return row

    def _evaluate(
        self, row: dict[str, Any], cand: Candidate, resume: str | None, scope: CallScope
    ) -> Evaluation:
        def on_run(run_id: str) -> None:
            row["run_id"] = run_id
            self.history.set_iteration_run(
                self.study_id, row["phase"], row["step"], row["candidate"], run_id
            )

        t0 = self.clock()
        evaluation = self.objective.evaluate(
            cand, row["phase"], CandidateRun(on_run, resume, scope)
        )
        row["seconds"] = self.clock() - t0
        return feasibility(evaluation, self.constraint)

    def _finish_row(
        self, row: dict[str, Any], ev: Evaluation, against: Scored | None, accepted: bool | None
    ) -> dict[str, Any]:
        row.update(
            status="completed" if ev.status == "completed" and ev.score is not None else "failed",
            run_id=ev.run_id or row.get("run_id"),
            score=ev.score,
            ci_low=ev.ci_low,
            ci_high=ev.ci_high,
            values=ev.values,
            reason=ev.reason if ev.score is not None or ev.reason else "no item could be scored",
            finished_at=utc_now(),
            accepted=accepted,
            constraint_value=ev.constraint_value,
        )
        if ev.invalid:
            row["note"] = REFUSED
        if against is not None and ev.score is not None:
            d = self._delta(against.evaluation, ev)
            row.update(delta=d[0], delta_ci_low=d[1], delta_ci_high=d[2])
        base = self.state.baseline
        if base is not None and ev.score is not None and row["step"] > 0:
            d = self._delta(base.evaluation, ev)
            row.update(baseline_delta=d[0], baseline_delta_ci_low=d[1], baseline_delta_ci_high=d[2])
        if ev.cost_usd:
            self.state.cost += ev.cost_usd
        return row

    # --- the study ---------------------------------------------------------------------------

    def start(self) -> str:
        """Record a new study; its id."""
        self.study_id = f"opt-{datetime.now(UTC):%Y%m%d-%H%M%S}-{uuid.uuid4().hex[:8]}"
        self.split = split_items(
            self.objective.items(), self.config.holdout, self.config.seed, self.config.split
        )
        self._use_split()
        me = this_process()
        created = utc_now()
        self.history.create_study(
            {
                "study_id": self.study_id,
                "suite_name": self.config.suite_name,
                "suite_path": self.suite_path,
                "task": self.config.task,
                "measure": self.config.measure,
                "subject": self.config.subject,
                "strategy": self.config.strategy,
                "status": "running",
                "config": self._config_record(),
                "usage": {},
                "pid": me.pid,
                "pid_start": me.start,
                "host": host_name(),
                "created_at": created,
                "updated_at": created,
            }
        )
        return self.study_id

    def _use_split(self) -> None:
        setter = getattr(self.objective, "use_split", None)
        if callable(setter):
            setter(self.split)

    def _config_record(self) -> dict[str, Any]:
        out = self.config.model_dump(mode="json")
        assert self.split is not None
        out["split_resolved"] = self.split.record()
        out["split_described"] = self.split.describe()
        out.update(self.record_extra)
        return out

    def run(self, study_id: str | None = None) -> str:
        """Run a new study, or resume `study_id`; the reason it stopped. KeyboardInterrupt
        keeps it as cancelled (resumable) and is re-raised."""
        if study_id is None:
            self.start()
            rows: list[dict[str, Any]] = []
        else:
            rows = self._reload(study_id)
        self._new_sampler()
        total = self.config.max_iterations
        try:
            self._replay(rows)
            done = max((r["step"] for r in rows if r["status"] != "running"), default=0)
            self.progress.start(self.study_id, total, done)
            reason = self._search(rows)
            score_holdout(self)
        except KeyboardInterrupt:
            with deaf_to_ctrl_c():  # a second Ctrl-C must not leave it 'running'
                self._set(status="cancelled", stopped_because="interrupted")
            raise
        except BaseException as exc:
            self._set(status="failed", stopped_because=f"error: {type(exc).__name__}: {exc}")
            raise
        finally:
            close_proposers(self.proposers.values())
        failure = nothing_found(self)
        if failure is not None:
            self._set(status="failed", stopped_because=str(failure), finished_at=utc_now())
            raise failure
        self._set(status="completed", stopped_because=reason, finished_at=utc_now())
        return reason

    def _set(self, **fields: Any) -> None:
        best = self.state.best
        if best is not None:
            fields.update(best_step=best.step, best_candidate=best.candidate)
        # the optimizer model's spend, recorded with every update so a killed study keeps it
        fields.setdefault("usage", optimizer_usage(self.prior_usage, self.proposers.values()))
        self.history.update_study(self.study_id, updated_at=utc_now(), **fields)

    def _reload(self, study_id: str) -> list[dict[str, Any]]:
        study = self.history.get_study(study_id)
        assert study is not None
        self.study_id = study_id
        self.split = Split.from_record((study.get("config") or {}).get("split_resolved") or {})
        self._use_split()
        me = this_process()
        self.history.update_study(
            study_id,
            status="running",
            stopped_because=None,
            pid=me.pid,
            pid_start=me.start,
            host=host_name(),
            updated_at=utc_now(),
        )
        self.prior_usage = dict(study.get("usage") or {})
        rows = self.history.iterations(study_id, phase="tune")
        self.state.prior_seconds = sum(r.get("seconds") or 0.0 for r in rows)
        return rows

    def _new_sampler(self) -> None:
        if not self.space:
            return
        self.sampler = spaces.sampler(
            self.config.strategy, self.space, self.config.seed, self.config.max_iterations
        )
        self.optuna_study = spaces.new_study(self.sampler)

    # --- replaying a resumed study -------------------------------------------------------------

    def _scored(self, row: Mapping[str, Any]) -> Scored:
        s = scored_from_row(row)
        return replace(s, evaluation=feasibility(s.evaluation, self.constraint))

    def _tell_known(self, s: Scored) -> None:
        """Tell the sampler of a candidate scored before (with its distance to the bound)."""
        ev = s.evaluation
        attrs = known_constraint_attrs(self.constraint, ev.constraint_value)
        spaces.tell_known(self.optuna_study, self.space, s.cand.params, ev.score, attrs)

    def _replay(self, rows: Sequence[Mapping[str, Any]]) -> None:
        """Rebuild the state from the finished rows of a resumed study (steps in order)."""
        by_step: dict[int, list[Mapping[str, Any]]] = {}
        for r in rows:
            by_step.setdefault(r["step"], []).append(r)
        for step in sorted(by_step):
            group = by_step[step]
            if any(r["status"] == "running" for r in group):
                return  # finished by `_search`
            scored = [self._scored(r) for r in group]
            if step == 0:
                self._take_baseline(scored[0])
                continue
            self._after_step(step, scored, [r.get("accepted") for r in group], told=False)

    def _take_baseline(self, s: Scored) -> None:
        self.state.baseline = self.state.current = self.state.best = s
        self.state.seen[spaces.params_key(s.cand.params) + spaces.params_key(s.cand.texts)] = s
        if self.optuna_study is not None:
            self._tell_known(s)

    # --- the search --------------------------------------------------------------------------

    def _search(self, rows: Sequence[Mapping[str, Any]]) -> str:
        pending = {r["step"]: [] for r in rows}  # type: dict[int, list[Mapping[str, Any]]]
        for r in rows:
            pending[r["step"]].append(r)
        if self.state.baseline is None:
            self._baseline(pending.get(0))
        assert self.state.baseline is not None
        if self.state.baseline.evaluation.score is None:
            return "baseline failed: " + (self.state.baseline.evaluation.reason or "no score")
        last = max(pending, default=0)
        step = max(
            (s for s, g in pending.items() if all(r["status"] != "running" for r in g)), default=0
        )
        while True:
            reason = self._stop_reason(step)
            if reason is not None and not (step < last):  # an unfinished step is finished first
                return reason
            step += 1
            t0 = self.clock()
            unfinished = pending.get(step)
            if unfinished and any(r["status"] == "running" for r in unfinished):
                self._resume_step(step, unfinished)
            else:
                if not self._step(step):
                    return "exhausted"
            self.timing["steps"] += self.clock() - t0
            best = self.state.best
            self.progress.step(step, best.evaluation.score if best else None, "")

    def _baseline(self, rows: Sequence[Mapping[str, Any]] | None) -> None:
        params, texts = baseline_params(self.config)
        cand = Candidate(params, texts)
        row = self._row(0, 0, "baseline", cand)
        resume = None
        if rows:
            row.update({k: v for k, v in rows[0].items() if k in ("started_at", "run_id")})
            resume = rows[0].get("run_id")
        else:
            self.history.put_iteration(row)
        ev = self._evaluate(row, cand, resume, CallScope("baseline"))
        self.history.put_iteration(self._finish_row(row, ev, None, None))
        self._take_baseline(Scored(0, 0, cand, ev))

    def _stop_reason(self, step: int) -> str | None:
        c, st = self.config, self.state
        met = st.best is not None and st.best.evaluation.feasible is not False
        best = st.best.evaluation.score if st.best is not None and met else None
        if c.target_score is not None and best is not None and best >= c.target_score:
            return "target-score"
        if step >= c.max_iterations:
            return "max-iterations"
        if c.patience is not None and st.since_best >= c.patience:
            return "patience"
        if c.max_seconds is not None and self._elapsed() >= c.max_seconds:
            return "time-budget"
        # the candidates' runs and the optimizer model's own calls (text targets) alike
        if c.max_cost is not None and st.cost + self._optimizer_cost() >= c.max_cost:
            return "cost-budget"
        return None

    def _optimizer_cost(self) -> float:
        return usage_cost(optimizer_usage(self.prior_usage, self.proposers.values()))

    def _elapsed(self) -> float:
        return self.state.prior_seconds + (self.clock() - self.started)

    def _target(self, step: int) -> str:
        targets = [t for t in self.config.targets if t != "config" or self.space]
        if "tools" in targets and "config" in targets:
            targets.remove("tools")  # the sampler searches both at once
        return targets[(step - 1) % len(targets)]

    def _centre(self) -> Scored:
        st = self.state
        point = st.current if self.config.strategy in LOCAL else st.best
        assert point is not None
        return point

    def _propose(self, step: int, target: str) -> tuple[list[Candidate], list[Any]]:
        """The step's candidates and their Optuna trials (None for a proposer's)."""
        n = self.config.candidates if self.config.strategy == "best-of-n" else 1
        centre = self._centre()
        if target in ("config", "tools"):
            if self.config.strategy in LOCAL:
                self.sampler.center = spaces.nearest_point(centre.cand.params, self.space)
                self.sampler.scale = self.state.scale
            out: list[Candidate] = []
            trials: list[Any] = []
            for _ in range(n):
                for _attempt in range(20):
                    trial, params = spaces.ask(self.optuna_study, self.space)
                    cand = Candidate({**centre.cand.params, **params}, dict(centre.cand.texts))
                    fresh = self._key(cand) not in self.state.seen and all(
                        self._key(cand) != self._key(o) for o in out
                    )
                    if fresh or self.config.strategy not in LOCAL:
                        break
                    spaces.tell(self.optuna_study, trial, None)  # a repeat: not scored again
                else:
                    continue
                out.append(cand)
                trials.append(trial)
            return out, trials
        proposer = self.proposers.get(target)
        if proposer is None:
            raise RuntimeError(f"no proposer for target {target!r}")
        made = proposer.propose(target, centre.cand, centre.evaluation, n, step)
        return made, [None] * len(made)

    @staticmethod
    def _key(cand: Candidate) -> str:
        return spaces.params_key(cand.params) + spaces.params_key(cand.texts)

    def _step(self, step: int) -> bool:
        target = self._target(step)
        t0 = self.clock()
        cands, trials = self._propose(step, target)
        self.timing["optimizer"] += self.clock() - t0
        if not cands:
            return False
        rows = [self._row(step, i, target, c) for i, c in enumerate(cands)]
        for row in rows:  # all rows exist before any run starts: a resume finds every one
            self.history.put_iteration(row)
        self._score(step, rows, cands, [None] * len(cands), trials)
        return True

    def _resume_step(self, step: int, group: Sequence[Mapping[str, Any]]) -> None:
        rows, cands, resumes = [], [], []
        done: list[Scored] = []
        for r in group:
            if r["status"] != "running":
                done.append(self._scored(r))
                continue
            row = {
                k: r.get(k)
                for k in (
                    "study_id",
                    "phase",
                    "step",
                    "candidate",
                    "target",
                    "status",
                    "params",
                    "texts",
                    "started_at",
                    "run_id",
                    "note",
                    "reason",
                )
            }
            rows.append(row)
            unusable = r.get("reason") if r.get("note") == UNUSABLE else None
            cands.append(
                Candidate(dict(r.get("params") or {}), dict(r.get("texts") or {}), unusable)
            )
            resumes.append(r.get("run_id"))
        self._score(step, rows, cands, resumes, [None] * len(rows), done)

    def _score(
        self,
        step: int,
        rows: list[dict[str, Any]],
        cands: list[Candidate],
        resumes: list[str | None],
        trials: list[Any],
        done: Sequence[Scored] = (),
    ) -> None:
        scopes = [CallScope(f"{self.study_id}/{step}/{r['candidate']}") for r in rows]
        repeats: dict[int, Scored] = {
            i: self.state.seen[self._key(c)]
            for i, c in enumerate(cands)
            if self._key(c) in self.state.seen and resumes[i] is None and c.unusable is None
        }
        t0 = self.clock()
        results: list[Evaluation | None] = [None] * len(rows)
        for i, old in repeats.items():
            results[i] = old.evaluation
            rows[i]["note"] = f"same as step {old.step}.{old.candidate}: not scored again"
            rows[i]["run_id"] = old.evaluation.run_id
        for i, c in enumerate(cands):
            if c.unusable is not None:  # nothing to score: failed with the proposer's reason
                results[i] = Evaluation(None, status="failed", reason=c.unusable)
                rows[i]["note"] = UNUSABLE
        todo = [i for i, r in enumerate(results) if r is None]
        if len(todo) <= 1:
            for i in todo:
                results[i] = self._evaluate(rows[i], cands[i], resumes[i], scopes[i])
        else:
            results = self._concurrently(rows, cands, resumes, scopes, todo, results)
        self.timing["evaluate"] += self.clock() - t0
        against = self._centre()
        scored = [*done]
        finished: list[dict[str, Any]] = []
        for i, row in enumerate(rows):
            ev = results[i]
            assert ev is not None
            finished.append(self._finish_row(row, ev, against, None))
            scored.append(Scored(step, row["candidate"], cands[i], ev))
            if trials[i] is not None:
                if ev.score is not None:
                    tell_constraint(trials[i], self.constraint, ev.constraint_value)
                spaces.tell(self.optuna_study, trials[i], ev.score)
            elif self.optuna_study is not None and ev.score is not None and self.space:
                # a proposer's candidate (a resumed trial): its point is known to the sampler
                self._tell_known(scored[-1])
        accepted = self._after_step(step, scored, None, told=True)
        for row, flag in zip(finished, accepted[len(done) :], strict=True):
            row["accepted"] = flag
            self.history.put_iteration(row)
        self._set(status="running")

    def _concurrently(
        self,
        rows: list[dict[str, Any]],
        cands: list[Candidate],
        resumes: list[str | None],
        scopes: list[CallScope],
        todo: list[int],
        results: list[Evaluation | None],
    ) -> list[Evaluation | None]:
        """best-of-n: the step's candidates as runs going at once, each in its own LLM scope;
        Ctrl-C cancels each run's own calls and keeps every run resumable."""
        with ThreadPoolExecutor(max_workers=len(todo), thread_name_prefix="candidate") as pool:
            futures = {
                i: pool.submit(self._evaluate, rows[i], cands[i], resumes[i], scopes[i])
                for i in todo
            }
            try:
                for i, fut in futures.items():
                    results[i] = fut.result()
            except BaseException:
                for s in scopes:
                    s.cancel()
                for fut in futures.values():
                    with contextlib.suppress(BaseException):  # each run records its own end
                        fut.result()
                raise
        return results

    def _after_step(
        self,
        step: int,
        scored: Sequence[Scored],
        accepted: Sequence[bool | None] | None,
        *,
        told: bool,
    ) -> list[bool | None]:
        """Update the state with a finished step; the accept flag of each candidate (given
        when a resumed study replays its rows)."""
        st, c = self.state, self.config
        for s in scored:
            if s.cand.unusable is not None:
                continue  # it holds the point it was proposed from, not a point of its own
            st.seen.setdefault(self._key(s.cand), s)
            if not told and self.optuna_study is not None and self.space:
                self._tell_known(s)
        flags: list[bool | None]
        centre = self._centre()
        if accepted is not None:
            flags = list(accepted)
        elif c.strategy in LOCAL:
            flags = [self._accepts(step, s, centre) for s in scored]
            if c.strategy == "best-of-n" and any(flags):
                # keep the best of the step's accepted candidates only
                top = max(
                    (s for s, f in zip(scored, flags, strict=True) if f),
                    key=lambda s: s.evaluation.score or -math.inf,
                )
                flags = [s is top for s in scored]
        else:
            flags = [None] * len(scored)
        if c.strategy in LOCAL:
            moved = [s for s, f in zip(scored, flags, strict=True) if f]
            if moved:
                st.current = moved[0]
                st.scale = min(0.5, st.scale * 1.5)
            else:
                st.scale = max(0.02, st.scale * 0.8)
        improved = False
        base = st.baseline
        for s in scored:
            ev = s.evaluation
            if base is None or ev.score is None or st.best is None or ev.feasible is False:
                continue
            if st.best.evaluation.feasible is False:
                # the start misses the bound: the first candidate that meets it is the best
                st.best, improved = s, True
                continue
            d = self._delta(base.evaluation, ev)
            # against a start that misses the bound, a better candidate need not clear it
            clears = self._clears(d[0], d[1]) or base.evaluation.feasible is False
            if clears and ev.score > (st.best.evaluation.score or -math.inf):
                st.best = s
                improved = True
        st.since_best = 0 if improved else st.since_best + 1
        return flags

    def _accepts(self, step: int, s: Scored, centre: Scored) -> bool:
        ev = s.evaluation
        if ev.score is None:
            return False
        if ev.feasible is False or centre.evaluation.feasible is False:
            # Deb's rules (2000): off a point that meets the bound never to one that misses
            # it; from one that misses it, to one nearer to meeting it
            return self._nearer(ev, centre.evaluation)
        delta, low, _high = self._delta(centre.evaluation, ev)
        if self._clears(delta, low):
            return True
        if self.config.strategy != "annealing" or delta is None:
            return False
        temperature = self.config.temperature * self.config.cooling ** (step - 1)
        draw = float(np.random.default_rng([self.config.seed, step, s.candidate]).random())
        return draw < math.exp(min(0.0, delta) / temperature)

    def _nearer(self, ev: Evaluation, than: Evaluation) -> bool:
        """Whether `ev` is nearer to meeting the constraint than `than` (met is nearest)."""
        assert self.constraint is not None
        miss = self.constraint.violation
        return max(miss(ev.constraint_value), 0.0) < max(miss(than.constraint_value), 0.0)
