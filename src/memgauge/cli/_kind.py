"""`--kind`, defined once for every command that decides what kind of file it was given (its own
module: `validate` must start without the report stack that the other shared options bring)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

from memgauge import api

__all__ = ["kind_option"]

F = TypeVar("F", bound=Callable[..., Any])


def kind_option(reader: str | None = None, what: str = "the file") -> Callable[[F], F]:
    """`--kind`: the kinds the command's reader takes (`api.DATASET_KINDS[reader]`: evaluate,
    audit, extraction), or every kind (`validate`). Without it the content decides and the
    name only breaks a tie (`data.detect`)."""
    kinds = api.FILE_KINDS if reader is None else api.DATASET_KINDS[reader]
    return click.option(
        "--kind",
        "kind",
        type=click.Choice(list(kinds)),
        default=None,
        help=f"What {what} is (default: detected from its content; its name only breaks a tie).",
    )
