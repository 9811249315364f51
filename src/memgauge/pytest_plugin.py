"""memgauge in pytest: a `memgauge_subject` fixture and `assert_*` helpers that evaluate a
memory system inside a test and fail it, with a table, when a measure misses its threshold.

```python
from memgauge.pytest_plugin import assert_retrieval

@pytest.mark.memgauge_subject("hybrid")
def test_search_quality(memgauge_subject):
    assert_retrieval("data/demo", memgauge_subject, {"Recall@5": 0.8, "nDCG@10": 0.6})
```

Each helper is one call of `memgauge.api` (the one engine), so the run is recorded in the
results store like any command's (`--memgauge-store`, the `memgauge_store` ini key,
`MEMGAUGE_STORE`, else `MEMGAUGE_HOME/results.db`) and `memgauge runs show ID`, `gate` and
`history` read it. A threshold is a `--fail-under`: `{"[SUBJECT/][TASK/]MEASURE": VALUE}`,
VALUE a minimum (`0.8`) or `"OP NUMBER"` (`"< 0.2"` for a rate of bad events), decided by the
one rule of `aggregates.targets`: the point estimate by default, and with `by="ci-upper"` a
minimum is missed only when the 95% CI's upper bound is below it. A measure the run does not
have is a `UsageError` listing the ones it has. The test fails (without a traceback into
memgauge) whenever the command would exit non-zero: a threshold missed, a subject unavailable,
too many failed items.

The plug-in is loaded through the `pytest11` entry point; it imports only `memgauge.api`,
whose names load on first use, so it costs other projects' pytest start-up next to nothing.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import pytest

from memgauge import api
from memgauge.errors import UsageError
from memgauge.report.fmt import fmt_ci, fmt_num, fmt_target_value

if TYPE_CHECKING:
    from memgauge.api import Requirement, RunReport

__all__ = [
    "Subject",
    "as_subject",
    "assert_audit",
    "assert_extraction",
    "assert_operations",
    "assert_retrieval",
    "assert_suite",
    "failure_table",
    "memgauge_subject",
]

Thresholds = Mapping[str, float | str]
By = Literal["point", "ci-upper"]

#: the store the running pytest session names (`--memgauge-store` / ini), innermost last: a
#: pytest run inside a test (pytester) pushes its own and pops it when it ends
_STORES: list[str] = []


@dataclass(frozen=True)
class Subject:
    """A subject under test: a spec `{kind: {args}}` checked against the subject registry
    (recorded with the run), or a live object (recorded by name).

    Attributes:
        name: its label in the run and in failure tables.
        spec: the spec, when it was given as one.
        obj: the live object, when it was given as one.
        text: the spec string as given (`"hybrid"`, `"python:pkg.mod:make"`), if it was one.
    """

    name: str
    spec: dict[str, Any] | None = None
    obj: object | None = None
    text: str | None = None

    def systems(self) -> dict[str, object]:
        """`{name: spec or object}`, as `memgauge.api.evaluate` takes it."""
        return {self.name: self.spec if self.spec is not None else self.obj}


def as_subject(value: str | Mapping[str, Any] | object, *, name: str | None = None) -> Subject:
    """A `Subject` from an `evaluate -s` string (`"lexical"`, `"hybrid:k_rrf=10"`,
    `"python:pkg.mod:make"`, `"http://..."`, a YAML/JSON spec file), a spec mapping
    (`{"reference": {"mode": "dense"}}`) or a live object with `reset`/`ingest`/`search` (or
    `extract`, `decide`, `answer`). Specs are checked now: a typo fails the fixture, naming
    the key and the kinds that exist."""
    if isinstance(value, Subject):
        return value
    if isinstance(value, str):
        specs = api.parse_system(value, "memgauge_subject")
        if len(specs) != 1:
            raise UsageError(f"memgauge_subject {value!r}: give one subject, not {len(specs)}")
        ((label, spec),) = specs
        return Subject(name or label, spec=spec, text=value)
    if isinstance(value, Mapping):
        if len(value) != 1:
            raise UsageError(
                f"memgauge_subject {dict(value)!r}: a spec is {{kind: {{args}}}}, one kind"
            )
        ((kind, args),) = value.items()
        if not isinstance(args, Mapping | None):
            # dict() of a string or a list raised ValueError, naming neither the spec nor the form
            raise UsageError(
                f"memgauge_subject {dict(value)!r}: a spec is {{kind: {{args}}}}; give {kind}'s "
                f"arguments as a mapping, not {type(args).__name__}"
            )
        spec = {str(kind): dict(args or {})}
        problems = api.check_subject(spec)
        if problems:
            raise UsageError(f"memgauge_subject {spec!r}: " + "; ".join(str(p) for p in problems))
        return Subject(name or next(iter(spec)), spec=spec)
    return Subject(name or str(getattr(value, "name", type(value).__name__)), obj=value)


# --- pytest hooks and the fixture ------------------------------------------------------------


def pytest_addoption(parser: pytest.Parser) -> None:
    """`--memgauge-store`, and the ini keys `memgauge_store` and `memgauge_subject`."""
    group = parser.getgroup("memgauge")
    group.addoption(
        "--memgauge-store",
        dest="memgauge_store",
        default=None,
        metavar="STORE",
        help="Results store of the runs assert_* record (a path, sqlite:///PATH, "
        "postgresql://...; default: MEMGAUGE_STORE, else MEMGAUGE_HOME/results.db).",
    )
    parser.addini("memgauge_store", "Results store of memgauge's runs (as --memgauge-store).")
    parser.addini(
        "memgauge_subject", "The memgauge_subject fixture's default spec (an evaluate -s string)."
    )


def pytest_configure(config: pytest.Config) -> None:
    """Declare the marker; remember the session's store."""
    config.addinivalue_line(
        "markers",
        "memgauge_subject(spec, name=None): the subject the memgauge_subject fixture gives "
        "(an evaluate -s string, a spec mapping or a live object)",
    )
    option = config.getoption("memgauge_store", None)
    where = option or config.getini("memgauge_store")
    # kept before it is checked: pytest unconfigures a session whose configure failed, and
    # the pop there must take this session's entry, not the enclosing one's (pytester)
    _STORES.append(str(where or ""))
    if where:
        # checked once here, as pytest's usage error: else every test calling an assert_*
        # helper failed on its own, naming an option (--store) that pytest does not have
        try:
            api.store_url(str(where), name="--memgauge-store" if option else "memgauge_store")
        except UsageError as exc:
            raise pytest.UsageError(str(exc)) from None


