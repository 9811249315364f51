"""One registry type for every kind of component: task kinds, subjects, evaluators, aggregates, LLM
providers and embedders.

A registry is filled from an entry-point group (`memgauge.kinds`, `memgauge.subjects`,
`memgauge.evaluators`, `memgauge.aggregates`, `memgauge.llm_providers`, `memgauge.embedders`):
memgauge's own built-ins
are declared in its `pyproject.toml` exactly as a third-party package declares its own, so a
plug-in is a first-class citizen. `register()` adds one in code (tests, notebooks); `reload()`
reads the entry points again (a distribution installed after the first use).

Specs. A component is written `{name: {args}}`; a registry with `short_forms` also takes the
bare `name` (no arguments) and `{name: scalar}` (the scalar fills the component's first
argument, or the one its `short_arg` class attribute names: `{regex: "^yes"}`). A registry
with `common` arguments (the run keys every subject spec may carry) accepts them beside any
entry's own.

Argument models. Each entry has one (pydantic, unknown keys forbidden; derived from the
component as `memgauge._util.args` says): it checks a spec's arguments before the component is
built, converts them to their declared types, and gives `memgauge schema` its JSON Schema.
"""

from __future__ import annotations

import difflib
import inspect
import re
import sys
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from importlib import metadata
from typing import Any, Generic, TypeVar

from pydantic import BaseModel

from memgauge._util.args import (
    LenientSchema,
    SpecArgs,
    SpecProblem,
    args_model_of,
    problems_of,
    takes,
    validate_args,
)

__all__ = [
    "Entry",
    "Registry",
    "RegistryError",
    "SpecArgs",
    "SpecProblem",
    "args_model_of",
    "problems_of",
    "takes",
]

T = TypeVar("T")

_SELF_DIST = "memgauge"


class RegistryError(Exception):
    """A name that is not registered, a malformed spec, or arguments its model refuses;
    `problems` lists each (the message joins them)."""

    def __init__(self, message: str, problems: Sequence[SpecProblem] = ()) -> None:
        super().__init__(message)
        self.problems = list(problems) or [SpecProblem((), message)]

    @classmethod
    def of(cls, problems: Sequence[SpecProblem]) -> RegistryError:
        """One error carrying every problem."""
        return cls("; ".join(str(p) for p in problems), problems)


@dataclass
class Entry(Generic[T]):
    """A registered component: its name, what builds it, where it came from (`code`, or the
    distribution that declared it), and its argument model, derived on first use (most runs
    use a few of the components installed)."""

    name: str
    factory: Callable[..., T]
    origin: str = "code"
    explicit_model: type[BaseModel] | None = None

    @property
    def builtin(self) -> bool:
        """Whether memgauge declares it itself (not a plug-in's)."""
        return self.origin == _SELF_DIST

    @cached_property
    def args_model(self) -> type[BaseModel] | None:
        """The argument model (None: it takes anything)."""
        return self.explicit_model or args_model_of(self.factory)

    @cached_property
    def short_arg(self) -> str | None:
        """The argument a scalar short form fills (`{regex: "^yes"}`)."""
        return _short_arg(self.factory, self.args_model)

    @property
    def doc(self) -> str:
        """The first paragraph of its docstring."""
        return (inspect.getdoc(self.factory) or "").split("\n\n")[0]

    def problems(self, args: Mapping[str, Any]) -> list[SpecProblem]:
        """What is wrong with `args` (paths relative to the arguments)."""
        return [] if self.args_model is None else problems_of(self.args_model, args)

    def check(self, args: Mapping[str, Any]) -> dict[str, Any]:
        """The arguments to build with: `args` validated (and converted to the declared types)
        by the argument model; RegistryError listing each bad field."""
        if self.args_model is None:
            return dict(args)
        validated, found = validate_args(self.args_model, args)
        if found or validated is None:
            raise RegistryError.of([p.under(self.name) for p in found])
        return {k: getattr(validated, k) for k in args}

    def json_schema(self) -> dict[str, Any]:
        """The JSON Schema of its arguments (an open object when it has no model)."""
        if self.args_model is None:
            return {"type": "object"}
        schema = self.args_model.model_json_schema(schema_generator=LenientSchema)
        schema.pop("title", None)
        return schema


