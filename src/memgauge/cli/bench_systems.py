"""`memgauge bench systems`: every memory system installed here, and any named, on LoCoMo and
LongMemEval-format data in one recorded run; a ranking per dataset on the terminal, in
summary.md and report.html, and on the viewer's run page."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
from rich.console import Console

from memgauge import api
from memgauge._util.jsonout import dumps_strict
from memgauge.cli._common import EXISTING, FILE, console, distinct_outputs
from memgauge.cli._evaluation import conclude, running
from memgauge.cli._numbers import MAX_K, SEED, integer
from memgauge.cli._options import REPORT_FILES, RunArgs, run_options
from memgauge.cli._shared_options import (
    corpus_limit_options,
    measures_option,
    report_dir_option,
    resamples_option,
)
from memgauge.report import atomic_write_text
from memgauge.report.escape import term
from memgauge.report.retrieval import ranking_json
from memgauge.report.shapes import shapes_of
from memgauge.report.shapes_terminal import print_shape

__all__ = ["print_rankings", "result_doc", "systems"]


@click.command("systems")
@click.option("--locomo", type=EXISTING, default=None, help="LoCoMo (locomo10.json or its format).")
@click.option(
    "--longmemeval",
    type=EXISTING,
    default=None,
    help="LongMemEval data (longmemeval_s/m/oracle.json format; its paper protocol).",
)
@click.option(
    "--dataset",
    "datasets",
    type=EXISTING,
    multiple=True,
    help="Any other retrieval dataset memgauge reads (a directory or bundle), repeatable.",
)
@click.option(
    "-s",
    "--system",
    "systems_named",
    multiple=True,
    help="A system to add to those installed, written as for `evaluate -s`: "
    "python:pkg.mod:factory, http://host:port, mcp:COMMAND, a spec file ...; @LABEL names it.",
)
@click.option(
    "--skip",
    multiple=True,
    metavar="NAME",
    help="Leave out an installed system (lexical, dense, hybrid, mem0, langmem, "
    "mcp-server-memory, agents-session), repeatable.",
)
@click.option(
    "--no-discover", is_flag=True, help="Only the systems named with -s, none found installed."
)
@measures_option(
    f"Measures, repeatable; the first ranks the systems (default: {' '.join(api.BENCH_MEASURES)})."
)
@click.option("--k", "k", type=integer(10, MAX_K), default=api.DEFAULT_DEPTH)
@corpus_limit_options
@resamples_option
@click.option("--seed", type=SEED, default=0)
@click.option("--concurrency", type=integer(1, 1000), default=4)
@report_dir_option("memgauge-bench")
@click.option(
    "--write-suite",
    type=FILE,
    default=None,
    metavar="FILE",
    help="Write the suite this command runs to FILE (datasets relative to it) and stop: "
    "`memgauge run FILE` then gives the same numbers.",
)
@click.option("--quiet", is_flag=True, help="No progress bar.")
@run_options()
def systems(
    systems_named: tuple[str, ...],
    no_discover: bool,
    measures: tuple[str, ...],
    out_dir: Path,
    write_suite: Path | None,
    quiet: bool,
    run_args: RunArgs,
    **settings: Any,
) -> None:
    """Benchmark every memory system installed here, and those named with -s, on each dataset.

    Found when installed and usable: the reference memory (lexical; dense and hybrid with the
    offline embedding model), mem0 (with an OpenAI key or endpoint), LangMem, the MCP memory
    server (through npx) and the OpenAI Agents SDK session; the others are listed as skipped,
    with the line that installs them. Each dataset is one task: every judged query searched
    by every system, recall and nDCG with bootstrap CIs and paired tests against the first
    system, context tokens and latency. A system that stored nothing or returned nothing is
    named as such and not ranked. The run is recorded (`memgauge view`, `runs show ID`).

    Exit codes: 0 done; 1 a --fail-under target missed; 2 bad input; 3 a capability
    unavailable; 4 a system failed (or held nothing) past --max-failure-rate: the others'
    numbers are still written.
    """
    read = {f"--{k}": settings.get(k) for k in ("locomo", "longmemeval")}
    distinct_outputs(
        {"--write-suite": write_suite},
        inputs={
            **{k: (v,) for k, v in read.items() if v},
            # a dataset directory's own files (`--write-suite D/queries.jsonl`)
            "--dataset": [f for d in settings["datasets"] for f in api.dataset_files(d)],
        },
    )
    out = console()
    # settings: --locomo, --longmemeval, --dataset, --skip, --k, --corpus, --limit,
    # --resamples, --seed and --concurrency, as bench_systems_suite_of names them
    given: dict[str, Any] = {
        "systems": systems_named,
        "discover": not no_discover,
        "measures": measures or api.BENCH_MEASURES,
        "max_failure_rate": run_args.failure_rate,
        **settings,
    }
    suite, found = api.bench_systems_suite_of(**given)
    for f in found:
        if f.skipped is not None:
            out.print(term(f"skipped {f.label}: {f.skipped} ({f.install})", "yellow"))
    if write_suite is not None:
        api.write_bench_suite(suite, write_suite)
        out.print(f"wrote {write_suite}: run it with `memgauge run {write_suite}`", highlight=False)
        return
    out.print("benchmarking " + ", ".join(suite.subjects), highlight=False)
    with running(False if quiet else run_args.progress) as bar:
        report = api.run_bench_suite(suite, options=run_args.options, progress=bar)
    bench = api.SystemsBench(report, found)
    print_rankings(report.summary, out)
    _write(bench, out_dir, out)
    code = conclude(out, bench.report, run_args)
    if code:
        raise click.exceptions.Exit(code)


def print_rankings(summary: api.RunSummary, out: Console) -> None:
    """Each task's ranking of systems (`memgauge run` of a bench suite prints them too)."""
    for agg in summary.aggregates:
        if agg.aggregate == "ranking":
            for shape in shapes_of(agg):
                print_shape(out, shape)


def result_doc(bench: api.SystemsBench) -> dict[str, Any]:
    """result.json: the run, each dataset's ranking, and the systems skipped with why."""
    return {
        "run_id": bench.report.run_id,
        "rankings": [ranking_json(r) for r in bench.rankings],
        "skipped": [
            {"system": f.label, "why": f.skipped, "install": f.install} for f in bench.skipped
        ],
    }


def _skipped_markdown(bench: api.SystemsBench) -> str:
    """summary.md's list of the systems found but not usable here, with why and their install
    line (the stored run holds only those that ran)."""
    if not bench.skipped:
        return ""
    lines = [f"- {f.label}: {f.skipped} (`{f.install}`)" for f in bench.skipped]
    return "\n## Skipped systems\n\n" + "\n".join(lines) + "\n"


def _write(bench: api.SystemsBench, out_dir: Path, out: Console) -> None:
    # the report's renderers (templates) only when a report is written
    from memgauge.report.shapes_markdown import run_markdown
    from memgauge.view import render_run_report

    out_dir.mkdir(parents=True, exist_ok=True)
    report = bench.report
    bodies = (
        dumps_strict(result_doc(bench), sort_keys=True, indent=2) + "\n",
        run_markdown(report.run) + _skipped_markdown(bench),
        render_run_report(report.run, report.items),
    )
    paths = dict(zip(REPORT_FILES, bodies, strict=True))  # as the check before the run reads
    for name, body in paths.items():
        atomic_write_text(out_dir / name, body)
    out.print("wrote " + ", ".join(str(out_dir / n) for n in paths), highlight=False)
