"""Every subject kind, by name: the registry `build_subject` and `check_subject` go through.

The kinds themselves (`memgauge.subjects.specs` for memgauge's own, plug-ins' packages for
theirs) are loaded by name through entry points when first built, never imported here: so a
component that builds a subject of its own (the learnings memory an LLM component reads) can
import this module without importing every kind, itself among them.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from memgauge._util.registry import Registry, RegistryError, SpecArgs, SpecProblem
from memgauge.errors import UsageError

__all__ = ["SUBJECTS", "RunOptions", "build_subject", "check_subject"]


class RunOptions(SpecArgs):
    """Keys any subject spec may carry: how the run calls the subject."""

    concurrent: bool | None = Field(
        default=None,
        description="Call the subject from several threads at once (default: what the "
        "subject declares; one thread otherwise).",
    )
    agent: bool | None = Field(
        default=None,
        description="The subject answers questions (default: whether it has answer()).",
    )


#: every subject kind: memgauge's own and plug-ins' (entry-point group `memgauge.subjects`)
SUBJECTS: Registry[Any] = Registry(
    "subject kind", "memgauge.subjects", short_forms=False, common=RunOptions
)


def check_subject(spec: Any) -> list[SpecProblem]:
    """Everything wrong with a subject spec, before anything is built; [] if nothing."""
    return SUBJECTS.problems(spec)


def build_subject(spec: dict[str, Any]) -> Any:
    """Build a subject from `{kind: {args}}`; UsageError naming each bad key. A plug-in's
    memory (`reset`, `ingest`, `search`) that does not speak the subject protocol gets the
    `python:` adapter, as the same object given as `python:pkg.mod:Factory` does (a search
    returning dicts, taking no `session=`); a plug-in kind's own subjects are left as built."""
    try:
        built = SUBJECTS.build(spec)
    except RegistryError as exc:
        raise UsageError(f"subject {exc}") from None
    except TypeError as exc:
        raise UsageError(f"subject {spec!r}: {exc}") from None
    ((kind, _args),) = spec.items()
    memory = all(callable(getattr(built, m, None)) for m in ("reset", "ingest", "search"))
    if not memory or SUBJECTS.get(str(kind)).builtin:
        return built
    from memgauge.subjects.python_import import speaking  # kinds are not imported here

    return speaking(built, str(kind), owned=True)
