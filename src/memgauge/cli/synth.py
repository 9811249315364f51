"""`memgauge synth MEMORIES --out DATASET`: synthetic evaluation data from a user's memories.

memgauge synth memories.jsonl --out synthetic
memgauge synth conversations.json --out synthetic --critic-model gpt-4o
memgauge synth '{reference: {path: store.db}}' --kind subject --out synthetic
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
from rich.table import Table

from memgauge import api
from memgauge._util.jsonout import dumps_strict
from memgauge._util.listing import counted
from memgauge.cli._common import OUT_DIR, console, json_option
from memgauge.cli._llm import llm_options
from memgauge.cli._numbers import integer
from memgauge.cli._shared_options import fraction_option
from memgauge.report.escape import term

__all__ = ["synth"]


@click.command()
@click.argument("memories")
@click.option("--out", "out_dir", type=OUT_DIR, required=True, help="Dataset directory to write.")
@click.option(
    "--kind",
    type=click.Choice(list(api.MEMORY_SOURCES)),
    default=None,
    help="What MEMORIES is (default: detected; a MEMORIES that is no path is a subject).",
)
@click.option("--model", default=None, help="Generator model (default: MEMGAUGE_MODEL).")
@click.option("--critic-model", default=None, help="Critic model (default: the generator's model).")
@click.option("--no-critic", is_flag=True, help="Skip the critic pass.")
@click.option(
    "--category",
    "categories",
    type=click.Choice(list(api.SEED_CATEGORIES)),
    multiple=True,
    help="A category to write (repeat; default: seed 002's eight).",
)
@click.option(
    "--group-size",
    type=integer(1, 50),
    default=5,
    help="Memories shown to the model per call (an anchor and its nearest neighbours).",
)
@click.option(
    "--groups",
    "max_groups",
    type=integer(1),
    default=25,
    help="Groups at most: one call each, one query per category.",
)
@click.option(
    "--embedder",
    default="minilm",
    help="Embedder of the grouping and the dedupe (minilm, openai:<model>, st:<model>).",
)
@fraction_option(
    "--dedupe-threshold",
    default=0.9,
    about="Cosine at or above which a query is a near-duplicate of one kept before it.",
    above_zero=True,  # SynthConfig's (0, 1]: at 0 every query would be a duplicate
)
@fraction_option(
    "--max-failure-rate",
    default=0.1,
    about="Failed LLM calls allowed (share of calls); past it: exit 4, nothing written.",
)
@click.option("--name", default=None, help="Dataset name (default: the --out directory's).")
@json_option("Print the report as JSON.")
@llm_options
def synth(
    memories: str,
    out_dir: Path,
    no_critic: bool,
    categories: tuple[str, ...],
    as_json: bool,
    **given: Any,
) -> None:
    """Write synthetic evaluation data from MEMORIES (memories JSONL, a memaudit file, LoCoMo,
    LongMemEval, a dataset, or a subject's store through its dump) into --out: queries of seed
    002's eight categories with graded judgments (0-3), expected answers and hard negatives,
    near-duplicates removed, a critic's rejects dropped, every rejection counted by reason in
    DATASET/synth_report.json. The dataset loads as any other and every report of it says it
    is synthetic."""
    # given: --kind, --model, --critic-model, --group-size, --groups, --embedder,
    # --dedupe-threshold, --max-failure-rate and --name, as api.synth names them
    made = api.synth(
        memories, out_dir, critic=not no_critic, categories=categories or None, **given
    )
    report = made.report
    if as_json:
        click.echo(dumps_strict(report.as_dict(), sort_keys=True))
        return
    out = console()
    out.print(
        f"{counted(report.n_kept, 'item')} kept from {counted(report.n_memories, 'memory', 'memories')} in {counted(report.n_groups, 'group')} "
        f"({counted(report.n_calls, 'LLM call')}, {report.n_failed_calls} failed, "
        f"{counted(report.n_requests, 'request')}; model {report.model}, critic "
        f"{report.critic_model or 'none'})"
    )
    table = Table(title="Rejected, by reason", title_justify="left")
    table.add_column("reason")
    table.add_column("n", justify="right")
    for reason, n in report.by_reason().items():
        table.add_row(reason, str(n))
    out.print(table)
    for r in report.rejections[:10]:
        out.print(term(f"  {r.reason} (group {r.group}, {r.category or '-'}): {r.detail}"))
    if report.n_rejected > 10:
        out.print(f"  ... {report.n_rejected - 10} more in {made.report_path}")
    out.print(made.dataset.synthetic.label() if made.dataset.synthetic else "")
    out.print(f"wrote {out_dir} (report: {made.report_path})")
