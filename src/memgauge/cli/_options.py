"""The options every evaluating command shares (`run`, `evaluate`, `demo`, `extraction`,
`operations`, `audit`), declared once, and what they say made into one object: `RunArgs`, whose
`options` (an `api.RunConfig`) goes to the API as it is."""

from __future__ import annotations

import functools
from collections.abc import Callable, Collection
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click

from memgauge import api
from memgauge._util.numbers import MAX_FAILURE_RATE, MAX_REPEAT
from memgauge.cli._common import (
    OUT_FILE,
    Command,
    apply_options,
    distinct_outputs,
    outputs_not_read,
    refuse_unwritable,
    store_option,
)
from memgauge.cli._llm import llm_options
from memgauge.cli._numbers import integer
from memgauge.cli._shared_options import (
    by_option,
    force_option,
    fraction_option,
    progress_option,
    resume_option,
    retry_failed_option,
)

__all__ = [
    "POOLED_JUDGMENTS",
    "REPORT_FILES",
    "RunArgs",
    "junit_option",
    "run_options",
    "shard_options",
    "write_reports_files",
]

#: `--junit FILE`, on every command that evaluates or gates: its verdicts as JUnit XML
junit_option = click.option(
    "--junit",
    "junit",
    type=OUT_FILE,
    default=None,
    metavar="FILE",
    help="Also write the verdicts as JUnit XML (one test case per target or gated measure) "
    "for a CI server's test report.",
)


def _store_options(max_failure_rate: float) -> list[Callable[[Command], Command]]:
    """`--store`, `--no-store`, `--resume ID`, `--retry-failed`, `--force`,
    `--max-failure-rate` (its help stating the command's default), `--progress`."""
    return [
        store_option,
        click.option(
            "--no-store", is_flag=True, help="Keep the run in memory only (it cannot be resumed)."
        ),
        resume_option("Finish this run (after kill -9 or Ctrl-C): the same command and options."),
        retry_failed_option,
        force_option("With --resume: take over a run whose process is on another host."),
        fraction_option(
            "--max-failure-rate",
            default=None,
            about="The run fails (exit 4) when a subject fails more than this share of "
            f"its items (default {max_failure_rate:g}); the other subjects still run to the end.",
        ),
        progress_option(),
    ]


#: `--fail-under MEASURE=VALUE` (repeatable), `--by point|ci-upper`, `--junit FILE`
_TARGET_OPTIONS = [
    click.option(
        "--fail-under",
        "fail_under",
        multiple=True,
        metavar="[SUBJECT/][TASK/]MEASURE=VALUE",
        help="Fail (exit 1) when MEASURE is below VALUE, e.g. hybrid/recall/Recall@10=0.6; "
        "repeatable. A measure the run does not have is an error (exit 2).",
    ),
    by_option(
        "How targets are decided: the point estimate, or only when the whole 95% CI "
        "misses (ci-upper).",
    ),
    junit_option,
]

#: `--workers N`, `--executor process|dask:local|dask://HOST:PORT`: run in shards
_SHARD_OPTIONS = [
    click.option(
        "--workers",
        type=integer(1, 1024),
        default=1,
        help="Run subjects in shards (subject x task x corpora) on N worker processes; "
        "--concurrency items stay in flight in each. Results equal a serial run's.",
    ),
    click.option(
        "--executor",
        "shard_executor",
        default=None,
        metavar="process|dask:local|dask://HOST:PORT",
        help="Where shards run (default with --workers > 1: a process pool). Dask needs "
        "pip install 'memgauge[dask]'.",
    ),
]


def shard_options(fn: Command) -> Command:
    """`--workers N`, `--executor ...`, for a command that shards what is not a run
    (`optimize`)."""
    return apply_options(fn, _SHARD_OPTIONS)


@dataclass(frozen=True)
class RunArgs:
    """What an evaluating command's shared options say: the run's options for the API, and what
    the command does itself around the run (its progress bar, JUnit file, and the builders'
    --max-failure-rate)."""

    options: api.RunConfig
    progress: bool | None = None
    junit: Path | None = None
    max_failure_rate: float | None = None

    @property
    def failure_rate(self) -> float:
        """--max-failure-rate, else the suite builders' default."""
        return MAX_FAILURE_RATE if self.max_failure_rate is None else self.max_failure_rate

    def where(self) -> str | None:
        """The store the run is recorded in, as printed; None for a run kept in memory."""
        store = self.options.store
        if store is False:
            return None
        assert store is None or isinstance(store, str)  # the CLI's --store is text
        return str(api.results_store(store))


#: the files a command writes into its --out directory, from the options it is given (a
#: directory it writes its files into ends in /)
Reports = Callable[[dict[str, Any]], Collection[str]]


#: the reports `write_reports` writes into the --out directory (evaluate, demo, bench systems)
REPORT_FILES = ("result.json", "summary.md", "report.html")
#: and, where the relevance judge graded a pool (evaluate's --pool-judge), its grades
POOLED_JUDGMENTS = "bootstrapped_judgments.jsonl"


def write_reports_files(given: dict[str, Any]) -> Collection[str]:
    """What `write_reports` writes into the --out directory (evaluate, demo, bench systems)."""
    return (*REPORT_FILES, *([POOLED_JUDGMENTS] if given.get("pool_judge") else []))


