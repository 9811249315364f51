"""Options that mean the same thing in several commands, declared once so that their type, range
and default cannot drift apart: the directory a run's reports go to, the bootstrap's resamples,
a sequential test's stopping bounds and minimum detectable effect, an A/B test's
--allow-unmeasured, the reviewer of `view --review` and `review`, --resume, --force and
--progress of a run or study, --no-ingest, --corpus and --limit, -m/--measure (each with its command's help), and
the gate's rule (`gate`, `history`, `watch`): its rolling baseline, the
drop it flags, and what decides it (the point estimate or its CI's bound). And numbers of one
kind: a ranking's cutoff, a share sampled, seconds, --min-samples, an SPRT's error rates."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from memgauge._util.numbers import ALPHA, BETA, MDE
from memgauge.cli._common import OUT_DIR, Command, apply_options, choice_option
from memgauge.cli._numbers import MAX_K, MAX_RESAMPLES, MIN_RESAMPLES, N_RESAMPLES, integer, number

if TYPE_CHECKING:
    from click.decorators import FC

__all__ = [
    "allow_unmeasured_option",
    "by_option",
    "corpus_limit_options",
    "depth_option",
    "drop_option",
    "force_option",
    "mde_option",
    "measures_option",
    "min_samples_option",
    "no_ingest_option",
    "progress_option",
    "report_dir_option",
    "resamples_option",
    "resume_option",
    "retry_failed_option",
    "reviewer_option",
    "seconds_option",
    "share_option",
    "sprt_bounds_option",
    "sprt_errors_options",
    "window_option",
]

#: `--resamples N`: the bootstrap's resamples of every CI a retrieval run reports
resamples_option = click.option(
    "--resamples",
    type=integer(MIN_RESAMPLES, MAX_RESAMPLES),
    default=N_RESAMPLES,
    help="Bootstrap resamples.",
)

#: `--allow-unmeasured`: an A/B test may graduate without latency or constitutional data
allow_unmeasured_option = click.option(
    "--allow-unmeasured",
    is_flag=True,
    help="Graduate even with no latency or constitutional data (default: not graduated).",
)


def reviewer_option(about: str | None = None) -> Callable[[FC], FC]:
    """`--reviewer NAME`: a person who labels in `memgauge view --review`; `about` its help."""
    return click.option("--reviewer", default=None, metavar="NAME", help=about)


def report_dir_option(
    default: str, decl: str = "--out", files: str = "result.json, summary.md and report.html"
) -> Callable[[FC], FC]:
    """`decl DIR` (the command's `out_dir`): the directory `files` are written to."""
    return click.option(
        decl,
        "out_dir",
        type=OUT_DIR,
        metavar="PATH",  # as its help said before OUT_DIR checked it
        default=Path(default),
        help=f"Directory for {files}.",
    )


def sprt_bounds_option(decl: str, about: str) -> Callable[[FC], FC]:
    """`decl ville|wald`: a sequential test's stopping bounds; `about` its help."""
    return choice_option(decl, choices=["ville", "wald"], help=about)


def mde_option(decl: str, about: str, **options: Any) -> Callable[[FC], FC]:
    """`decl DELTA`: a test's minimum detectable effect, above 0 (seed 002's 0.05 unless
    `options` say otherwise; none when required: click 8.3 and later take an explicit default,
    even None, as given); `about` its help."""
    settings = options if options.get("required") else {"default": MDE, **options}
    return click.option(decl, type=number(min=0, min_open=True), help=about, **settings)


def by_option(about: str) -> Callable[[FC], FC]:
    """`--by point|ci-upper`: what decides a rule, the point estimate or the bound of its 95%
    CI; `about` its help."""
    return choice_option("--by", choices=["point", "ci-upper"], help=about)


def window_option(unit: str, most: int = 100) -> Callable[[FC], FC]:
    """`--window N`: the earlier `unit` (runs, windows) the rolling baseline averages, up to
    `most`."""
    return click.option(
        "--window",
        type=integer(1, most),
        default=5,
        help=f"Earlier {unit} in the rolling baseline (as many as exist, up to this).",
    )


def drop_option(flagged: str, zero: bool = True) -> Callable[[FC], FC]:
    """`--threshold DROP`: the relative drop below the baseline that is `flagged` (a
    regression, an alert); 0 (any drop) only with `zero`."""
    return click.option(
        "--threshold",
        type=number(0, 1, min_open=not zero),
        default=0.15,
        help=f"The relative drop below the baseline that is {flagged}.",
    )


def resume_option(about: str, metavar: str | None = "ID") -> Callable[[FC], FC]:
    """`--resume ID`: finish (or continue) the stored run of that id; `about` its help."""
    return click.option("--resume", default=None, metavar=metavar, help=about)


def retry_failed_option(fn: FC) -> FC:
    """`--retry-failed`: with --resume, ask the failed items again."""
    return click.option(
        "--retry-failed",
        is_flag=True,
        help="With --resume: run the failed items again too, and the items whose LLM judge "
        "failed on a transient call failure (timeout, 5xx, 429, dropped connection).",
    )(fn)


def force_option(about: str) -> Callable[[FC], FC]:
    """`--force`: with --resume, take over a run another host owns; `about` its help."""
    return click.option("--force", is_flag=True, help=about)


def progress_option(about: str = "Show a progress bar.") -> Callable[[FC], FC]:
    """`--progress/--no-progress`: None when neither is given (the command decides by its
    terminal); `about` its help."""
    return click.option("--progress/--no-progress", default=None, help=about)


def no_ingest_option(about: str) -> Callable[[FC], FC]:
    """`--no-ingest`: search the system as it stands, neither reset nor given the dataset's
    memories; `about` its help."""
    return click.option("--no-ingest", is_flag=True, help=about)


def measures_option(about: str) -> Callable[[FC], FC]:
    """`-m/--measure NAME` (the command's `measures`), repeatable: the measures a retrieval
    command reports; `about` its help (the names it reads, its default)."""
    return click.option("-m", "--measure", "measures", multiple=True, help=about)


def corpus_limit_options(f: FC) -> FC:
    """`--corpus ID` (repeatable, the command's `corpora`) and `--limit N`: a smaller retrieval
    run, only those corpora's queries (and memories), then only the first N judged queries."""
    corpus = click.option(
        "--corpus",
        "corpora",
        multiple=True,
        metavar="ID",
        help="Only this corpus (a LoCoMo conversation, e.g. conv-26; a LongMemEval question), "
        "repeatable: its judged queries, and only its memories ingested. A smaller run.",
    )
    limit = click.option(
        "--limit",
        type=integer(1),
        default=None,
        help="Only the first N judged queries (of --corpus's, when given).",
    )
    return corpus(limit(f))


def depth_option(*decls: str, default: int | None, about: str) -> Callable[[FC], FC]:
    """`decls N`: a cutoff in a ranking, 1 to `MAX_K`; `about` its help."""
    return click.option(*decls, type=integer(1, MAX_K), default=default, help=about)


def share_option(*decls: str, about: str, default: float | None = 1.0) -> Callable[[FC], FC]:
    """`decls SHARE` in (0, 1]: the searches, queries or lines taken, each picked by a hash of
    its id; `about` its help."""
    return fraction_option(*decls, default=default, about=about, above_zero=True)


def fraction_option(
    *decls: str, default: float | None, about: str | None, above_zero: bool = False
) -> Callable[[FC], FC]:
    """`decls SHARE` in [0, 1] (in (0, 1] when `above_zero`): a threshold or a rate; `about`
    its help. The range is the one the command checks, so --help tells it."""
    kind = number(0, 1, min_open=above_zero)
    return click.option(*decls, type=kind, default=default, help=about)


#: the longest wait or interval an option takes (about 31 years): past it, time.sleep and
#: datetime's timedelta overflow (`watch --interval 1e308` or `--settle 1e20` was exit 70)
SECONDS_MAX = 10**9


def seconds_option(*decls: str, default: float, about: str) -> Callable[[FC], FC]:
    """`decls SECONDS`, 0 to SECONDS_MAX: a wait or an interval; `about` its help."""
    return click.option(*decls, type=number(0, SECONDS_MAX), default=default, help=about)


def min_samples_option(least: int, default: int | None, about: str | None) -> Callable[[FC], FC]:
    """`--min-samples N`, at least `least`: the observations before a decision; `about` its help."""
    return click.option("--min-samples", type=integer(least), default=default, help=about)


def sprt_errors_options(
    min_samples: int, show_default: bool = True
) -> Callable[[Command], Command]:
    """`--alpha`, `--beta` (an SPRT's type I and II errors; their defaults hidden without
    `show_default`) and `--min-samples` (`min_samples` by default)."""
    rate, hidden = number(0, 1, min_open=True, max_open=True), None if show_default else False
    options = [
        click.option("--alpha", type=rate, default=ALPHA, show_default=hidden),
        click.option("--beta", type=rate, default=BETA, show_default=hidden),
        min_samples_option(2, min_samples, None),
    ]
    return lambda fn: apply_options(fn, options)
