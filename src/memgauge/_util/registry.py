"""One registry type for every kind of component: subjects, evaluators, aggregates, LLM providers
and embedders.

A registry is filled from an entry-point group (`memgauge.subjects`, `memgauge.evaluators`,
`memgauge.aggregates`, `memgauge.llm_providers`, `memgauge.embedders`): memgauge's own built-ins
are declared in its `pyproject.toml` exactly as a third-party package declares its own, so a
plug-in is a first-class citizen. `register()` adds one in code (tests, notebooks).

Each entry has an argument model (pydantic, unknown keys forbidden) that checks a spec's
arguments before the component is built and gives `memgauge schema` its JSON Schema. A component
gets one from (in order): an `Args` attribute that is a pydantic model; the fields of a
dataclass; the keyword parameters of a function or class; or none (no arguments checked).
"""

from __future__ import annotations

import dataclasses
import inspect
import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from importlib import metadata
from typing import Any, Generic, TypeVar, get_type_hints

from pydantic import BaseModel, ConfigDict, ValidationError, create_model

__all__ = ["Entry", "Registry", "RegistryError", "args_model_of"]

T = TypeVar("T")


class RegistryError(Exception):
    """A name that is not registered, or arguments its model refuses (`problems`: one line
    per bad field, `field: what is wrong`)."""

    def __init__(self, message: str, problems: list[tuple[str, str]] | None = None) -> None:
        super().__init__(message)
        self.problems = problems or []


class _Forbid(BaseModel):
    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)


def _hints(obj: Any) -> dict[str, Any]:
    try:
        if isinstance(obj, type) and not dataclasses.is_dataclass(obj):
            return get_type_hints(obj.__init__)  # type: ignore[misc]
        return get_type_hints(obj)
    except Exception:  # an unresolvable annotation: fall back to Any
        return {}


def args_model_of(obj: Any) -> type[BaseModel] | None:
    """The argument model of a component (see the module docstring); None when it takes
    `**kwargs` (anything goes) or cannot be inspected."""
    explicit = getattr(obj, "Args", None)
    if isinstance(explicit, type) and issubclass(explicit, BaseModel):
        return explicit
    name = f"{getattr(obj, '__name__', 'Component')}Args"
    fields: dict[str, Any] = {}
    if isinstance(obj, type) and dataclasses.is_dataclass(obj):
        hints = _hints(obj)
        for f in dataclasses.fields(obj):
            if not f.init or f.name.startswith("_"):
                continue
            if f.default is not dataclasses.MISSING:
                default: Any = f.default
            elif f.default_factory is not dataclasses.MISSING:
                default = f.default_factory()
            else:
                default = ...
            fields[f.name] = (hints.get(f.name, Any), default)
        return create_model(name, __base__=_Forbid, **fields)
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):
        return None
    hints = _hints(obj)
    for p in sig.parameters.values():
        if p.kind is p.VAR_KEYWORD:
            return None
        if p.kind in (p.VAR_POSITIONAL, p.POSITIONAL_ONLY) or p.name == "self":
            continue
        default = ... if p.default is p.empty else p.default
        fields[p.name] = (hints.get(p.name, Any), default)
    return create_model(name, __base__=_Forbid, **fields)


@dataclass
class Entry(Generic[T]):
    """A registered component: its name, what builds it, its argument model and origin."""

    name: str
    factory: Callable[..., T]
    args_model: type[BaseModel] | None = None
    origin: str = "code"
    doc: str = ""

    def check(self, args: Mapping[str, Any]) -> dict[str, Any]:
        """`args` validated by the argument model (unknown keys are errors); RegistryError
        listing each bad field."""
        if self.args_model is None:
            return dict(args)
        try:
            self.args_model.model_validate(dict(args))
        except ValidationError as exc:
            problems = [
                (".".join(str(p) for p in err["loc"]) or "(args)", _message(err))
                for err in exc.errors()
            ]
            raise RegistryError(
                f"{self.name}: " + "; ".join(f"{f}: {m}" for f, m in problems), problems
            ) from None
        return dict(args)

    def json_schema(self) -> dict[str, Any]:
        """The JSON Schema of its arguments (an open object when it has no model)."""
        if self.args_model is None:
            return {"type": "object"}
        try:
            schema = self.args_model.model_json_schema()
        except Exception:  # a field type JSON Schema cannot express: accept any value there
            return {"type": "object"}
        schema.pop("title", None)
        return schema


