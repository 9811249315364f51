"""Arguments from a spec file, checked against the field types of the dataclass they build.

Built-in components are frozen dataclasses whose fields are their configuration (DESIGN), and a
dataclass does not check types: `criteria: [a, b]` where a mapping belongs, or `threshold: high`,
would be stored as given and fail later, mid-run, as an AttributeError or TypeError. Checking
the given arguments with a pydantic model of the fields makes it a message at load time.
"""

from __future__ import annotations

import dataclasses
import functools
import typing
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError, create_model

__all__ = ["checked_kwargs"]


@functools.cache
def _fields_model(cls: type) -> type[BaseModel] | None:
    # every field optional: only the arguments a spec gives are checked; defaults stay the
    # dataclass's own
    if not dataclasses.is_dataclass(cls):
        return None
    hints = typing.get_type_hints(cls)
    fields: dict[str, Any] = {
        f.name: (hints[f.name], None) for f in dataclasses.fields(cls) if f.init
    }
    config = ConfigDict(allow_inf_nan=False, arbitrary_types_allowed=True)
    model: type[BaseModel] = create_model(f"{cls.__name__}Args", __config__=config, **fields)
    return model


def checked_kwargs(cls: type, args: Mapping[str, Any]) -> dict[str, Any]:
    """`args` with each one naming a field of dataclass `cls` validated (and coerced) to the
    field's type; names that are not fields are passed through for the constructor to refuse.
    Raises ValueError `field: what is wrong (got value)` for the first wrong argument."""
    model = _fields_model(cls)
    if model is None:
        return dict(args)
    given = {k: v for k, v in args.items() if k in model.model_fields}
    try:
        checked = model.model_validate(given)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"])
        raise ValueError(f"{where}: {err['msg']} (got {err.get('input')!r})") from None
    return {**args, **{k: getattr(checked, k) for k in given}}
