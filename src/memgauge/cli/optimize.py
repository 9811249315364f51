"""`memgauge optimize SUITE`, `optimize list`, `optimize show ID [--diff A B]`: seed 004's
optimization loop and its history (the logic is `memgauge.optimize`, through `memgauge.api`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
import yaml
from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table

from memgauge import api
from memgauge._util.files import atomic_write_text
from memgauge._util.jsonout import dumps_strict
from memgauge._util.listing import counted
from memgauge.cli._common import (
    PATH,
    DefaultGroup,
    console,
    json_option,
    refuse_together,
    store_option,
)
from memgauge.cli._evaluation import running
from memgauge.cli._llm import llm_options
from memgauge.cli._numbers import SEED, integer, number
from memgauge.cli._options import junit_option, shard_options
from memgauge.cli._shared_options import progress_option, resume_option
from memgauge.report.fmt import fmt_ci as _ci
from memgauge.report.fmt import fmt_num as _f
from memgauge.report.fmt import fmt_signed
from memgauge.report.junit import optimization_junit, write_junit

__all__ = ["optimize"]

_STRATEGIES = ("greedy", "best-of-n", "annealing", "tpe", "random")


# `optimize SUITE ...` runs a study; `optimize list|show ...` read the history
@click.group(cls=DefaultGroup, default="run")
def optimize() -> None:
    """Tune a suite subject (its configuration, texts, tools or code) for one task's objective.

    \b
    memgauge optimize SUITE [--subject NAME] [--objective [TASK/]MEASURE]
        [--constraint '[TASK/]MEASURE<=N']
        [--space 'FIELD=int:LO..HI' | 'FIELD=float:LO..HI[:log]' | 'FIELD=choice:A,B' ...]
        [--strategy greedy|best-of-n|annealing|tpe|random] [--max-iterations N]
        [--holdout F] [--seed S] [--workers N | --executor dask:local|dask://HOST:PORT]
        [--store STORE] [--json]
    memgauge optimize [SUITE] --resume ID [--workers N | --executor ...]
    memgauge optimize list
    memgauge optimize show ID [--diff A B]
    """


def _params(params: dict[str, Any]) -> str:
    return ", ".join(
        f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in params.items()
    )


def _configuration(entry: dict[str, Any]) -> str:
    """What a baseline or best was run with: its params, and its tuned texts by name (a
    prompts or instructions target has no params: it said "with " and nothing)."""
    said = _params(entry.get("params") or {})
    texts = sorted(entry.get("texts") or {})
    if texts:
        named = f"the {', '.join(texts)} text{'s' if len(texts) > 1 else ''} of step {entry.get('step')}"
        said = f"{said}; {named}" if said else named
    return said or "the suite's own configuration"


def _iterations_table(data: dict[str, Any]) -> Table:
    table = Table(title=f"optimization {data['id']}: {data['objective']} ({data['strategy']})")
    bound = (data.get("constraint") or {}).get("text")
    for col in (
        "step",
        "target",
        "params",
        "score [95% CI]",
        "delta vs best [CI]",
        *([escape(bound)] if bound else []),
        "accepted",
        "run",
        "note",
    ):
        table.add_column(col)
    for it in data["iterations"]:
        accepted = {True: "yes", False: "no", None: "-"}[it.get("accepted")]
        if it["status"] != "completed":
            accepted = it["status"]
        # why a candidate failed, beside it (a refused one has no run to open)
        why = it.get("reason") if it["status"] == "failed" else None
        note = "; ".join(str(x) for x in (it.get("note"), why) if x)
        table.add_row(
            f"{it['step']}.{it['candidate']}" if it.get("candidate") else str(it["step"]),
            str(it.get("target", "")),
            _params(it.get("params") or {}),
            f"{_f(it.get('score'))} {_ci(it.get('ci_low'), it.get('ci_high'))}",
            ""
            if it.get("delta") is None
            else f"{fmt_signed(it['delta'])} {_ci(it.get('delta_ci_low'), it.get('delta_ci_high'))}",
            *([_bound_cell(it)] if bound else []),
            accepted,
            str(it.get("run_id") or ""),
            escape(note),
        )
    return table


def _bound_cell(it: dict[str, Any]) -> str:
    """A candidate's value of the bounded measure, and whether it meets the bound."""
    value, met = it.get("constraint_value"), it.get("constraint_met")
    shown = "n/a" if value is None else f"{value:.4g}"
    return f"{shown} ({'meets' if met else 'misses'})"


def _summary(data: dict[str, Any]) -> list[str]:
    lines = [f"note: {note}" for note in data.get("notices") or []]
    if data.get("split"):
        lines.append(f"split: {data['split']}")
    base, best = data.get("baseline") or {}, data.get("best") or {}
    lines.append(f"baseline: {_f(base.get('score'))} with {_configuration(base)}")
    lines.append(
        f"best: {_f(best.get('score'))} {_ci(best.get('ci_low'), best.get('ci_high'))} with "
        f"{_configuration(best)} (step {best.get('step')}"
        + (f"; {data['best_note']})" if data.get("best_note") else ")")
    )
    bound = data.get("constraint")
    if bound:
        meets = bound.get("best_meets")
        said = {
            True: "the best meets it",
            False: "NO candidate met it: the best shown is the start, which misses it",
            None: "n/a",
        }[meets]
        lines.append(f"constraint: {bound['text']}; {said}")
    hold = data.get("holdout")
    if hold:
        lines.append(
            f"holdout ({counted(hold.get('n') or 0, 'item')}): best {_f(hold.get('best'))} vs baseline "
            f"{_f(hold.get('baseline'))}, paired delta {_f(hold.get('delta'))} "
            f"{_ci(hold.get('ci_low'), hold.get('ci_high'))}"
        )
    else:
        lines.append(f"holdout: none ({data.get('holdout_note') or 'nothing held out'})")
    lines.append(f"status: {data.get('status')}; stopped because: {data.get('stopped_because')}")
    return lines


class _StudyBar:
    """The iteration, the best so far and the ETA, on stderr."""

    def __init__(self) -> None:
        self.progress = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("best {task.fields[best]}"),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            console=console(stderr=True),
        )
        self.task: TaskID | None = None
        self.study_id: str | None = None

    def start(self, study_id: str, total: int, done: int) -> None:
        self.study_id = study_id
        self.progress.start()
        self.task = self.progress.add_task(
            f"optimize {study_id}", total=total, completed=done, best=""
        )

    def step(self, step: int, best: float | None, note: str) -> None:
        assert self.task is not None
        self.progress.update(self.task, completed=step, best=_f(best))

    def stop(self) -> None:
        self.progress.stop()


