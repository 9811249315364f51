"""`memgauge logs`: maintain and use production query logs (seed 002)."""

from __future__ import annotations

import json
from pathlib import Path

import click

from memgauge.store.querylog import apply_retention, bootstrap_judgments

__all__ = ["logs"]

db_argument = click.argument("db", type=click.Path(exists=True, dir_okay=False, path_type=Path))


@click.group()
def logs() -> None:
    """Production query logs written by `memgauge.online.querylog.QueryLog`."""


@logs.command()
@db_argument
@click.option(
    "--archive", "archive_dir", type=click.Path(file_okay=False, path_type=Path), required=True
)
def retain(db: Path, archive_dir: Path) -> None:
    """Apply the retention policy: queries and feedback 90 days (queries archived to JSON
    lines first), shadow runs 30 days."""
    click.echo(json.dumps(apply_retention(db, archive_dir)))


@logs.command()
@db_argument
def judgments(db: Path) -> None:
    """Turn logged feedback into graded judgments (validated useful 3, selected 2, shown but
    never selected 1, validated not useful 0)."""
    click.echo(json.dumps(bootstrap_judgments(db)))
