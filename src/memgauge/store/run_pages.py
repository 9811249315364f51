"""What the viewer reads from the results store, a page at a time: runs with their counts, one
page of a run's items (filtered, searched, sorted), one item whole.

`RunReader` is a `SuiteRunStore` opened read-only (SQLite: `mode=ro`, `query_only`;
PostgreSQL: read-only transactions; no migration: see `memgauge.store.engine.open_read_only`),
so nothing it runs can change the store. Its SQL is the part both dialects share (bound
parameters by name, `IS DISTINCT FROM`, `IN` lists): the same pages on SQLite and PostgreSQL.
A page costs one query for its rows and one for the total (a search or a filter against a
baseline: one for the matching items' keys, in order), however large the run: a 10,000-item
run's first page reads 50 items, not 10,000.

Search looks in an item's id, category, input, expected value and output, and in its verdicts'
reasons and errors, case-insensitively. Outputs past a few hundred bytes are stored deflated and
JSON escapes non-ASCII text (`\\u00e9`), so SQL's `LIKE` alone cannot match them as written: on
SQLite a search is one query in which `LIKE` decides each value it decides exactly (all-ASCII
text without a backslash) and `_has`, registered as a SQL function, the rest (`_matches`); on
PostgreSQL the filtered run's searchable columns are read once, in the page's order, and
matched in Python (`_has`). Then the page's rows are read whole.

A big run's pages never read all of it: `changed` / `regressed` against a baseline compare
verdict by verdict only the items whose verdict digests differ (`_MAY_DIFFER`); one item's page
reads its query's detail from its own row (`suite_run_queries`), and the compare page each
measure's values as stored with the summary (`suite_run_values`), not every verdict.
"""

from __future__ import annotations

import json
import sys
import zlib
from array import array
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import sqlalchemy as sa

from memgauge.data.records import Failure, ItemRecord, RunRecord, ScoreRecord
from memgauge.store import compared_rows
from memgauge.store.item_rows import (
    KEY,
    SCORES_OF_RUN,
    MeasureValues,
    measure_values,
    score_record,
)
from memgauge.store.item_rows import item_record as _item_record
from memgauge.store.item_rows import loads_item as _loads_item
from memgauge.store.search_docs import SEPARATOR, text_forms
from memgauge.store.suite_runs import SuiteRunStore
from memgauge.store.tables import suite_run_queries as _queries_t
from memgauge.store.tables import unpacked as _unpacked
from memgauge.store.url import StoreURL

__all__ = [
    "SHOWS",
    "SORTS",
    "ComparisonInputs",
    "ItemPage",
    "ItemQuery",
    "ItemRow",
    "RunReader",
    "VerdictPair",
]

#: one verdict of run B with run A's on the same item and evaluator: subject, task, item id,
#: evaluator, then B's value, passed, error, then A's
VerdictPair = tuple[str, str, str, str, Any, Any, Any, Any, Any, Any]


@dataclass(frozen=True)
class ComparisonInputs:
    """What a run's comparison with the run before it (`baseline`) is made from, and the key
    it is kept under (`compared_rows.state_key`)."""

    baseline: str
    seed: int
    key: str
    measures_a: MeasureValues
    measures_b: MeasureValues
    pairs: list[VerdictPair]


#: the item filters: every item; not passing (a failed verdict, or an error); passing (every
#: pass/fail verdict passed, no error); errors (the item or a verdict could not be scored);
#: changed against the baseline run (a verdict's value, pass or error differs); regressed
#: against it (passed there, fails or errs here; a lower value where no pass/fail is decided)
SHOWS = ("all", "failures", "passes", "errors", "changed", "regressed")
SORTS = ("seq", "item", "score", "duration", "status")


def _same_item(alias: str) -> str:
    """SQL: the row `alias` is of item `i`'s (the same run, subject, task and item id)."""
    return " AND ".join(f"{alias}.{k} = i.{k}" for k in KEY)


