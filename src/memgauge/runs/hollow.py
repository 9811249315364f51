"""A memory subject that holds nothing: its items are failures, never a column of zeros.

After ingest a subject may hold nothing: mem0 with `infer: true` and a model that answers no
facts (or no JSON), an `ingest` that drops what it is given, a `search` that reads another
store. Every search then finds nothing, every measure is 0, and without this the run would
complete with exit 0. Two signs are read; both record the items as failures of kind
`empty_memory` (stage `setup`), which count against `max_failure_rate` like any other and are
shown wherever failures are (terminal, reports, viewer):

- after ingest, the subject's own `dump()` lists no memory (`work.fill_memory`): the items of
  that corpus are not asked;
- every search of a task found nothing, over at least `MIN_SEARCHES` distinct queries, or over
  fewer when every search of that subject in the run found nothing and there were that many
  (`empty_searches`, when the run ends): the items were asked and scored; they are recorded
  again as failed, their empty outputs kept and their scores dropped.

A memory that stores what it is given under ids of its own (a row number, a UUID its store
made) and returns those is the same column of zeros: its searches find hits, none of which
names a memory the task ingested. Over at least `MIN_SEARCHES` distinct queries with hits
(counted over the run, as above, when no task of the subject found an ingested memory), and no
hit naming an ingested memory, its items fail the same way, of kind `foreign_ids`, the message
naming the ids it returned and what search must return (`foreign_searches`). Where only some
hits are foreign, the retrieval report says so in a note.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from memgauge._util.listing import counted, some
from memgauge.data.records import Failure, ItemRecord
from memgauge.errors import EmptyMemoryError
from memgauge.runs.kinds.base import PlannedTask
from memgauge.runs.recording import Recorder

__all__ = ["MIN_SEARCHES", "empty_searches", "foreign_searches", "void_empty", "with_voided"]

_KIND = EmptyMemoryError.failure_kind
_FOREIGN = "foreign_ids"

#: searches that must all find nothing before a memory is called empty: a query or two that
#: share no word with any memory are a keyword memory's honest misses, not an empty store.
#: Distinct queries are counted: a repeat (`repeat: N`) asks the same query again, and a
#: memory that missed it once misses it every time
MIN_SEARCHES = 5


def _distinct(rows: Iterable[ItemRecord]) -> int:
    """How many distinct queries `rows` ask (a repeat is its item's: no new evidence)."""
    return len({row.source_id for row in rows})


def empty_searches(rows: Iterable[ItemRecord], plan: Sequence[PlannedTask]) -> list[ItemRecord]:
    """The items of every (subject, task) whose searches all found nothing (at least
    `MIN_SEARCHES` distinct queries), as failed records of kind `empty_memory`: each with only the new
    failure (a recorder keeps failures as history and adds it), its scores dropped and its
    output kept."""
    tasks = {t.spec.name: t for t in plan}
    empty: dict[tuple[str, str], list[ItemRecord]] = {}
    found: set[tuple[str, str]] = set()
    for row in rows:
        task = tasks.get(row.task)
        done = task is not None and row.status == "completed"
        nothing = task.kind.found_nothing(row) if task and done else None
        if nothing is None:
            continue
        key = (row.subject, row.task)
        if nothing:
            empty.setdefault(key, []).append(row)
        else:
            found.add(key)
    counted = _counted_run_wide({key: _distinct(items) for key, items in empty.items()}, found)
    out: list[ItemRecord] = []
    for (subject, task_name), items in empty.items():
        if (subject, task_name) in found or counted[(subject, task_name)] < MIN_SEARCHES:
            continue
        out += _voided(items, _KIND, _message(tasks[task_name], items))
    return out


def _counted_run_wide(
    counts: dict[tuple[str, str], int], cleared: set[tuple[str, str]]
) -> dict[tuple[str, str], int]:
    """Each (subject, task)'s count of telling distinct queries, held to `MIN_SEARCHES`: its
    own, or its subject's over the whole run when no task of that subject is `cleared`. A task of few
    searches (a LongMemEval file of two questions beside LoCoMo) shows a subject that found
    nothing (or nothing it was given) in every search of the run as well as a large one does,
    not a row of 0s ranked beside the others."""
    total: dict[str, int] = {}
    for (subject, _task), n in counts.items():
        total[subject] = total.get(subject, 0) + n
    for subject, _task in cleared:
        total.pop(subject, None)
    return {key: max(n, total.get(key[0], 0)) for key, n in counts.items()}


def foreign_searches(rows: Iterable[ItemRecord], plan: Sequence[PlannedTask]) -> list[ItemRecord]:
    """The items of every (subject, retrieval task that ingested its memories) whose searches
    found hits (at least `MIN_SEARCHES` distinct queries with some) none of which names a memory
    the task ingested, as failed records of kind `foreign_ids` (as `empty_searches` makes them)."""
    tasks = {t.spec.name: t for t in plan}
    known: dict[str, set[str]] = {}
    # each (subject, task)'s searches so far, with the ids each returned
    rows_of: dict[tuple[str, str], list[tuple[ItemRecord, list[str]]]] = {}
    named: set[tuple[str, str]] = set()
    for row in rows:
        task = tasks.get(row.task)
        key = (row.subject, row.task)
        if task is None or task.memories is None or row.status != "completed" or key in named:
            continue
        ids = _hit_ids(task, row)
        if ids is None:
            continue
        ingested = known.get(row.task)
        if ingested is None:
            ingested = known[row.task] = {m.id for m in task.memories}
        if any(i in ingested for i in ids):
            named.add(key)
        else:
            rows_of.setdefault(key, []).append((row, ids))
    with_hits = {
        key: _distinct(row for row, ids in searched if ids) for key, searched in rows_of.items()
    }
    counted = _counted_run_wide(with_hits, named)
    out: list[ItemRecord] = []
    for key, searched in rows_of.items():
        if key in named or with_hits[key] == 0 or counted[key] < MIN_SEARCHES:
            continue
        items = [row for row, _ in searched]
        returned = [i for _, ids in searched for i in ids]
        out += _voided(items, _FOREIGN, _foreign_message(key[1], items, returned))
    return out


def _hit_ids(task: PlannedTask, row: ItemRecord) -> list[str] | None:
    """The memory ids a completed search returned (None: not a search that returns ids)."""
    if task.kind.found_nothing(row) is None or not isinstance(row.output, list):
        return None
    return [str(h.get("id")) if isinstance(h, dict) else str(h) for h in row.output]


def _voided(items: Sequence[ItemRecord], kind: str, message: str) -> list[ItemRecord]:
    """`items` as failed records of `kind` (stage `setup`): only the new failure (a recorder
    keeps failures as history and adds it), the scores dropped, the output kept."""
    out = []
    for row in items:
        failure = Failure(stage="setup", kind=kind, message=message, attempt=max(1, row.attempts))
        out.append(
            row.model_copy(
                update={"status": "failed", "scores": [], "score": None, "failures": [failure]}
            )
        )
    return out


def _foreign_message(task: str, items: Sequence[ItemRecord], returned: Sequence[str]) -> str:
    seen = list(dict.fromkeys(returned))
    examples = some(seen, 3)
    return (
        f"none of the {counted(len(returned), 'hit')} of its {counted(len(items), 'search', 'searches')} in task {task} names a "
        f"memory it was given ({examples}), and every score would be 0: search must return "
        "the id each memory was ingested with (Memory.id), not ids of the system's own (a row "
        "number, a UUID its store made); keep a map back to the ingested ids"
    )


def void_empty(
    run_id: str, items: list[ItemRecord], plan: Sequence[PlannedTask], recorder: Recorder
) -> tuple[list[ItemRecord], list[ItemRecord]]:
    """Record as failed the items of every subject whose searches all found nothing, or found
    only memories it was never given: every item (those in their new place) and the voided
    ones as they now stand."""
    # disjoint: a subject whose searches found nothing at all is never one whose hits are
    # foreign (that one found some)
    voided = [*empty_searches(items, plan), *foreign_searches(items, plan)]
    if not voided:
        return items, []
    recorder.record_items(run_id, voided)
    items = with_voided(items, voided)
    keys = {v.key for v in voided}
    return items, [row for row in items if row.key in keys]


def with_voided(items: Iterable[ItemRecord], voided: Sequence[ItemRecord]) -> list[ItemRecord]:
    """`items` with the voided ones in their place, each keeping its earlier failures."""
    by_key = {r.key: r for r in voided}
    out = []
    for row in items:
        void = by_key.get(row.key)
        if void is not None:
            row = void.model_copy(update={"failures": [*row.failures, *void.failures]})
        out.append(row)
    return out


def _message(task: PlannedTask, items: Sequence[ItemRecord]) -> str:
    ids = {r.item_id for r in items}
    corpora = {it.corpus for it in task.items if it.id in ids}
    ingested = sum(len(task.memories_for(c) or ()) for c in corpora)
    was = "was" if ingested == 1 else "were"
    after = f" after {counted(ingested, 'memory', 'memories')} {was} ingested" if ingested else ""
    return (
        f"every one of its {counted(len(items), 'search', 'searches')} in task {task.spec.name} found nothing{after}: "
        "the subject holds nothing, or its search matches none of these queries, and every "
        "score would be 0. Check that ingest stores the memories it is given (mem0 with infer: "
        "true keeps only the facts its LLM extracts: a model that answers no facts, or no "
        "JSON, stores nothing), that search reads the same store, and that it can match a "
        "question (a search that takes the whole query as one substring, as the MCP reference "
        "memory server's search_nodes does, finds nothing for a sentence)"
    )