def _dist_name(ep: metadata.EntryPoint) -> str | None:
    dist = getattr(ep, "dist", None)
    return None if dist is None else str(dist.metadata["Name"])


def _message(err: Mapping[str, Any]) -> str:
    if err.get("type") == "extra_forbidden":
        return "unknown key; check its spelling"
    if err.get("type") == "missing":
        return "required"
    return str(err.get("msg", "invalid"))


class Registry(Generic[T]):
    """Components of one kind by name, filled from the entry-point group `group` on first use."""

    def __init__(self, kind: str, group: str) -> None:
        self.kind = kind
        self.group = group
        self._entries: dict[str, Entry[T]] = {}
        self._loaded = False
        self._broken: dict[str, str] = {}
        self._lock = threading.RLock()

    def register(
        self,
        name: str,
        factory: Callable[..., T] | None = None,
        *,
        args_model: type[BaseModel] | None = None,
        origin: str = "code",
    ) -> Any:
        """Register `factory` under `name` (or use as a class decorator without `factory`)."""

        def add(obj: Callable[..., T]) -> Callable[..., T]:
            with self._lock:
                self._entries[name] = Entry(
                    name,
                    obj,
                    args_model or args_model_of(obj),
                    origin,
                    (inspect.getdoc(obj) or "").split("\n\n")[0],
                )
            return obj

        return add if factory is None else add(factory)

    def _load(self) -> None:
        with self._lock:
            if self._loaded:
                return
            self._loaded = True
            eps = list(metadata.entry_points(group=self.group))
            if not any(_dist_name(ep) == "memgauge" for ep in eps):
                # a source tree without installed metadata: memgauge's own table, same path
                from memgauge._util.builtins import BUILTINS

                eps += [
                    metadata.EntryPoint(name, value, self.group)
                    for name, value in BUILTINS.get(self.group, {}).items()
                ]
            for ep in eps:
                if ep.name in self._entries:
                    continue
                try:
                    obj = ep.load()
                except Exception as exc:  # a broken plug-in must not break the others
                    self._broken[ep.name] = f"{ep.value}: {type(exc).__name__}: {exc}"
                    continue
                self.register(ep.name, obj, origin=_dist_name(ep) or "memgauge")

    def get(self, name: str) -> Entry[T]:
        """The entry called `name`; RegistryError naming the known ones."""
        with self._lock:
            found = self._entries.get(name)
            if found is None:
                self._load()
                found = self._entries.get(name)
        if found is None:
            broken = self._broken.get(name)
            if broken:
                raise RegistryError(
                    f"{self.kind} {name!r} is installed but failed to load: {broken}"
                )
            raise RegistryError(f"unknown {self.kind} {name!r}; known: {', '.join(self.names())}")
        return found

    def __contains__(self, name: object) -> bool:
        try:
            self.get(str(name))
        except RegistryError:
            return False
        return True

    def names(self) -> list[str]:
        """Every registered name, sorted."""
        self._load()
        return sorted(self._entries)

    def entries(self) -> Iterator[Entry[T]]:
        """Every entry, by name."""
        for name in self.names():
            yield self._entries[name]

    def build(self, name: str, args: Mapping[str, Any] | None = None) -> T:
        """Check `args` against the entry's model, then build it."""
        entry = self.get(name)
        checked = entry.check(args or {})
        return entry.factory(**checked)
