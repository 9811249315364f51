"""The search space as Optuna distributions, and the samplers every strategy asks for candidates.

Optuna is the search machinery (distributions, samplers, ask/tell); a dependency of memgauge,
imported only here and only when an optimization starts.

- `tpe`: Optuna's `TPESampler` (Bergstra et al. 2011, "Algorithms for Hyper-Parameter
  Optimization"), `random`: its `RandomSampler`;
- `greedy`, `best-of-n`, `annealing`: `NeighborSampler`, a local move from a centre the
  strategy sets (the best so far, or annealing's current point): each dimension changes with
  probability 1/d (at least one does); a numeric one moves by a normal step of `scale` times
  its range, on the log scale for `:log` ones, rounded for ints (an int always moves by at
  least 1); a choice takes another value uniformly. The step of a trial is drawn from a
  generator seeded by (seed, trial number), so a resumed study proposes what it would have.
"""

from __future__ import annotations

import importlib
import json
import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from memgauge.errors import UnavailableError
from memgauge.runs.optspec import SearchDim

if TYPE_CHECKING:
    import optuna
    from optuna.distributions import BaseDistribution

__all__ = ["INSTALL", "distributions", "load_optuna", "neighbor_sampler", "params_key"]

#: what to run when Optuna is missing (memgauge installed without its dependencies)
INSTALL = "pip install 'optuna>=4.0'"


def load_optuna() -> Any:
    """The `optuna` module, its logging quietened; UnavailableError (exit 3) naming the pip
    command when it is not installed."""
    try:
        module = importlib.import_module("optuna")
    except ImportError:
        raise UnavailableError(
            f"memgauge optimize needs Optuna, a dependency of memgauge that is not installed "
            f"here: {INSTALL}"
        ) from None
    module.logging.set_verbosity(module.logging.WARNING)
    return module


def distributions(space: Mapping[str, SearchDim]) -> dict[str, BaseDistribution]:
    """FIELD -> the Optuna distribution of its dimension."""
    dist = load_optuna().distributions
    out: dict[str, BaseDistribution] = {}
    for name, d in space.items():
        if d.type == "choice":
            out[name] = dist.CategoricalDistribution(list(d.choices or []))
        elif d.type == "int":
            assert d.low is not None
            assert d.high is not None
            out[name] = dist.IntDistribution(int(d.low), int(d.high), log=d.log)
        else:
            assert d.low is not None
            assert d.high is not None
            out[name] = dist.FloatDistribution(float(d.low), float(d.high), log=d.log)
    return out


def params_key(params: Mapping[str, Any]) -> str:
    """A canonical text of a candidate (two equal candidates have the same key)."""
    return json.dumps(params, sort_keys=True, separators=(",", ":"), default=str)


def _move(value: Any, d: SearchDim, scale: float, rng: np.random.Generator) -> Any:
    """One local step of `value` within `d` (see the module docstring)."""
    if d.type == "choice":
        others = [c for c in d.choices or [] if c != value]
        return others[int(rng.integers(len(others)))] if others else value
    assert d.low is not None
    assert d.high is not None
    lo, hi = float(d.low), float(d.high)
    to = math.log if d.log else float
    back = math.exp if d.log else float
    a, b = to(lo), to(hi)
    x = min(max(to(float(value)) if value is not None else (a + b) / 2, a), b)
    moved = min(max(x + float(rng.normal(0.0, scale * (b - a))), a), b)
    out = min(max(back(moved), lo), hi)
    if d.type == "float":
        return out
    step = round(out)
    current = round(back(x))
    if step == current and hi > lo:  # an int always moves: one unit, towards the room there is
        up = current + 1 <= hi and (current - 1 < lo or rng.random() < 0.5)
        step = current + 1 if up else current - 1
    return int(min(max(step, lo), hi))


def neighbor_step(
    center: Mapping[str, Any],
    space: Mapping[str, SearchDim],
    scale: float,
    rng: np.random.Generator,
) -> dict[str, Any]:
    """A neighbour of `center`: each dimension moves with probability 1/d, at least one."""
    names = list(space)
    if not names:
        return dict(center)
    move = rng.random(len(names)) < 1.0 / len(names)
    if not move.any():
        move[int(rng.integers(len(names)))] = True
    out = dict(center)
    for name, moving in zip(names, move, strict=True):
        if moving:
            out[name] = _move(center.get(name), space[name], scale, rng)
    return out