class _Installed:
    """The installed entry points of every group, read in one pass over the installed
    distributions that every registry shares: `entry_points(group=...)` reads each
    distribution's entry_points.txt whatever the group, so six registries read them six times
    (a lexical evaluate asked five times, 8-11 ms each). Read again when `sys.path` changed
    (a distribution put on it) or a registry is reloaded (`forget`)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._path: tuple[str, ...] | None = None
        self._all: Any = None
        #: a distribution's name by its object's id (the objects live as long as `_all`)
        self._names: dict[int, str] = {}

    def group(self, group: str) -> list[tuple[metadata.EntryPoint, str | None]]:
        """The entry points of `group`, in `entry_points(group=group)`'s order, each with its
        distribution's name (None when it has none)."""
        with self._lock:
            path = tuple(sys.path)
            if self._all is None or self._path != path:
                self._all, self._path, self._names = metadata.entry_points(), path, {}
            found = list(self._all.select(group=group))
            return list(zip(found, _dist_names(found, self._names), strict=True))

    def forget(self) -> None:
        with self._lock:
            self._all = self._path = None
            self._names = {}


_INSTALLED = _Installed()


def _dist_names(eps: list[metadata.EntryPoint], names: dict[int, str]) -> list[str | None]:
    """The distribution name of each entry point (None when it has no distribution). A name
    is read from the distribution's METADATA, which is parsed whole on every read (about
    1 ms): once per distribution, kept in `names` (by the distribution's id) for the other
    entry points of the listing, every registry's."""
    out: list[str | None] = []
    for ep in eps:
        dist = getattr(ep, "dist", None)
        if dist is not None and id(dist) not in names:
            names[id(dist)] = str(dist.metadata["Name"])
        out.append(None if dist is None else names[id(dist)])
    return out


def _short_arg(obj: Any, model: type[BaseModel] | None) -> str | None:
    declared = getattr(obj, "short_arg", None)
    if isinstance(declared, str):
        return declared
    return next(iter(model.model_fields), None) if model is not None else None