_SAME_ITEM = _same_item("s")
_BASE_PAIR = (
    "b.run_id = :base AND b.subject = s.subject AND b.task = s.task AND b.item_id = s.item_id"
    " AND b.evaluator = s.evaluator"
)
_ERROR = f"(i.status = 'failed' OR EXISTS (SELECT 1 FROM suite_run_scores s WHERE {_SAME_ITEM} AND s.error IS NOT NULL))"
_FAILED_VERDICT = f"EXISTS (SELECT 1 FROM suite_run_scores s WHERE {_SAME_ITEM} AND s.passed = 0)"
_PASSED_VERDICT = f"EXISTS (SELECT 1 FROM suite_run_scores s WHERE {_SAME_ITEM} AND s.passed = 1)"
#: item `i`'s row in the baseline run
_IN_BASE = (
    "FROM suite_run_items bi WHERE bi.run_id = :base AND bi.subject = i.subject"
    " AND bi.task = i.task AND bi.item_id = i.item_id"
)
_BASE_ITEM = f"SELECT status {_IN_BASE}"
_BASE_DIGEST = f"SELECT verdicts_digest {_IN_BASE}"
#: the item's verdicts may differ from the baseline's: their digests differ, or either is not
#: known (`stored_forms.verdicts_digest`); equal digests, equal verdicts, and no verdict of the
#: item is looked up in the baseline's (800,000 lookups for a 100,000-item run, for each of
#: the page's count and rows)
_MAY_DIFFER = f"(i.verdicts_digest IS NULL OR ({_BASE_DIGEST}) IS DISTINCT FROM i.verdicts_digest)"
_WHERE: dict[str, str] = {
    "all": "1 = 1",
    "errors": _ERROR,
    "failures": f"({_FAILED_VERDICT} OR {_ERROR})",
    "passes": f"({_PASSED_VERDICT} AND NOT {_FAILED_VERDICT} AND NOT {_ERROR})",
    # `<>`, not IS DISTINCT FROM: an item the baseline does not have (a repeat it was not
    # asked, `ID#rR`) has nothing to differ from, as on the compare page that links here
    "changed": (
        f"(({_BASE_ITEM}) <> i.status OR {_MAY_DIFFER} AND EXISTS (SELECT 1"
        f" FROM suite_run_scores s"
        f" JOIN suite_run_scores b ON {_BASE_PAIR} WHERE {_SAME_ITEM} AND (s.passed IS DISTINCT"
        " FROM b.passed OR (s.error IS NULL) <> (b.error IS NULL) OR s.value IS DISTINCT FROM"
        " b.value)))"
    ),
    "regressed": (
        f"((i.status = 'failed' AND ({_BASE_ITEM}) = 'completed') OR {_MAY_DIFFER} AND EXISTS"
        " (SELECT 1"
        f" FROM suite_run_scores s JOIN suite_run_scores b ON {_BASE_PAIR} WHERE {_SAME_ITEM}"
        " AND b.error IS NULL AND (s.error IS NOT NULL OR (b.passed = 1 AND s.passed = 0)"
        " OR (b.passed IS NULL AND s.passed IS NULL AND s.value < b.value - 1e-9))))"
    ),
}
_ORDER = {
    "seq": "i.subject, i.task, i.seq",
    "item": "i.item_id, i.subject, i.task",
    "score": "i.score IS NULL, i.score, i.subject, i.task, i.seq",
    "duration": "i.duration_ms IS NULL, i.duration_ms, i.subject, i.task, i.seq",
    "status": "i.status, i.subject, i.task, i.seq",
}
#: the columns a search reads per item, and per verdict
_SEARCHED = ("i.item_id", "i.category", "i.input_json", "i.expected_json", "o.output_json")
_SAME_OUTPUT = _same_item("o")
_OUTPUT_JOIN = f" LEFT JOIN suite_run_outputs o ON {_SAME_OUTPUT}"
_SAME_SEARCH = _same_item("x")


def _has(value: str | bytes | None, needle: str) -> int:
    """1 when `value` (a stored column: text, JSON or a deflated blob) contains `needle`
    (already lower-case), ignoring case, in one of its forms (`search_docs.text_forms`: JSON's
    escapes read as the characters they stand for)."""
    if value is None:
        return 0
    if isinstance(value, bytes) and value[:1] == b"\x78":
        data = zlib.decompress(value)
        if data.isascii() and b"\\" not in data:
            # all ASCII: its bytes' case folds as its text's would, without decoding it
            return int(needle.encode() in data.lower())
        text = data.decode()
    else:
        text = _unpacked(value) if isinstance(value, bytes) else str(value)
    return int(any(needle in form for form in text_forms(text)))


#: `_has` as a SQL function of the viewer's SQLite connections
HAS_FUNCTION = "memgauge_has"


def _matches(column: str) -> str:
    """Whether `column` holds the needle (`:needle`), as SQL on SQLite: its own `LIKE` where
    that says what `_has` says, else `_has` itself. `LIKE` ignores the case of ASCII letters
    only and reads neither deflated values nor JSON's escapes, so it decides a text that is all
    ASCII with no backslash (`\\u00e9`, `\\"`, `\\\\`); the rest (a deflated output, a text
    with a character past ASCII: more bytes than characters, whose case Python folds; an
    escape) goes to `_has`. A 100,000-item retrieval run's 700,000 verdict reasons are then
    never read into Python, and only the matching items are sorted."""
    return (
        f"(CASE WHEN {column} IS NULL THEN 0 WHEN typeof({column}) = 'blob'"
        f" OR length(CAST({column} AS BLOB)) > length({column})"
        f" OR instr({column}, :escape) > 0 THEN {HAS_FUNCTION}({column}, :needle)"
        f" WHEN {column} LIKE :like ESCAPE '!' THEN 1 ELSE 0 END)"
    )


