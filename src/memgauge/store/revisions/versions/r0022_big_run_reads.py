"""What the viewer reads of a big run without reading all of it:

- each query's detail of a run's ir aggregates in a table of its own, `suite_run_queries`
  (run, task, subject, query id -> the query's `per_query` record), so that one item's page
  reads one row instead of parsing the run's whole summary (93 MB of JSON at 100,000 queries:
  seconds for the first item page of a run);
- each (subject, task, evaluator)'s values of a run in item id order, `suite_run_values` (the
  ids as a JSON list, the values as little-endian float64, NaN where not scored), so that two
  runs are compared from a few rows, not every verdict of each;
- a digest of each item's verdicts, `suite_run_items.verdicts_digest`, so that the items
  changed against a baseline run are those whose digests differ (then checked verdict by
  verdict), not every verdict of the run looked up in the baseline's.

The runs stored before get their rows and digests here (the same rules, frozen: a migration
never changes): the first record of a (task, subject, query id) is kept, as a reader of the
summary found it; a run with a summary gets its values; a finished item's digest is its stored
verdicts', an unfinished one's NULL.

Revision ID: 0022
Revises: 0021
"""

from __future__ import annotations

import json
import sys
from array import array
from typing import Any

import sqlalchemy as sa
from alembic import op

from memgauge._util.gcquiet import collector_paused
from memgauge.store.columns import cols
from memgauge.store.revisions import PACKED, columns_of
from memgauge.store.stored_forms import packed, unpacked, verdicts_digest

revision = "0022"
down_revision = "0021"
branch_labels = None
depends_on = None


def _packed(text: str, dialect: str) -> str | bytes:
    value = packed(text)
    return value.encode() if dialect == "postgresql" and isinstance(value, str) else value


def _rows(run_id: str, summary: dict[str, Any], dialect: str) -> list[dict[str, Any]]:
    out: dict[tuple[str, str, str], dict[str, Any]] = {}
    for agg in summary.get("aggregates") or ():
        if not isinstance(agg, dict) or agg.get("aggregate") != "ir":
            continue
        # its facts (form 3) or its detail (before)
        for system in (agg.get("facts") or agg.get("detail") or {}).get("systems") or ():
            if not isinstance(system, dict):
                continue
            for q in system.get("per_query") or ():
                if not isinstance(q, dict):
                    continue
                key = (str(agg.get("task")), str(system.get("name")), str(q.get("query_id")))
                if key not in out:
                    text = json.dumps(q, separators=(",", ":"), ensure_ascii=False)
                    out[key] = {
                        "run_id": run_id,
                        "task": key[0],
                        "subject": key[1],
                        "query_id": key[2],
                        "detail_json": _packed(text, dialect),
                    }
    return list(out.values())


def _fill_digests(bind: sa.Connection) -> None:
    """Each finished item's digest, run by run (one run's verdicts in memory at a time)."""
    items = sa.table(
        "suite_run_items",
        *(sa.column(c) for c in ("run_id", "subject", "task", "item_id", "status")),
        sa.column("verdicts_digest"),
    )
    update = (
        sa.update(items)
        .where(
            items.c.run_id == sa.bindparam("k_run"),
            items.c.subject == sa.bindparam("k_subject"),
            items.c.task == sa.bindparam("k_task"),
            items.c.item_id == sa.bindparam("k_item"),
        )
        .values(verdicts_digest=sa.bindparam("digest"))
    )
    run_ids = [r[0] for r in bind.execute(sa.text("SELECT run_id FROM suite_runs")).all()]
    for run_id in run_ids:
        found: dict[tuple[str, str, str], list[tuple[Any, ...]]] = {
            (r[0], r[1], r[2]): []
            for r in bind.execute(
                sa.text(
                    "SELECT subject, task, item_id FROM suite_run_items WHERE run_id = :run"
                    " AND status IN ('completed', 'failed')"
                ),
                {"run": run_id},
            )
        }
        for r in bind.execute(
            sa.text(
                "SELECT subject, task, item_id, evaluator, value, passed, error IS NULL"
                " FROM suite_run_scores WHERE run_id = :run"
            ),
            {"run": run_id},
        ):
            verdicts = found.get((r[0], r[1], r[2]))
            if verdicts is not None:
                verdicts.append((r[3], r[4], r[5], r[6]))
        rows = [
            {
                "k_run": run_id,
                "k_subject": k[0],
                "k_task": k[1],
                "k_item": k[2],
                "digest": verdicts_digest(v),
            }
            for k, v in found.items()
        ]
        for start in range(0, len(rows), 5000):
            bind.execute(update, rows[start : start + 5000])


