"""JUnit XML for CI systems (GitHub, GitLab, Jenkins, Azure all read it): one test case per
target of a run, per measure a gate compared, per candidate of an optimization.

The shape is the common subset of the JUnit schemas CI servers accept (the Ant / Jenkins
`junit-10.xsd`, which the tests validate every document against, and GitLab's reader):

```xml
<testsuites name=... tests=N failures=F errors=E time=T>
  <testsuite name=... tests=N failures=F errors=E skipped=S time=T timestamp=ISO>
    <properties><property name=... value=.../></properties>
    <testcase classname=SUBJECT.TASK name=MEASURE time=0>
      <failure type=... message=...>value vs threshold</failure>   (or <error>, <skipped>)
    </testcase>
    <system-out>Warnings: ...</system-out>   (a gate's warnings, where it has any)
  </testsuite>
</testsuites>
```

The run's own case carries, as its text (`system-out` when it passed), what every aggregate of
the run shows: the results table and each aggregate's shapes, the Markdown report's tables as plain text
(`run_markdown(run, plain_cell)`), so a CI page shows the numbers behind each verdict.

A missed target is a `failure` (the system under test fell short), a subject that could not run
or a run that stopped on too many failed items is an `error` (nothing was measured). Only the
targets that apply are cases (`runs.outcome.applicable_targets`): a target that is only shown
(seed 002's agent-memory targets, a seed's with `--no-targets`) decides nothing, so it is not a
test the user set. Which targets count as missed is the exit code's own rule
(`runs.outcome.missed_targets`), so the XML and the exit code never disagree.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from memgauge._util.files import atomic_write_text
from memgauge._util.listing import counted
from memgauge.data.records import MeasureValue, TargetCheck, utc_now
from memgauge.report.escape import plain_cell, xml_text
from memgauge.report.fmt import fallbacks_text, fmt_target_value
from memgauge.report.shapes_markdown import run_markdown
from memgauge.runs.engine import RunReport
from memgauge.runs.outcome import applicable_targets, missed_targets
from memgauge.track.gate import GateResult

__all__ = [
    "Case",
    "gate_cases",
    "gate_junit",
    "junit_xml",
    "optimization_cases",
    "optimization_junit",
    "run_cases",
    "run_junit",
    "target_line",
    "write_junit",
]

Outcome = Literal["passed", "failure", "error", "skipped"]


@dataclass(frozen=True)
class Case:
    """One JUnit test case: `outcome` other than passed carries `message` (one line) and
    `detail` (the element's text)."""

    classname: str
    name: str
    outcome: Outcome = "passed"
    message: str = ""
    detail: str = ""
    kind: str = ""


def _f(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.4g}"


def target_line(t: TargetCheck, measures: Iterable[MeasureValue] = ()) -> str:
    """`value 0.42 (CI bound 0.5), threshold >= 0.6 by point [--fail-under]`; an n/a with its
    measure's count among the run's `measures` (`value n/a (0 scored, 2 failed), ...`)."""
    bound = "" if t.bound is None else f" (CI bound {_f(t.bound)})"
    return f"value {fmt_target_value(t, measures)}{bound}, threshold {t.op} {t.target:g} by {t.by} [{t.source}]"


def run_cases(report: RunReport, optional: Collection[str] = ()) -> list[Case]:
    """A run's cases: one for the run itself (did it complete, were its subjects available;
    its text is the run's results and shapes), one per subject that could not run (skipped when the caller named it `optional`, as the
    exit code ignores it), one per target that applies."""
    run = report.run
    cases: list[Case] = []
    outcome: Outcome = "passed"
    summary = report.summary
    message = f"{run.status}: {summary.n_completed} of {counted(summary.n_items, 'item')} scored"
    if run.status != "completed":
        outcome, message = "error", f"run {run.status}: {run.reason or 'no reason recorded'}"
    cases.append(
        Case(
            "memgauge.run",
            run.suite_name,
            outcome,
            message if outcome != "passed" else "",
            f"{message}\n\n{run_markdown(run, plain_cell)}",
            kind="run",
        )
    )
    for name, why in report.unavailable.items():
        if name in optional:
            cases.append(Case(name, "available", "skipped", f"optional, not run: {why}"))
        else:
            cases.append(Case(name, "available", "error", why, why, kind="unavailable"))
    missed = {id(t) for t in missed_targets(report)}
    measures = summary.measures()
    for t in applicable_targets(report):
        line = target_line(t, measures)
        outcome = "failure" if id(t) in missed else "passed"
        cases.append(
            Case(
                f"{t.subject}.{t.task}",
                f"{t.measure} {t.op} {t.target:g}",
                outcome,
                line if outcome != "passed" else "",
                line,
                kind="target missed" if outcome == "failure" else "",
            )
        )
    return cases


def gate_cases(result: GateResult) -> list[Case]:
    """A gate's cases: one per measure compared with its baseline; a regression of a measure
    that decides fails, one of an information measure is skipped (shown, not enforced: as a
    seed's target that is only shown)."""
    cases = []
    for c in result.checks:
        change = f", {c.change}" if c.change else ""
        ci = "" if c.ci is None else f" [{c.ci[0]:.4g}, {c.ci[1]:.4g}]"
        role = "decides" if c.deciding else "information, does not decide the gate"
        line = (
            f"current {_f(c.current)}{ci}{fallbacks_text(c.n_fallback)} vs baseline {_f(c.baseline)}{change}, "
            f"threshold {c.threshold:.0%} worse (by {result.by}; {role})"
        )
        outcome: Outcome = "passed"
        if c.regressed:
            outcome = "failure"
        elif c.reached and not c.deciding:
            outcome = "skipped"
        cases.append(
            Case(
                f"{c.subject}.{c.task}",
                c.evaluator,
                outcome,
                line if outcome != "passed" else "",
                f"{line}. {c.note}".strip(),
                kind="regression" if c.regressed else "",
            )
        )
    if not cases:
        cases.append(Case("memgauge.gate", result.suite, detail="no measure to compare"))
    return cases


def optimization_cases(data: Mapping[str, Any], target_score: float | None = None) -> list[Case]:
    """An optimization's cases: one per candidate run (a run that did not complete is an
    error), and with a target score, whether the best candidate reached it."""
    cases: list[Case] = []
    for it in data.get("iterations") or []:
        step = f"{it['step']}.{it['candidate']}" if it.get("candidate") else str(it["step"])
        score = f"score {_f(it.get('score'))} (run {it.get('run_id') or '-'})"
        ok = it.get("status") == "completed"
        cases.append(
            Case(
                f"memgauge.optimize.{data.get('id', '')}",
                f"step {step}",
                "passed" if ok else "error",
                "" if ok else f"candidate {it.get('status')}: {score}",
                score,
            )
        )
    goal = target_score
    if goal is not None:
        best = (data.get("best") or {}).get("score")
        reached = best is not None and best >= goal
        line = f"best {_f(best)}, target score {goal:g}"
        cases.append(
            Case(
                f"memgauge.optimize.{data.get('id', '')}",
                "target score",
                "passed" if reached else "failure",
                "" if reached else line,
                line,
                kind="target missed",
            )
        )
    return cases


def junit_xml(
    name: str,
    cases: Sequence[Case],
    *,
    timestamp: str,
    seconds: float = 0.0,
    properties: Mapping[str, str] | None = None,
    output: str = "",
) -> str:
    """The JUnit XML document of one test suite; `properties` (run id, store, ...) go on the
    suite, where every schema allows them, and `output` (the gate's warnings) as its
    `system-out`, after its cases."""
    counts = {o: sum(c.outcome == o for c in cases) for o in ("failure", "error", "skipped")}
    totals = {
        "tests": str(len(cases)),
        "failures": str(counts["failure"]),
        "errors": str(counts["error"]),
        "skipped": str(counts["skipped"]),
        "time": f"{seconds:.3f}",
    }
    x = xml_text  # every name, message and text: a subject's error may hold any character
    # junit-10.xsd (Jenkins' xUnit) allows no `skipped` on testsuites: the suite says it
    overall = {k: v for k, v in totals.items() if k != "skipped"}
    root = ET.Element("testsuites", {"name": "memgauge", **overall})
    suite = ET.SubElement(root, "testsuite", {"name": x(name), **totals, "timestamp": timestamp})
    if properties:
        props = ET.SubElement(suite, "properties")
        for key, value in properties.items():
            ET.SubElement(props, "property", {"name": x(key), "value": x(value)})
    for case in cases:
        el = ET.SubElement(
            suite, "testcase", {"classname": x(case.classname), "name": x(case.name), "time": "0"}
        )
        if case.outcome == "skipped":
            ET.SubElement(el, "skipped", {"message": x(case.message)})
        elif case.outcome != "passed":
            attrs = {"message": x(case.message), "type": x(case.kind or case.outcome)}
            ET.SubElement(el, case.outcome, attrs).text = x(case.detail) or None
        elif case.detail:
            ET.SubElement(el, "system-out").text = x(case.detail)
    if output:
        ET.SubElement(suite, "system-out").text = x(output)
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"


def _seconds(start: str | None, end: str | None) -> float:
    if not start or not end:
        return 0.0
    return max(0.0, (datetime.fromisoformat(end) - datetime.fromisoformat(start)).total_seconds())


def run_junit(report: RunReport, optional: Collection[str] = ()) -> str:
    """The JUnit XML of an evaluation run (`run`, `evaluate`, `audit`, ...)."""
    run = report.run
    return junit_xml(
        f"memgauge {run.kind} {run.suite_name}",
        run_cases(report, optional),
        timestamp=run.started_at or run.created_at,
        seconds=_seconds(run.started_at, run.finished_at),
        properties={"run_id": run.run_id, "status": run.status, "kind": run.kind},
    )


def gate_junit(result: GateResult) -> str:
    """The JUnit XML of a gate."""
    return junit_xml(
        f"memgauge gate {result.suite}",
        gate_cases(result),
        timestamp=utc_now(),
        properties={
            "run_id": result.run_id,
            "status": result.status,
            "baseline_runs": " ".join(result.baseline_runs),
        },
        # the warnings the terminal, --markdown, --json and the viewer give
        output="\n".join(["Warnings:", *(f"- {w}" for w in result.warnings)])
        if result.warnings
        else "",
    )


def optimization_junit(data: Mapping[str, Any], target_score: float | None = None) -> str:
    """The JUnit XML of an optimization (`data` as `memgauge optimize --json` prints it)."""
    return junit_xml(
        f"memgauge optimize {data.get('id', '')}",
        optimization_cases(data, target_score),
        timestamp=utc_now(),
        properties={"optimization": str(data.get("id", "")), "status": str(data.get("status"))},
    )


def write_junit(path: Path, text: str) -> None:
    """Write a document to `path` whole or not at all (a CI step never reads half a file)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, text)
