"""From a suite's optimization block and the command's flags to the one configuration a study
runs with (and a resume rebuilds it from: it is stored with the study).

Precedence: a flag overrides the block's key (`--space` replaces the block's whole space).
Seed 004 writes scores in points (`targetScore: 85`, `improvementThreshold: 2`); memgauge's
measures are 0-1, so a value above 1 is read as points out of 100 and the study says so in its
notices.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import ConfigDict, Field

from memgauge._util.args import args_model_of
from memgauge._util.model import Model
from memgauge.aggregates.constraint import parse_constraint
from memgauge.data.jsonio import decode_text, line_of, parse_yaml
from memgauge.errors import DataError, UsageError
from memgauge.optimize.feasible import constrained_task
from memgauge.runs.optspec import (
    OptimizationSpec,
    OptimizerModel,
    SearchDim,
    field_problems,
    get_path,
    k_narrowed,
    k_problem,
    refused_combination,
    space_problems,
)
from memgauge.runs.suite import Suite, resolve_objective, task_least_k, tuned_subject
from memgauge.subjects.python_import import load_target
from memgauge.subjects.registry import SUBJECTS

__all__ = ["StudyConfig", "resolve_config"]


class StudyConfig(Model):
    """Everything a study runs with, resolved (0-1 scale; see the module docstring)."""

    model_config = ConfigDict(extra="forbid")

    suite_name: str
    task: str
    measure: str
    subject: str
    base_spec: dict[str, Any] = Field(description="The subject's spec as the suite writes it.")
    base_k: int = Field(description="The task's k as the suite writes it.")
    space: dict[str, SearchDim] = Field(default_factory=dict)
    space_order: list[str] = Field(
        default_factory=list,
        description="The space's fields as written: the samplers draw in this order, and a "
        "stored configuration's keys come back sorted, so a resume reads it from here.",
    )
    strategy: str = "greedy"
    targets: list[str] = Field(default_factory=lambda: ["config"])
    max_iterations: int = 10
    target_score: float | None = None
    threshold: float = 0.0
    holdout: float = 0.3
    split: list[str] | None = None
    seed: int = 0
    candidates: int = 4
    temperature: float = 0.02
    cooling: float = 0.8
    patience: int | None = None
    max_seconds: float | None = None
    max_cost: float | None = None
    constraint: str | None = Field(
        default=None, description="The bound the best must meet (`optimize.feasible`)."
    )
    require_significance: bool = False
    texts: list[str] = Field(default_factory=list)
    tools: str | None = None
    tool_names: list[str] = Field(default_factory=list, description="The tools' full list.")
    hook: list[str] | None = None
    optimizer: OptimizerModel | None = None
    concurrency: int | None = None
    notices: list[str] = Field(default_factory=list)
    space_source: str | None = Field(
        default=None,
        description="Where the space was written: the --space flags, or FILE:LINE of the "
        "block's `space:` (named when every candidate of it is refused).",
    )

    @property
    def objective(self) -> str:
        """`TASK/MEASURE`."""
        return f"{self.task}/{self.measure}"

    def tool_key(self, tool: str) -> str:
        """The search dimension of one tool of the `tools` target: in or out."""
        return f"{self.tools}[{tool}]"

    def search_space(self) -> dict[str, SearchDim]:
        """What the samplers search: the config space, and one in/out choice per tool."""
        out: dict[str, SearchDim] = {}
        if "config" in self.targets:
            written = [f for f in self.space_order if f in self.space]
            out = {f: self.space[f] for f in [*written, *self.space]}  # first place kept
        if "tools" in self.targets:
            for tool in self.tool_names:
                out[self.tool_key(tool)] = SearchDim(type="choice", choices=[True, False])
        return out


def _block(suite: Suite, objective: str | None) -> tuple[OptimizationSpec, str | None]:
    """The block `memgauge optimize` uses, and its task (None: the suite's own block)."""
    wanted = objective.split("/", 1)[0] if objective and "/" in objective else None
    blocks: list[tuple[OptimizationSpec, str | None]] = []
    if suite.optimization is not None and suite.optimization.enabled:
        blocks.append((suite.optimization, None))
    blocks += [
        (t.optimization, t.name)
        for t in suite.tasks
        if t.optimization is not None and t.optimization.enabled
    ]
    if wanted is not None:
        mine = [b for b in blocks if b[1] == wanted]
        if mine:
            return mine[0]
        own = [b for b in blocks if b[1] is None]
        return (own[0][0], None) if own else (OptimizationSpec(), None)
    if len(blocks) > 1:
        tasks = [t or "(the suite's)" for _b, t in blocks]
        raise UsageError(
            f"the suite has {len(blocks)} enabled optimization blocks ({', '.join(tasks)}): "
            "choose one with --objective TASK/MEASURE"
        )
    return blocks[0] if blocks else (OptimizationSpec(), None)


def _points(value: float | None, key: str, notices: list[str]) -> float | None:
    if value is None or value <= 1:
        return value
    notices.append(
        f"{key}: {value:g} is read as points out of 100, {value / 100:g} on the objective's "
        "0-1 scale"
    )
    return value / 100


def _default_of(spec: Mapping[str, Any], field: str) -> Any:
    """The subject's value of FIELD: as its spec writes it, else its argument model's
    default."""
    ((kind, args),) = spec.items()
    found = get_path(args or {}, field)
    if found is None and kind == "python" and field.startswith("kwargs."):
        # a keyword argument the suite leaves out starts from the factory's own default
        return _factory_default((args or {}).get("target"), field.removeprefix("kwargs."))
    if found is not None or "." in field:
        return found
    model = SUBJECTS.get(kind).args_model
    info = model.model_fields.get(field) if model is not None else None
    if info is None or info.is_required():
        return None
    return info.get_default(call_default_factory=True)


def _factory_default(target: Any, name: str) -> Any:
    """The default of `name` in the signature of a `python:` subject's factory (None when it
    has none, or the factory takes `**kwargs`)."""
    if not isinstance(target, str):
        return None
    model = args_model_of(load_target(target))
    info = model.model_fields.get(name) if model is not None else None
    if info is None or info.is_required():
        return None
    return info.get_default(call_default_factory=True)


def _space_source(
    suite: Suite, block_task: str | None, flagged: Mapping[str, SearchDim], path: Path | None
) -> str | None:
    """The --space flags, or FILE:LINE: LOCATION of the block's space (see `StudyConfig`)."""
    if flagged:
        return " ".join(f"--space '{f}={d.describe()}'" for f, d in flagged.items())
    at: tuple[str | int, ...] = ("optimization", "space")
    if block_task is not None:
        i = next(i for i, t in enumerate(suite.tasks) if t.name == block_task)
        at = ("tasks", i, *at)
    where = ".".join(str(p) for p in at)
    if path is None:
        return f"the suite's {where}"
    try:
        _raw, node = parse_yaml(decode_text(path.read_bytes(), str(path)), str(path))
    except (OSError, DataError):
        return f"{path}: {where}"
    line = line_of(node, at)
    return f"{path}{f':{line}' if line else ''}: {where}"


def resolve_config(
    suite: Suite, overrides: Mapping[str, Any], path: Path | None = None
) -> StudyConfig:
    """The study's configuration from `suite`'s block and `overrides` (the flags given, by
    the block's field names; `path`: the suite file, to name where its space is written);
    UsageError saying what is missing or wrong."""
    block, block_task = _block(suite, overrides.get("objective"))
    unknown = set(overrides) - set(OptimizationSpec.model_fields) - {"concurrency"}
    if unknown:
        raise UsageError(f"unknown optimization option(s): {', '.join(sorted(unknown))}")
    given = {
        k: v
        for k, v in overrides.items()
        if v is not None and k in OptimizationSpec.model_fields and k != "space"
    }
    spec = block.model_copy(update=given)
    # '' was read as not given: the default objective, no bound at all, and exit 0
    if spec.objective == "":
        raise UsageError(
            "objective (--objective): an empty one names no measure; give [TASK/]MEASURE, or"
            " leave it out for the task's first evaluator"
        )
    if spec.constraint == "":
        raise UsageError(
            "constraint (--constraint): an empty one names no bound; give [TASK/]MEASURE OP"
            " NUMBER, or leave it out"
        )
    if overrides.get("space"):
        spec = spec.model_copy(update={"space": dict(overrides["space"])})
    try:
        subject = tuned_subject(suite, spec.subject)
        task, measure = resolve_objective(spec.objective, suite, block_task)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    base_spec = suite.subjects[subject]
    if not (isinstance(base_spec, dict) and len(base_spec) == 1):
        raise UsageError(f"subject {subject!r}: a subject spec is {{kind: {{args}}}}")
    task_spec = next(t for t in suite.tasks if t.name == task)
    least = task_least_k(task_spec)
    # a space given by flags is named as the flag; the block's own was checked, with its
    # file and line, when the suite was read
    flagged = bool(overrides.get("space"))

    def where(field: str) -> str:
        if flagged and field in spec.space:
            return f"--space '{field}={spec.space[field].describe()}'"
        return f"space {field}"

    found = space_problems(subject, base_spec, spec.space)
    found += field_problems(subject, base_spec, {t: ["text"] for t in spec.texts})
    if spec.constraint:
        constrained_task(task_spec, parse_constraint(spec.constraint))  # a bound it can read
    bad_k = k_problem(spec.space.get("k"), least, f"task {task!r}")
    if bad_k:
        found.append(("k", bad_k))
    if found:
        raise UsageError("; ".join(f"{where(f)}: {m}" for f, m in found))
    notices: list[str] = []
    space = dict(spec.space)
    clash = refused_combination(base_spec, space) if "config" in spec.targets else None
    if clash:
        notices.append(
            f"space: the subject refuses some combinations of the space's values (e.g. {clash});"
            " the search records such a point as a refused candidate"
        )
    if "k" in space:
        # a k the task refuses would only ever be a failed candidate: searched are the others
        space["k"], note = k_narrowed(space["k"], least)
        notices += [note] if note else []
    # named as the user wrote it: the flag, or the block's key
    target = _points(
        float(spec.target_score) if spec.target_score is not None else None,
        "--target-score" if "target_score" in given else "targetScore",
        notices,
    )
    threshold = _points(
        float(spec.improvement_threshold),
        "--improvement-threshold" if "improvement_threshold" in given else "improvementThreshold",
        notices,
    )
    targets = list(spec.targets)
    if "config" in targets and not spec.space:
        raise UsageError(
            "the config target needs a search space: `space:` in the optimization block, or "
            "--space FIELD=int:LO..HI (a field of the subject's spec, or k)"
        )
    if {"instructions", "prompts"} & set(targets) and not spec.texts:
        raise UsageError(
            "the instructions and prompts targets need the subject's text fields: texts: "
            "[system] (an agent's instructions) or [prompt] (an LLM extractor's)"
        )
    if "code" in targets and not spec.hook:
        raise UsageError("the code target needs a hook: hook: [python, next_candidate.py]")
    tool_names: list[str] = []
    if "tools" in targets:
        if spec.tools is None:
            raise UsageError("the tools target needs the list-valued field: tools: kwargs.tools")
        current = _default_of(base_spec, spec.tools)
        if not isinstance(current, list) or not current:
            raise UsageError(
                f"tools: {spec.tools} is not a list of tools in subject {subject!r}'s spec"
            )
        tool_names = [str(t) for t in current]
    return StudyConfig(
        suite_name=suite.name,
        task=task,
        measure=measure,
        subject=subject,
        base_spec=dict(base_spec),
        base_k=task_spec.k,
        space=space,
        space_order=list(space),
        strategy=spec.strategy,
        targets=targets,
        max_iterations=spec.max_iterations,
        target_score=target,
        threshold=threshold or 0.0,
        holdout=float(spec.holdout),
        split=list(spec.split.holdout) if spec.split is not None else None,
        seed=spec.seed,
        candidates=spec.candidates,
        temperature=float(spec.temperature),
        cooling=spec.cooling,
        patience=spec.patience,
        max_seconds=float(spec.max_seconds) if spec.max_seconds is not None else None,
        max_cost=float(spec.max_cost) if spec.max_cost is not None else None,
        constraint=parse_constraint(spec.constraint).text() if spec.constraint else None,
        require_significance=spec.require_significance,
        texts=list(spec.texts),
        tools=spec.tools,
        tool_names=tool_names,
        hook=list(spec.hook) if spec.hook else None,
        optimizer=spec.optimizer,
        concurrency=overrides.get("concurrency"),
        notices=notices,
        space_source=_space_source(suite, block_task, overrides.get("space") or {}, path),
    )


def baseline_params(config: StudyConfig) -> tuple[dict[str, Any], dict[str, str]]:
    """The starting configuration: each searched FIELD's value (`k`: the task's), and each
    text field's text, as the suite writes them or as the subject's defaults."""
    params: dict[str, Any] = {}
    for field in config.search_space():
        if field == "k":
            params[field] = config.base_k
        elif config.tools is not None and field.startswith(f"{config.tools}["):
            params[field] = True
        else:
            params[field] = _default_of(config.base_spec, field)
    texts: dict[str, str] = {}
    for field in config.texts:
        value = _default_of(config.base_spec, field)
        texts[field] = value if isinstance(value, str) else ""
    return params, texts


def subject_params(config: StudyConfig, params: Mapping[str, Any]) -> dict[str, Any]:
    """A candidate's params as FIELDs of the subject's spec: the tools' in/out flags become
    the list of the tools kept (in their original order)."""
    out = {
        k: v for k, v in params.items() if not (config.tools and k.startswith(f"{config.tools}["))
    }
    if config.tools is not None and "tools" in config.targets:
        out[config.tools] = [t for t in config.tool_names if params.get(config.tool_key(t), True)]
    return out
