"""People's grades of the annotation pool (`memgauge logs annotate` writes it, people fill in
each `grade`), read back and stored as manual judgments of the query log."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from pydantic import ConfigDict, Field, StrictInt, StrictStr

from memgauge._util.listing import counted
from memgauge._util.model import Model
from memgauge.data.jsonio import read_records
from memgauge.errors import DataError, Problem, UsageError
from memgauge.store.querylog import import_annotations, unknown_query_ids
from memgauge.store.url import StoreURL

__all__ = ["GradedCandidate", "GradedQuery", "import_graded", "read_graded"]


class GradedCandidate(Model):
    """One pooled memory and its grade (None: not graded, skipped)."""

    model_config = ConfigDict(extra="allow")

    memory_id: StrictStr | StrictInt
    grade: Annotated[StrictInt, Field(ge=0, le=3)] | None = None


class GradedQuery(Model):
    """One query of an annotation file, as `memgauge logs annotate` wrote it."""

    model_config = ConfigDict(extra="allow")

    query_id: StrictStr
    candidates: list[GradedCandidate]


def read_graded(graded: Path) -> list[GradedQuery]:
    """An annotation file's queries; a DataError for a bad record, or a (query, memory) graded
    twice (the store would keep whichever came last)."""
    records = read_records(graded, GradedQuery)
    seen: dict[tuple[str, str], int] = {}
    problems = []
    for i, record in enumerate(records, 1):
        for c in record.candidates:
            if c.grade is None:
                continue
            key = (record.query_id, str(c.memory_id))
            if key in seen:
                problems.append(
                    Problem(
                        str(graded),
                        None,
                        f"record {i}",
                        f"memory {key[1]!r} of query {key[0]!r} is graded again (first in record"
                        f" {seen[key]}); keep one grade",
                    )
                )
            seen.setdefault(key, i)
    if problems:
        raise DataError(problems)
    if records and not seen:
        # the pool as `logs annotate` wrote it: importing it would store nothing and look done
        n = sum(len(r.candidates) for r in records)
        raise DataError(
            [
                Problem(
                    str(graded),
                    None,
                    "grade",
                    f"none of its {counted(n, 'candidate')} ({counted(len(records), 'query', 'queries')}) has a grade: nothing"
                    " to import; fill in each `grade` (0-3) first, or leave it null to skip"
                    " that memory",
                )
            ]
        )
    return records


def import_graded(db: str | Path | StoreURL, graded: Path) -> int:
    """Store the grades (integers 0-3) of annotation file `graded` as manual judgments in the
    query log `db`; how many. Every query must be one `db` logged (UsageError otherwise, before
    anything is written)."""
    records = read_graded(graded)
    unknown = unknown_query_ids(db, [r.query_id for r in records])
    if unknown:
        where = [i + 1 for i, r in enumerate(records) if r.query_id in unknown]
        raise UsageError(
            f"{graded}: record {where[0]}: query_id {sorted(unknown)[0]!r} is not a logged query"
            f" in {db} ({len(unknown)} unknown); annotate the pool `memgauge logs annotate` wrote"
            " for this database"
        )
    return import_annotations(db, [r.model_dump() for r in records])
