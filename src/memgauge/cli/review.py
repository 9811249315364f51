"""`memgauge review`: what people labelled in `memgauge view --review`.

memgauge review labels --store results.db --run RUN
memgauge review export --store results.db --format qrels --out reviewed.qrels
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from memgauge import api
from memgauge._util.jsonout import dumps_strict
from memgauge.cli._common import EXISTING_FILE, FILE, json_option, store_option
from memgauge.cli._shared_options import reviewer_option
from memgauge.errors import UsageError

__all__ = ["review"]

run_option = click.option("--run", default=None, help="Only this run's labels (an id or prefix).")


@click.group()
def review() -> None:
    """People's labels from `memgauge view --review`: list them, export graded hits, fill an
    annotation pool's grades, store overrides as learnings."""


@review.command("labels")
@store_option
@run_option
@click.option("--kind", type=click.Choice(api.LABEL_KINDS), default=None)
@reviewer_option()
@click.option("--history", is_flag=True, help="Every label given, not only each latest.")
@json_option("One JSON object per label.")
def labels_cmd(store_path: str | None, as_json: bool, **given: Any) -> None:
    """Each reviewer's current label per target (with --history, every label given)."""
    # given: --run, --kind, --reviewer and --history, as review_labels names them
    labels = api.review_labels(store_path, **given)
    for lab in labels:
        if as_json:
            click.echo(dumps_strict(lab.model_dump(), sort_keys=True))
            continue
        machine = "" if lab.machine is None else f" (machine: {lab.machine})"
        note = f"  # {lab.note}" if lab.note else ""
        click.echo(
            f"{lab.created_at} {lab.reviewer}: {lab.run_id} {lab.subject}/{lab.task}/"
            f"{lab.item_id} {lab.kind} {lab.target} = {lab.value}{machine}{note}"
        )
    if not as_json:
        click.echo(f"{len(labels)} label(s)", err=True)


@review.command("export")
@store_option
@run_option
@reviewer_option("Only this reviewer's grades.")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["judgments", "qrels"]),
    default="judgments",
    help="judgments: a retrieval dataset's judgments.jsonl; qrels: TREC qrels.",
)
@click.option("--out", "out", type=FILE, default=None, help="The file to write.")
@click.option(
    "--to-golden",
    "golden",
    default=None,
    metavar="STORE",
    help="Also store them as manual judgments in this store's query log (its golden set);"
    " only a logged query's (the rest are counted as not_logged).",
)
def export_cmd(
    store_path: str | None,
    run: str | None,
    reviewer: str | None,
    fmt: str,
    out: Path | None,
    golden: str | None,
) -> None:
    """Write the graded hits as judgments (query id = the item's id): with --reviewer that
    reviewer's latest grades; else, where reviewers graded a pair differently, the lower
    median of their grades (the count of such pairs is printed)."""
    if out is None and golden is None:
        raise click.UsageError("give --out FILE, --to-golden STORE, or both")
    rows, conflicts = api.review_judgments(store_path, run=run, reviewer=reviewer)
    if not rows:
        # an empty judgments file is one `memgauge validate` and every dataset refuse: bad
        # input (the wrong store, run or reviewer, or nothing graded yet), nothing written
        chosen = ", ".join(
            f"{name} {value!r}" for name, value in (("run", run), ("reviewer", reviewer)) if value
        )
        chosen = f" (of {chosen})" if chosen else ""
        raise UsageError(
            f"no graded hits to export{chosen}: grade hits with `memgauge view --review`"
            " first, or check --store, --run and --reviewer; nothing was written"
        )
    if out is not None:
        api.write_judgments(rows, out, fmt)
    summary = {"judgments": len(rows), "reviewers_differ": conflicts}
    if golden is not None:
        summary["golden"], summary["not_logged"] = api.review_to_golden(
            golden, rows, reviewer or "review"
        )
    click.echo(dumps_strict(summary, sort_keys=True))


@review.command("fill-pool")
@click.argument("pool", type=EXISTING_FILE)
@store_option
@run_option
@reviewer_option("Only this reviewer's grades.")
@click.option("--out", "out", type=FILE, required=True, help="The filled pool to write.")
def fill_pool_cmd(
    pool: Path, store_path: str | None, run: str | None, reviewer: str | None, out: Path
) -> None:
    """Fill the grades of annotation pool POOL (`memgauge logs annotate`) from the graded hits
    of the review (the same (query, memory); a grade already in POOL is kept), for `memgauge
    logs import-annotations`; prints how many were filled and how many are left to grade."""
    rows, conflicts = api.review_judgments(store_path, run=run, reviewer=reviewer)
    filled, left = api.fill_annotation_pool(pool, rows, out)
    click.echo(
        dumps_strict(
            {"filled": filled, "ungraded": left, "reviewers_differ": conflicts}, sort_keys=True
        )
    )


@review.command("learn")
@store_option
@run_option
@click.option(
    "--learn-into",
    "learn_into",
    default=None,
    metavar="SYSTEM",
    help="The memory to store them in (as `memgauge gate --learn-into` takes it); default"
    " MEMGAUGE_HOME/learnings.db.",
)
def learn_cmd(store_path: str | None, run: str | None, learn_into: str | None) -> None:
    """Store each override (a reviewer who said otherwise than a verdict, the extraction
    scorer or the operation checks) as a learning beside the gate's failure memories, for
    `memgauge learnings` and the `learnings:` of judges, extractors and deciders; an override
    already stored is not stored again."""
    stored, held = api.learn_from_review(store_path, run=run, learn_into=learn_into)
    click.echo(dumps_strict({"stored": stored, "already": held}, sort_keys=True))
