"""`memgauge import`: LoCoMo, LongMemEval, memaudit, BEIR and CSV item sheets into memgauge's
native files."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import click

from memgauge import api
from memgauge._util.listing import counted
from memgauge.cli._common import EXISTING, OUT_DIR, choice_option, console

__all__ = ["import_"]


@click.command("import")
@click.argument(
    "kind", type=click.Choice(["locomo", "longmemeval", "memaudit", "beir", "csv-items"])
)
@click.argument("src", type=EXISTING)
@click.option(
    "--out",
    "out_dir",
    type=OUT_DIR,
    required=True,
    help="Directory to write the native dataset files into.",
)
@choice_option(
    "--granularity",
    choices=["turn", "session"],
    help="LongMemEval: memories are turns or whole sessions.",
)
@choice_option(
    "--protocol",
    choices=["paper", "all-turns"],
    help="LongMemEval: paper = LongMemEval's own retrieval corpus and relevance (user turns "
    "only; has_answer user turns of answer sessions; every question but _abs scored), so "
    "numbers sit beside the paper's; all-turns = every turn of every role, any has_answer turn "
    "relevant (what `memgauge audit` reads).",
)
@click.option(
    "--split",
    default="test",
    help="BEIR: the qrels file that judges the queries (qrels/SPLIT.tsv).",
)
@choice_option(
    "--grades",
    choices=["shift", "keep"],
    help="BEIR: shift = a grade g >= 1 becomes min(g+1, 3), so memgauge's relevant (grade >= 2)"
    " is BEIR's (grade >= 1); keep = BEIR's 0-3 grades as they are, for --rel-threshold 1"
    " --gain linear.",
)
def import_(
    kind: Literal["locomo", "longmemeval", "memaudit", "beir", "csv-items"],  # click's choices
    src: Path,
    out_dir: Path,
    **given: Any,
) -> None:
    """Convert SRC (a LoCoMo, LongMemEval or memaudit file, a BEIR directory, or a CSV sheet of
    task items) into native files under --out.

    locomo, longmemeval and beir become retrieval datasets (memories.jsonl, queries.jsonl,
    judgments.jsonl) that `memgauge evaluate` reads; memaudit becomes conversations.json;
    csv-items becomes items.jsonl, the items of an expected-output or script task (columns:
    id, input, expected, expected_2..., category, corpus, metadata.KEY). An import_report.json
    beside them lists every count, everything dropped, and every record whose value the import
    changed with its value before and after (LoCoMo: each question whose evidence it
    normalised).
    """
    # given: --granularity, --protocol, --split and --grades, as import_dataset names them
    imported = api.import_dataset(kind, src, out_dir, **given)
    report = imported.report
    out = console()
    out.print(f"imported {kind} from {src}")
    if report.protocol:
        out.print(f"  protocol: {report.protocol}")
    for key, value in sorted(report.counts.items()):
        out.print(f"  {key}: {value}")
    for note in report.notes:
        out.print(f"  note: {note}")
    if report.changed:
        out.print(
            f"  {counted(len(report.changed), 'record')} changed (each with its value before and after): "
            f"see {imported.report_path}"
        )
    if report.dropped:
        out.print(f"  {counted(len(report.dropped), 'item')} dropped: see {imported.report_path}")
    out.print("wrote " + ", ".join(str(p) for p in imported.files))
