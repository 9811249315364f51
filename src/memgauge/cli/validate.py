"""`memgauge validate`: check dataset files and report every problem with file, line and field."""

from __future__ import annotations

from pathlib import Path

import click

from memgauge import api
from memgauge.cli._common import PATH
from memgauge.cli._kind import kind_option
from memgauge.errors import DataError, Problem

__all__ = ["validate"]


@click.command()
@click.argument("files", nargs=-1, required=True, type=PATH)
@kind_option(what="every file")
def validate(files: tuple[Path, ...], kind: str | None) -> None:
    """Check dataset FILES (or dataset directories) and report every problem.

    Kinds: a dataset directory or bundle, memories, queries, judgments, equivalence classes,
    causal chains (JSONL/JSON/YAML), TREC qrels and run files, memaudit conversations, LoCoMo
    and LongMemEval files, suite files, subject spec files ({KIND: {...}}), extraction cases
    (seed 001), memory-operation cases (seed 000), recorded outputs and production traces,
    embedding pairs and stored vectors,
    task items and audit probes. A file's kind is read from its content; its name only breaks
    a tie (memories.jsonl or queries.jsonl for {id, text} lines), or decides when the content
    says nothing (an empty or cut-off file); --kind names it. Exits 0
    when every file is valid and 2 otherwise, naming file, line and field of each problem.
    """
    problems: list[Problem] = []
    unlisted = 0
    for path in files:
        try:
            found, summary = api.validate_file(path, kind)
        except DataError as exc:
            problems.extend(exc.problems)
            unlisted += exc.unlisted
            continue
        click.echo(f"ok  {path}  ({found}: {summary})")
    if problems:
        raise DataError(problems, unlisted=unlisted)
