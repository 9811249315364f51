"""The optimization block of a suite (seed 004's `optimization:`), per task or for the whole suite.

```yaml
optimization:
  enabled: true
  subject: hybrid                  # the suite subject being tuned
  targets: [config]                # config, instructions, prompts, tools, code
  objective: recall/Recall@10      # [TASK/]MEASURE: an evaluator's label, or `score`
  strategy: greedy                 # greedy, best-of-n, annealing, tpe (random: a baseline)
  maxIterations: 10
  targetScore: 0.9                 # on the objective's own 0-1 scale (85 reads as 0.85)
  improvementThreshold: 0.01       # an absolute difference (2 reads as 0.02)
  holdout: 0.3                     # share held out, by corpus where the dataset has corpora
  space:
    k_rrf: int:10..120
    lexical_weight: float:0.25..4:log
    mode: choice:hybrid,lexical
```

Seed 004's own names (`maxIterations`, `targetScore`, `improvementThreshold`) are the keys;
the block's other keys follow them. A search dimension is written `int:LO..HI`,
`float:LO..HI[:log]`, `choice:A,B,...` (each choice read as a YAML scalar), a list (choices),
or a mapping `{type, low, high, log, choices}`. Its FIELD is a field of the subject's spec
(dotted for nested ones: `kwargs.threshold`, `memory.reference.k_rrf`), or `k`, the task's
cutoff. `space_problems` checks each against the subject's argument model, so a field the
subject does not have is an error with its file, line and key. A value is checked beside the
other fields' values: one that the subject takes only with another field's value from the same
space (a normalization, with a score fusion the space also names) belongs to the space, and the
points where the two do not fit are the search's refused candidates (`refused_combination`
names one before the study starts).

Everything here is data and checks (the `runs` layer reads suites); the search is in
`memgauge.optimize`.
"""

from __future__ import annotations

import copy
import itertools
import math
from collections.abc import Iterator, Mapping
from typing import Any, Literal, get_args, get_origin

import yaml
from pydantic import (
    ConfigDict,
    Field,
    ModelWrapValidatorHandler,
    PrivateAttr,
    StrictInt,
    field_validator,
    model_validator,
)

from memgauge._util.model import Model
from memgauge._util.numbers import MAX_K, SEED_MAX
from memgauge._util.registry import RegistryError
from memgauge.aggregates.constraint import parse_constraint
from memgauge.data.models import FiniteFloat
from memgauge.errors import UsageError
from memgauge.subjects.registry import SUBJECTS, RunOptions, check_subject

__all__ = [
    "OptimizationSpec",
    "OptimizerModel",
    "SearchDim",
    "apply_params",
    "field_problems",
    "get_path",
    "k_narrowed",
    "k_problem",
    "k_values",
    "parse_space_flag",
    "refused_combination",
    "space_problems",
]

Strategy = Literal["greedy", "best-of-n", "annealing", "tpe", "random"]
Target = Literal["config", "instructions", "prompts", "tools", "code"]


class _Model(Model):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False, populate_by_name=True)


def _scalar(text: str) -> Any:
    """A choice as YAML reads a scalar: `true` a bool, `10` an int, `hybrid` a string."""
    try:
        value = yaml.safe_load(text)
    except yaml.YAMLError:
        return text
    return value if isinstance(value, str | int | float | bool) else text


