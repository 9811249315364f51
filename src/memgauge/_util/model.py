"""The base of memgauge's pydantic models: validators built on first use.

pydantic builds each model's validator and serializer when its class is created: for memgauge's
95 models that was about a tenth of a CPU-second of every command's imports, though a command
touches a third of them (`memgauge evaluate` on a retrieval dataset: 34). With `defer_build` a
model is built the first time it validates or serializes, with the same schema, so the values
and errors are the ones an eager build gives.

Deferred only on pydantic 2.14 and later, whose `model_rebuild` holds a lock: before it, a model
being built on one thread could be validated on another by its parent's validator (pydantic
issue 11849), and a run validates on several threads. On older pydantic models build eagerly,
as before.

A model's repr shows each long value (a text, a list or a mapping whose own repr runs past a
line) by its size instead: a run's repr was its whole suite, every measure and every item, a
third of a megabyte printed by a notebook cell; the values are all still there to read.
"""

from __future__ import annotations

from collections.abc import Iterable
from itertools import islice
from typing import Any, get_args

from pydantic import BaseModel, ConfigDict, ValidationInfo, field_validator
from pydantic.version import VERSION
from pydantic_core import PydanticCustomError

__all__ = ["DEFERRED", "Model", "TrueOrFalse", "short_repr"]

#: whether this pydantic builds a deferred model safely on several threads at once
DEFERRED = tuple(int(part) for part in VERSION.split(".")[:2]) >= (2, 14)


#: the longest value a repr shows whole (about a line)
_LONG = 100
#: a container with more elements than this is shown by its size without measuring its repr
_MANY = 8


class _Shown:
    """A stand-in whose repr is the text it is given."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return self.text


def _kinds(values: Iterable[Any]) -> str:
    names = dict.fromkeys(type(value).__name__ for value in values)
    return ", ".join(names)


def short_repr(value: Any) -> Any:
    """`value`, or a stand-in naming its size where its repr is longer than a line: a text's
    start and length, a list's length and element types, a mapping's first keys and count."""
    if isinstance(value, str):
        if len(value) <= _LONG:
            return value
        return _Shown(f"{value[:_LONG]!r}... ({len(value)} characters)")
    if not isinstance(value, list | tuple | set | frozenset | dict) or not value:
        return value
    if len(value) <= _MANY and len(repr(value)) <= _LONG:
        return value
    if isinstance(value, dict):
        keys = ", ".join(repr(key) for key in islice(value, 3))
        more = ", ..." if len(value) > 3 else ""
        return _Shown(f"<dict of {len(value)}: {keys}{more}>")
    return _Shown(f"<{type(value).__name__} of {len(value)} {_kinds(value)}>")


class Model(BaseModel):
    """A pydantic model whose validator and serializer are built on first use (see the module)."""

    model_config = ConfigDict(defer_build=DEFERRED)

    def __repr_args__(self) -> Iterable[tuple[str | None, Any]]:
        """Each field as pydantic shows it, a long value by its size (see the module)."""
        for name, value in super().__repr_args__():
            yield name, short_repr(value)


class TrueOrFalse(Model):
    """A base whose boolean fields take true or false only: pydantic reads the texts 'no',
    'off', 'n', '0' (and 'yes', 'on', ...) as booleans, so `ingest: "no"` in a suite, or
    `ingest="no"` given to the API, was False and said nothing. YAML's own true / false (and
    yes / no unquoted, which YAML reads as booleans) are booleans before they get here."""

    @field_validator("*", mode="before")
    @classmethod
    def _no_text_for_a_boolean(cls, value: Any, info: ValidationInfo) -> Any:
        if isinstance(value, str) and info.field_name is not None:
            hint = cls.model_fields[info.field_name].annotation
            if hint is bool or bool in get_args(hint):
                # the input is shown after it ("(got 'no')"), as pydantic's own errors are
                raise PydanticCustomError("bool_text", "give true or false, not a text")
        return value
