"""`memgauge evaluate`: evaluate memory systems on a retrieval dataset."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import click

from memgauge import api
from memgauge._util.listing import counted
from memgauge.cli._common import EXISTING, OUT_FILE, console, distinct_outputs
from memgauge.cli._conventions import gain_option, no_relevant_option, rel_threshold_option
from memgauge.cli._evaluation import conclude, running
from memgauge.cli._kind import kind_option
from memgauge.cli._numbers import SEED, integer
from memgauge.cli._options import RunArgs, run_options
from memgauge.cli._reports import report_retrieval
from memgauge.cli._shared_options import (
    corpus_limit_options,
    depth_option,
    mde_option,
    measures_option,
    no_ingest_option,
    report_dir_option,
    resamples_option,
    share_option,
    sprt_bounds_option,
)

__all__ = ["evaluate"]


@click.command()
@click.argument("dataset", type=EXISTING)
@click.option(
    "-s",
    "--system",
    "systems",
    multiple=True,
    default=("lexical", "hybrid"),
    help="A system to evaluate, repeatable: lexical | dense | hybrid | "
    "reference:mode=hybrid,k_rrf=60,candidates=50,session_boost=0.2 | "
    "hybrid:fusion=combmnz,normalization=z-score (fusion: rrf, combsum, combmnz, wsum, isr, "
    "log_isr, rbc) | a YAML/JSON spec file. "
    "Add @LABEL to name it. The first that runs is the baseline of the comparisons.",
)
@measures_option(f"Measures, repeatable (default: {' '.join(api.DEFAULT_MEASURES)}).")
@depth_option(
    "--k",
    "k",
    default=api.DEFAULT_DEPTH,
    about="Hits requested per query (a retrieval task's default too).",
)
@rel_threshold_option()
@gain_option
@no_relevant_option
@depth_option("--agent-k", default=api.DEFAULT_AGENT_K, about="Cutoff of the agent-memory metrics.")
@resamples_option
@corpus_limit_options
@depth_option(
    "--pool-depth",
    default=None,
    about="Grade unjudged memories in any system's top N (depth pooling, seed 002 3.4).",
)
@click.option(
    "--pool-grade",
    type=integer(0, 3),
    default=1,
    help="The grade pooled memories get (without --pool-judge).",
)
@click.option(
    "--pool-judge",
    default=None,
    metavar="SPEC",
    help="Grade the pool's unjudged memories with the relevance judge instead: 'relevance' or"
    " '{relevance: {model: m}}'; recorded as bootstrapped judgments (needs --pool-depth).",
)
@sprt_bounds_option(
    "--sprt-bounds",
    "The stopping bounds of each comparison's sequential test (SPRT on RR@10): ville,"
    " log(1/alpha) and log(beta); wald, seed 002's log((1-beta)/alpha) and log(beta/(1-alpha)).",
)
@mde_option("--sprt-delta", "The sequential test's minimum detectable effect (seed 002: 0.05 MRR).")
@share_option(
    "--sampling-rate",
    default=None,
    about="Ask only this share of the judged queries (seed 002's samplingRate: 1.0 all, 0.1 a"
    " tenth), picked by the hash of each query id salted with --seed: the same sample each"
    " run.",
)
@click.option(
    "--feature-id",
    default=None,
    metavar="ID",
    help="The feature this run evaluates (seed 002's featureId): recorded with the run and in"
    " its eval_results rows.",
)
@click.option(
    "--run-type",
    type=click.Choice(["full", "shadow", "regression", "ab_test"]),
    default=None,
    help="Seed 002's run type, recorded likewise (default full).",
)
@click.option("--seed", type=SEED, default=0, help="Random seed.")
@report_dir_option("memgauge-report")
@no_ingest_option(
    "Search each system as it stands, never resetting it or giving it the dataset's"
    " memories: for a live system that holds them already (see `memgauge logs export"
    " --dump-from`)."
)
@click.option(
    "--run-out",
    type=OUT_FILE,
    default=None,
    help="Also write each system's ranking as a TREC run file (`qid Q0 docid rank score tag`,"
    " tag = the system's label) for trec_eval; with several systems, one file each, named"
    " FILE with `.LABEL` before its suffix. Scores are made from the rank, so every tool reads"
    " exactly the ranking memgauge scored.",
)
@click.option(
    "--run-json",
    type=OUT_FILE,
    default=None,
    help="Also write each system's ranking as JSON {qid: {docid: score}}, the dict ranx"
    " (Run.from_dict), ir_measures and pytrec_eval read; named like --run-out.",
)
@click.option("--concurrency", type=integer(1, 1000), default=4)
@click.option("--quiet", is_flag=True, help="No progress bar.")
@kind_option("retrieval", "DATASET")
@run_options(repeat=True)
def evaluate(
    dataset: Path,
    systems: tuple[str, ...],
    measures: tuple[str, ...],
    out_dir: Path,
    no_ingest: bool,
    run_out: Path | None,
    run_json: Path | None,
    quiet: bool,
    kind: str | None,
    run_args: RunArgs,
    **settings: Any,
) -> None:
    """Evaluate memory search on DATASET (a dataset directory or bundle, a LoCoMo or LongMemEval file).

    A LoCoMo or LongMemEval file is read as `memgauge import` reads it by default. Ingests the memories into each system, runs every judged query, and reports IR metrics with
    bootstrap CIs, agent-memory metrics, breakdowns by category and intent, and paired
    significance tests against the first system (Holm-corrected across measures). Writes
    result.json, summary.md and a self-contained report.html to --out; the run is recorded in
    the results store like any suite run (`memgauge runs show ID`, `gate`, `history`).

    Exit codes: 0 done; 1 a --fail-under target missed; 2 bad input; 3 a system or capability
    unavailable; 4 more searches failed than --max-failure-rate allows (a dead system).
    """
    store = run_args.options.store  # False with --no-store: no file of the store's to keep
    distinct_outputs(
        {"--out": out_dir, "--run-out": run_out, "--run-json": run_json, "--junit": run_args.junit},
        store=store if store is None or isinstance(store, str) else False,
        # a dataset directory's own files: `--run-json DATASET/queries.jsonl` replaced them
        inputs={"DATASET": api.dataset_files(dataset)},
    )
    out = console()
    with running(False if quiet else run_args.progress) as bar:
        report = api.evaluate(
            dataset,
            list(systems),
            measures=tuple(measures) or api.DEFAULT_MEASURES,
            ingest=not no_ingest,
            max_failure_rate=run_args.failure_rate,
            options=run_args.options,
            progress=bar,
            dataset_kind=kind,
            # the rest of the options (--k, --gain, --pool-depth, --sprt-delta, --seed, ...)
            # are named as api.evaluate's keywords and go to it as they are
            **settings,
        )
    run_files: tuple[tuple[Literal["trec", "json"], Path | None], ...] = (
        ("trec", run_out),
        ("json", run_json),
    )
    # the run files first: an id a TREC file cannot hold is refused before any report is
    # written (`write_run_files` checks every system's before it writes one); said after them
    run_written = [
        written
        for fmt, where in run_files
        if where is not None
        for written in api.write_run_files(report.items, where, fmt)
    ]
    report_retrieval(report, out_dir, out)
    for written in run_written:
        left = ", ".join(f"{n} {what.replace('_', ' ')}" for what, n in written.left_out.items())
        out.print(
            f"wrote {written.path} ({written.subject}: {counted(written.queries, 'query', 'queries')}, "
            f"{counted(written.results, 'result')}{f'; left out {left}' if left else ''})"
        )
    code = conclude(out, report, run_args)
    if code:
        raise click.exceptions.Exit(code)
