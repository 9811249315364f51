"""`memgauge gate` and `memgauge history`: a suite's runs over time, rolling baselines and
regression gates for CI (seed 000)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
from rich.table import Table

from memgauge._util.files import atomic_write_text
from memgauge._util.home import memgauge_home
from memgauge._util.jsonout import dumps_strict
from memgauge.cli._common import console, open_suite_store, resolve_run_id
from memgauge.cli._systems import one_spec
from memgauge.errors import UsageError
from memgauge.report.escape import md_text
from memgauge.runs.suite import EvaluatorEntry, evaluator_label, load_suite
from memgauge.store.suite_runs import SuiteRunStore
from memgauge.subjects.specs import build_subject
from memgauge.track.gate import GateConfig, GateResult, evaluate_gate, metric_key, sparkline
from memgauge.track.learning import failure_memory, relevant_learnings

__all__ = ["gate", "history", "learnings"]


def _kinds(run: dict[str, Any]) -> dict[tuple[str, str], str]:
    """(task, evaluator label) -> evaluator name, from the suite the run recorded."""
    out: dict[tuple[str, str], str] = {}
    for task in (run.get("suite") or {}).get("tasks", []):
        parsed = [EvaluatorEntry.model_validate(e) for e in task.get("evaluators", [])]
        for e in parsed:
            spec = e.spec
            name = spec if isinstance(spec, str) else next(iter(spec))
            out[(task["name"], evaluator_label(e, parsed))] = str(name)
    return out


def _current(store: SuiteRunStore, target: str) -> dict[str, Any]:
    path = Path(target)
    if path.suffix.lower() in (".yaml", ".yml", ".json") and path.exists():
        name = load_suite(path).name
        runs = store.suite_history(name)
        if not runs:
            raise UsageError(f"no completed run of suite {name!r} in {store.path}: run it first")
        return runs[-1]
    run = store.get_run(resolve_run_id(store, target))
    assert run is not None
    if run["status"] != "completed" or not run.get("summary"):
        raise UsageError(
            f"run {run['run_id']} is {run['status']}: only a completed run can be gated"
        )
    return run


def _learnings_path(path: Path | None) -> Path:
    return path or memgauge_home() / "learnings.db"


def learnings_memory(path: Path | None, into: str | None = None) -> Any:
    """The memory that holds failure memories: the subject `into` names (any `memgauge
    evaluate -s` value: a spec file, http://..., mcp:..., python:...), else the reference
    memory (lexical) in `path` (default MEMGAUGE_HOME/learnings.db)."""
    if into is not None:
        return build_subject(one_spec(into, "--learn-into"))
    where = _learnings_path(path)
    where.parent.mkdir(parents=True, exist_ok=True)
    return build_subject(
        {"reference": {"mode": "lexical", "path": str(where), "namespace": "learnings"}}
    )


learn_into_option = click.option(
    "--learn-into",
    "learn_into",
    default=None,
    metavar="MEMORY",
    help="Keep failure memories in this memory subject instead (a spec file, http://...,"
    " mcp:..., python:...; as `memgauge evaluate -s`).",
)


def _score(rec: dict[str, Any], evaluator: str) -> dict[str, Any] | None:
    return next((sc for sc in rec["scores"] if sc["evaluator"] == evaluator), None)


def failing_items(
    records: list[dict[str, Any]], evaluator: str, n: int = 3
) -> list[dict[str, Any]]:
    """Up to `n` items the evaluator failed, worst first: judged not passed, or errored, or
    (for an evaluator with no pass/fail) scored below its mean over the run."""
    scored: list[tuple[dict[str, Any], dict[str, Any]]] = []
    for r in records:
        sc = _score(r, evaluator)
        if sc is not None:
            scored.append((r, sc))
    values = [sc["value"] for _r, sc in scored if sc["value"] is not None]
    mean = sum(values) / len(values) if values else None

    def failed(sc: dict[str, Any]) -> bool:
        if sc["error"] is not None or sc["value"] is None:
            return True
        if sc["passed"] is not None:
            return not sc["passed"]
        return mean is not None and sc["value"] < mean

    bad = [(r, sc) for r, sc in scored if failed(sc)]
    bad.sort(key=lambda pair: -1.0 if pair[1]["value"] is None else float(pair[1]["value"]))
    return [r for r, _sc in bad[:n]]


def _learn(
    store: SuiteRunStore,
    run: dict[str, Any],
    result: GateResult,
    path: Path | None,
    into: str | None,
) -> int:
    regressed = [c for c in result.checks if c.regressed]
    if not regressed:
        return 0
    rows = {metric_key(r): r for r in run["summary"].get("evaluators", [])}
    export = list(store.iter_export(run["run_id"]))
    memories = []
    for c in regressed:
        mine = [r for r in export if (r["subject"], r["task"]) == (c.subject, c.task)]
        failing = failing_items(mine, c.evaluator)
        row = rows.get((c.subject, c.task, c.evaluator), {})
        context = (
            f"{c.evaluator}: mean {_fmt(row.get('mean'))} over {row.get('n_scored')} items, "
            f"{row.get('n_failed')} failed; pass rate {_fmt(row.get('pass_rate'))}"
        )
        memories.append(
            failure_memory(
                c,
                suite=result.suite,
                run_id=result.run_id,
                scorer_context=context,
                failing=[
                    {
                        **f,
                        "input": (f["input"] or {}).get("text")
                        if isinstance(f["input"], dict)
                        else f["input"],
                    }
                    for f in failing
                ],
            )
        )
    memory = learnings_memory(path, into)
    try:
        known = {m.id for m in memory.dump()}
        fresh = [m for m in memories if m.id not in known]
        if fresh:
            memory.ingest(fresh)
    finally:
        memory.close()
    return len(fresh)


def _fmt(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.3f}"


def markdown(result: GateResult) -> str:
    """A summary fit for a pull-request comment (names escaped: `report.escape`)."""
    icon = {"pass": "✅", "warn": "⚠️", "fail": "❌"}[result.status]
    lines = [
        f"### {icon} memgauge gate: {result.status} ({result.phase} phase)",
        "",
        f"Suite {md_text(result.suite)}, run `{result.run_id}`, against the rolling "
        f"baseline of up to {len(result.checks[0].history) if result.checks else 0} earlier runs "
        f"({result.n_history} in history).",
        "",
        "| subject | task | evaluator | baseline | current (95% CI) | change | threshold | |",
        "|---|---|---|---:|---:|---:|---:|---|",
    ]
    for c in result.checks:
        ci = f" [{c.ci[0]:.3f}, {c.ci[1]:.3f}]" if c.ci else ""
        change = "" if c.drop is None else f"{-c.drop:+.1%}"
        mark = "regression" if c.regressed else ("noise" if c.within_ci else "")
        lines.append(
            f"| {md_text(c.subject)} | {md_text(c.task)} | {md_text(c.evaluator)} "
            f"| {_fmt(c.baseline)} | {_fmt(c.current)}{ci} | {change} | {c.threshold:.0%} "
            f"| {mark} |"
        )
    notes = [
        f"- {md_text(c.evaluator)} ({md_text(c.subject)} / {md_text(c.task)}): {md_text(c.note)}"
        for c in result.checks
        if c.regressed or c.within_ci
    ]
    if notes:
        lines += ["", *notes]
    if result.phase == "bootstrap":
        lines += ["", "The baseline is still forming: the gate passes until enough runs exist."]
    return "\n".join(lines) + "\n"


@click.command()
@click.argument("target", metavar="SUITE_OR_RUN")
@click.option(
    "--store", "store_path", type=click.Path(dir_okay=False, path_type=Path), default=None
)
@click.option(
    "--window",
    type=click.IntRange(1, 100),
    default=5,
    show_default=True,
    help="Runs in the rolling baseline.",
)
@click.option(
    "--threshold",
    type=click.FloatRange(0, 1),
    default=0.15,
    show_default=True,
    help="Relative drop that is a regression.",
)
@click.option("--exact-threshold", type=click.FloatRange(0, 1), default=0.10, show_default=True)
@click.option("--judge-threshold", type=click.FloatRange(0, 1), default=0.20, show_default=True)
@click.option(
    "--threshold-for",
    "overrides",
    multiple=True,
    metavar="EVALUATOR=DROP",
    help="Per-evaluator threshold, repeatable.",
)
@click.option(
    "--phase",
    type=click.Choice(["auto", "bootstrap", "stabilization", "production"]),
    default="auto",
    show_default=True,
)
@click.option("--min-history", type=click.IntRange(0), default=3, show_default=True)
@click.option("--production-after", type=click.IntRange(0), default=10, show_default=True)
@click.option(
    "--markdown",
    "md_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Write the pull-request summary here.",
)
@click.option("--json", "as_json", is_flag=True)
@click.option(
    "--learn/--no-learn",
    default=True,
    show_default=True,
    help="Store each regression as a failure memory (eval-to-learning).",
)
@click.option(
    "--learnings",
    "learnings_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Where failure memories go (default: MEMGAUGE_HOME/learnings.db).",
)
@learn_into_option
def gate(
    target: str,
    store_path: Path | None,
    window: int,
    threshold: float,
    exact_threshold: float,
    judge_threshold: float,
    overrides: tuple[str, ...],
    phase: str,
    min_history: int,
    production_after: int,
    md_path: Path | None,
    as_json: bool,
    learn: bool,
    learnings_path: Path | None,
    learn_into: str | None,
) -> None:
    """Gate a run (an id, or a suite file: its latest completed run) against the rolling
    baseline of the suite's earlier runs. Exit 1 on a regression in the production phase."""
    parsed: dict[str, float] = {}
    for item in overrides:
        name, sep, value = item.partition("=")
        try:
            parsed[name] = float(value)
        except ValueError:
            sep = ""
        if not sep or not name:
            raise UsageError(f"--threshold-for {item!r}: write EVALUATOR=DROP, e.g. rubric=0.25")
        if not 0 < parsed[name] <= 1:
            raise UsageError(
                f"--threshold-for {item!r}: the drop is a fraction of the baseline, in (0, 1]"
                " (0.25 is a 25% drop)"
            )
    cfg = GateConfig(
        window=window,
        threshold=threshold,
        exact_threshold=exact_threshold,
        judge_threshold=judge_threshold,
        overrides=parsed,
        min_history=min_history,
        production_after=production_after,
        phase=None if phase == "auto" else phase,
    )
    with open_suite_store(store_path, read_only=True) as store:
        run = _current(store, target)
        history = [
            r for r in store.suite_history(run["suite_name"]) if r["created_at"] < run["created_at"]
        ]
        result = evaluate_gate({**run, "suite": run["suite_name"]}, history, cfg, _kinds(run))
        learned = _learn(store, run, result, learnings_path, learn_into) if learn else 0
    if learned:
        click.echo(f"stored {learned} failure memories for future prompts", err=True)
    text = markdown(result)
    if md_path is not None:
        atomic_write_text(md_path, text)
    if as_json:
        click.echo(dumps_strict(result.as_dict()))
    else:
        click.echo(text, nl=False)
    if result.status == "fail":
        raise click.exceptions.Exit(1)


@click.command()
@click.argument("suite_name", metavar="SUITE")
@click.option(
    "--store", "store_path", type=click.Path(dir_okay=False, path_type=Path), default=None
)
@click.option("--last", type=click.IntRange(1, 1000), default=20, show_default=True)
@click.option("--window", type=click.IntRange(1, 100), default=5, show_default=True)
@click.option("--json", "as_json", is_flag=True)
def history(
    suite_name: str, store_path: Path | None, last: int, window: int, as_json: bool
) -> None:
    """A suite's completed runs over time (SUITE: its name or its file): per metric a sparkline
    of the last runs, the latest value and the rolling baseline before it."""
    path = Path(suite_name)
    if path.suffix.lower() in (".yaml", ".yml", ".json") and path.exists():
        suite_name = load_suite(path).name
    with open_suite_store(store_path, read_only=True) as store:
        runs = store.suite_history(suite_name)[-last:]
    if not runs:
        raise UsageError(f"no completed run of suite {suite_name!r}; see `memgauge runs list`")
    keys: list[tuple[str, str, str]] = []
    for run in runs:
        for row in run["summary"].get("evaluators", []):
            if metric_key(row) not in keys:
                keys.append(metric_key(row))
    series: dict[tuple[str, str, str], list[float | None]] = {k: [] for k in keys}
    for run in runs:
        means = {metric_key(r): r.get("mean") for r in run["summary"].get("evaluators", [])}
        for k in keys:
            series[k].append(means.get(k))
    if as_json:
        click.echo(
            dumps_strict(
                {
                    "suite": suite_name,
                    "runs": [{"run_id": r["run_id"], "created_at": r["created_at"]} for r in runs],
                    "metrics": [
                        {"subject": k[0], "task": k[1], "evaluator": k[2], "values": series[k]}
                        for k in keys
                    ],
                }
            )
        )
        return
    table = Table(
        title=f"History of {suite_name}: {len(runs)} completed runs, oldest first",
        title_justify="left",
    )
    for col in (
        "subject",
        "task",
        "evaluator",
        "trend",
        "latest",
        f"baseline (last {window} before)",
    ):
        table.add_column(col, justify="right" if col in ("latest",) else "left")
    for k in keys:
        values = series[k]
        # as the gate: the last `window` runs, averaged over those that measured it
        prior = [v for v in values[:-1][-window:] if v is not None]
        table.add_row(
            *k,
            sparkline(values),
            _fmt(values[-1]),
            _fmt(sum(prior) / len(prior) if prior else None),
        )
    console().print(table)


@click.group()
def learnings() -> None:
    """Failure memories stored by `memgauge gate` (eval-to-learning)."""


@learnings.command()
@click.argument("text")
@click.option("-k", "k", type=click.IntRange(1, 50), default=5, show_default=True)
@click.option(
    "--budget",
    type=click.IntRange(20),
    default=500,
    show_default=True,
    help="Tokens, about 4 characters each.",
)
@click.option(
    "--learnings", "learnings_path", type=click.Path(dir_okay=False, path_type=Path), default=None
)
@learn_into_option
def query(
    text: str, k: int, budget: int, learnings_path: Path | None, learn_into: str | None
) -> None:
    """The past failures most relevant to TEXT, ready to paste into a prompt."""
    if learn_into is None:
        where = _learnings_path(learnings_path)
        if not where.is_file():
            click.echo(f"no stored failure is relevant (no failure has been stored in {where})")
            return
    memory = learnings_memory(learnings_path, learn_into)
    try:
        found = relevant_learnings(memory, text, k=k, token_budget=budget)
    finally:
        memory.close()
    click.echo(found or "no stored failure is relevant")