def _fill_values(bind: sa.Connection) -> None:
    """Each summarized run's values, run by run."""
    op.create_table(
        "suite_run_values",
        *cols(sa.Text(), "run_id", "subject", "task", "evaluator", nullable=False),
        sa.Column("item_ids_json", PACKED, nullable=False),
        sa.Column("values_f8", sa.LargeBinary(), nullable=False),
        sa.PrimaryKeyConstraint("run_id", "subject", "task", "evaluator"),
        sa.ForeignKeyConstraint(["run_id"], ["suite_runs.run_id"], ondelete="CASCADE"),
    )
    values = sa.table(
        "suite_run_values",
        *(sa.column(c) for c in ("run_id", "subject", "task", "evaluator")),
        sa.column("item_ids_json", PACKED),
        sa.column("values_f8", sa.LargeBinary()),
    )
    run_ids = [
        r[0]
        for r in bind.execute(
            sa.text("SELECT run_id FROM suite_runs WHERE summary_json IS NOT NULL")
        ).all()
    ]
    nan = float("nan")
    for run_id in run_ids:
        found: dict[tuple[str, str, str], dict[str, list[float]]] = {}
        for subject, task, evaluator, item_id, value, error, repeat in bind.execute(
            sa.text(
                "SELECT s.subject, s.task, s.evaluator, s.item_id, s.value, s.error,"
                " i.repeat_index FROM suite_run_scores s JOIN suite_run_items i"
                " ON i.run_id = s.run_id AND i.subject = s.subject AND i.task = s.task"
                " AND i.item_id = s.item_id WHERE s.run_id = :run"
            ),
            {"run": run_id},
        ):
            # a repeat (revision 0020, stored as ID#rR) is its item's: the mean of its repeats
            if repeat:
                item_id = item_id.removesuffix(f"#r{repeat}")
            per = found.setdefault((subject, task, evaluator), {})
            per.setdefault(item_id, []).append(
                float(value) if value is not None and not error else nan
            )
        rows = []
        for (subject, task, evaluator), per in found.items():
            ids = sorted(per)
            vals = array("d", [_mean(per[i]) for i in ids])
            if sys.byteorder != "little":
                vals.byteswap()
            rows.append(
                {
                    "run_id": run_id,
                    "subject": subject,
                    "task": task,
                    "evaluator": evaluator,
                    "item_ids_json": _packed(
                        json.dumps(ids, ensure_ascii=False), bind.dialect.name
                    ),
                    "values_f8": vals.tobytes(),
                }
            )
        if rows:
            bind.execute(sa.insert(values), rows)


def _mean(values: list[float]) -> float:
    """An item's value from its repeats' (`data.records.mean_of_repeats`, as of this revision)."""
    if len(values) == 1:
        return values[0]
    scored = [v for v in values if v == v]
    return sum(scored) / len(scored) if scored else float("nan")


def upgrade() -> None:
    """Add the column and the table, then fill them run by run from the stored verdicts and
    summaries."""
    bind = op.get_bind()
    if "verdicts_digest" not in columns_of("suite_run_items"):
        op.add_column("suite_run_items", sa.Column("verdicts_digest", sa.Text(), nullable=True))
    _fill_digests(bind)
    _fill_values(bind)
    op.create_table(
        "suite_run_queries",
        *cols(sa.Text(), "run_id", "task", "subject", "query_id", nullable=False),
        sa.Column("detail_json", PACKED, nullable=False),
        sa.PrimaryKeyConstraint("run_id", "task", "subject", "query_id"),
        sa.ForeignKeyConstraint(["run_id"], ["suite_runs.run_id"], ondelete="CASCADE"),
    )
    runs = sa.table("suite_runs", sa.column("run_id"), sa.column("summary_json", PACKED))
    queries = sa.table(
        "suite_run_queries",
        *(sa.column(c) for c in ("run_id", "task", "subject", "query_id")),
        sa.column("detail_json", PACKED),
    )
    ids = bind.execute(sa.select(runs.c.run_id).where(runs.c.summary_json.is_not(None))).all()
    for (run_id,) in ids:  # one summary in memory at a time: a big run's is tens of MB
        raw = bind.execute(
            sa.select(runs.c.summary_json).where(runs.c.run_id == run_id)
        ).scalar_one()
        text = unpacked(raw if isinstance(raw, str) else bytes(raw))
        if '"per_query"' not in text:
            continue
        # millions of containers in one parse: the collector's passes would double its time
        with collector_paused():
            rows = _rows(run_id, json.loads(text), bind.dialect.name)
        for start in range(0, len(rows), 5000):
            bind.execute(sa.insert(queries), rows[start : start + 5000])