def _glob_containing(needle: str) -> str:
    """The GLOB pattern of the texts that contain `needle` as it is (GLOB keeps case; its `*`,
    `?` and `[` are bracketed, as SQLite reads them literally there)."""
    special = {"*": "[*]", "?": "[?]", "[": "[[]"}
    return "*" + "".join(special.get(c, c) for c in needle) + "*"


def _match_params(needle: str) -> dict[str, str]:
    """`_matches`'s parameters for `needle` (lower-case)."""
    escaped = needle.replace("!", "!!").replace("%", "!%").replace("_", "!_")
    return {"escape": "\\", "like": f"%{escaped}%", "needle": needle}


#: one item's rows in a table keyed by run, subject, task and item
_ONE_ITEM = "run_id = :run AND subject = :subject AND task = :task AND item_id = :item"

#: a page row's columns (see `ItemRow`)
_PAGE_SELECT = (
    "SELECT i.subject, i.task, i.item_id, i.seq, i.status, i.category, i.input_json,"
    " i.expected_json, o.output_json, i.score, i.duration_ms, (SELECT COUNT(*)"
    f" FROM suite_run_failures f WHERE {_same_item('f')})"
)

#: an item's columns, in the order `item_rows.item_record` reads them
_ITEM_COLUMNS = (
    "i.subject, i.task, i.item_id, i.seq, i.status, i.attempts, i.category, i.input_json,"
    " i.expected_json, i.score, i.started_at, i.finished_at, i.duration_ms, o.output_json,"
    " o.latency_json, o.extra_json, i.repeat_index"
)


def _stored_values(stored: bytes) -> array[float]:
    """Float64 values as `item_rows.values_bytes` stored them."""
    out = array("d")
    out.frombytes(stored)
    if sys.byteorder != "little":
        out.byteswap()
    return out


def _by_subject_task(keys: Iterable[tuple[str, str, str]]) -> dict[tuple[str, str], list[str]]:
    """Item keys (subject, task, item id) as the sorted item ids of each (subject, task): a
    read keyed by all three uses the whole primary key; by run and item id alone it reads
    every row of the run (every verdict of a 100,000-item run, for a page of 50)."""
    out: dict[tuple[str, str], set[str]] = {}
    for subject, task, item_id in keys:
        out.setdefault((subject, task), set()).add(item_id)
    return {k: sorted(v) for k, v in out.items()}


#: the candidate runs of optimizations: a run in `optimization_iterations`
_CANDIDATE = "SELECT 1 FROM optimization_iterations o WHERE o.run_id = r.run_id"


def _run_filters(
    suite: str | None, status: str | None, kind: str | None
) -> tuple[list[str], dict[str, Any]]:
    """The runs page's filters on `suite_runs r`: SQL conditions and their parameters."""
    clauses: list[str] = []
    args: dict[str, Any] = {}
    for column, value in (("suite_name", suite), ("status", status), ("kind", kind)):
        if value:
            clauses.append(f"r.{column} = :{column}")
            args[column] = value
    return clauses, args


@dataclass(frozen=True)
class ItemQuery:
    """Which page of a run's items: the filter, search, sort and page, as the URL gives them."""

    subject: str | None = None
    task: str | None = None
    show: str = "all"
    q: str = ""
    sort: str = "seq"
    desc: bool = False
    page: int = 1
    per_page: int = 50
    baseline: str | None = None


@dataclass
class ItemRow:
    """One item of a page: what the table shows, and its verdicts (with the baseline's)."""

    subject: str
    task: str
    item_id: str
    seq: int
    status: str
    category: str | None
    input: Any
    expected: Any
    output: Any
    score: float | None
    duration_ms: float | None
    n_failures: int
    scores: list[ScoreRecord] = field(default_factory=list)
    baseline: dict[str, ScoreRecord] = field(default_factory=dict)


@dataclass
class ItemPage:
    """A page of items and how many match in all."""

    total: int
    rows: list[ItemRow]


