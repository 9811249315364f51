"""`memgauge demo`: a real evaluation of the reference memory, offline, in under a minute."""

from __future__ import annotations

import time
from pathlib import Path

import click

from memgauge import api
from memgauge.cli._common import console, report_retrieval
from memgauge.cli._evaluation import running

__all__ = ["demo"]

#: the demo's systems: lexical, dense and hybrid search, and hybrid with a session boost
SYSTEMS = ("lexical", "dense", "hybrid", "hybrid:session_boost=0.5@hybrid+session")


@click.command()
@click.option(
    "--out",
    "out_dir",
    type=click.Path(path_type=Path),
    default=Path("memgauge-demo"),
    show_default=True,
    help="Where the demo dataset and the reports are written.",
)
@click.option("--no-store", is_flag=True, help="Keep the run in memory only.")
@click.option("--seed", type=int, default=0, show_default=True, help="Random seed.")
@click.option("--progress/--no-progress", default=None, help="Show a progress bar.")
def demo(out_dir: Path, no_store: bool, seed: int, progress: bool | None) -> None:
    """Evaluate the built-in reference memory on a demo dataset, offline.

    Writes a hand-made dataset (a coding agent's memory of an invoicing product: 43 memories in
    five importance tiers, 37 queries of all eight seed categories, graded judgments), then
    evaluates lexical (SQLite FTS5 BM25), dense (all-MiniLM-L6-v2, when installed), hybrid
    (reciprocal rank fusion) search, and hybrid with a session boost, with bootstrap CIs,
    agent-memory metrics and paired significance tests, and writes JSON, Markdown and HTML
    reports. The run is recorded like any other (`memgauge runs list`). It exits 0: seed 002's
    targets are shown, not enforced.
    """
    t0 = time.perf_counter()
    out = console()
    dataset = api.demo_dataset()
    data_dir = out_dir / "dataset"
    api.save_dataset(dataset, data_dir)
    out.print(
        f"demo dataset: {len(dataset.memories)} memories, {len(dataset.queries)} queries, "
        f"{len(dataset.judgments)} judgments -> {data_dir}"
    )
    with running(progress) as bar:
        report = api.evaluate(
            data_dir,
            SYSTEMS,
            seed=seed,
            name="demo",
            kind="demo",
            store=False if no_store else None,
            progress=bar,
        )
    report_retrieval(report, out_dir, out)
    for name, why in report.unavailable.items():
        out.print(f"[yellow]{name} was not run: {why}[/yellow]")
    if not no_store:
        out.print(f"recorded run {report.run_id} in {api.results_path()}")
    out.print(f"done in {time.perf_counter() - t0:.1f} s")
    out.print(
        f"next: open {out_dir / 'report.html'} in a browser, or evaluate your own settings: "
        f"memgauge evaluate {data_dir} -s lexical -s hybrid -s 'hybrid:k_rrf=10@hybrid-k10'"
    )
