"""What the suite builders share. `evaluate`, `demo`, `extraction`, `operations` and `audit` each
build a suite in memory (the builder is its task kind's: `runs.kinds.retrieval.evaluate_suite`,
`extraction_suite`, `operations_suite`, `expected_output.audit_suite`), and the one engine runs
it like any suite file, so every evaluation is stored, resumable (the same command with
`--resume ID` rebuilds the same suite), gated, compared and shown the same way.

Paths in built suites are absolute, so a resume from another directory finds the same files. A
built suite's name groups its runs for `history` and `gate`: `evaluate:<dataset>`,
`extraction:<cases>`, `operations:<cases>`, `audit:<dataset>`, `demo`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import ValidationError

from memgauge.data.jsonio import problems_from_validation
from memgauge.data.parsing import ParseError, load_yaml
from memgauge.errors import UsageError
from memgauge.runs.suite import Suite

__all__ = [
    "command_suite",
    "learnings_arg",
    "pool_spec",
    "subject_map",
]


def command_suite(
    name: str,
    description: str,
    subjects: Mapping[str, Any],
    tasks: Sequence[Mapping[str, Any]],
    *,
    concurrency: int,
    seed: int,
    max_failure_rate: float,
) -> Suite:
    """The suite a command builds: `tasks` over `subjects`, validated as a suite file is; a
    setting it refuses is a UsageError naming the setting (`k`, `seed`, `timeout`, ...), as the
    command's option or the API's keyword of that name gave it."""
    try:
        return Suite.model_validate(
            {
                "name": name,
                "description": description,
                "subjects": dict(subjects),
                "concurrency": concurrency,
                "seed": seed,
                "max_failure_rate": max_failure_rate,
                "tasks": list(tasks),
            }
        )
    except ValidationError as exc:
        # pydantic's own error (`1 validation error for Suite tasks.0.k ...`) reached an API
        # caller as an exception of another library, naming a suite they never wrote
        problems = problems_from_validation(exc, "", None)
        raise UsageError(
            "; ".join(f"{str(p.field).rsplit('.', 1)[-1]}: {p.message}" for p in problems)
        ) from None


def subject_map(systems: Sequence[tuple[str, Mapping[str, Any]]]) -> dict[str, Any]:
    """`{label: spec}` in order; UsageError when two share a label."""
    out: dict[str, Any] = {}
    for label, spec in systems:
        if label in out:
            names = [name for name, _ in systems]
            raise UsageError(
                f"system names must be unique, got {names}; give each a distinct label "
                "(-s SPEC@LABEL; from Python, pass the systems as a dict {label: system})"
            )
        out[label] = dict(spec)
    return out


def pool_spec(value: str | Mapping[str, Any]) -> str | dict[str, Any]:
    """The relevance judge of `--pool-judge`: a name (`relevance`) or YAML flow text
    (`'{relevance: {model: m}}'`)."""
    return _flow_arg(value, "--pool-judge", "'relevance' or '{relevance: {model: m}}'")


def _flow_arg(value: str | Mapping[str, Any], flag: str, hint: str) -> str | dict[str, Any]:
    """A flag's value: a mapping as is, YAML flow text (`{...}`) parsed into one, any other
    text stripped; UsageError naming the flag for empty text or flow text that is no mapping."""
    if isinstance(value, Mapping):
        return dict(value)
    text = value.strip()
    if not text:
        raise UsageError(f"{flag}: give {hint}")
    if not text.startswith("{"):
        return text
    try:
        parsed = load_yaml(text)[0]
    except ParseError as exc:
        raise UsageError(f"{flag}: not a mapping ({exc.message}); give {hint}") from None
    if not isinstance(parsed, dict):
        raise UsageError(f"{flag}: give {hint}")
    return parsed


def learnings_arg(value: str | Mapping[str, Any], flag: str) -> dict[str, Any]:
    """A `learnings:` argument from a flag: a plain query (`'memory merge judge'`) or YAML
    flow text of the whole argument (`'{query: merge, k: 2, path: l.db}'`); its keys are
    checked with the suite."""
    got = _flow_arg(value, flag, "a query, or {query: ..., k: N, budget: N}")
    return {"query": got} if isinstance(got, str) else got