class RunReader(SuiteRunStore):
    """A results store opened read-only, with the viewer's paged reads."""

    def __init__(self, where: str | Path | StoreURL) -> None:
        super().__init__(where, read_only=True)
        if self.url.is_sqlite:
            raw = self._conn.connection.driver_connection
            assert raw is not None
            raw.create_function(HAS_FUNCTION, 2, _has, deterministic=True)

    def _sql(
        self, sql: str, params: dict[str, Any] | None = None, *, expanding: Sequence[str] = ()
    ) -> list[tuple[Any, ...]]:
        """Every row of `sql` (named parameters; those in `expanding` are `IN` lists), read in
        one snapshot; each call its own short transaction, so a viewer left open sees runs as
        they advance."""
        statement = sa.text(sql)
        if expanding:
            statement = statement.bindparams(*(sa.bindparam(n, expanding=True) for n in expanding))
        with self._read() as c:
            return [tuple(r) for r in c.execute(statement, params or {})]

    # --- runs ------------------------------------------------------------------------------

    def runs_overview(
        self,
        *,
        suite: str | None = None,
        status: str | None = None,
        kind: str | None = None,
        candidates: bool = True,
        limit: int = 200,
    ) -> list[dict[str, Any]]:
        """The newest runs first, with item counts, subjects, tasks, failure records, the
        owner's `pid`, `host` and `pid_start` (whether a `running` run is) and `study_id`:
        the optimization the run is a candidate of (None for a run of its own).
        `candidates=False` leaves the candidates out (the runs page shows each study once,
        `study_groups`), so an optimization's runs take no place among the `limit` newest."""
        clauses, args = _run_filters(suite, status, kind)
        if not candidates:
            clauses.append(f"NOT EXISTS ({_CANDIDATE})")
        args["limit"] = limit
        where = f"WHERE {' AND '.join(clauses)}" if clauses else ""
        rows = self._sql(
            "SELECT r.run_id, r.suite_name, r.kind, r.status, r.reason, r.created_at,"
            " r.started_at, r.finished_at, r.heartbeat_at, r.n_items,"
            " (SELECT COUNT(*) FROM suite_run_items i WHERE i.run_id = r.run_id"
            "  AND i.status = 'completed'),"
            " (SELECT COUNT(*) FROM suite_run_items i WHERE i.run_id = r.run_id"
            "  AND i.status = 'failed'),"
            " (SELECT COUNT(*) FROM suite_run_failures f WHERE f.run_id = r.run_id),"
            " (SELECT MIN(o.study_id) FROM optimization_iterations o WHERE o.run_id = r.run_id),"
            " r.pid, r.host, r.pid_start"
            f" FROM suite_runs r {where} ORDER BY r.created_at DESC, r.run_id DESC LIMIT :limit",
            args,
        )
        ids = [r[0] for r in rows]
        subjects = self._grouped("suite_run_subjects", "subject", ids)
        tasks = self._grouped("suite_run_tasks", "task", ids)
        keys = (
            "run_id",
            "suite",
            "kind",
            "status",
            "reason",
            "created_at",
            "started_at",
            "finished_at",
            "heartbeat_at",
            "n_items",
            "n_completed",
            "n_failed",
        )
        return [
            {
                **dict(zip(keys, r[:12], strict=True)),
                "subjects": subjects.get(r[0], []),
                "tasks": tasks.get(r[0], []),
                "n_failure_records": r[12],
                "study_id": r[13],
                **dict(zip(("pid", "host", "pid_start"), r[14:17], strict=True)),
            }
            for r in rows
        ]

    def study_groups(
        self,
        *,
        suite: str | None = None,
        status: str | None = None,
        kind: str | None = None,
        limit: int = 200,
    ) -> list[dict[str, Any]]:
        """Each optimization with candidate runs that pass the same filters as
        `runs_overview`, the newest first: the study (suite, objective, subject, strategy,
        status), how many of its runs pass, how many of those are failed or say they are going
        (`n_live`: queued or running as stored; the runs page counts those whose owner is not
        gone, `going_candidates`), and the newest one's creation time."""
        clauses, args = _run_filters(suite, status, kind)
        args["limit"] = limit
        where = "".join(f" AND {c}" for c in clauses)
        rows = self._sql(
            "SELECT s.study_id, s.suite_name, s.task, s.measure, s.subject, s.strategy,"
            " s.status, COUNT(DISTINCT r.run_id),"
            " COUNT(DISTINCT CASE WHEN r.status IN ('queued', 'running') THEN r.run_id END),"
            " COUNT(DISTINCT CASE WHEN r.status = 'failed' THEN r.run_id END),"
            " MAX(r.created_at)"
            " FROM suite_runs r JOIN optimization_iterations o ON o.run_id = r.run_id"
            f" JOIN optimization_studies s ON s.study_id = o.study_id WHERE 1 = 1{where}"
            " GROUP BY s.study_id, s.suite_name, s.task, s.measure, s.subject, s.strategy,"
            " s.status ORDER BY MAX(r.created_at) DESC, s.study_id DESC LIMIT :limit",
            args,
        )
        keys = (
            "study_id",
            "suite",
            "task",
            "measure",
            "subject",
            "strategy",
            "status",
            "n_runs",
            "n_live",
            "n_failed",
            "created_at",
        )
        return [dict(zip(keys, r, strict=True)) for r in rows]

    def going_candidates(
        self, *, suite: str | None = None, status: str | None = None, kind: str | None = None
    ) -> list[dict[str, Any]]:
        """The candidate runs `study_groups` counts as going (`n_live`: queued or running),
        each with its study and what `liveness` reads of it (its owner may be gone)."""
        clauses, args = _run_filters(suite, status, kind)
        where = "".join(f" AND {c}" for c in clauses)
        rows = self._sql(
            "SELECT DISTINCT o.study_id, r.run_id, r.status, r.pid, r.host, r.pid_start,"
            " r.heartbeat_at FROM suite_runs r"
            " JOIN optimization_iterations o ON o.run_id = r.run_id"
            f" WHERE r.status IN ('queued', 'running'){where}",
            args,
        )
        keys = ("study_id", "run_id", "status", "pid", "host", "pid_start", "heartbeat_at")
        return [dict(zip(keys, r, strict=True)) for r in rows]

    def _grouped(self, table: str, column: str, run_ids: Sequence[str]) -> dict[str, list[str]]:
        """`column` of `table` per run of `run_ids`, sorted."""
        out: dict[str, list[str]] = {}
        if not run_ids:
            return out
        for run_id, value in self._sql(
            f"SELECT run_id, {column} FROM {table} WHERE run_id IN :ids ORDER BY run_id, {column}",
            {"ids": list(run_ids)},
            expanding=("ids",),
        ):
            out.setdefault(run_id, []).append(value)
        return out

    def choices(self) -> dict[str, list[str]]:
        """The suites, statuses and kinds there are runs of (the runs page's filters)."""
        out: dict[str, list[str]] = {}
        for column in ("suite_name", "status", "kind"):
            out[column] = [
                str(r[0]) for r in self._sql(f"SELECT DISTINCT {column} FROM suite_runs ORDER BY 1")
            ]
        return out

    def suite_runs(self, run: RunRecord) -> list[dict[str, Any]]:
        """The runs of `run`'s suite made before it, newest first: what it is compared with
        (its baselines, as the gate's are: a later run is compared with it, from its page)."""
        rows = self._sql(
            f"{compared_rows.EARLIER_RUNS} LIMIT 100",
            {"suite": run.suite_name, "created": run.created_at, "run": run.run_id},
        )
        return [{"run_id": r[0], "status": r[1], "created_at": r[2]} for r in rows]

    def kept_comparison(self, run_a: str, run_b: str, seed: int) -> dict[str, Any] | None:
        """Run B's comparison with run A as kept when B was recorded (`compared_rows`), if it
        was made from the runs as they are now; else None (compare on request)."""
        if self.url.is_sqlite and not self._sql(
            "SELECT 1 FROM sqlite_master WHERE name = 'suite_run_compared'"
        ):
            return None  # a copy opened before its upgrade (revision 0024) keeps none
        with self._read() as c:
            key = compared_rows.state_key(c, run_a, run_b, seed)
            return None if key is None else compared_rows.kept(c, run_a, run_b, key)

    def comparison_inputs(self, run_id: str) -> ComparisonInputs | None:
        """What run `run_id`'s comparison with the suite's run before it is made from, when its
        recording should keep it (`compared_rows.KEEP_FROM` items or more, both runs finished,
        none kept for them as they are); else None."""
        with self._read() as c:
            run = c.execute(
                sa.text(
                    "SELECT suite_name, created_at, settings_json FROM suite_runs"
                    " WHERE run_id = :run"
                ),
                {"run": run_id},
            ).first()
            if run is None:
                return None
            earlier = c.execute(
                sa.text(f"{compared_rows.EARLIER_RUNS} LIMIT 1"),
                {"suite": run[0], "created": run[1], "run": run_id},
            ).first()
            size = c.execute(
                sa.text("SELECT COUNT(*) FROM suite_run_items WHERE run_id = :run"),
                {"run": run_id},
            ).scalar()
            if earlier is None or int(size or 0) < compared_rows.KEEP_FROM:
                return None
            base = str(earlier[0])
            seed = int(json.loads(run[2]).get("seed", 0))
            key = compared_rows.state_key(c, base, run_id, seed)
            if key is None or compared_rows.kept(c, base, run_id, key) is not None:
                return None
        return ComparisonInputs(
            base,
            seed,
            key,
            self.measure_values(base),
            self.measure_values(run_id),
            self.verdict_pairs(base, run_id),
        )

    def run_failures(self, run_id: str) -> list[dict[str, Any]]:
        """Failures that belong to no single item (a subject that could not start)."""
        rows = self._sql(
            "SELECT subject, task, stage, kind, message, attempt, at FROM suite_run_failures"
            " WHERE run_id = :run AND item_id IS NULL ORDER BY failure_id",
            {"run": run_id},
        )
        keys = ("subject", "task", "stage", "kind", "message", "attempt", "at")
        return [dict(zip(keys, r, strict=True)) for r in rows]

    # --- items -----------------------------------------------------------------------------

    def item_page(self, run_id: str, query: ItemQuery) -> ItemPage:
        """One page of the run's items (see `SHOWS` and `SORTS`); `changed` and `regressed`
        need `query.baseline`, and show every item without one."""
        show = query.show if query.show in _WHERE else "all"
        if show in ("changed", "regressed") and not query.baseline:
            show = "all"
        clauses = ["i.run_id = :run", _WHERE[show]]
        params: dict[str, Any] = {"run": run_id}
        if show in ("changed", "regressed"):
            params["base"] = query.baseline
        if query.subject:
            clauses.append("i.subject = :subject")
            params["subject"] = query.subject
        if query.task:
            clauses.append("i.task = :task")
            params["task"] = query.task
        where = " AND ".join(clauses)
        order = _ORDER.get(query.sort, _ORDER["seq"])
        if query.desc:
            order = ", ".join(
                part if " IS NULL" in part else f"{part} DESC" for part in order.split(", ")
            )
        per_page = max(1, query.per_page)
        offset = (max(1, query.page) - 1) * per_page
        needle = query.q.strip().lower()
        if needle or show in ("changed", "regressed"):
            # the filter evaluated once, for the count and the page alike (a baseline's is the
            # dearest: each item looked up in the baseline run)
            keys = (
                self._search(run_id, where, order, params, needle)
                if needle
                else [
                    (r[0], r[1], r[2])
                    for r in self._sql(
                        "SELECT i.subject, i.task, i.item_id FROM suite_run_items i"
                        f" WHERE {where} ORDER BY {order}",
                        params,
                    )
                ]
            )
            total = len(keys)
            wanted = keys[offset : offset + per_page]
            rows = self._page_rows(run_id, wanted)
        else:
            (total,) = self._sql(f"SELECT COUNT(*) FROM suite_run_items i WHERE {where}", params)[0]
            rows = self._sql(
                f"{_PAGE_SELECT} FROM suite_run_items i{_OUTPUT_JOIN} WHERE {where}"
                f" ORDER BY {order} LIMIT :limit OFFSET :offset",
                {**params, "limit": per_page, "offset": offset},
            )
        page = [
            ItemRow(
                subject=r[0],
                task=r[1],
                item_id=r[2],
                seq=r[3],
                status=r[4],
                category=r[5],
                input=_loads_item(r[6]),
                expected=_loads_item(r[7]),
                output=None if r[8] is None else _loads_item(r[8]),
                score=r[9],
                duration_ms=r[10],
                n_failures=r[11],
            )
            for r in rows
        ]
        self._attach_scores(run_id, page, query.baseline)
        return ItemPage(total=int(total), rows=page)

    def _search(
        self, run_id: str, where: str, order: str, params: dict[str, Any], needle: str
    ) -> list[tuple[str, str, str]]:
        """The keys of the items that `where` keeps and that contain `needle`, in `order`,
        each value matched as stored (see `_has`): on SQLite in the query (`_matches`), on
        PostgreSQL by reading the searchable columns once, in order."""
        if self.url.is_sqlite:
            in_verdict = f"{_matches('s.reason')} OR {_matches('s.error')}"
            verdicts_match = (
                f"EXISTS (SELECT 1 FROM suite_run_scores s WHERE {_SAME_ITEM} AND ({in_verdict}))"
            )
            args = {**params, **_match_params(needle)}
            documented = self._documented(run_id)
            if documented is None or SEPARATOR in needle or "\x00" in needle:
                # every value matched as stored (a needle with the documents' separator, or a
                # NUL, which `LIKE` reads as the pattern's end, or a store without documents)
                in_item = " OR ".join(_matches(c) for c in _SEARCHED)
                match = f"({in_item} OR {verdicts_match})"
                source = f"suite_run_items i{_OUTPUT_JOIN}"
            else:
                # the items' documents (`search_docs`) decide, read once each; an item without
                # one (a NUL or a lone surrogate in its values) is matched value by value
                # GLOB, not instr: the same substring of a document (case kept, its special
                # characters bracketed), found about 3x cheaper (SQLite's pattern matcher
                # looks for the first character with a fast loop; instr compares at every one)
                match = (
                    "(i.subject, i.task, i.item_id) IN (SELECT x.subject, x.task, x.item_id FROM"
                    " suite_run_search x WHERE x.run_id = :run AND x.doc GLOB :glob)"
                )
                args["glob"] = _glob_containing(needle)
                if not documented:
                    output = f"(SELECT o.output_json FROM suite_run_outputs o WHERE {_SAME_OUTPUT})"
                    in_item = " OR ".join(_matches(c) for c in (*_SEARCHED[:-1], output))
                    match = (
                        f"({match} OR NOT EXISTS (SELECT 1 FROM suite_run_search x WHERE"
                        f" {_SAME_SEARCH}) AND ({in_item} OR {verdicts_match}))"
                    )
                source = "suite_run_items i"
            return [
                (r[0], r[1], r[2])
                for r in self._sql(
                    f"SELECT i.subject, i.task, i.item_id FROM {source}"
                    f" WHERE {where} AND {match} ORDER BY {order}",
                    args,
                )
            ]
        in_verdicts = {
            (r[0], r[1], r[2])
            for r in self._sql(
                "SELECT subject, task, item_id, reason, error FROM suite_run_scores"
                " WHERE run_id = :run AND (reason IS NOT NULL OR error IS NOT NULL)",
                {"run": run_id},
            )
            if _has(r[3], needle) or _has(r[4], needle)
        }
        found = []
        for r in self._sql(
            f"SELECT i.subject, i.task, i.item_id, {', '.join(_SEARCHED)}"
            f" FROM suite_run_items i{_OUTPUT_JOIN} WHERE {where} ORDER BY {order}",
            params,
        ):
            key = (r[0], r[1], r[2])
            if key in in_verdicts or any(_has(value, needle) for value in r[3:]):
                found.append(key)
        return found

    def _documented(self, run_id: str) -> bool | None:
        """Whether every item of the run has its search document (None: the store keeps
        none, as a copy opened before its upgrade)."""
        kept = self._sql("SELECT 1 FROM sqlite_master WHERE name = 'suite_run_search'")
        if not kept:
            return None
        ((items, documents),) = self._sql(
            "SELECT (SELECT COUNT(*) FROM suite_run_items WHERE run_id = :run),"
            " (SELECT COUNT(*) FROM suite_run_search WHERE run_id = :run)",
            {"run": run_id},
        )
        return bool(items == documents)

    def _page_rows(
        self, run_id: str, keys: Sequence[tuple[str, str, str]]
    ) -> list[tuple[Any, ...]]:
        """The page's rows of the items `keys`, in their order."""
        by_key: dict[tuple[str, str, str], tuple[Any, ...]] = {}
        for (subject, task), ids in _by_subject_task(keys).items():
            for r in self._sql(
                f"{_PAGE_SELECT} FROM suite_run_items i{_OUTPUT_JOIN} WHERE i.run_id = :run"
                " AND i.subject = :subject AND i.task = :task AND i.item_id IN :ids",
                {"run": run_id, "subject": subject, "task": task, "ids": ids},
                expanding=("ids",),
            ):
                by_key[(r[0], r[1], r[2])] = r
        return [by_key[k] for k in keys if k in by_key]

    def _attach_scores(self, run_id: str, rows: Sequence[ItemRow], baseline: str | None) -> None:
        if not rows:
            return
        by_key = {(r.subject, r.task, r.item_id): r for r in rows}
        groups = _by_subject_task(by_key)
        for rid, target in ((run_id, "scores"), (baseline, "baseline")):
            if rid is None:
                continue
            found = [
                s
                for (subject, task), ids in groups.items()
                for s in self._sql(
                    "SELECT s.subject, s.task, s.item_id, s.evaluator, s.value, s.passed,"
                    " s.reason, s.error FROM suite_run_scores s WHERE s.run_id = :run"
                    " AND s.subject = :subject AND s.task = :task AND s.item_id IN :ids"
                    " ORDER BY s.seq",
                    {"run": rid, "subject": subject, "task": task, "ids": ids},
                    expanding=("ids",),
                )
            ]
            for s in found:
                row = by_key.get((s[0], s[1], s[2]))
                if row is None:  # the same item id under another subject or task
                    continue
                verdict = ScoreRecord(
                    evaluator=s[3],
                    value=s[4],
                    passed=None if s[5] is None else bool(s[5]),
                    reason=s[6] or "",
                    error=s[7],
                )
                if target == "scores":
                    row.scores.append(verdict)
                else:
                    row.baseline[verdict.evaluator] = verdict

    def measure_values(self, run_id: str) -> MeasureValues:
        """Each (subject, task, evaluator)'s values of the run in item id order, as stored with
        its summary (`suite_run_values`); for a run without (still going), from its verdicts."""
        rows = self._sql(
            "SELECT subject, task, evaluator, item_ids_json, values_f8 FROM suite_run_values"
            " WHERE run_id = :run",
            {"run": run_id},
        )
        if not rows:
            return measure_values(self._sql(SCORES_OF_RUN.text, {"run": run_id}))
        # a task's evaluators score the same items: their ids are parsed once
        ids: dict[str | bytes, list[str]] = {}
        out: MeasureValues = {}
        for r in rows:
            stored = r[3] if isinstance(r[3], str) else bytes(r[3])
            if stored not in ids:
                ids[stored] = _loads_item(stored)
            out[(r[0], r[1], r[2])] = (ids[stored], _stored_values(r[4]))
        return out

    def verdict_pairs(self, run_a: str, run_b: str) -> list[VerdictPair]:
        """Run B's verdicts with A's on the same item and evaluator (`VerdictPair`) that
        differ in value, pass or error, of the items whose verdict digests differ (or are not
        known): every pair that differs, and no item whose verdicts are A's."""
        return cast(
            "list[VerdictPair]",
            self._sql(
                # CROSS JOIN: SQLite keeps this order, the items (most of them left out by their
                # digests) first; it put the run's 700,000 verdicts first (2.5 s at 100,000)
                "SELECT s.subject, s.task, s.item_id, s.evaluator, s.value, s.passed, s.error,"
                " x.value, x.passed, x.error FROM suite_run_items i CROSS JOIN suite_run_scores s"
                " CROSS JOIN suite_run_scores x WHERE i.run_id = :run AND"
                f" {_MAY_DIFFER} AND {_SAME_ITEM} AND x.run_id = :base AND x.subject = s.subject"
                " AND x.task = s.task AND x.item_id = s.item_id AND x.evaluator = s.evaluator"
                # a pair whose value, pass and error are the same is no change: not read
                " AND (s.value IS DISTINCT FROM x.value OR s.passed IS DISTINCT FROM x.passed"
                " OR s.error IS DISTINCT FROM x.error)",
                {"run": run_b, "base": run_a},
            ),
        )

    def item(self, run_id: str, subject: str, task: str, item_id: str) -> ItemRecord | None:
        """One item whole: input, expected, output, latency, every verdict with its detail and
        raw reply, every failure."""
        key = {"run": run_id, "subject": subject, "task": task, "item": item_id}
        found = self._sql(
            f"SELECT {_ITEM_COLUMNS} FROM suite_run_items i{_OUTPUT_JOIN} WHERE i.run_id = :run"
            " AND i.subject = :subject AND i.task = :task AND i.item_id = :item",
            key,
        )
        if not found:
            return None
        r = found[0]
        scores = []
        for s in self._sql(
            "SELECT evaluator, value, passed, reason, error, detail_json, raw_reply"
            f" FROM suite_run_scores WHERE {_ONE_ITEM} ORDER BY seq",
            key,
        ):
            detail = _loads_item(s[5])
            detail = detail if isinstance(detail, dict) else {}
            scores.append(score_record(s[:5], detail, s[6]))
        failures = [
            Failure(stage=f[0], kind=f[1], message=f[2], attempt=f[3] or 1, at=f[4])
            for f in self._sql(
                "SELECT stage, kind, message, attempt, at FROM suite_run_failures WHERE"
                f" {_ONE_ITEM} ORDER BY failure_id",
                key,
            )
        ]
        return _item_record(r, scores, failures)

    def task_items(self, run_id: str, task: str) -> list[ItemRecord]:
        """Every item of one task, whole (the extraction page's matched pairs, per case)."""
        keys = self._sql(
            "SELECT subject, item_id FROM suite_run_items WHERE run_id = :run AND task = :task"
            " ORDER BY subject, seq",
            {"run": run_id, "task": task},
        )
        return [it for s, i in keys if (it := self.item(run_id, s, task, i)) is not None]

    def query_detail(self, run_id: str, task: str, subject: str, query_id: str) -> dict[str, Any]:
        """What the run's ir aggregate recorded of one query of `subject` (its agent-metric
        values, its judgments' channels, its ranking before expansion); {} when it has none.
        Its own row (`suite_run_queries`, written with the summary), never the summary."""
        with self._read() as c:
            stored = c.execute(
                sa.select(_queries_t.c.detail_json).where(
                    _queries_t.c.run_id == run_id,
                    _queries_t.c.task == task,
                    _queries_t.c.subject == subject,
                    _queries_t.c.query_id == query_id,
                )
            ).scalar()
        if stored is None:
            return {}
        found = _loads_item(stored)
        return dict(found) if isinstance(found, dict) else {}

    def table_counts(self) -> dict[str, int]:
        """Rows per table (a test's proof that reading changed nothing)."""
        with self._read() as c:
            names = sorted(sa.inspect(c).get_table_names())
        return {n: int(self._sql(f'SELECT COUNT(*) FROM "{n}"')[0][0]) for n in names}