class _Recorder:
    """No bar: remembers the study's id (for the message after Ctrl-C)."""

    def __init__(self) -> None:
        self.study_id: str | None = None

    def start(self, study_id: str, total: int, done: int) -> None:
        self.study_id = study_id

    def step(self, step: int, best: float | None, note: str) -> None:
        pass

    def stop(self) -> None:
        pass


_STORE = store_option


@optimize.command("run")
@click.argument("suite_file", type=PATH, required=False)
@click.option("--subject", default=None, help="The suite subject being tuned.")
@click.option("--objective", default=None, metavar="[TASK/]MEASURE", help="What is maximized.")
@click.option(
    "--constraint",
    default=None,
    metavar="'[TASK/]MEASURE<=N'",
    help="Maximize subject to a bound on another measure of the task, e.g. "
    "'context_tokens.p50<=2000' or 'latency_ms.p95<250' (OP: <=, <, >=, >).",
)
@click.option(
    "--space",
    multiple=True,
    metavar="FIELD=SPEC",
    help="A search dimension: FIELD=int:LO..HI, FIELD=float:LO..HI[:log], FIELD=choice:A,B; "
    "FIELD is a field of the subject's spec or k. Repeatable; replaces the block's space.",
)
@click.option("--strategy", type=click.Choice(_STRATEGIES), default=None)
@click.option("--max-iterations", type=integer(1, 10_000), default=None)
@click.option(
    "--target-score",
    type=number(0, 100),
    default=None,
    help="Stop at this score (0-1; a value above 1 is read as points out of 100).",
)
@click.option(
    "--improvement-threshold",
    type=number(min=0),
    default=None,
    help="The least paired improvement a step must show (absolute, 0-1).",
)
@click.option(
    "--require-significance",
    is_flag=True,
    default=None,
    help="Accept a step only when its paired 95% CI also excludes 0.",
)
@click.option("--holdout", type=number(0, 1, max_open=True), default=None)
@click.option("--seed", type=SEED, default=None)
@click.option("--candidates", type=integer(2, 64), default=None, help="best-of-n's N.")
@click.option("--patience", type=integer(min=1), default=None)
@click.option("--max-seconds", type=number(min=0, min_open=True), default=None)
@click.option("--max-cost", type=number(min=0, min_open=True), default=None)
@click.option("--concurrency", type=integer(1, 1000), default=None)
@resume_option("Continue this optimization.")
@_STORE
@json_option("Print the study as JSON on the last line.")
@progress_option()
@junit_option
@shard_options
@llm_options
def run(
    suite_file: Path | None,
    store_path: str | None,
    as_json: bool,
    progress: bool | None,
    junit: Path | None,
    resume: str | None,
    space: tuple[str, ...],
    workers: int,
    shard_executor: str | None,
    **flags: Any,
) -> None:
    """Optimize SUITE_FILE's subject; each candidate is a recorded run.

    Exit codes: 0 done (a candidate that failed or was refused is recorded with its reason);
    2 a mistake in the suite, its optimization block or a flag (nothing written), or every
    candidate the search proposed was refused (a bad space); 3 Optuna is not installed
    (pip install 'optuna>=4.0') or an endpoint is unreachable; 4 the starting
    configuration's run failed; 130 interrupted, 143 killed (resume with --resume ID).
    """
    if resume and (space or any(v is not None for v in flags.values())):
        raise click.UsageError(
            "--resume ID continues the study as it was started: give no options (a SUITE only "
            "where its file has moved)"
        )
    with running(False):
        bar: _StudyBar | _Recorder = (
            _StudyBar()
            if (progress if progress is not None else console(stderr=True).is_terminal)
            else _Recorder()
        )
        try:
            data = api.optimize(
                suite_file,
                store=store_path,
                resume=resume,
                space=list(space),
                progress=bar,
                workers=workers,
                executor=shard_executor,
                **{k: v for k, v in flags.items() if v is not None},
            )
        except KeyboardInterrupt:
            bar.stop()
            if bar.study_id:
                click.echo(
                    f"optimization {bar.study_id} interrupted; continue it with "
                    f"`memgauge optimize --resume {bar.study_id}`",
                    err=True,
                )
                # not the candidate's run: "finish it with the same command and --resume RUN"
                # would contradict the line above (and `optimize --resume RUN` finds nothing)
                raise KeyboardInterrupt from None
            raise
        bar.stop()
    out = console(stderr=as_json)
    out.print(_iterations_table(data))
    for line in _summary(data):
        out.print(line)
    out.print(f"see `memgauge optimize show {data['id']}`")
    if junit is not None:
        write_junit(junit, optimization_junit(data, flags.get("target_score")))
    if as_json:
        click.echo(dumps_strict(data, sort_keys=True))


