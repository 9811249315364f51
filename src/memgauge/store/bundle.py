"""Runs moved between stores as one file: `memgauge runs export ID --format bundle` writes it,
`memgauge runs import FILE` records its runs in another store (SQLite or PostgreSQL), and
`memgauge gate --baseline FILE` gates against the runs in it without any store holding them
(CI on an ephemeral runner).

A bundle is JSON: `{"format": "memgauge-run-bundle", "schema_version": 1, "runs": [...]}`,
each run with its record (summary included), subjects, tasks, every item as the typed
`ItemRecord` (output, verdicts, failures), its LLM spend and the failures that belong to no
item, and the gate's verdict on it (`gate`: pass, fail, accepted, or null when never gated;
a bundle written before the gate kept verdicts has none, read as null). Importing writes the
rows as they were (status, times, attempts, verdict): the run reads back exactly as it read
where it was made, and a run that failed the gate stays out of later baselines there too.
"""

from __future__ import annotations

import json
from collections.abc import Hashable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Annotated, Any, Literal

import sqlalchemy as sa
from pydantic import ConfigDict, Field, StrictInt, StrictStr, ValidationError

from memgauge._util.model import Model
from memgauge._util.numbers import INT64_MAX
from memgauge.data.records import ENDED, ItemRecord, RunRecord, run_id_problem
from memgauge.errors import DataError, Problem, UsageError
from memgauge.store import item_rows
from memgauge.store.headline import headline
from memgauge.store.tables import (
    packed,
    stored_json,
    suite_run_failures,
    suite_run_usage,
    suite_runs,
)

__all__ = [
    "FORMAT",
    "BundleUsage",
    "bundle_runs",
    "export_bundle",
    "import_bundle",
    "read_bundle",
]

FORMAT = "memgauge-run-bundle"

#: a count the store keeps in a 64-bit column: 1e30 ended the import in the database's error
_Count = Annotated[StrictInt, Field(ge=0, le=INT64_MAX)]


class _Part(Model):
    model_config = ConfigDict(extra="forbid")


class BundleUsage(_Part):
    """One model's LLM spend in a run, as the store counts it (its fields are the counters)."""

    calls: _Count = 0
    cached: _Count = 0
    requests: _Count = 0
    failures: _Count = 0
    prompt_tokens: _Count = 0
    completion_tokens: _Count = 0


class _Task(_Part):
    task: StrictStr
    kind: StrictStr
    dataset: StrictStr | None = None
    dataset_sha256: StrictStr | None = None
    spec: dict[str, Any] | None = None
    n_items: _Count


class _Failure(_Part):
    subject: StrictStr
    task: StrictStr
    item_id: StrictStr | None = None
    stage: StrictStr
    kind: StrictStr
    message: StrictStr
    attempt: _Count
    at: StrictStr


class _Entry(Model):
    """What a bundle's run holds beside its record and items (read_bundle validates those)."""

    model_config = ConfigDict(extra="allow")

    gate: Literal["pass", "fail", "accepted"] | None = None
    subjects: dict[str, dict[str, Any]] = Field(default_factory=dict)
    tasks: list[_Task] = Field(default_factory=list)
    usage: dict[str, BundleUsage] = Field(default_factory=dict)
    run_failures: list[_Failure] = Field(default_factory=list)


def export_bundle(store: Any, run_ids: Sequence[str]) -> dict[str, Any]:
    """The bundle of `run_ids` from a `SuiteRunStore`. A run that has not ended is refused: its
    copy, read while its items were still being written, would be recorded elsewhere as
    `running`, owned by a process that drives it in another store."""
    runs = []
    for run_id in run_ids:
        run = store.get_run(run_id)
        if run is None:
            raise UsageError(f"no run {run_id!r} in {store.url}; see `memgauge runs list`")
        if run.status not in ENDED:
            raise UsageError(
                f"run {run_id} is {run.status}: a bundle holds runs that have ended; export it"
                f" once it has (`memgauge runs watch {run_id}` follows it), or, if its process"
                f" is gone, finish it first with `memgauge run SUITE --resume {run_id}`"
            )
        runs.append(
            {
                "run": run.model_dump(mode="json"),
                "gate": store.gate_verdict(run_id),
                "subjects": store.subjects(run_id),
                "tasks": store.tasks(run_id),
                "items": [i.model_dump(mode="json") for i in store.item_records(run_id)],
                "usage": store.usage(run_id),
                "run_failures": [f for f in store.failures(run_id) if f["item_id"] is None],
            }
        )
    return {"format": FORMAT, "schema_version": 1, "runs": runs}