def _run_args(given: dict[str, Any], reports: Reports) -> RunArgs:
    """The shared options taken out of a command's keywords (a command without one gets its
    default)."""
    store, no_store, resume = (
        given.pop("store_path"),
        given.pop("no_store", False),
        given.pop("resume"),
    )
    if no_store and resume:
        raise click.UsageError("--resume needs a stored run; drop --no-store")
    if no_store and store is not None:
        raise click.UsageError(f"--store {store} and --no-store contradict each other: give one")
    retry_failed, force = given.pop("retry_failed", False), given.pop("force")
    # each only changes how a run is resumed: without --resume it would be ignored
    for flag, flag_given in (("--retry-failed", retry_failed), ("--force", force)):
        if flag_given and not resume:
            raise click.UsageError(f"{flag} needs --resume ID")
    options = api.RunConfig(
        store=False if no_store else store,
        resume=resume,
        retry_failed=retry_failed,
        force=force,
        fail_under=given.pop("fail_under"),
        by=given.pop("by"),
        seed_targets=not given.pop("no_targets", False),
        workers=given.pop("workers", 1),
        executor=given.pop("shard_executor", None),
        repeat=given.pop("repeat", None),
    )
    junit = given.pop("junit")
    _junit_apart(junit, given.get("out_dir"), reports(given))
    _reports_apart(given.get("out_dir"), reports(given), given.get("outputs_path"))
    distinct_outputs({"--junit": junit}, store=False if no_store else store)
    if junit is not None:
        refuse_unwritable("--junit", junit)
    return RunArgs(options, given.pop("progress"), junit, given.pop("max_failure_rate", None))


def _reports_apart(out_dir: Path | None, reports: Collection[str], outputs: Path | None) -> None:
    """A UsageError when a report the command writes into its --out directory is a file it
    reads (`extraction d/extraction.json --output d`: the cases replaced once the run ended;
    `--outputs`, production's outputs, alike)."""
    if out_dir is None:
        return
    ctx = click.get_current_context()
    flag = next((p.opts[0] for p in ctx.command.params if p.name == "out_dir"), "--out")
    outputs_not_read(
        [(flag, out_dir / name.rstrip("/")) for name in reports],
        {"--outputs": (outputs,)} if outputs is not None else None,
        advice="give {flag} another directory",
    )
    # a report file that cannot be written fails before the run, not after (a name ending in
    # / is a directory the command writes its files into: demo's dataset/)
    for name in (n for n in reports if not n.endswith("/")):
        refuse_unwritable(flag, out_dir, out_dir / name)


def _junit_apart(junit: Path | None, out_dir: Path | None, reports: Collection[str]) -> None:
    """A UsageError when --junit names the command's --out directory or a report written
    there: the XML replaced result.json without a word (exit 0), or the run ended in exit 2
    once its reports were written (a file cannot replace the directory)."""
    if junit is None or out_dir is None:
        return
    where, out = junit.resolve(), out_dir.resolve()
    if where == out or (where.parent == out and where.name in {r.rstrip("/") for r in reports}):
        raise click.UsageError(
            f"--junit {junit}: the command's reports go there ({out_dir}); give the JUnit XML"
            " a file of its own, e.g. --junit junit.xml"
        )


#: `--repeat N`: every item through each subject N times (the system's own variance)
_REPEAT_OPTION = click.option(
    "--repeat",
    "repeat",
    type=integer(1, MAX_REPEAT),
    default=None,
    metavar="N",
    help="Put every item through each subject N times (over the suite's `repeat:`): the "
    "spread per item, pass@k and pass^k, a CI with items as clusters, and nondeterministic "
    "subjects flagged. Their LLM calls on repeats after the first skip the response cache.",
)


def run_options(
    *,
    store: bool = True,
    shards: bool = True,
    llm: bool = True,
    no_targets: str | None = None,
    repeat: bool = False,
    reports: Reports = write_reports_files,
    max_failure_rate: float = MAX_FAILURE_RATE,
) -> Callable[[Command], Command]:
    """The shared options, after the command's own: `--store` ... `--progress` (without
    `store`, the command declares `--store`, `--resume`, `--force` and `--progress` itself,
    with help of its own), `--fail-under`, `--by`, `--junit`, `--workers` and `--executor` (with
    `shards`), `--no-targets` (when `no_targets` gives its help), `--repeat N` (with `repeat`),
    the LLM cache's (with `llm`). `reports`: the files the command writes into its --out
    directory (a --junit naming one of them is refused). `max_failure_rate`: the command's
    own default, which --max-failure-rate's help states.
    The command is called with what they say as `run_args`, and without them."""

    def decorate(fn: Command) -> Command:
        @functools.wraps(fn)
        def command(*args: Any, **kwargs: Any) -> None:
            fn(*args, run_args=_run_args(kwargs, reports), **kwargs)

        options: list[Callable[[Command], Command]] = [
            *(_store_options(max_failure_rate) if store else []),
            *_TARGET_OPTIONS,
            *(_SHARD_OPTIONS if shards else []),
        ]
        if no_targets is not None:
            options.append(click.option("--no-targets", is_flag=True, help=no_targets))
        if repeat:
            options.append(_REPEAT_OPTION)
        return apply_options(llm_options(command) if llm else command, options)

    return decorate