@optimize.command("list")
@_STORE
@click.option("--limit", type=integer(min=1), default=20)
@json_option()
def list_(store_path: str | None, limit: int, as_json: bool) -> None:
    """The latest optimizations, newest first."""
    studies = api.optimizations(store=store_path, limit=limit)
    if as_json:
        keep = (
            "study_id",
            "suite_name",
            "task",
            "measure",
            "subject",
            "strategy",
            "status",
            "stopped_because",
            "created_at",
            "n_iterations",
            "best_step",
            "holdout",
        )
        click.echo(dumps_strict([{k: s.get(k) for k in keep} for s in studies], sort_keys=True))
        return
    table = Table(title="optimizations")
    for col in (
        "id",
        "suite",
        "objective",
        "subject",
        "strategy",
        "iterations",
        "status",
        "stopped because",
    ):
        table.add_column(col)
    for s in studies:
        table.add_row(
            s["study_id"],
            s["suite_name"],
            f"{s['task']}/{s['measure']}",
            s["subject"],
            s["strategy"],
            str(s["n_iterations"]),
            s["status"],
            str(s.get("stopped_because") or ""),
        )
    console().print(table)


@optimize.command("show")
@click.argument("study_id")
@click.option("--diff", nargs=2, default=None, metavar="A B", help="What changed from A to B.")
@click.option(
    "--write-best",
    type=PATH,
    default=None,
    metavar="FILE",
    help="Write the best configuration as a suite file: `memgauge run FILE` gives its score "
    "with the same n (on the tuning split: delete the task's `only:` to run every item).",
)
@_STORE
@json_option()
def show(
    study_id: str,
    diff: tuple[str, str] | None,
    write_best: Path | None,
    store_path: str | None,
    as_json: bool,
) -> None:
    """Every iteration of an optimization and its best; with --diff A B (STEP or
    STEP.CANDIDATE) what changed between two iterations: params, and a unified diff of texts;
    with --write-best FILE the best configuration as a suite."""
    if write_best is not None:
        # each chooses what the command does: one of them would be dropped without a word
        if diff is not None:
            refuse_together("--write-best", "--diff", "give one: a suite file, or a diff")
        if as_json:
            refuse_together("--write-best", "--json", "the best is written to FILE as a suite")
        _write_best(study_id, write_best, store_path)
        return
    if diff is not None:
        changed = api.optimization_diff(study_id, diff[0], diff[1], store=store_path)
        if as_json:
            click.echo(dumps_strict(changed, sort_keys=True))
            return
        out = console()
        table = Table(
            title=f"{changed['a']} -> {changed['b']}: score {_f(changed['score_a'])} -> {_f(changed['score_b'])}"
        )
        for col in ("field", changed["a"], changed["b"]):
            table.add_column(col)
        for p in changed["params"]:
            table.add_row(p["field"], str(p["a"]), str(p["b"]))
        out.print(table)
        for text in changed["texts"].values():
            click.echo(text)
        return
    data = api.optimization(study_id, store=store_path)
    if as_json:
        click.echo(dumps_strict(data, sort_keys=True))
        return
    out = console()
    out.print(_iterations_table(data))
    for line in _summary(data):
        out.print(line)


