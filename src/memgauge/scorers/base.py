"""What every evaluator shares: the context it is given, the score it returns, and specs.

An evaluator gets one `EvalContext` and returns a `Score`: a value in [0, 1] (or None when it
could not score), pass/fail when it has a threshold, and a reason a person can read. An
evaluator that cannot score sets `error` and leaves `value` None: the run records a failure,
never a 0 (DESIGN: honest numbers).

An evaluator that needs an optional capability (an embedding model) has `prepare()`, which
loads it or raises UnavailableError with the install line: a run calls it before its first
item (`prepare_evaluator`), so a missing capability is exit 3 before anything is asked, never
a failure on every item.

Specs: an evaluator is written `{name: {args}}` (`{"contains": {"negate": true}}`), or by name
alone (`"exact"`), and `to_spec()` gives back the non-default arguments only.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel

from memgauge._util.registry import Registry, RegistryError
from memgauge.errors import UsageError

__all__ = [
    "EVALUATORS",
    "EvalContext",
    "Evaluator",
    "Score",
    "evaluator_from_spec",
    "expected_texts",
    "output_text",
    "prepare_evaluator",
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


def prepare_evaluator(evaluator: object) -> None:
    """Load what `evaluator` needs before it scores (its `prepare()`, when it has one); the
    UnavailableError of a missing capability goes to the caller."""
    prepare = getattr(evaluator, "prepare", None)
    if callable(prepare):
        prepare()


def expected_texts(ctx: EvalContext) -> list[str]:
    """The expected value as a list of texts (a list means: any of them)."""
    if isinstance(ctx.expected, list | tuple):
        return [str(g) for g in ctx.expected]
    return [str(ctx.expected)]


def quoted(text: str, limit: int = 120) -> str:
    """A text for a reason shown to users: on one line, in double quotes, not a Python repr."""
    flat = " ".join(text.split())
    return f'"{flat if len(flat) <= limit else flat[: limit - 1] + "…"}"'


def output_text(ctx: EvalContext) -> str:
    """The output as text ('' for None)."""
    return "" if ctx.output is None else str(ctx.output)


#: every evaluator, by name: memgauge's own and plug-ins' (entry-point group
#: `memgauge.evaluators`), and those registered in code with `@register(name)`
EVALUATORS: Registry[Evaluator] = Registry("evaluator", "memgauge.evaluators")


def register(name: str) -> Callable[[type], type]:
    """Class decorator: make an evaluator constructible from a spec under `name` (a package
    declares its evaluators as entry points instead, so they load without an import)."""

    def deco(cls: type) -> type:
        EVALUATORS.register(name, cls)
        return cls

    return deco


def registered() -> list[str]:
    """Names usable in specs."""
    return EVALUATORS.names()


def evaluator_from_spec(spec: str | Mapping[str, Any]) -> Evaluator:
    """Build an evaluator from `"name"` or `{name: {args}}` (args may be a scalar for the
    evaluator's first argument, e.g. `{regex: "^yes"}`); UsageError naming each bad key."""
    try:
        return EVALUATORS.build(spec)
    except RegistryError as exc:
        raise UsageError(str(exc)) from None
    except TypeError as exc:
        raise UsageError(f"evaluator {spec!r}: {exc}") from None


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
            if isinstance(value, BaseModel):  # a nested argument model (`learnings:`)
                value = value.model_dump(exclude_defaults=True)
            args[f.name] = list(value) if isinstance(value, tuple) else value
    return {evaluator.name: args}
