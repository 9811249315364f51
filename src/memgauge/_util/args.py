"""Argument models: what a component accepts in a spec, derived from the component itself.

A component gets its model from, in order: an `Args` attribute that is a pydantic model (made to
forbid unknown keys whatever its own config says); the fields of a dataclass; the keyword
parameters of a function or class; none when it takes `**kwargs` (anything goes). A parameter
whose type cannot come from YAML or JSON (a transport, a client) and that has a default is left
out: only code can pass it. Descriptions come from the docstring's `Args:` / `Attributes:`
sections. An `Args` model may define `more_problems(self) -> list[SpecProblem]` for checks one
field cannot make (a nested spec, a target's own signature).
"""

from __future__ import annotations

import dataclasses
import difflib
import inspect
import re
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar, get_type_hints

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, create_model
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaValue
from pydantic_core import PydanticOmit, core_schema

from memgauge._util.model import TrueOrFalse

__all__ = [
    "LenientSchema",
    "SpecArgs",
    "SpecProblem",
    "args_model_of",
    "problems_of",
    "takes",
    "validate_args",
]

Loc = tuple[str | int, ...]


@dataclass(frozen=True)
class SpecProblem:
    """One thing wrong with a spec: where (`loc`, path of keys from the spec's top, starting
    with the component's name) and what to do about it."""

    loc: Loc
    message: str

    @property
    def field(self) -> str:
        """`loc` as a dotted path (`python.kwargs.kwarg`)."""
        return ".".join(str(p) for p in self.loc)

    def under(self, *prefix: str | int) -> SpecProblem:
        """The same problem seen from `prefix` (a spec nested in another)."""
        return SpecProblem((*prefix, *self.loc), self.message)

    def __str__(self) -> str:
        return f"{self.field}: {self.message}" if self.loc else self.message


class LenientSchema(GenerateJsonSchema):
    """A field type JSON Schema cannot express (a live object) accepts any value."""

    def handle_invalid_for_json_schema(
        self, schema: core_schema.CoreSchema, error_info: str
    ) -> JsonSchemaValue:
        return {}

    def callable_schema(self, schema: core_schema.CallableSchema) -> JsonSchemaValue:
        raise PydanticOmit


def _hints(obj: Any) -> dict[str, Any]:
    try:
        if inspect.isclass(obj) and not dataclasses.is_dataclass(obj):
            return get_type_hints(obj.__init__)
        return get_type_hints(obj)
    except Exception:  # an unresolvable annotation: fall back to Any
        return {}


def _from_data(hint: Any) -> bool:
    """Whether a value of type `hint` can be written in YAML or JSON."""
    try:
        TypeAdapter(hint).json_schema()
    except Exception:
        return False
    return True


_SECTION = re.compile(r"^(Args|Arguments|Attributes|Parameters):\s*$")
_ITEM = re.compile(r"^(\s+)(\w+)(?:\s*\([^)]*\))?:\s*(.*)$")


def _described(obj: Any) -> dict[str, str]:
    """Argument descriptions from the Google-style `Args:` / `Attributes:` sections of the
    docstrings of `obj` (and of its `__init__`)."""
    found: dict[str, list[str]] = {}
    docs = [inspect.getdoc(obj) or ""]
    if inspect.isclass(obj):  # a class documents its fields, or its base classes do
        docs += [inspect.getdoc(k) or "" for k in obj.__mro__[1:-1]]
        docs.append(inspect.getdoc(obj.__init__) or "")
    for doc in docs:
        indent: str | None = None
        name = None
        for line in doc.splitlines():
            if _SECTION.match(line):
                indent, name = "", None
                continue
            if indent is None:
                continue
            item = _ITEM.match(line)
            if item and (not indent or item.group(1) == indent):
                indent, name = item.group(1), item.group(2)
                found.setdefault(name, []).append(item.group(3).strip())
            elif line.strip() and name and line.startswith(indent + " "):
                found[name][-1] += " " + line.strip()
            elif line.strip():  # the section ended
                indent, name = None, None
    return {name: texts[0] for name, texts in found.items()}  # the most derived class's


def _field(hint: Any, default: Any, about: str | None) -> tuple[Any, Any] | None:
    if not (hint is Any or _from_data(hint)):
        if default is not ...:
            return None  # a live object: given in code, never in a spec
        hint = Any
    return hint, Field(default, description=about)