def pytest_unconfigure(config: pytest.Config) -> None:
    """Forget the session's store."""
    if _STORES:
        _STORES.pop()


@pytest.fixture
def memgauge_subject(request: pytest.FixtureRequest) -> Subject:
    """The subject under test, from (first that is given) `parametrize(..., indirect=True)`,
    `@pytest.mark.memgauge_subject(SPEC, name=...)`, or the `memgauge_subject` ini key."""
    value: object = getattr(request, "param", None)
    name = None
    if value is None:
        marker = request.node.get_closest_marker("memgauge_subject")
        if marker is not None and marker.args:
            value, name = marker.args[0], marker.kwargs.get("name")
    if value is None:
        value = request.config.getini("memgauge_subject") or None
    if value is None:
        raise UsageError(
            "memgauge_subject: no subject given; mark the test "
            "@pytest.mark.memgauge_subject('hybrid'), parametrize the fixture with "
            "indirect=True, or set memgauge_subject in the ini file"
        )
    return as_subject(value, name=name)


# --- the assertions --------------------------------------------------------------------------


def _store(store: api.StoreArg) -> api.StoreArg:
    if store is not None:
        return store
    return (_STORES[-1] if _STORES else "") or None


def _fail_under(thresholds: Thresholds | None) -> list[Requirement]:
    if thresholds is None:
        return []
    if not isinstance(thresholds, Mapping):
        raise UsageError(
            f"thresholds: give a mapping of measure to value, e.g. {{'Recall@5': 0.8}}, "
            f"not {type(thresholds).__name__}"
        )
    # each read apart, as given: joined as "MEASURE=VALUE", {"Recall@5": "=0.5"} was a
    # measure called "Recall@5=" (the first '=' before a target closes the name)
    return [
        api.requirement(str(measure), value, where=f"threshold {{{measure!r}: {value!r}}}")
        for measure, value in thresholds.items()
    ]