def neighbor_sampler(space: Mapping[str, SearchDim], seed: int) -> Any:
    """A `NeighborSampler` over `space` (an Optuna sampler; see the module docstring)."""
    base = load_optuna().samplers.BaseSampler

    class NeighborSampler(base):  # type: ignore[misc,valid-type]
        """Local moves from `center` with step `scale` (set by the strategy)."""

        def __init__(self) -> None:
            self.center: dict[str, Any] = {}
            self.scale = 0.25
            self._space = dict(space)
            self._dists = distributions(space)

        def infer_relative_search_space(
            self, study: optuna.Study, trial: optuna.trial.FrozenTrial
        ) -> dict[str, BaseDistribution]:
            return dict(self._dists)

        def sample_relative(
            self,
            study: optuna.Study,
            trial: optuna.trial.FrozenTrial,
            search_space: dict[str, BaseDistribution],
        ) -> dict[str, Any]:
            rng = np.random.default_rng([seed, trial.number])
            return neighbor_step(self.center, self._space, self.scale, rng)

        def sample_independent(
            self,
            study: optuna.Study,
            trial: optuna.trial.FrozenTrial,
            param_name: str,
            param_distribution: BaseDistribution,
        ) -> Any:
            return self.center.get(param_name)

    return NeighborSampler()


def nearest_point(params: Mapping[str, Any], space: Mapping[str, SearchDim]) -> dict[str, Any]:
    """`params` moved into `space` (a starting value outside a range is clipped to it; one
    that is not a choice becomes the first choice), for samplers to start from."""
    out = dict(params)
    for name, d in space.items():
        value = out.get(name)
        if d.contains(value):
            continue
        if d.type == "choice":
            out[name] = d.choices[0] if d.choices else None
            continue
        assert d.low is not None
        assert d.high is not None
        number = float(value) if isinstance(value, int | float) else (d.low + d.high) / 2
        clipped = min(max(number, float(d.low)), float(d.high))
        out[name] = round(clipped) if d.type == "int" else clipped
    return out


def sampler(strategy: str, space: Mapping[str, SearchDim], seed: int, budget: int) -> Any:
    """The Optuna sampler of `strategy`."""
    optuna = load_optuna()
    if strategy == "tpe":
        # TPE models the history once it has some: a few random points first, fewer on a
        # small budget
        startup = max(3, min(10, budget // 4))
        return optuna.samplers.TPESampler(seed=seed, n_startup_trials=startup)
    if strategy == "random":
        return optuna.samplers.RandomSampler(seed=seed)
    return neighbor_sampler(space, seed)


def new_study(sampler_: Any) -> Any:
    """An in-memory Optuna study that maximizes (the history lives in memgauge's store)."""
    optuna = load_optuna()
    return optuna.create_study(direction="maximize", sampler=sampler_)


def tell_known(
    study: Any,
    space: Mapping[str, SearchDim],
    params: Mapping[str, Any],
    score: float | None,
    system_attrs: Mapping[str, Any] | None = None,
) -> None:
    """Tell the study of a candidate evaluated before (the baseline, a resumed study's
    iterations): a completed trial, or a failed one without a score; a candidate outside the
    space (a baseline written so) is not told. `system_attrs`: the trial's, e.g. its
    constraint (`optimize.feasible`)."""
    optuna = load_optuna()
    point = {k: params.get(k) for k in space}
    if not all(space[k].contains(v) for k, v in point.items()):
        return
    state = optuna.trial.TrialState.COMPLETE if score is not None else optuna.trial.TrialState.FAIL
    study.add_trial(
        optuna.trial.create_trial(
            params=point,
            distributions=distributions(space),
            value=score,
            state=state,
            system_attrs=dict(system_attrs or {}),
        )
    )


def ask(study: Any, space: Mapping[str, SearchDim]) -> tuple[Any, dict[str, Any]]:
    """(trial, its params) asked of `study` over `space`."""
    trial = study.ask(distributions(space))
    return trial, dict(trial.params)


def tell(study: Any, trial: Any, score: float | None) -> None:
    """Tell `study` how `trial` scored (None: it failed)."""
    optuna = load_optuna()
    if score is None:
        study.tell(trial, state=optuna.trial.TrialState.FAIL)
    else:
        study.tell(trial, score)