def _model(name: str, fields: dict[str, tuple[Any, Any]]) -> type[BaseModel]:
    with warnings.catch_warnings():
        # an argument called `json` or `schema` shadows a BaseModel method; harmless here
        warnings.filterwarnings("ignore", message=".*shadows an attribute", category=UserWarning)
        return create_model(name, __base__=_Forbid, **fields)  # type: ignore[call-overload,no-any-return]


def args_model_of(obj: Any) -> type[BaseModel] | None:
    """The argument model of a component (see the module docstring); None when it takes
    `**kwargs` (anything goes) or cannot be inspected."""
    explicit = getattr(obj, "Args", None)
    if isinstance(explicit, type) and issubclass(explicit, BaseModel):
        if explicit.model_config.get("extra") == "forbid":
            return explicit
        # a misspelt key is an error whatever the model says
        config = ConfigDict(**{**explicit.model_config, "extra": "forbid"})
        return type(explicit.__name__, (explicit,), {"model_config": config})
    name = f"{getattr(obj, '__name__', 'Component')}Args"
    fields: dict[str, tuple[Any, Any]] = {}
    hints = _hints(obj)
    about = _described(obj)
    if isinstance(obj, type) and dataclasses.is_dataclass(obj):
        for f in dataclasses.fields(obj):
            if not f.init or f.name.startswith("_"):
                continue
            if f.default is not dataclasses.MISSING:
                default: Any = f.default
            elif f.default_factory is not dataclasses.MISSING:
                default = f.default_factory()
            else:
                default = ...
            spec = _field(hints.get(f.name, Any), default, about.get(f.name))
            if spec is not None:
                fields[f.name] = spec
        return _model(name, fields)
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):
        return None
    for p in sig.parameters.values():
        if p.kind is p.VAR_KEYWORD:
            return None
        if p.kind in (p.VAR_POSITIONAL, p.POSITIONAL_ONLY) or p.name == "self":
            continue
        default = ... if p.default is p.empty else p.default
        spec = _field(hints.get(p.name, Any), default, about.get(p.name))
        if spec is not None:
            fields[p.name] = spec
    return _model(name, fields)


def validate_args(
    model: type[BaseModel], args: Mapping[str, Any]
) -> tuple[BaseModel | None, list[SpecProblem]]:
    try:
        validated = model.model_validate(dict(args))
    except ValidationError as exc:
        return None, [_problem(model, err) for err in exc.errors()]
    more = getattr(validated, "more_problems", None)
    return validated, list(more()) if callable(more) else []


F = TypeVar("F", bound=Callable[..., Any])


def takes(model: type[BaseModel]) -> Callable[[F], F]:
    """Decorator: give a factory function its argument model explicitly (its `Args`)."""

    def deco(fn: F) -> F:
        setattr(fn, "Args", model)  # noqa: B010 (a function attribute mypy cannot see)
        return fn

    return deco


class SpecArgs(TrueOrFalse):
    """Base of explicit argument models: unknown keys are errors, numbers read as text where
    text is meant (YAML reads `8080` as a number), a boolean true or false, not a text."""

    model_config = ConfigDict(extra="forbid", coerce_numbers_to_str=True)


class _Forbid(SpecArgs):
    model_config = ConfigDict(arbitrary_types_allowed=True)


def problems_of(model: type[BaseModel], args: Mapping[str, Any]) -> list[SpecProblem]:
    """What `model` refuses in `args` (an unknown key names the known ones and the closest)."""
    return validate_args(model, args)[1]


def _problem(model: type[BaseModel], err: Mapping[str, Any]) -> SpecProblem:
    loc: Loc = tuple(err["loc"])
    kind = err.get("type")
    if kind == "extra_forbidden" and len(loc) == 1:
        known = sorted(model.model_fields)
        close = difflib.get_close_matches(str(loc[0]), known, n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        takes = f"it takes {', '.join(known)}" if known else "it takes no arguments"
        return SpecProblem(loc, f"unknown key{hint} ({takes})")
    if kind == "extra_forbidden":
        return SpecProblem(loc, "unknown key; check its spelling")
    if kind == "missing":
        return SpecProblem(loc, "required; add it")
    if kind == "value_error":  # a validator's own message says what to do
        return SpecProblem(loc, str(err.get("msg", "invalid")).removeprefix("Value error, "))
    given = err.get("input")
    shown = "" if isinstance(given, dict | list) else f" (got {given!r})"
    return SpecProblem(loc, f"{err.get('msg', 'invalid')}{shown}")