def _write_best(study_id: str, path: Path, store_path: str | None) -> None:
    """The best configuration of a study as a suite file, and what running it gives."""
    data = api.optimization(study_id, store=store_path)
    suite = api.optimization_best_suite(study_id, store=store_path, write_best=path)
    best = data["best"]
    n = next((len(t["only"].get("items") or []) for t in suite["tasks"] if t.get("only")), None)
    where = f"the {n} items of its tuning split" if n else "its items"
    status = data["status"]
    what = f"the best configuration of optimization {data['id']}"
    if status != "completed":  # a later candidate of the study might have beaten it
        what = f"the best so far of optimization {data['id']}, which is {status}"
    head = (
        f"# {what} (step {best['step']}), which "
        f"scored {_f(best['score'])} on {where}\n"
        "# (the task's `only:`): `memgauge run` of this file gives that number; delete `only:` "
        "to run every item.\n"
        "# Its relative paths are the optimized suite's: keep this file beside it.\n"
    )
    atomic_write_text(path, head + yaml.safe_dump(suite, sort_keys=False, allow_unicode=True))
    if status != "completed":
        resume = (
            f"; `memgauge optimize --resume {data['id']}` finishes it"
            if status == "cancelled"
            else ""
        )
        click.echo(
            f"optimization {data['id']} is {status}: {path} holds its best so far, of the"
            f" candidates it finished{resume}",
            err=True,
        )
    click.echo(
        f"wrote {path}: the best configuration (step {best['step']}, "
        f"{_configuration(best)}), {_f(best['score'])} on {where}; "
        f"`memgauge run {path}` gives that score"
    )