def read_bundle(path: Path, *, most: int = INT64_MAX) -> list[dict[str, Any]]:
    """The runs of the bundle at `path`, validated (DataError naming the file and field);
    `most`: the largest integer (a count of usage, a task's or the run's items, an item's
    position or attempts, a failure's attempt, the run's pid) the store it goes to holds
    (PostgreSQL's INTEGER columns: `INT32_MAX`); less than -most - 1 is refused too."""

    def bad(field: str | None, message: str, line: int | None = None) -> DataError:
        return DataError(Problem(str(path), line, field, message))

    # here, not at the top: jsonio reads YAML too, which `runs list` (importing this module)
    # never needs
    from memgauge.data.jsonio import existing

    existing(path, "bundle")  # a FIFO would block the read until something writes to it
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"{path}: cannot read it ({exc})") from None
    except json.JSONDecodeError as exc:
        raise bad(
            None,
            f"not JSON ({exc.msg}); give a file written"
            " by `memgauge runs export ID --format bundle`",
            exc.lineno,
        ) from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise bad(
            "format",
            f"not a run bundle (expected format {FORMAT!r});"
            " write one with `memgauge runs export ID --format bundle`",
        )
    version = data.get("schema_version")
    if isinstance(version, int) and not isinstance(version, bool) and version > 1:
        # "export it again with this version" asked for what an older memgauge cannot do
        raise bad(
            "schema_version",
            f"version {version} was written by a newer memgauge (this one reads 1); upgrade"
            " memgauge to read it",
        )
    if version != 1:
        raise bad(
            "schema_version",
            f"version {version!r} is not one this memgauge reads (1); export it again with"
            " this version",
        )
    runs = data.get("runs")
    if not isinstance(runs, list):
        raise bad("runs", "must be a list of runs")
    out = []
    for n, entry in enumerate(runs):
        if not isinstance(entry, dict) or not isinstance(entry.get("run"), dict):
            raise bad(f"runs.{n}.run", "missing: each entry of runs holds its run's record")
        given = entry.get("items", [])
        if not isinstance(given, list):
            raise bad(f"runs.{n}.items", "must be a list of items")
        # a problem is named by the JSON path of its record (runs.N.run, runs.N.items.I), then
        # its field there
        where = f"runs.{n}"
        try:
            # each went into the store unread: a gate of "maybe", usage or failures of another
            # shape ended the import in the database's error (exit 70)
            parts = _Entry.model_validate(
                {k: v for k, v in entry.items() if k not in ("run", "items")}
            )
            where = f"runs.{n}.run"
            run = RunRecord.model_validate(entry["run"])
            # a bundle's "" or "../../etc" was imported as it was: a run no command could name;
            # checked here, where a run comes in: a store's runs are read as they are
            problem = run_id_problem(run.run_id)
            if problem is not None:
                raise bad(f"{where}.run_id", problem)
            items = []
            for i, item in enumerate(given):
                where = f"runs.{n}.items.{i}"
                items.append(ItemRecord.model_validate(item))
        except ValidationError as exc:
            err = exc.errors()[0]
            raise bad(".".join(str(p) for p in (where, *err["loc"])), err["msg"]) from None
        for field, count in _counts(parts, run, items):
            if not -most - 1 <= count <= most:
                # PostgreSQL's "integer out of range", SQLite's OverflowError: exit 70
                than, bound = ("more", most) if count > most else ("less", -most - 1)
                said = f"{count} is {than} than the store's integer columns hold ({bound})"
                raise bad(f"runs.{n}.{field}", said)
        out.append({**parts.model_dump(), "run": run, "items": items})
    # a second copy of a run, of a run's task or item ended the import in the store's UNIQUE
    # constraint (exit 70)
    again = "export it again with `memgauge runs export ID --format bundle`"
    for n, m in _repeated([e["run"].run_id for e in out]):
        raise bad(
            f"runs.{n}.run.run_id",
            f"run {out[n]['run'].run_id} is also runs.{m}: a bundle holds each run once; {again}",
        )
    for n, entry in enumerate(out):
        for i, j in _repeated([t["task"] for t in entry["tasks"]]):
            raise bad(
                f"runs.{n}.tasks.{i}.task",
                f"task {entry['tasks'][i]['task']!r} is also runs.{n}.tasks.{j}: a run holds"
                f" each task once; {again}",
            )
        items = entry["items"]
        for i, j in _repeated([(it.subject, it.task, it.item_id) for it in items]):
            raise bad(
                f"runs.{n}.items.{i}.item_id",
                f"item {items[i].item_id!r} of {items[i].subject}/{items[i].task} is also"
                f" runs.{n}.items.{j}: a run holds each item once; {again}",
            )
    return out


