"""What every evaluator shares: the context it is given, the score it returns, and specs.

An evaluator gets one `EvalContext` and returns a `Score`: a value in [0, 1] (or None when it
could not score), pass/fail when it has a threshold, and a reason a person can read. An
evaluator that cannot score sets `error` and leaves `value` None: the run records a failure,
never a 0 (DESIGN: honest numbers).

Specs: an evaluator is written `{name: {args}}` (`{"contains": {"negate": true}}`), or by name
alone (`"exact"`), and `to_spec()` gives back the non-default arguments only.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from memgauge._util.kwargs import checked_kwargs
from memgauge.errors import UsageError

__all__ = [
    "EvalContext",
    "Evaluator",
    "Score",
    "evaluator_from_spec",
    "expected_texts",
    "output_text",
    "register",
    "registered",
    "to_spec",
]


@dataclass(frozen=True)
class EvalContext:
    """What an evaluator may look at for one item."""

    output: Any
    expected: Any = None
    input: Any = None
    metadata: Mapping[str, Any] = field(default_factory=dict)
    shared: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)
    """Scratch space the evaluators of one item share: what one derives from the output (the
    ranked ids, say), the next need not derive again. Keys are prefixed with the evaluator's
    name."""

    def derived(self, key: str, make: Callable[[], Any]) -> Any:
        """`make()`, computed once per item under `key`."""
        if key not in self.shared:
            self.shared[key] = make()
        return self.shared[key]


@dataclass(frozen=True)
class Score:
    """One evaluator's verdict on one item."""

    value: float | None
    passed: bool | None = None
    reason: str = ""
    error: str | None = None
    detail: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def failure(cls, error: str, **detail: Any) -> Score:
        """Could not score: recorded as a failure, never averaged in."""
        return cls(value=None, passed=None, reason=error, error=error, detail=detail)


@runtime_checkable
class Evaluator(Protocol):
    """Scores one item."""

    name: str

    def evaluate(self, ctx: EvalContext) -> Score:
        """The verdict for `ctx`."""
        ...


def expected_texts(ctx: EvalContext) -> list[str]:
    """The expected value as a list of texts (a list means: any of them)."""
    if isinstance(ctx.expected, list | tuple):
        return [str(g) for g in ctx.expected]
    return [str(ctx.expected)]


def output_text(ctx: EvalContext) -> str:
    """The output as text ('' for None)."""
    return "" if ctx.output is None else str(ctx.output)


_REGISTRY: dict[str, Callable[..., Evaluator]] = {}


def register(name: str) -> Callable[[type], type]:
    """Class decorator: make an evaluator constructible from a spec under `name`."""

    def deco(cls: type) -> type:
        _REGISTRY[name] = cls
        return cls

    return deco


def registered() -> list[str]:
    """Names usable in specs."""
    return sorted(_REGISTRY)


def _first_field(cls: Callable[..., Evaluator]) -> str:
    short = getattr(cls, "short_arg", None)
    if isinstance(short, str):
        return short
    if not (isinstance(cls, type) and dataclasses.is_dataclass(cls)):
        return "value"
    names: list[str] = [f.name for f in dataclasses.fields(cls) if f.init]
    return names[0] if names else "value"


def evaluator_from_spec(spec: str | Mapping[str, Any]) -> Evaluator:
    """Build an evaluator from `"name"` or `{name: {args}}` (args may be a scalar for the
    evaluator's first argument, e.g. `{regex: "^yes"}`)."""
    args: dict[str, Any]
    if isinstance(spec, str):
        name, args = spec, {}
    elif isinstance(spec, Mapping) and len(spec) == 1:
        ((name, raw),) = spec.items()
        if raw is None:
            args = {}
        elif isinstance(raw, Mapping):
            args = dict(raw)
        else:
            cls = _REGISTRY.get(name)
            first = _first_field(cls) if cls else "value"
            args = {first: raw}
    else:
        raise UsageError(f"an evaluator is 'name' or {{name: {{args}}}}, got {spec!r}")
    if name not in _REGISTRY:
        raise UsageError(f"unknown evaluator {name!r}; known: {', '.join(registered())}")
    args = _checked_args(name, args)
    try:
        return _REGISTRY[name](**args)
    except TypeError as exc:
        raise UsageError(f"evaluator {name!r}: {exc}") from None


def _checked_args(name: str, args: dict[str, Any]) -> dict[str, Any]:
    """`args` checked against the evaluator's field types, so a spec's `criteria: [a, b]`
    (a list where a mapping belongs) or `threshold: high` is a clear UsageError here instead
    of an AttributeError mid-run. Unknown names are left to the constructor to refuse."""
    try:
        return checked_kwargs(_REGISTRY[name], args)  # type: ignore[arg-type]
    except ValueError as exc:
        raise UsageError(f"evaluator {name!r}: {exc}") from None


def to_spec(evaluator: Evaluator) -> dict[str, Any]:
    """`{name: {non-default args}}` of a dataclass evaluator."""
    if not dataclasses.is_dataclass(evaluator):
        return {evaluator.name: {}}
    args = {}
    for f in dataclasses.fields(evaluator):
        if not f.init:
            continue
        value = getattr(evaluator, f.name)
        default = f.default if f.default is not dataclasses.MISSING else None
        if f.default_factory is not dataclasses.MISSING:
            default = f.default_factory()
        if value != default:
            args[f.name] = list(value) if isinstance(value, tuple) else value
    return {evaluator.name: args}