def failure_table(report: RunReport) -> str:
    """The targets of a run beside their measures: measure, value, 95% CI, threshold, the
    number the rule compared, and the verdict; plain text, aligned, fit for pytest's output."""
    measures = report.summary.measures()
    ci = {(m.subject, m.task, m.name): (m.ci_low, m.ci_high) for m in measures}
    missed = {id(t) for t in api.missed_targets(report)}
    rows = [("measure", "value", "95% CI", "threshold", "compared", "")]
    for t in report.summary.targets:
        if not t.enforced:
            continue
        low, high = ci.get((t.subject, t.task, t.measure), (None, None))
        interval = fmt_ci(low, high, 4)
        compared = t.value if t.bound is None else t.bound
        rows.append(
            (
                f"{t.subject}/{t.task}/{t.measure}",
                fmt_num(t.value, 4) if t.value is not None else fmt_target_value(t, measures),
                interval,
                f"{t.op} {t.target:g}",
                f"{fmt_num(compared, 4)} ({t.by})",
                api.target_verdict(t, missed),
            )
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return "\n".join(
        "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
        for row in rows
    )


def _conclude(what: str, report: RunReport, store: api.StoreArg) -> RunReport:
    """Fail the test when the command would exit non-zero, saying why and where the run is."""
    code = api.exit_code(report)
    if code == 0:
        return report
    if store is False:
        where = "memory only"
    elif store is None or isinstance(store, str | Path):
        where = str(api.results_store(store))
    else:
        where = type(store).__name__
    lines = [f"{what}: run {report.run_id} ({report.status}), recorded in {where}"]
    missed = api.missed_targets(report)
    if missed:
        lines.append(f"{len(missed)} threshold(s) missed:")
    for name, why in report.unavailable.items():
        lines.append(f"subject {name} unavailable: {why}")
    if report.judge_unreachable:
        lines.append(
            f"an LLM judge's endpoint could not be reached: {report.judge_error or 'no call connected'}"
        )
    if report.status != "completed" and report.reason:
        lines.append(f"run {report.status}: {report.reason}")
    if report.summary.targets:
        lines += ["", failure_table(report)]
    lines += ["", f"see `memgauge runs show {report.run_id}`"]
    pytest.fail("\n".join(lines), pytrace=False)


def assert_retrieval(
    dataset: str | Path | Any,
    subject: Subject | str | Mapping[str, Any] | object,
    thresholds: Thresholds | None,
    *,
    by: By = "point",
    store: api.StoreArg = None,
    **options: Any,
) -> RunReport:
    """Evaluate memory search on `dataset` (a dataset directory, bundle file or
    `RetrievalDataset`) for one subject, and fail the test when a threshold is missed.
    `options` go to `memgauge.api.evaluate` (`k`, `measures`, `rel_threshold`, ...); measures
    named in `thresholds` are evaluated whether or not `measures` lists them."""
    sub = as_subject(subject)
    where = _store(store)
    # checked before it is read: None was "'NoneType' object is not iterable"
    fail_under = _fail_under(thresholds)
    measures = list(options.pop("measures", api.DEFAULT_MEASURES))
    for key in thresholds or {}:
        name = str(key).rsplit("/", 1)[-1]
        if name not in measures and api.is_measure(name):
            measures.append(name)
    report = api.evaluate(
        dataset,
        sub.systems(),
        measures=measures,
        fail_under=fail_under,
        by=by,
        store=where,
        **options,
    )
    return _conclude("assert_retrieval", report, where)


def assert_suite(
    suite: str | Path | Any,
    thresholds: Thresholds | None = None,
    *,
    by: By = "point",
    store: api.StoreArg = None,
    subjects: Mapping[str, object] | None = None,
    **options: Any,
) -> RunReport:
    """Run a suite (a file or a `Suite`) and fail the test when a threshold, or one of the
    suite's own `targets:`, is missed; `subjects`: live objects for the suite's `{live:
    {name}}` subjects. `options` go to `memgauge.api.run_suite`."""
    where = _store(store)
    report = api.run_suite(
        suite,
        fail_under=_fail_under(thresholds),
        by=by,
        store=where,
        subjects=subjects,
        **options,
    )
    return _conclude("assert_suite", report, where)


def _path(what: str, name: str, value: object) -> Path:
    """`value` as a path; a TypeError naming the helper and its argument when it is none
    (pathlib's "expected str, bytes or os.PathLike object" named neither)."""
    if not isinstance(value, str | os.PathLike):
        raise TypeError(f"{what}: {name} takes a path, got {type(value).__name__} {value!r}")
    return Path(value)


def _write_path(
    role: Literal["extractor", "decider"], value: object
) -> tuple[dict[str, Any], dict[str, object]]:
    """The suite subject of an extractor / decider, and the live objects it stands for."""
    if value is None:
        # read as a live object named 'NoneType': "python subject 'NoneType': write it as
        # package.module:factory"
        raise UsageError(
            f"{role}: give a spec string or mapping, a live object or the Path of recorded"
            " outputs, not None"
        )
    if isinstance(value, Subject):
        if value.obj is not None:
            return {"live": {"name": value.name}}, {value.name: value.obj}
        value = value.text if value.text is not None else value.spec
    # a message names the helper's argument (`extractor=PATH`), not --extractor or --outputs
    keywords = (role, role)
    if isinstance(value, Path):
        return api.write_path_subject(role, None, value, keywords=keywords)[0], {}
    if isinstance(value, Mapping):
        value = json.dumps(dict(value))  # YAML flow text, as --extractor takes it
    if isinstance(value, str):
        return api.write_path_subject(role, value, None, keywords=keywords)[0], {}
    name = str(getattr(value, "name", type(value).__name__))
    return {"live": {"name": name}}, {name: value}


def assert_extraction(
    cases: str | Path,
    extractor: object,
    thresholds: Thresholds,
    *,
    by: By = "point",
    store: api.StoreArg = None,
    **options: Any,
) -> RunReport:
    """Score fact extraction on `cases` (seed 001) and fail the test when a threshold is
    missed. `extractor`: a spec (`"{llm: {model: m}}"`, `{"python": {"target": ...}}`), a
    live object with `extract(conversation, existing_memory)`, or the `Path` of recorded
    outputs. The seed's own targets are shown in the run, not enforced: `thresholds` decide.
    `options` go to `memgauge.api.extraction_suite` (`match`, `threshold`, `limit`, ...)."""
    spec, live = _write_path("extractor", extractor)
    suite = api.extraction_suite(_path("assert_extraction", "cases", cases), spec, **options)
    return _run_built("assert_extraction", suite, "extraction", thresholds, by, store, live)


def assert_operations(
    cases: str | Path,
    decider: object,
    thresholds: Thresholds,
    *,
    by: By = "point",
    store: api.StoreArg = None,
    **options: Any,
) -> RunReport:
    """Score merge decisions on `cases` (seed 000's tiers) and fail the test when a threshold
    is missed. `decider`: a spec (`"{heuristic: {}}"`, `"{llm: {model: m}}"`), a live object
    with `decide(...)`, or the `Path` of recorded outputs. `options` go to
    `memgauge.api.operations_suite` (`judge`, `judge_model`, ...)."""
    spec, live = _write_path("decider", decider)
    suite = api.operations_suite(_path("assert_operations", "cases", cases), spec, **options)
    return _run_built("assert_operations", suite, "operations", thresholds, by, store, live)


def assert_audit(
    dataset: str | Path,
    subject: Subject | str | None,
    thresholds: Thresholds,
    *,
    by: By = "point",
    store: api.StoreArg = None,
    **options: Any,
) -> RunReport:
    """Audit an agent's memory on `dataset` (memaudit, LoCoMo, LongMemEval; seed 003) and fail
    the test when a threshold (`recall_accuracy`, `hallucinated_memory_rate: "< 0.1"`, ...)
    is missed. `subject`: the memory the agent reads (a spec string or a `Subject` made from
    one), or None for `options`' agent (`agent`, `model`; with neither, the offline extractive
    baseline). `options` go to `memgauge.api.plan_audit`."""
    text = subject.text if isinstance(subject, Subject) else subject
    if subject is not None and not isinstance(text, str):
        raise UsageError(
            "assert_audit: give the agent's memory as a spec string ('hybrid', "
            "'python:pkg.mod:make', a spec file), or None"
        )
    plan = api.plan_audit(_path("assert_audit", "dataset", dataset), subject=text, **options)
    return _run_built("assert_audit", plan.suite, "audit", thresholds, by, store, {})


def _run_built(
    what: str,
    suite: Any,
    kind: str,
    thresholds: Thresholds,
    by: By,
    store: api.StoreArg,
    live: Mapping[str, object],
) -> RunReport:
    where = _store(store)
    report = api.run_suite(
        suite,
        kind=kind,
        fail_under=_fail_under(thresholds),
        by=by,
        store=where,
        seed_targets=False,
        subjects=live,
    )
    return _conclude(what, report, where)
