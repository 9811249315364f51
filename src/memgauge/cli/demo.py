"""`memgauge demo`: a real evaluation of the reference memory, offline, in under a minute."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import click

from memgauge.cli._common import console, progress_bar, report_result
from memgauge.cli._systems import system_entries
from memgauge.data.demo import demo_dataset
from memgauge.data.io import save_retrieval_dataset
from memgauge.runs.retrieval import RetrievalEvalConfig, evaluate_retrieval

__all__ = ["demo"]


@click.command()
@click.option(
    "--out",
    "out_dir",
    type=click.Path(path_type=Path),
    default=Path("memgauge-demo"),
    show_default=True,
    help="Where the demo dataset and the reports are written.",
)
@click.option("--no-store", is_flag=True, help="Do not record the run in MEMGAUGE_HOME.")
@click.option("--seed", type=int, default=0, show_default=True, help="Random seed.")
def demo(out_dir: Path, no_store: bool, seed: int) -> None:
    """Evaluate the built-in reference memory on a demo dataset, offline.

    Writes a hand-made dataset (a coding agent's memory of an invoicing product: 43 memories in
    five importance tiers, 37 queries of all eight seed categories, graded judgments), then
    evaluates lexical (SQLite FTS5 BM25), dense (all-MiniLM-L6-v2, when installed), hybrid
    (reciprocal rank fusion) search, and hybrid with a session boost, with bootstrap CIs,
    agent-memory metrics and paired significance tests, and writes JSON, Markdown and HTML
    reports.
    """
    t0 = time.perf_counter()
    out = console()
    dataset = demo_dataset()
    data_dir = out_dir / "dataset"
    save_retrieval_dataset(dataset, data_dir)
    out.print(
        f"demo dataset: {len(dataset.memories)} memories, {len(dataset.queries)} queries, "
        f"{len(dataset.judgments)} judgments -> {data_dir}"
    )
    entries = system_entries(
        (
            "lexical",
            "dense",
            "hybrid",
            "hybrid:session_boost=0.5@hybrid+session",
        )
    )
    with progress_bar(sys.stderr.isatty()) as progress:
        result = evaluate_retrieval(
            dataset,
            entries,
            RetrievalEvalConfig(seed=seed),
            source="memgauge demo",
            progress=progress,
        )
    report_result(result, out_dir, not no_store, out)
    out.print(f"done in {time.perf_counter() - t0:.1f} s")
    out.print(
        f"next: open {out_dir / 'report.html'} in a browser, or evaluate your own settings: "
        f"memgauge evaluate {data_dir} -s lexical -s hybrid -s 'hybrid:k_rrf=10@hybrid-k10'"
    )