def _number(text: str, what: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise ValueError(f"{what} {text!r} is not a number") from None


def parse_dim(text: str) -> dict[str, Any]:
    """`int:LO..HI`, `float:LO..HI[:log]` or `choice:A,B` as a `SearchDim` mapping;
    ValueError saying what is wrong."""
    kind, sep, rest = text.partition(":")
    kind = kind.strip()
    if not sep or kind not in ("int", "float", "choice"):
        raise ValueError(
            f"{text!r}: write int:LO..HI, float:LO..HI[:log] or choice:A,B (e.g. int:10..120)"
        )
    if kind == "choice":
        choices = [_scalar(c.strip()) for c in rest.split(",") if c.strip()]
        return {"type": "choice", "choices": choices}
    bounds, _, scale = rest.partition(":")
    lo, dots, hi = bounds.partition("..")
    if not dots:
        raise ValueError(f"{text!r}: give the range as LO..HI, e.g. {kind}:1..10")
    if scale.strip() not in ("", "log"):
        raise ValueError(f"{text!r}: the only scale is :log")
    out: dict[str, Any] = {"type": kind, "log": scale.strip() == "log"}
    if kind == "int":
        try:
            out["low"], out["high"] = int(lo), int(hi)
        except ValueError:
            raise ValueError(f"{text!r}: an int range has whole bounds, e.g. int:1..10") from None
    else:
        out["low"], out["high"] = _number(lo, "low bound"), _number(hi, "high bound")
    return out


class SearchDim(_Model):
    """One dimension of the search space (an Optuna distribution when searched)."""

    type: Literal["int", "float", "choice"] = Field(description="int, float or choice.")
    low: FiniteFloat | StrictInt | None = Field(default=None, description="Lowest value.")
    high: FiniteFloat | StrictInt | None = Field(default=None, description="Highest value.")
    log: bool = Field(default=False, description="Search on a log scale (low > 0).")
    choices: list[str | int | float | bool] | None = Field(
        default=None, description="The values of a choice."
    )

    #: the short form as it was written (`choice:yes,no`), which `describe` quotes back
    _written: str | None = PrivateAttr(default=None)

    @model_validator(mode="wrap")
    @classmethod
    def _short_forms(cls, value: Any, handler: ModelWrapValidatorHandler[SearchDim]) -> SearchDim:
        if isinstance(value, str):
            dim = handler(parse_dim(value))
            dim._written = value.strip()
            return dim
        if isinstance(value, list):
            return handler({"type": "choice", "choices": value})
        return handler(value)

    def __eq__(self, other: object) -> bool:
        # the same dimension however it was written: `choice:yes,no` is `choice:true,false`
        if not isinstance(other, SearchDim):
            return NotImplemented
        return self.model_dump() == other.model_dump()

    @model_validator(mode="after")
    def _consistent(self) -> SearchDim:
        if self.type == "choice":
            if not self.choices:
                raise ValueError("a choice needs at least one value: choice:A,B")
            if self.low is not None or self.high is not None:
                raise ValueError("a choice has choices, not low/high")
            return self
        if self.low is None or self.high is None:
            raise ValueError(f"an {self.type} range needs low and high")
        if self.choices is not None:
            raise ValueError(f"an {self.type} range has low and high, not choices")
        if self.type == "int" and not (
            float(self.low).is_integer() and float(self.high).is_integer()
        ):
            raise ValueError("an int range has whole bounds")
        if self.low > self.high:
            raise ValueError(f"low {self.low} is above high {self.high}")
        if self.log and self.low <= 0:
            raise ValueError("a :log range needs low > 0")
        return self

    def extremes(self) -> list[Any]:
        """The values a spec is checked with: every choice, or both ends of a range."""
        if self.type == "choice":
            return list(self.choices or [])
        assert self.low is not None
        assert self.high is not None
        cast = int if self.type == "int" else float
        return [cast(self.low), cast(self.high)]

    def contains(self, value: Any) -> bool:
        """Whether `value` is a point of the dimension."""
        if self.type == "choice":
            return value in (self.choices or [])
        if isinstance(value, bool) or not isinstance(value, int | float):
            return False
        assert self.low is not None
        assert self.high is not None
        return self.low <= value <= self.high and (
            self.type == "float" or float(value).is_integer()
        )

    def describe(self) -> str:
        """The short form (`int:10..120`), as the user wrote it when they wrote one."""
        if self._written is not None:
            return self._written
        if self.type == "choice":
            return "choice:" + ",".join(str(c) for c in self.choices or [])
        return f"{self.type}:{self.low:g}..{self.high:g}{':log' if self.log else ''}"


class OptimizerModel(_Model):
    """The model that proposes rewrites of text targets (any OpenAI-compatible endpoint)."""

    model: str | None = Field(default=None, description="Model id (default MEMGAUGE_MODEL).")
    base_url: str | None = Field(default=None, description="Endpoint (default OPENAI_BASE_URL).")
    provider: str | None = Field(default=None, description="LLM provider (default openai).")


class SplitSpec(_Model):
    """An explicit validation split."""

    holdout: list[str] = Field(
        min_length=1,
        description="Held-out corpora (when the task's items have corpora) or item ids.",
    )


class OptimizationSpec(_Model):
    """What to tune, against which objective, how, and when to stop (seed 004)."""

    enabled: bool = Field(default=True, description="Whether `memgauge optimize` uses it.")
    subject: str | None = Field(
        default=None, description="The suite subject being tuned (default: the only one)."
    )
    targets: list[Target] = Field(
        default_factory=lambda: list[Target](["config"]),
        min_length=1,
        description="What the optimizer changes: config (the search space), instructions and "
        "prompts (`texts`), tools (`tools`), code (`hook`).",
    )
    objective: str | None = Field(
        default=None,
        description="[TASK/]MEASURE maximized: an evaluator's label (Recall@10, a judge's "
        "label) or `score` (the task's weighted score); default the task's first evaluator.",
    )
    constraint: str | None = Field(
        default=None,
        description="A bound on another measure of the objective's task, `[TASK/]MEASURE OP "
        "NUMBER` with OP <=, <, >= or >: `context_tokens.p50<=2000`, `latency_ms.p95<250`; a "
        "candidate that misses it is never accepted nor the best.",
    )
    strategy: Strategy = Field(
        default="greedy",
        description="greedy, best-of-n (candidates per iteration, run concurrently), annealing,"
        " tpe (Optuna's TPE); random is Optuna's RandomSampler, a baseline.",
    )
    max_iterations: StrictInt = Field(
        default=10, ge=1, le=10_000, alias="maxIterations", description="Iterations at most."
    )
    target_score: FiniteFloat | StrictInt | None = Field(
        default=None,
        ge=0,
        le=100,
        alias="targetScore",
        description="Stop once the best reaches it (0-1; a value above 1 is read as points "
        "out of 100).",
    )
    improvement_threshold: FiniteFloat | StrictInt = Field(
        default=0.0,
        ge=0,
        alias="improvementThreshold",
        description="The least paired improvement a step must show to be accepted, as an "
        "absolute difference (a value above 1 is read as points out of 100).",
    )
    space: dict[str, SearchDim] = Field(
        default_factory=dict,
        description="FIELD -> int:LO..HI | float:LO..HI[:log] | choice:A,B; FIELD is a field "
        "of the subject's spec (dotted when nested) or `k`, the task's cutoff.",
    )
    holdout: FiniteFloat | StrictInt = Field(
        default=0.3,
        ge=0,
        lt=1,
        description="Share of items (of corpora, when they have them)"
        " held out for the final comparison; 0: none.",
    )
    split: SplitSpec | None = Field(
        default=None, description="An explicit split instead of `holdout`'s random one."
    )
    seed: StrictInt = Field(
        default=0, ge=0, le=SEED_MAX, description="Seed of the split and of the search."
    )
    candidates: StrictInt = Field(
        default=4, ge=2, le=64, description="best-of-n: candidates per iteration."
    )
    temperature: FiniteFloat | StrictInt = Field(
        default=0.02, gt=0, description="annealing: starting temperature, on the score's scale."
    )
    cooling: FiniteFloat = Field(
        default=0.8, gt=0, lt=1, description="annealing: temperature factor per iteration."
    )
    patience: StrictInt | None = Field(
        default=None, ge=1, description="Stop after this many iterations without a new best."
    )
    max_seconds: FiniteFloat | StrictInt | None = Field(
        default=None, gt=0, alias="maxSeconds", description="Wall-clock budget in seconds."
    )
    max_cost: FiniteFloat | StrictInt | None = Field(
        default=None, gt=0, alias="maxCost", description="LLM cost budget in USD (priced usage)."
    )
    require_significance: bool = Field(
        default=False,
        alias="requireSignificance",
        description="Accept a step only when its paired 95% CI also excludes 0.",
    )
    texts: list[str] = Field(
        default_factory=list,
        description="instructions/prompts: the subject's text fields the optimizer model "
        "rewrites (e.g. system, prompt, kwargs.instructions).",
    )
    tools: str | None = Field(
        default=None, description="tools: the list-valued field whose subsets are searched."
    )
    hook: list[str] | None = Field(
        default=None,
        description="code: the command that reads the candidate and its failures (JSON on "
        "stdin) and writes the next candidate (JSON on stdout).",
    )
    optimizer: OptimizerModel | None = Field(
        default=None, description="The model proposing rewrites of text targets."
    )

    @field_validator("hook", mode="before")
    @classmethod
    def _hook_string(cls, value: Any) -> Any:
        return value.split() if isinstance(value, str) else value

    @field_validator("constraint")
    @classmethod
    def _constraint(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                parse_constraint(value, where="constraint")
            except UsageError as exc:
                raise ValueError(str(exc)) from None
        return value

    @field_validator("targets")
    @classmethod
    def _unique(cls, value: list[str]) -> list[str]:
        if len(set(value)) != len(value):
            raise ValueError("a target is named twice")
        return value


def parse_space_flag(text: str) -> tuple[str, SearchDim]:
    """`--space 'FIELD=int:LO..HI'` as (FIELD, dimension); UsageError quoting the flag."""
    name, eq, dim = text.partition("=")
    if not eq or not name.strip():
        raise UsageError(
            f"--space {text!r}: write FIELD=int:LO..HI, FIELD=float:LO..HI[:log] or "
            "FIELD=choice:A,B"
        )
    try:
        return name.strip(), SearchDim.model_validate(dim.strip())
    except ValueError as exc:
        errors = getattr(exc, "errors", None)
        msg = errors()[0]["msg"].removeprefix("Value error, ") if callable(errors) else str(exc)
        raise UsageError(f"--space {text!r}: {msg}") from None


def get_path(args: Mapping[str, Any], path: str) -> Any:
    """The value at dotted `path` of a subject's arguments (None when absent)."""
    node: Any = args
    for part in path.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return None
        node = node[part]
    return node


def apply_params(spec: Mapping[str, Any], params: Mapping[str, Any]) -> dict[str, Any]:
    """`spec` (`{kind: {args}}`) with each dotted FIELD of `params` set (`k` excepted: it is the
    task's); a copy, the original untouched."""
    ((kind, raw),) = spec.items()
    args: dict[str, Any] = copy.deepcopy(dict(raw or {}))
    for path, value in params.items():
        if path == "k":
            continue
        node = args
        parts = path.split(".")
        for part in parts[:-1]:
            nxt = node.get(part)
            if not isinstance(nxt, dict):
                # a nested memory spec written as a bare kind (`memory: lexical`) has no args
                nxt = {}
                node[part] = nxt
            node = nxt
        node[parts[-1]] = value
    return {kind: args}


def space_problems(
    subject: str, spec: Any, space: Mapping[str, SearchDim]
) -> list[tuple[str, str]]:
    """(FIELD, message) for each FIELD of `space` the subject's spec does not have, or whose
    values its argument model refuses (every choice, both ends of a range)."""
    return field_problems(subject, spec, {f: d.extremes() for f, d in space.items()})


def field_problems(
    subject: str, spec: Any, samples: Mapping[str, list[Any]]
) -> list[tuple[str, str]]:
    """(FIELD, message) for each dotted FIELD of `samples` that the subject's spec does not
    have, or one of whose sample values its argument model refuses; `k` is the task's."""
    try:
        kind, _args = SUBJECTS.parse(spec)
        entry = SUBJECTS.get(kind)
    except RegistryError:
        return []  # the subject's own problems are reported where it is defined
    model = entry.args_model
    known = set(RunOptions.model_fields) | set(model.model_fields if model is not None else ())
    out: list[tuple[str, str]] = []
    for field, sample in samples.items():
        if field == "k":
            continue
        top = field.split(".")[0]
        if model is not None and top not in known:
            fields = ", ".join(sorted(model.model_fields))
            under = [n for n, f in model.model_fields.items() if _holds_mapping(f.annotation)]
            nested = " or ".join(f"`{n}.{field}`" for n in under)
            hint = f" (a key under {', '.join(under)} is written {nested})" if under else ""
            out.append(
                (
                    field,
                    f"subject {subject!r} ({kind}) has no field {top!r}; its fields are "
                    f"{fields}{hint}, and `k` is the task's cutoff",
                )
            )
            continue
        base = spec if isinstance(spec, Mapping) else {kind: {}}
        others = {f: s for f, s in samples.items() if f not in ("k", field)}
        for value in sample:
            found = check_subject(apply_params(base, {field: value}))
            if found and not _fits_with_some(base, {field: value}, others):
                problems = "; ".join(str(p) for p in found)
                out.append((field, f"subject {subject!r} refuses {field}={value!r}: {problems}"))
                break
    return out


def _holds_mapping(annotation: Any) -> bool:
    """Whether a field's type takes a mapping (a python: target's `kwargs`, mem0's `config`),
    whose keys a space names with dots."""
    return any(get_origin(a) in (dict, Mapping) for a in (annotation, *get_args(annotation)))


#: combinations of the other fields' sample values tried for one value before it is refused
_MAX_COMBINATIONS = 256


def _combinations(samples: Mapping[str, list[Any]]) -> Iterator[dict[str, Any]]:
    names = list(samples)
    for values in itertools.islice(
        itertools.product(*(samples[n] for n in names)), _MAX_COMBINATIONS
    ):
        yield dict(zip(names, values, strict=True))


def _fits_with_some(
    base: Mapping[str, Any], fixed: Mapping[str, Any], others: Mapping[str, list[Any]]
) -> bool:
    """Whether the subject takes `fixed` beside some combination of the other fields' sample
    values: a value that fits only with another field's (a normalization, with a score fusion
    from the same space) belongs to the space; only a value no combination takes is refused."""
    return any(
        not check_subject(apply_params(base, {**combo, **fixed})) for combo in _combinations(others)
    )


def refused_combination(spec: Any, space: Mapping[str, SearchDim]) -> str | None:
    """A combination of `space`'s sample values (every choice, both ends of a range) that the
    subject refuses, with its reason; None when it takes every one tried. The search proposes
    such a point as a refused candidate, so a study says so before it starts."""
    try:
        kind, _args = SUBJECTS.parse(spec)
    except RegistryError:
        return None
    base = spec if isinstance(spec, Mapping) else {kind: {}}
    samples = {f: d.extremes() for f, d in space.items() if f != "k"}
    if len(samples) < 2:
        return None  # one field's refused values are errors of their own (`space_problems`)
    for combo in _combinations(samples):
        found = check_subject(apply_params(base, combo))
        if found:
            shown = ", ".join(f"{f}={v!r}" for f, v in combo.items())
            return f"{shown}: " + "; ".join(str(p) for p in found)
    return None


def _accepted_k(least: tuple[int, str] | None) -> str:
    if least is None:
        return f"a whole number of hits from 1 to {MAX_K}"
    return (
        f"a whole number of hits from {max(1, least[0])} (the largest cutoff, of {least[1]}) "
        f"to {MAX_K}"
    )


def k_values(dim: SearchDim, least: tuple[int, str] | None) -> SearchDim | None:
    """The part of the `k` dimension `dim` that the task takes as its search depth (whole
    numbers from its least k, see `runs.depth`, to MAX_K); None when no value of `dim` is.
    A range is clipped (a float one becomes the whole numbers in it), a choice keeps its
    accepted values."""
    low = max(1, least[0]) if least is not None else 1
    if dim.type == "choice":
        kept = [c for c in dim.choices or [] if isinstance(c, int) and not isinstance(c, bool)]
        kept = [c for c in kept if low <= c <= MAX_K]
        return SearchDim(type="choice", choices=list(kept)) if kept else None
    assert dim.low is not None
    assert dim.high is not None
    lo, hi = max(math.ceil(dim.low), low), min(math.floor(dim.high), MAX_K)
    if lo > hi:
        return None
    return SearchDim(type="int", low=lo, high=hi, log=dim.log)


def k_problem(
    dim: SearchDim | None, least: tuple[int, str] | None, task: str = "the task"
) -> str | None:
    """Why the `k` dimension `dim` holds no search depth `task` takes (None: it holds some,
    or there is none)."""
    if dim is None or k_values(dim, least) is not None:
        return None
    return f"no value of {dim.describe()} is a k {task} takes: k is {_accepted_k(least)}"


def k_narrowed(dim: SearchDim, least: tuple[int, str] | None) -> tuple[SearchDim, str | None]:
    """`dim` as searched (see `k_values`; it must hold some k) and a notice when it changed."""
    kept = k_values(dim, least)
    assert kept is not None
    if kept == dim:
        return dim, None
    return kept, (
        f"space k: {dim.describe()} is searched as {kept.describe()}, the values the task "
        f"takes (k is {_accepted_k(least)})"
    )
