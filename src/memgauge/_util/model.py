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
"""

from __future__ import annotations

from typing import Any, get_args

from pydantic import BaseModel, ConfigDict, ValidationInfo, field_validator
from pydantic.version import VERSION
from pydantic_core import PydanticCustomError

__all__ = ["DEFERRED", "Model", "TrueOrFalse"]

#: whether this pydantic builds a deferred model safely on several threads at once
DEFERRED = tuple(int(part) for part in VERSION.split(".")[:2]) >= (2, 14)


class Model(BaseModel):
    """A pydantic model whose validator and serializer are built on first use (see the module)."""

    model_config = ConfigDict(defer_build=DEFERRED)


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
