"""What the commands that score cases of the write path (`extraction`, `operations`) share:
their `--outputs`, `--output`, `--concurrency` and `--json` options, and how a run of cases ends (its JSON
document written, its tables printed, its exit code)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

import click

from memgauge import api
from memgauge._util.jsonout import dumps_strict
from memgauge.cli._common import (
    OUT_DIR,
    PATH,
    Command,
    apply_options,
    console,
    json_option,
)
from memgauge.cli._evaluation import conclude, running
from memgauge.cli._numbers import integer
from memgauge.cli._options import RunArgs
from memgauge.report import atomic_write_text
from memgauge.report.shapes_terminal import print_sections
from memgauge.report.write_path import extraction_report, operations_report

__all__ = ["case_options", "case_report", "outputs_option", "score_cases"]


def case_report(kind: str) -> str:
    """The report `score_cases` writes into --output (`extraction.json`, `operations.json`),
    as the check of the reports before the run reads it too."""
    return f"{kind}.json"


def outputs_option(about: str) -> Callable[[Command], Command]:
    """`--outputs FILE` (the command's `outputs_path`): what the write path produced in
    production, scored instead of a subject's answers; `about` its help (what a line holds)."""
    return click.option("--outputs", "outputs_path", type=PATH, default=None, help=about)


def case_options(name: str) -> Callable[[Command], Command]:
    """`--output DIR` (where NAME.json, every case, is written), `--concurrency N`, `--json`."""
    options = [
        click.option(
            "--output",
            "out_dir",
            type=OUT_DIR,  # under a file or where one cannot write: refused before the run
            metavar="PATH",  # as its help said before OUT_DIR checked it
            default=None,
            help=f"Write {name}.json (every case) into this directory.",
        ),
        click.option("--concurrency", type=integer(1, 256), default=4),
        json_option("Print the summary as JSON (last line)."),
    ]
    return lambda fn: apply_options(fn, options)


_Kind = tuple[
    Callable[..., Any], Literal["extractor", "decider"], Callable[..., dict[str, Any]], str
]
#: kind -> its suite's builder, its subject's role (the keyword its document names it by), its
#: JSON document, its title
_KINDS: dict[str, _Kind] = {
    "extraction": (api.extraction_suite, "extractor", extraction_report, "Fact extraction"),
    "operations": (api.operations_suite, "decider", operations_report, "Memory operations"),
}


def score_cases(
    kind: Literal["extraction", "operations"],
    spec: str | None,
    outputs: Path | None,
    cases: Path | None,
    *,
    out_dir: Path | None,
    as_json: bool,
    run_args: RunArgs,
    **options: Any,
) -> None:
    """The run of `kind`'s suite of `cases` (`api.extraction_suite` / `api.operations_suite`,
    with `options`), whose subject (the extractor / the decider) is `spec` or the `outputs`
    recorded, run with the command's options (a progress bar when asked); then its document
    written as `out_dir`/KIND.json, its title and aggregates printed (on stderr with --json,
    whose summary, the document without its cases, is the last line of stdout), and the
    run's exit."""
    build, role, document, title = _KINDS[kind]
    subject, label = api.write_path_subject(role, spec, outputs)
    suite = build(cases, subject, max_failure_rate=run_args.failure_rate, **options)
    with running(run_args.progress) as bar:
        report = api.run_suite(suite, options=run_args.options, progress=bar, kind=kind)
    named = cases or outputs
    assert named is not None  # the builder refuses a run of neither
    doc = document(report.run, report.items, cases=str(named), **{role: label})
    if out_dir is not None:
        out_dir.mkdir(parents=True, exist_ok=True)
        atomic_write_text(
            out_dir / case_report(kind), dumps_strict(doc, indent=2, default=str) + "\n"
        )
    out = console(stderr=as_json)
    out.print(f"{title}: {label} on {named.name}", markup=False)
    print_sections(out, report.summary)
    code = conclude(out, report, run_args)
    if as_json:
        click.echo(dumps_strict({k: v for k, v in doc.items() if k != "per_case"}, default=str))
    if code:
        raise click.exceptions.Exit(code)
