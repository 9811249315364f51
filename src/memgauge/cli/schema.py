"""`memgauge schema`: JSON Schemas of suite, subject spec and dataset files, for editors."""

from __future__ import annotations

import json
from pathlib import Path

import click

from memgauge import api
from memgauge._util.files import atomic_write_text
from memgauge.cli._common import FILE

__all__ = ["schema"]


@click.command()
@click.argument("kind", type=click.Choice(list(api.SCHEMA_KINDS)), default="suite", required=False)
@click.option("--out", type=FILE, default=None, help="Write to this file (default: stdout).")
def schema(kind: str, out: Path | None) -> None:
    """Write the JSON Schema of KIND files (default: suite files).

    Kinds: suite, subject (a subject spec file), bundle (a retrieval dataset), conversations,
    memories, queries, judgments, equivalence, chains, items, labels, extraction, operations,
    trace, pairs, vectors.
    The suite and subject schemas carry every installed component's arguments (subject kinds,
    evaluators, aggregates; plug-ins' too). Point your editor at one (for VS Code's YAML
    extension: `# yaml-language-server: $schema=memgauge-suite.schema.json` at the top of the
    file) to get completion and checks.
    """
    text = json.dumps(api.json_schema(kind), indent=2) + "\n"
    if out is None:
        click.echo(text, nl=False)
    else:
        atomic_write_text(out, text)
        click.echo(f"wrote {out}")