def _def_name(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", text)


class Registry(Generic[T]):
    """Components of one kind by name, filled from the entry-point group `group` on first use.

    Args:
        kind: what a component is called in messages (`evaluator`, `subject kind`).
        group: the entry-point group.
        short_forms: specs may be a bare name or `{name: scalar}`.
        common: a model of keys every spec may carry beside the entry's own arguments; they are
            checked, and left out when the component is built.
    """

    def __init__(
        self,
        kind: str,
        group: str,
        *,
        short_forms: bool = True,
        common: type[BaseModel] | None = None,
    ) -> None:
        self.kind = kind
        self.group = group
        self.short_forms = short_forms
        self.common = common
        self._entries: dict[str, Entry[T]] = {}
        self._loaded = False
        #: entry points `_load_named` already went through (`_load` does not again)
        self._tried: set[tuple[str, str, str]] = set()
        self._broken: dict[str, str] = {}
        #: (name, distribution) of entry points another distribution already claimed
        self.shadowed: list[tuple[str, str]] = []
        self._lock = threading.RLock()

    # -- filling ---------------------------------------------------------------------------

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
                self._entries[name] = Entry(name, obj, origin, args_model)
            return obj

        return add if factory is None else add(factory)

    def unregister(self, name: str) -> None:
        """Forget `name` (a component registered in code; one from an entry point comes back on
        `reload()`)."""
        with self._lock:
            self._entries.pop(name, None)

    def reload(self) -> None:
        """Forget what was loaded from entry points, and read them again on next use (entries
        registered in code stay)."""
        with self._lock:
            self._entries = {n: e for n, e in self._entries.items() if e.origin == "code"}
            self._broken.clear()
            self.shadowed.clear()
            self._tried.clear()
            self._loaded = False
        _INSTALLED.forget()

    def _entry_points(self) -> list[tuple[metadata.EntryPoint, str]]:
        """Each entry point with the distribution it comes from: memgauge's own first
        (installed metadata, else the source tree's table), then the plug-ins', so that no
        plug-in can replace a built-in by taking its name."""
        from memgauge._util.builtins import BUILTINS

        found = _INSTALLED.group(self.group)
        own = [(ep, _SELF_DIST) for ep, d in found if d == _SELF_DIST]
        names = {ep.name for ep, _ in own}
        # a source tree whose metadata is missing or older than the code: the same table
        own += [
            (metadata.EntryPoint(name, value, self.group), _SELF_DIST)
            for name, value in BUILTINS.get(self.group, {}).items()
            if name not in names
        ]
        return own + [(ep, d or _SELF_DIST) for ep, d in found if d != _SELF_DIST]

    def _load(self) -> None:
        with self._lock:
            if self._loaded:
                return
            self._loaded = True
            for ep, origin in self._entry_points():
                self._load_one(ep, origin)

    def _load_named(self, name: str) -> None:
        """Load the entry points called `name` only, in `_load`'s order, up to the first that
        loads: a run that names one subject kind and one evaluator does not import every
        other one (their modules, and the HTTP, MCP and LLM stacks some pull in). `_load`
        later goes through the rest, recording what shadows what as it always did. A built-in
        name is loaded from memgauge's own table first, without reading every installed
        distribution's entry points (a lexical evaluate's five names: 14 ms); the installed
        entry points are read when it is not one or it fails to load."""
        from memgauge._util.builtins import BUILTINS

        with self._lock:
            own = BUILTINS.get(self.group, {}).get(name)
            if own and self._load_one(metadata.EntryPoint(name, own, self.group), _SELF_DIST):
                return
            for ep, origin in self._entry_points():
                if ep.name == name and self._load_one(ep, origin):
                    return

    def _load_one(self, ep: metadata.EntryPoint, origin: str) -> bool:
        """Register `ep` (from the distribution `origin`) unless it is taken or fails to load;
        whether it is now registered."""
        key = (ep.name, ep.value, origin)
        if key in self._tried:
            return False
        self._tried.add(key)
        if ep.name in self._entries:
            if self._entries[ep.name].origin != origin:
                self.shadowed.append((ep.name, origin))
            return False
        try:
            obj = ep.load()
        except Exception as exc:  # a broken plug-in must not break the others
            self._broken[ep.name] = f"{ep.value}: {type(exc).__name__}: {exc}"
            return False
        self.register(ep.name, obj, origin=origin)
        return True

    # -- reading ---------------------------------------------------------------------------

    def get(self, name: str) -> Entry[T]:
        """The entry called `name`; RegistryError naming the known ones."""
        with self._lock:
            found = self._entries.get(name)
            if found is None and not self._loaded:
                self._load_named(name)
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
            close = difflib.get_close_matches(name, self.names(), n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise RegistryError(
                f"unknown {self.kind} {name!r}{hint} (known: {', '.join(self.names())})"
            )
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

    def broken(self) -> dict[str, str]:
        """Entry points that failed to load: name -> why."""
        self._load()
        return dict(self._broken)

    # -- specs -----------------------------------------------------------------------------

    def parse(self, spec: Any) -> tuple[str, dict[str, Any]]:
        """(name, arguments) of a spec, short forms expanded; RegistryError if malformed or
        the name is unknown."""
        if isinstance(spec, str) and self.short_forms:
            return self.get(spec).name, {}
        if not (isinstance(spec, Mapping) and len(spec) == 1):
            forms = "'name', {name: {args}} or {name: value}" if self.short_forms else ""
            raise RegistryError(f"a {self.kind} is {forms or '{name: {args}}'}; got {spec!r}")
        ((name, raw),) = spec.items()
        entry = self.get(str(name))
        if raw is None:
            return entry.name, {}
        if isinstance(raw, Mapping):
            return entry.name, dict(raw)
        if self.short_forms and entry.short_arg is not None:
            return entry.name, {entry.short_arg: raw}
        raise RegistryError.of(
            [SpecProblem((entry.name,), "give the arguments as a mapping {key: value}")]
        )

    def _split(self, args: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
        """(common keys, the entry's own) of `args`."""
        names = self.common.model_fields if self.common is not None else {}
        return (
            {k: v for k, v in args.items() if k in names},
            {k: v for k, v in args.items() if k not in names},
        )

    def problems(self, spec: Any) -> list[SpecProblem]:
        """Everything wrong with `spec` (paths start with the component's name); [] if none."""
        try:
            name, args = self.parse(spec)
        except RegistryError as exc:
            return exc.problems
        shared, own = self._split(args)
        found = problems_of(self.common, shared) if self.common is not None else []
        return [p.under(name) for p in found + self.get(name).problems(own)]

    def check(self, spec: Any) -> tuple[str, dict[str, Any]]:
        """(name, arguments) of a valid spec; RegistryError listing every problem."""
        found = self.problems(spec)
        if found:
            raise RegistryError.of(found)
        return self.parse(spec)

    def build(self, spec: Any, args: Mapping[str, Any] | None = None) -> T:
        """Build from a spec (or from a name and its arguments): checked, common keys left out,
        arguments converted to their declared types; RegistryError listing every problem."""
        name, given = self.parse({spec: dict(args)} if args is not None else spec)
        shared, own = self._split(given)
        if self.common is not None and (found := problems_of(self.common, shared)):
            raise RegistryError.of([p.under(name) for p in found])
        entry = self.get(name)
        return entry.factory(**entry.check(own))

    # -- schema ----------------------------------------------------------------------------

    def spec_schemas(
        self, defs: dict[str, Any], siblings: Mapping[str, Any] | None = None
    ) -> list[dict[str, Any]]:
        """JSON Schemas of every accepted spec form, one or more per entry, for `anyOf`.

        Each entry's argument schema goes into `defs` (its own `$defs` hoisted, prefixed by
        kind and name); `siblings` are keys allowed beside the name (an evaluator's `weight`)."""
        out: list[dict[str, Any]] = []
        bare: list[str] = []
        common = self._common_schema(defs)
        for entry in self.entries():
            ref = f"{self.kind}.{entry.name}"
            args = _hoist(entry.json_schema(), defs, ref)
            if common and args.get("type") == "object" and "properties" in args:
                args["properties"] = {**common, **args["properties"]}
            if not args.get("required"):
                bare.append(entry.name)
            defs[_def_name(ref)] = args
            value: list[dict[str, Any]] = [{"$ref": f"#/$defs/{_def_name(ref)}"}]
            if not args.get("required"):
                value.append({"type": "null"})
            if self.short_forms and entry.short_arg in args.get("properties", {}):
                short = args["properties"][entry.short_arg]
                value.append({"not": {"type": ["object", "null"]}, **short})
            out.append(
                {
                    "type": "object",
                    "description": entry.doc,
                    "properties": {entry.name: {"anyOf": value}, **(siblings or {})},
                    "required": [entry.name],
                    "additionalProperties": False,
                }
            )
        if self.short_forms and bare:
            out.insert(0, {"enum": bare, "description": f"A {self.kind} with no arguments."})
        return out

    def _common_schema(self, defs: dict[str, Any]) -> dict[str, Any]:
        if self.common is None:
            return {}
        schema = _hoist(
            self.common.model_json_schema(schema_generator=LenientSchema), defs, self.kind
        )
        props: dict[str, Any] = schema.get("properties", {})
        return props


def _hoist(schema: dict[str, Any], defs: dict[str, Any], prefix: str) -> dict[str, Any]:
    """`schema` with its `$defs` moved into `defs` under `prefix.` and its refs rewritten."""
    schema = dict(schema)
    schema.pop("title", None)
    local = schema.pop("$defs", {})
    rename = {k: _def_name(f"{prefix}.{k}") for k in local}

    def fix(node: Any) -> Any:
        if isinstance(node, dict):
            out = {k: fix(v) for k, v in node.items()}
            ref = out.get("$ref")
            if isinstance(ref, str) and ref.startswith("#/$defs/"):
                out["$ref"] = f"#/$defs/{rename.get(ref[8:], ref[8:])}"
            return out
        if isinstance(node, list):
            return [fix(v) for v in node]
        return node

    for k, v in local.items():
        defs[rename[k]] = fix(v)
    fixed: dict[str, Any] = fix(schema)
    return fixed