def _counts(
    parts: _Entry, run: RunRecord, items: Sequence[ItemRecord]
) -> Iterator[tuple[str, int]]:
    """(field, value) of each integer of a bundle's run the store keeps in an integer column:
    `parts`' counts, the run's, and its items' (their failures' attempts too)."""
    for model, usage in parts.usage.items():
        yield from ((f"usage.{model}.{k}", v) for k, v in usage.model_dump().items())
    yield from ((f"tasks.{i}.n_items", t.n_items) for i, t in enumerate(parts.tasks))
    yield from ((f"run_failures.{i}.attempt", f.attempt) for i, f in enumerate(parts.run_failures))
    yield from ((f"run.{k}", v) for k in ("n_items", "pid") if (v := getattr(run, k)) is not None)
    for i, item in enumerate(items):
        yield from ((f"items.{i}.{k}", getattr(item, k)) for k in ("seq", "attempts", "repeat"))
        yield from (
            (f"items.{i}.failures.{j}.attempt", f.attempt) for j, f in enumerate(item.failures)
        )


def _repeated(keys: Sequence[Hashable]) -> Iterator[tuple[int, int]]:
    """(i, j) for each key at place i that was first at place j."""
    first: dict[Hashable, int] = {}
    for i, key in enumerate(keys):
        j = first.setdefault(key, i)
        if j != i:
            yield i, j


def bundle_runs(paths: Iterable[Path], suite: str) -> tuple[list[RunRecord], set[str]]:
    """Every run of `suite` in the bundles at `paths` that a gate's baseline may count (a
    completed run with its summary), and the ids of those among them that failed the gate
    where they were made (and were not accepted): the baseline leaves them out, as in their
    own store, and says so. A bundle with no completed run of `suite` is a UsageError: a
    baseline that cannot count (the wrong file, the export of a run that failed or was
    cancelled) would let the gate pass with nothing to compare."""
    runs: list[RunRecord] = []
    failed: set[str] = set()
    for path in paths:
        entries = read_bundle(path)
        suites = sorted({e["run"].suite_name for e in entries})
        if suite not in suites:
            held = f" (its runs are of {', '.join(map(repr, suites))})" if suites else ""
            raise UsageError(
                f"--baseline {path}: it holds no run of suite {suite!r}{held}; give a bundle of"
                f" a run of {suite!r} (`memgauge runs export ID --format bundle`)"
            )
        own = [e for e in entries if e["run"].suite_name == suite]
        done = [e for e in own if e["run"].status == "completed" and e["run"].summary]
        if not done:
            held = ", ".join(
                f"{e['run'].run_id} {e['run'].status}"
                + ("" if e["run"].status != "completed" else " without a summary")
                for e in own
            )
            raise UsageError(
                f"--baseline {path}: it holds no completed run of suite {suite!r} ({held}),"
                " and only a completed run counts in a baseline; give a bundle of a completed"
                f" run of {suite!r} (`memgauge runs export ID --format bundle`)"
            )
        runs += [e["run"] for e in done]
        failed |= {e["run"].run_id for e in done if e.get("gate") == "fail"}
    return runs, failed


def import_bundle(conn: sa.Connection, entries: Sequence[dict[str, Any]]) -> list[str]:
    """Record the bundle's runs, as they were, in the caller's write transaction; a run whose
    id the store already holds is a UsageError (nothing is written)."""
    ids = [e["run"].run_id for e in entries]
    taken = conn.execute(sa.select(suite_runs.c.run_id).where(suite_runs.c.run_id.in_(ids))).all()
    if taken:
        raise UsageError(
            f"run {taken[0][0]} is already in this store; nothing was imported"
            " (delete it there, or import into another store)"
        )
    for entry in entries:
        run: RunRecord = entry["run"]
        items: list[ItemRecord] = entry["items"]
        row = run.model_dump(
            exclude={"schema_version", "suite", "settings", "provenance", "summary"}
        )
        row.update(
            suite_json=stored_json(run.suite),
            settings_json=stored_json(run.settings),
            provenance_json=stored_json(run.provenance),
            summary_json=None if run.summary is None else packed(run.summary.model_dump_json()),
            headline_json=None
            if run.summary is None
            else packed(headline(run.summary).model_dump_json()),
            owner=None,
            gate=entry.get("gate"),
        )
        conn.execute(sa.insert(suite_runs), row)
        item_rows.insert_plan(
            conn, run.run_id, entry.get("subjects") or {}, entry.get("tasks") or [], items
        )
        if items:
            item_rows.record_items(conn, run.run_id, items)
        item_rows.replace_queries(conn, run.run_id, run.summary)
        if run.summary is not None:
            item_rows.replace_values(conn, run.run_id)
        usage = entry.get("usage") or {}
        if usage:
            conn.execute(
                sa.insert(suite_run_usage),
                [{"run_id": run.run_id, "model": m, **v} for m, v in usage.items()],
            )
        for f in entry.get("run_failures") or []:
            conn.execute(sa.insert(suite_run_failures), {**f, "run_id": run.run_id})
    return ids
