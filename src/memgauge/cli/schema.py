"""`memgauge schema`: the JSON Schema of suite files, for editor completion."""

from __future__ import annotations

import json
from pathlib import Path

import click

from memgauge._util.files import atomic_write_text
from memgauge.runs.suite import suite_json_schema

__all__ = ["schema"]


@click.command()
@click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Write to this file (default: stdout).",
)
def schema(out: Path | None) -> None:
    """Write the JSON Schema of suite files.

    Point your editor at it (for VS Code's YAML extension: `# yaml-language-server:
    $schema=memgauge-suite.schema.json` at the top of the suite) to get completion and checks.
    """
    text = json.dumps(suite_json_schema(), indent=2) + "\n"
    if out is None:
        click.echo(text, nl=False)
    else:
        atomic_write_text(out, text)
        click.echo(f"wrote {out}")
