"""Every JSON Schema `memgauge schema` writes: suite files, subject spec files and dataset files.

The suite and subject schemas are built from the registries at the time they are asked for, so
they carry the arguments of every installed component, plug-ins' included.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from memgauge.data.schemas import DATASET_SCHEMAS, dataset_json_schema
from memgauge.errors import UsageError

__all__ = ["SCHEMA_KINDS", "json_schema"]

#: kind -> what its files hold
SCHEMA_KINDS: dict[str, str] = {
    "suite": "suite files (memgauge run)",
    "subject": "subject spec files (-s subject.yaml)",
    **DATASET_SCHEMAS,
}


def _suite_schema() -> dict[str, Any]:
    # the suite loader and every registry: only for the schemas that carry components, so
    # `memgauge schema memories` loads the dataset models alone
    from memgauge.runs.suite import suite_json_schema

    return suite_json_schema()


def _subject_schema() -> dict[str, Any]:
    from memgauge.runs.suite import subject_file_json_schema

    return subject_file_json_schema()


_BUILDERS: dict[str, Callable[[], dict[str, Any]]] = {
    "suite": _suite_schema,
    "subject": _subject_schema,
}


def json_schema(kind: str = "suite") -> dict[str, Any]:
    """The JSON Schema of files of `kind` (a key of `SCHEMA_KINDS`)."""
    if kind not in SCHEMA_KINDS:
        raise UsageError(f"kind {kind!r}: use one of {', '.join(SCHEMA_KINDS)}")
    build = _BUILDERS.get(kind)
    return build() if build is not None else dataset_json_schema(kind)
