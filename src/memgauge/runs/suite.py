"""Suite files (seed 004): subjects x tasks, each task with its dataset, evaluators and weights.

```yaml
name: my-memory-suite
subjects:
  hybrid: {reference: {mode: hybrid}}
  mine: {python: {target: my_pkg.memory:build}}
tasks:
  - name: recall
    kind: retrieval
    dataset: data/demo          # relative to the suite file
    evaluators: [{retrieval: nDCG@10}]
  - name: answers
    kind: expected-output
    dataset: data/qa.jsonl
    evaluators:
      - exact
      - token_f1: {variant: locomo}
        weight: 2
```

Components are specs `{name: {args}}` with short forms (`exact`, `{regex: "^yes"}`).
`load_suite` reports every problem with file, line and key; `suite_json_schema()` is what
`memgauge schema` writes so editors can complete suite files.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from memgauge.data.jsonio import decode_text, parse_yaml, problems_from_validation
from memgauge.errors import DataError, Problem, UsageError
from memgauge.scorers import evaluator_from_spec

__all__ = ["EvaluatorEntry", "Suite", "TaskSpec", "load_suite", "suite_json_schema"]

SUBJECT_KINDS = ("reference", "python", "subprocess", "http", "mcp")
TaskKind = Literal["retrieval", "expected-output", "script"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class EvaluatorEntry(_Model):
    """One evaluator of a task and its weight in the task's combined score."""

    spec: str | dict[str, Any] = Field(description="The evaluator: 'name' or {name: {args}}.")
    weight: float = Field(default=1.0, gt=0, description="Weight in the task's combined score.")


class TaskSpec(_Model):
    """A task: what to run on each item, and how to score it."""

    name: str = Field(min_length=1, description="Unique task name.")
    kind: TaskKind = Field(description="retrieval, expected-output or script.")
    dataset: str | None = Field(default=None, description="Dataset path, relative to the suite.")
    evaluators: list[EvaluatorEntry] = Field(min_length=1, description="Evaluators with weights.")
    params: dict[str, Any] = Field(default_factory=dict, description="Task parameters.")

    @field_validator("evaluators", mode="before")
    @classmethod
    def _short_forms(cls, value: Any) -> Any:
        # `- exact`, `- {contains: {...}}`, `- {contains: {...}, weight: 2}` are all entries
        if not isinstance(value, list):
            return value
        out = []
        for item in value:
            if isinstance(item, str):
                out.append({"spec": item})
            elif isinstance(item, dict) and "spec" not in item:
                rest = {k: v for k, v in item.items() if k != "weight"}
                entry: dict[str, Any] = {"spec": rest}
                if "weight" in item:
                    entry["weight"] = item["weight"]
                out.append(entry)
            else:
                out.append(item)
        return out


class Suite(_Model):
    """A suite file."""

    schema_version: Literal[1] = Field(default=1, description="Format version.")
    name: str = Field(min_length=1, description="Suite name (runs are grouped by it).")
    description: str | None = Field(default=None, description="What the suite checks.")
    subjects: dict[str, Any] = Field(
        min_length=1,
        description="Subject name -> spec {kind: {args}}, kinds: " + ", ".join(SUBJECT_KINDS),
    )
    tasks: list[TaskSpec] = Field(min_length=1, description="The tasks.")
    concurrency: int = Field(default=4, ge=1, le=1000, description="Items in flight at once.")
    max_failure_rate: float = Field(
        default=0.1, ge=0, le=1, description="The run fails past this share of failed items."
    )


def suite_json_schema() -> dict[str, Any]:
    """JSON Schema of suite files."""
    schema = Suite.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "memgauge suite"
    return schema


def _line_of(node: yaml.Node | None, loc: tuple[Any, ...]) -> int | None:
    """The line of the deepest node along `loc` (1-based), for error messages."""
    line = node.start_mark.line + 1 if node is not None else None
    for part in loc:
        if isinstance(node, yaml.MappingNode):
            nxt = next((v for k, v in node.value if getattr(k, "value", None) == str(part)), None)
        elif (
            isinstance(node, yaml.SequenceNode) and isinstance(part, int) and part < len(node.value)
        ):
            nxt = node.value[part]
        else:
            nxt = None
        if nxt is None:
            break
        node = nxt
        line = node.start_mark.line + 1
    return line


def load_suite(path: str | Path) -> Suite:
    """Read and check a suite file (YAML or JSON); DataError lists every problem."""
    p = Path(path)
    file = str(p)
    if not p.is_file():
        raise DataError(Problem(file, None, None, "no such suite file"))
    # YAML is a superset of JSON: one parser gives both kinds of file their line numbers
    raw, node = parse_yaml(decode_text(p.read_bytes(), file), file)
    if not isinstance(raw, dict):
        raise DataError(
            Problem(file, None, None, "a suite file is a mapping with name, subjects, tasks")
        )
    try:
        suite = Suite.model_validate(raw)
    except ValidationError as exc:
        problems = []
        for err, prob in zip(exc.errors(), problems_from_validation(exc, file, None), strict=True):
            loc = tuple(p for p in err["loc"] if p != "spec")
            problems.append(Problem(file, _line_of(node, loc), prob.field, prob.message))
        raise DataError(problems) from None
    problems = []
    for name, spec in suite.subjects.items():
        ok = isinstance(spec, dict) and len(spec) == 1 and next(iter(spec)) in SUBJECT_KINDS
        if not ok:
            problems.append(
                Problem(
                    file,
                    _line_of(node, ("subjects", name)),
                    f"subjects.{name}",
                    f"a subject is {{kind: {{args}}}} with kind one of {', '.join(SUBJECT_KINDS)}",
                )
            )
    seen: set[str] = set()
    for i, task in enumerate(suite.tasks):
        if task.name in seen:
            problems.append(
                Problem(
                    file,
                    _line_of(node, ("tasks", i, "name")),
                    f"tasks.{i}.name",
                    f"duplicate task name {task.name!r}",
                )
            )
        seen.add(task.name)
        if task.dataset is not None and not (p.parent / task.dataset).exists():
            problems.append(
                Problem(
                    file,
                    _line_of(node, ("tasks", i, "dataset")),
                    f"tasks.{i}.dataset",
                    f"{task.dataset} does not exist (paths are relative to the suite file)",
                )
            )
        for j, entry in enumerate(task.evaluators):
            try:
                evaluator_from_spec(entry.spec)
            except UsageError as exc:
                problems.append(
                    Problem(
                        file,
                        _line_of(node, ("tasks", i, "evaluators", j)),
                        f"tasks.{i}.evaluators.{j}",
                        str(exc),
                    )
                )
    if problems:
        raise DataError(problems)
    return suite
