"""A big run's comparison with the suite's run before it, kept when the run is recorded
(revision 0024, `suite_run_compared`), so that the viewer's first request of that compare page
reads it instead of resampling every measure (two 100,000-item runs that differ: about 3 CPU-s
of bootstrap and sign flips, BENCHMARKS.md).

What is kept is what the page would compute (`runs.run_comparison.payload`), under a key of
everything it is made from (`state_key`): both runs' values per measure as stored, their
status and the end of their last attempt (verdicts are written only during an attempt, which
ends by stamping `finished_at`), the seed, this memgauge's version and the kept form's. A page
uses a kept comparison only under the key its runs have now; a run resumed, re-recorded or
still going is compared on request. A run deleted takes its comparisons with it (foreign keys,
`ON DELETE CASCADE`, on either side). Any other pair (not a run and the one before it, or a
small run) is compared on request.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

import sqlalchemy as sa

from memgauge._version import __version__
from memgauge.store.dialect import upsert
from memgauge.store.tables import packed, unpacked
from memgauge.store.tables import suite_run_compared as compared_t

__all__ = ["EARLIER_RUNS", "FORMAT", "KEEP_FROM", "keep", "kept", "state_key"]

#: a run with fewer items is compared on request (well under a second); from this many, its
#: recording keeps its comparison with the run before it
KEEP_FROM = 10_000
#: the kept form's version (`runs.run_comparison.Comparison.to_json`)
FORMAT = 1

#: the runs of a suite made before a run, newest first: what its page offers to compare with
#: (the first is the default, and the one whose comparison is kept)
EARLIER_RUNS = (
    "SELECT run_id, status, created_at FROM suite_runs WHERE suite_name = :suite"
    " AND created_at < :created AND run_id <> :run ORDER BY created_at DESC, run_id DESC"
)

_UNFINISHED = ("queued", "running")


def _part(h: Any, value: Any) -> None:
    """`value` into the digest `h`, its type and length first (one part never runs on into
    the next)."""
    if isinstance(value, memoryview):
        value = value.tobytes()
    raw = value if isinstance(value, bytes) else str(value).encode()
    tag = b"b" if isinstance(value, bytes) else (b"n" if value is None else b"s")
    h.update(tag + len(raw).to_bytes(8, "little") + raw)


def state_key(c: sa.Connection, run_a: str, run_b: str, seed: int) -> str | None:
    """The key of run B's comparison with run A as the runs are now; None when either is
    unfinished, missing or has no values kept with its summary (compared on request)."""
    h = hashlib.blake2b(digest_size=20)
    for part in (FORMAT, __version__, seed):
        _part(h, part)
    for run_id in (run_a, run_b):
        row = c.execute(
            sa.text("SELECT status, finished_at FROM suite_runs WHERE run_id = :run"),
            {"run": run_id},
        ).first()
        if row is None or row[0] in _UNFINISHED:
            return None
        for part in (run_id, row[0], row[1]):
            _part(h, part)
        n = 0
        for r in c.execute(
            sa.text(
                "SELECT subject, task, evaluator, item_ids_json, values_f8 FROM suite_run_values"
                " WHERE run_id = :run ORDER BY subject, task, evaluator"
            ),
            {"run": run_id},
        ):
            for part in r:
                _part(h, part)
            n += 1
        if not n:
            return None
    return h.hexdigest()


def kept(c: sa.Connection, run_a: str, run_b: str, key: str) -> dict[str, Any] | None:
    """Run B's comparison with run A kept under `key`, in its kept form; None if none is."""
    found = c.execute(
        sa.select(compared_t.c.payload_json).where(
            compared_t.c.run_id == run_b,
            compared_t.c.baseline_id == run_a,
            compared_t.c.state_key == key,
        )
    ).scalar()
    if found is None:
        return None
    loaded: dict[str, Any] = json.loads(unpacked(found))
    return loaded


def keep(c: sa.Connection, run_a: str, run_b: str, key: str, payload: dict[str, Any]) -> None:
    """Keep run B's comparison with run A under `key` (in place of an older one), in the
    caller's transaction: one row, written whole or not at all."""
    c.execute(
        upsert(c, compared_t, ("run_id", "baseline_id")),
        {
            "run_id": run_b,
            "baseline_id": run_a,
            "state_key": key,
            "payload_json": packed(json.dumps(payload)),
        },
    )
