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
    evaluators: [{retrieval: nDCG@10}, {retrieval: Recall@5}]
  - name: answers
    kind: expected-output
    dataset: data/qa.jsonl      # items: {id, input, expected, history?}
    memories: data/notes.jsonl  # ingested into memory subjects before the items
    evaluators:
      - exact
      - token_f1: {variant: locomo}
        weight: 2
        label: f1
```

A retrieval task searches each judged query of a retrieval dataset and scores the ranked hits.
Expected-output and script tasks ask each item's `input`: an agent subject answers it (given the
item's `history`, if any); a memory subject searches it and its output is the text of the top
`k` hits, one per line. A script task scores with at least one `script` evaluator.

Components are specs `{name: {args}}` with short forms (`exact`, `{regex: "^yes"}`).
`load_suite` reports every problem with file, line and key; `suite_json_schema()` is what
`memgauge schema` writes so editors can complete suite files.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    ConfigDict,
    Field,
    StrictInt,
    field_validator,
    model_validator,
)

from memgauge._util.model import TrueOrFalse
from memgauge._util.numbers import MAX_FAILURE_RATE, MAX_K, MAX_REPEAT, SEED_MAX
from memgauge._util.registry import RegistryError, SpecProblem
from memgauge.aggregates import AGGREGATES
from memgauge.data.detect import Kind
from memgauge.data.jsonio import decode_text, existing, line_of, parse_yaml
from memgauge.data.models import FiniteFloat, TaskItem
from memgauge.errors import DataError, Problem, UsageError
from memgauge.runs.depth import least_k
from memgauge.runs.kinds import KINDS, kind_of
from memgauge.runs.optspec import OptimizationSpec, field_problems, k_problem, space_problems
from memgauge.scorers import EVALUATORS, evaluator_from_spec
from memgauge.scorers.retrieval import RetrievalMeasure
from memgauge.subjects.parse import check_suite_subject
from memgauge.subjects.registry import SUBJECTS

__all__ = [
    "EvaluatorEntry",
    "ItemFilter",
    "Suite",
    "TaskComponents",
    "TaskSpec",
    "component_problems",
    "components",
    "evaluator_kinds",
    "evaluator_label",
    "load_suite",
    "optimization_problems",
    "resolve_agents",
    "resolve_objective",
    "spec_name",
    "spec_problems",
    "subject_file_json_schema",
    "suite_json_schema",
    "suite_name",
    "task_least_k",
    "tuned_subject",
    "with_repeat",
]


class _Model(TrueOrFalse):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)


class EvaluatorEntry(_Model):
    """One evaluator of a task and its weight in the task's combined score."""

    spec: str | dict[str, Any] = Field(description="The evaluator: 'name' or {name: {args}}.")
    weight: FiniteFloat = Field(
        default=1.0, gt=0, description="Weight in the task's combined score."
    )
    label: str | None = Field(
        default=None, description="Name in results (default: the evaluator's name)."
    )


class ProbeOptions(_Model):
    """How a conversation dataset (memaudit, LoCoMo, LongMemEval) becomes audit probes."""

    seed: int = Field(
        default=0, ge=0, le=SEED_MAX, description="Seed of probe generation (memaudit facts)."
    )


class TraceOptions(_Model):
    """An extraction task whose dataset is a production trace: its unlabelled lines, scored by
    the fact-enumeration judge from their conversation, existing memory and output alone."""

    tags: list[str] = Field(
        default_factory=list, description="Keep lines tagged with any of these (default: all)."
    )
    sample: FiniteFloat = Field(
        default=1.0, gt=0, le=1, description="Share of the lines to score (0 < share <= 1)."
    )
    seed: int = Field(
        default=0, ge=0, le=SEED_MAX, description="Seed of the sample (per line, from its id)."
    )


class ItemFilter(_Model):
    """Only some of a task's items (an optimization's tuning or holdout split)."""

    corpora: list[str] | None = Field(
        default=None, description="Only the items of these corpora (LoCoMo's conversations)."
    )
    items: list[str] | None = Field(default=None, description="Only the items with these ids.")
    sample: FiniteFloat | None = Field(
        default=None,
        gt=0,
        le=1,
        description="Only this share of the items (seed 002's samplingRate: 1.0 all, 0.1 a"
        " tenth), each kept when its id's SHA-256 bucket, salted with `sample_seed`, falls"
        " below it: the same items in every run with the same seed.",
    )
    sample_seed: int = Field(default=0, ge=0, le=SEED_MAX, description="Salt of `sample`.")


class TaskSpec(_Model):
    """A task: what to run on each item, and how to score it."""

    name: str = Field(min_length=1, description="Unique task name.")
    kind: str = Field(
        description="The task's kind (`memgauge schema` lists the installed ones): retrieval, "
        "expected-output, script, kg, extraction (seed 001 cases: the subject extracts facts), "
        "operations (seed 000 cases: the subject decides a merge), embedding (known similar / "
        "different pairs: the subject embeds both texts), or a plug-in's."
    )
    options: dict[str, Any] | None = Field(
        default=None, description="The kind's own settings (a plug-in kind's fields)."
    )
    dataset: str | None = Field(default=None, description="Dataset path, relative to the suite.")
    dataset_kind: Kind | None = Field(
        default=None,
        description="What dataset: is, for a task that reads several kinds (the kinds of "
        "`memgauge validate --kind`): retrieval dataset-dir, bundle, locomo or longmemeval; "
        "probes conversations, locomo or longmemeval; extraction extraction or locomo. "
        "Default: detected from the file's content, its name breaking a tie.",
    )
    probes: ProbeOptions | None = Field(
        default=None,
        description="An expected-output task whose dataset is a conversation dataset (memaudit,"
        " LoCoMo, LongMemEval): its probes are the items and its turns the memories.",
    )
    trace: TraceOptions | None = Field(
        default=None,
        description="An extraction task whose dataset is a production trace (JSONL of "
        "{conversation, existing_memory, output, tags}): its lines with no case_id, judged.",
    )
    limit: int | None = Field(default=None, ge=1, description="Only the first N items.")
    only: ItemFilter | None = Field(
        default=None, description="Only the items of these corpora, or with these ids."
    )
    items: list[TaskItem] | None = Field(
        default=None,
        min_length=1,  # as a dataset file with no records is refused
        description="Items written inline (instead of a dataset file).",
    )
    memories: str | None = Field(
        default=None,
        description="Memories (a retrieval dataset or memories file) ingested into memory "
        "subjects before an expected-output or script task's items.",
    )
    evaluators: list[EvaluatorEntry] = Field(min_length=1, description="Evaluators with weights.")
    subjects: list[str] | None = Field(
        default=None,
        min_length=1,
        description="The subjects that run this task (default: all).",
    )
    k: StrictInt = Field(
        default=10,
        ge=1,
        le=MAX_K,
        description="Hits asked of a memory subject (default: the kind's: 20 for a retrieval "
        "task, as `memgauge evaluate` asks, 10 for the others).",
    )
    timeout: FiniteFloat = Field(default=60.0, gt=0, description="Seconds one item may take.")
    retries: StrictInt = Field(default=0, ge=0, le=10, description="Retries of a failed item.")
    repeat: StrictInt | None = Field(
        default=None,
        ge=1,
        le=MAX_REPEAT,
        description="Times every item goes through each subject (the system's own variance: "
        "the spread per item, pass@k and pass^k, a CI with items as clusters); default: the "
        "suite's `repeat`. A subject's LLM calls on repeats after the first are asked anew, "
        "not answered from the response cache.",
    )
    ingest: bool = Field(
        default=True,
        description="Reset memory subjects and ingest the task's memories before its items; "
        "false searches a live system as it stands.",
    )
    aggregates: list[str | dict[str, Any]] | None = Field(
        default=None,
        description="Run-level aggregates ('name' or {name: {args}}); default by kind: ir for "
        "retrieval, extraction, operations, embedding, audit for probes.",
    )
    targets: dict[str, float | str] | None = Field(
        default=None,
        description="Targets of this task's measures: {MEASURE: VALUE} (at least VALUE) or "
        "{MEASURE: '< 0.2'}; a missed one fails the run (exit 1).",
    )
    optimization: OptimizationSpec | None = Field(
        default=None,
        description="Tune a subject for this task's objective (`memgauge optimize`; seed 004).",
    )

    @field_validator("kind")
    @classmethod
    def _known_kind(cls, value: str) -> str:
        try:
            KINDS.get(value)
        except RegistryError as exc:
            raise ValueError(str(exc)) from None
        return value

    @model_validator(mode="before")
    @classmethod
    def _kind_depth(cls, value: Any) -> Any:
        # the kind's depth when the task gives none (a retrieval task searches as deep as
        # `evaluate` does: AP or R-prec then have one value whichever command computed them)
        if isinstance(value, dict) and "k" not in value and isinstance(value.get("kind"), str):
            try:
                return {**value, "k": kind_of(value["kind"]).default_k}
            except RegistryError:
                return value  # the kind's own check says what is wrong
        return value

    @field_validator("evaluators", mode="before")
    @classmethod
    def _short_forms(cls, value: Any) -> Any:
        return short_forms(value)

    @field_validator("subjects")
    @classmethod
    def _each_subject_once(cls, value: list[str] | None) -> list[str] | None:
        # a subject named twice would run every item twice under one key (the store refused
        # the second row: exit 70)
        given = value or []
        twice = sorted({s for s in given if given.count(s) > 1})
        if twice:
            raise ValueError(f"subject {', '.join(map(repr, twice))} listed more than once")
        return value


def short_forms(value: Any) -> Any:
    """A task's `evaluators:` as entries: `- exact`, `- {contains: {...}}`,
    `- {contains: {...}, weight: 2}` are all entries `{spec, weight?, label?}`."""
    if not isinstance(value, list):
        return value
    out = []
    for item in value:
        if isinstance(item, str):
            out.append({"spec": item})
        elif isinstance(item, dict) and "spec" not in item:
            rest = {k: v for k, v in item.items() if k not in ("weight", "label")}
            entry: dict[str, Any] = {"spec": rest}
            entry.update({k: item[k] for k in ("weight", "label") if k in item})
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
        description="Subject name -> spec {kind: {args}} (`memgauge schema` lists the kinds "
        "and their arguments).",
    )
    tasks: list[TaskSpec] = Field(min_length=1, description="The tasks.")
    concurrency: StrictInt = Field(default=4, ge=1, le=1000, description="Items in flight at once.")
    seed: StrictInt = Field(
        default=0, ge=0, le=SEED_MAX, description="Seed of every random choice (bootstrap CIs)."
    )
    repeat: StrictInt = Field(
        default=1,
        ge=1,
        le=MAX_REPEAT,
        description="Times every item of every task goes through each subject (a task's own "
        "`repeat` wins; `--repeat` wins over both).",
    )
    max_failure_rate: FiniteFloat = Field(
        default=MAX_FAILURE_RATE,
        ge=0,
        le=1,
        description="A subject past this share of its items failed is stopped and the run "
        "fails; the other subjects still run to the end.",
    )
    optimization: OptimizationSpec | None = Field(
        default=None,
        description="Tune a subject for one task's objective (`memgauge optimize`; seed 004).",
    )

    @model_validator(mode="after")
    def _repeat_tasks(self) -> Suite:
        # each task carries the times it is asked: a shard's worker plans a task from its
        # spec alone
        if self.repeat > 1:
            for task in self.tasks:
                if task.repeat is None:
                    task.repeat = self.repeat
        return self


def with_repeat(suite: Suite, times: int | None) -> Suite:
    """`suite` with every task asked `times` times (`--repeat`: the flag wins over the file);
    None: as it is."""
    if times is None:
        return suite
    tasks = [t.model_copy(update={"repeat": times}) for t in suite.tasks]
    return suite.model_copy(update={"repeat": times, "tasks": tasks})


def evaluator_label(entry: EvaluatorEntry, siblings: list[EvaluatorEntry]) -> str:
    """The evaluator's name in results: its label; else for a retrieval measure the measure
    it computes (`nDCG@10`); else its name, with its first argument or a number when the name
    repeats."""
    if entry.label:
        return entry.label
    name = spec_name(entry.spec)
    arg = _first_arg(entry.spec)
    if name == "retrieval":
        # the measure, wherever the spec gives it: a row named after another measure (or
        # after the default one) would put two values under one name
        args = entry.spec.get(name) if isinstance(entry.spec, dict) else None
        given = args.get("measure") if isinstance(args, dict) else arg
        return str(given) if given is not None else RetrievalMeasure.measure
    same = [e for e in siblings if not e.label and spec_name(e.spec) == name]
    if len(same) == 1:
        return name
    if arg is not None and sum(_first_arg(e.spec) == arg for e in same) == 1:
        return f"{name}:{arg}"
    return f"{name}#{next(i for i, e in enumerate(same, 1) if e is entry)}"


def _first_arg(spec: str | dict[str, Any]) -> str | None:
    if isinstance(spec, str) or len(spec) != 1:
        return None
    (value,) = spec.values()
    if isinstance(value, dict):
        value = next(iter(value.values()), None) if len(value) == 1 else None
    return str(value) if isinstance(value, str | int | float) else None


def spec_name(spec: str | dict[str, Any]) -> str:
    return spec if isinstance(spec, str) else str(next(iter(spec), "?"))


def evaluator_kinds(task: TaskSpec) -> list[tuple[str, str]]:
    """(label, registered name) of each of the task's evaluators whose spec names one."""
    kinds = []
    for entry in task.evaluators:
        try:
            kinds.append((evaluator_label(entry, task.evaluators), EVALUATORS.parse(entry.spec)[0]))
        except RegistryError:
            continue  # reported where the evaluator's spec is checked
    return kinds


def task_least_k(task: TaskSpec) -> tuple[int, str] | None:
    """The least `k` `task` accepts and the measure that asks it (see `runs.depth`)."""
    return least_k(task, evaluator_kinds(task))


def resolve_objective(
    objective: str | None, suite: Suite, task: str | None = None
) -> tuple[str, str]:
    """(task name, measure) that `[TASK/]MEASURE` names in `suite`; `task` is the task whose
    block it is (None: the suite's). MEASURE is an evaluator's label or `score` (the task's
    weighted score); without it, the task's first evaluator. ValueError saying what is wrong."""
    names = [t.name for t in suite.tasks]
    given_task, measure = None, objective
    if objective is not None and "/" in objective:
        given_task, measure = objective.split("/", 1)
    if given_task is not None and task is not None and given_task != task:
        raise ValueError(f"a task's block optimizes that task ({task!r}), not {given_task!r}")
    name = given_task or task
    if name is None:
        if len(names) == 1:
            name = names[0]
        else:
            having = [
                t.name
                for t in suite.tasks
                if measure in [evaluator_label(e, t.evaluators) for e in t.evaluators]
            ]
            if len(having) != 1:
                raise ValueError(f"name the task: TASK/MEASURE (the suite has {', '.join(names)})")
            name = having[0]
    found = next((t for t in suite.tasks if t.name == name), None)
    if found is None:
        raise ValueError(f"no task called {name!r}; the suite has {', '.join(names)}")
    labels = [evaluator_label(e, found.evaluators) for e in found.evaluators]
    if not measure:
        return name, labels[0]
    if measure != "score" and measure not in labels:
        raise ValueError(
            f"task {name!r} has no measure {measure!r}; its measures are "
            f"{', '.join(labels)} and score (the weighted score)"
        )
    return name, measure


def tuned_subject(suite: Suite, subject: str | None) -> str:
    """The subject an optimization tunes; ValueError when it is not clear which."""
    if subject is not None:
        if subject not in suite.subjects:
            raise ValueError(
                f"no subject called {subject!r}; the suite has {', '.join(suite.subjects)}"
            )
        return subject
    if len(suite.subjects) != 1:
        raise ValueError(
            f"name the subject being tuned: subject: NAME (the suite has "
            f"{', '.join(suite.subjects)})"
        )
    return next(iter(suite.subjects))


def optimization_problems(suite: Suite) -> list[tuple[tuple[str | int, ...], str]]:
    """(location in the file, message) for each problem of the suite's optimization blocks:
    an unknown subject or task, a measure the task does not have, a search FIELD or text
    field the subject does not have."""
    blocks: list[tuple[tuple[str | int, ...], OptimizationSpec, str | None]] = []
    if suite.optimization is not None:
        blocks.append((("optimization",), suite.optimization, None))
    blocks += [
        (("tasks", i, "optimization"), t.optimization, t.name)
        for i, t in enumerate(suite.tasks)
        if t.optimization is not None
    ]
    out: list[tuple[tuple[str | int, ...], str]] = []
    for at, block, task in blocks:
        try:
            subject = tuned_subject(suite, block.subject)
        except ValueError as exc:
            out.append(((*at, "subject") if block.subject else at, str(exc)))
            continue
        try:
            name, _measure = resolve_objective(block.objective, suite, task)
        except ValueError as exc:
            out.append(((*at, "objective") if block.objective else at, str(exc)))
        else:
            least = task_least_k(next(t for t in suite.tasks if t.name == name))
            found = k_problem(block.space.get("k"), least, f"task {name!r}")
            out += [((*at, "space", "k"), found)] if found else []
        spec = suite.subjects[subject]
        out += [((*at, "space", f), m) for f, m in space_problems(subject, spec, block.space)]
        texts = field_problems(subject, spec, {t: ["text"] for t in block.texts})
        out += [((*at, "texts", block.texts.index(f)), m) for f, m in texts]
        if block.tools is not None:
            out += [
                ((*at, "tools"), m) for _f, m in field_problems(subject, spec, {block.tools: [[]]})
            ]
    return out


def suite_json_schema() -> dict[str, Any]:
    """JSON Schema of suite files, with every registered component's arguments: each subject
    kind, evaluator and aggregate (plug-ins' too) in every form a suite may write it."""
    schema = Suite.model_json_schema()
    defs: dict[str, Any] = schema.setdefault("$defs", {})
    subjects = schema["properties"]["subjects"]
    subjects["additionalProperties"] = {"anyOf": SUBJECTS.spec_schemas(defs)}
    entry = defs["EvaluatorEntry"]
    siblings = {k: v for k, v in entry["properties"].items() if k != "spec"}
    entry["properties"]["spec"] = {
        "description": entry["properties"]["spec"].get("description", ""),
        "anyOf": EVALUATORS.spec_schemas(defs),
    }
    task = defs["TaskSpec"]["properties"]
    kinds = [kind_of(name) for name in KINDS.names()]
    task["kind"]["enum"] = [k.name for k in kinds]
    task["kind"]["description"] = "; ".join(f"{k.name}: {k.description}" for k in kinds)
    # each kind's own `options:`, by its name
    rules = [
        {
            "if": {"properties": {"kind": {"const": k.name}}, "required": ["kind"]},
            "then": {"properties": {"options": k.options.model_json_schema()}},
        }
        for k in kinds
        if k.options is not None
    ]
    if rules:
        defs["TaskSpec"]["allOf"] = rules
    task["evaluators"]["items"] = {
        "anyOf": [*EVALUATORS.spec_schemas(defs, siblings), {"$ref": "#/$defs/EvaluatorEntry"}]
    }
    task["aggregates"]["anyOf"] = [
        {"type": "array", "items": {"anyOf": AGGREGATES.spec_schemas(defs)}},
        {"type": "null"},
    ]
    # a search dimension is also written short: `int:1..10`, `float:0.1..1:log`, `choice:a,b`
    # or a list of choices
    dim = defs["SearchDim"]
    defs["SearchDim"] = {
        "description": dim.get("description", ""),
        "anyOf": [
            {
                "type": "string",
                "pattern": r"^\s*(int|float|choice)\s*:",
                "examples": ["int:10..120", "float:0.25..4:log", "choice:hybrid,lexical"],
            },
            {"type": "array", "minItems": 1},
            {k: v for k, v in dim.items() if k != "description"},
        ],
    }
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "memgauge suite"
    return schema


def subject_file_json_schema() -> dict[str, Any]:
    """JSON Schema of a subject spec file (`-s subject.yaml`): one spec or a list of them."""
    defs: dict[str, Any] = {}
    one = {"anyOf": SUBJECTS.spec_schemas(defs)}
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "memgauge subject spec",
        "anyOf": [one, {"type": "array", "items": one, "minItems": 1}],
        "$defs": defs,
    }


def resolve_agents(
    spec: Any, subjects: Mapping[str, Any]
) -> tuple[Any, list[tuple[tuple[str | int, ...], str]]]:
    """`spec` with every judge's `agent: NAME` (seed 004's `judgeAgentId`) replaced by the spec
    of the suite's subject NAME, at any depth (a panel's members too); and (where, name) of
    each name that names no subject."""
    missing: list[tuple[tuple[str | int, ...], str]] = []

    def walk(node: Any, at: tuple[str | int, ...]) -> Any:
        if isinstance(node, list):
            return [walk(x, (*at, i)) for i, x in enumerate(node)]
        if not isinstance(node, dict):
            return node
        out = {}
        for key, value in node.items():
            if key == "agent" and isinstance(value, str):
                if value in subjects:
                    value = subjects[value]
                else:
                    missing.append(((*at, key), value))
                out[key] = value
            else:
                out[key] = walk(value, (*at, key))
        return out

    return walk(spec, ()), missing


#: what the component checks read of a task: its index, and its evaluators and aggregates,
#: each with its index (those of a task that is not valid: the entries that are)
TaskComponents = tuple[int, Sequence[tuple[int, EvaluatorEntry]], Sequence[tuple[int, Any]]]


def components(i: int, task: TaskSpec) -> TaskComponents:
    """A valid task's evaluators and aggregates, for `spec_problems`."""
    return i, list(enumerate(task.evaluators)), list(enumerate(task.aggregates or []))


def component_problems(suite: Suite, *, skip_kinds: Collection[str] = ()) -> list[SpecProblem]:
    """Every subject, evaluator and aggregate spec of `suite` checked against its registry
    (unknown names and keys, bad values, a `python:` target's kwargs against its signature),
    and every evaluator built once (its own checks); paths from the suite's top. Subjects of
    `skip_kinds` are not checked (the API's stand-ins for live objects)."""
    tasks = [components(i, t) for i, t in enumerate(suite.tasks)]
    return spec_problems(suite.subjects, tasks, skip_kinds)


def spec_problems(
    subjects: Mapping[str, Any] | None,
    tasks: Sequence[TaskComponents],
    skip_kinds: Collection[str] = (),
) -> list[SpecProblem]:
    """`component_problems` of the subjects and of the tasks' components, for a suite file
    that may not be valid (`suite_checks`): with `subjects` None (the suite's are not a
    mapping), a judge's `agent:` is not checked against them."""
    out = [
        p.under("subjects", name)
        for name, spec in (subjects or {}).items()
        if not (isinstance(spec, dict) and len(spec) == 1 and next(iter(spec)) in skip_kinds)
        for p in check_suite_subject(spec)
    ]
    for i, evaluators, aggregates in tasks:
        for j, entry in evaluators:
            found = EVALUATORS.problems(entry.spec)
            if subjects is not None:
                _spec, unknown = resolve_agents(entry.spec, subjects)
                found += [
                    SpecProblem(
                        at,
                        f"no subject called {name!r} to judge with; the suite has "
                        f"{', '.join(subjects)}",
                    )
                    for at, name in unknown
                ]
            if not found:
                try:
                    evaluator_from_spec(entry.spec)
                except UsageError as exc:
                    found = [SpecProblem((), str(exc))]
            out += [p.under("tasks", i, "evaluators", j) for p in found]
        for k, spec in aggregates:
            found = AGGREGATES.problems(spec)
            if not found:
                # its own checks (agent_k, rel_threshold, ...), as a run meets them: `validate`
                # said ok to a suite that `run` refused
                try:
                    AGGREGATES.build(spec)
                except UsageError as exc:
                    found = [SpecProblem((), str(exc))]
            out += [p.under("tasks", i, "aggregates", k) for p in found]
    return out


def suite_name(path: str | Path) -> str:
    """The suite name a suite file gives, read without the checks of the rest of it (its
    subjects importable, its datasets there): what `history` and `gate` need to look its runs
    up, on a machine that may have neither."""
    p, file = existing(path, "suite file")
    raw, node = parse_yaml(decode_text(p.read_bytes(), file), file)
    name = raw.get("name") if isinstance(raw, dict) else None
    if not isinstance(name, str) or not name:
        at = line_of(node, ("name",)) if isinstance(raw, dict) and "name" in raw else None
        raise DataError(Problem(file, at, "name", "a suite file names its suite: name: NAME"))
    return name


def load_suite(path: str | Path) -> Suite:
    """Read and check a suite file (YAML or JSON); DataError lists every problem, in one pass:
    a task with a bad field is left out of the checks that need it valid, and the other tasks,
    the subjects and the evaluators are still checked (`suite_checks`)."""
    from memgauge.runs.suite_checks import suite_problems  # it reads this module's models

    p, file = existing(path, "suite file")
    # YAML is a superset of JSON: one parser gives both kinds of file their line numbers
    raw, node = parse_yaml(decode_text(p.read_bytes(), file), file)
    if not isinstance(raw, dict):
        raise DataError(
            Problem(file, None, None, "a suite file is a mapping with name, subjects, tasks")
        )
    suite, problems = suite_problems(file, raw, node, p.parent)
    if problems or suite is None:
        raise DataError(problems)
    return suite
