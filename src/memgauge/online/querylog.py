"""The production logging SDK (seed 002 sections 5 and 6): what a memory system calls in its
search handler, without ever waiting on disk.

    from memgauge.online.querylog import QueryLog
    log = QueryLog("/var/lib/app/memgauge.db")          # once per process (or postgresql://...)
    qid = log.query("oauth refresh", session_id=s, result_ids=ids, latency_ms=12.3)
    log.feedback("read_after_search", session_id=s, query_id=qid, memory_id=ids[0], rank=1)
    log.validate(memory_id, useful=True, session_id=s)   # memory_validate: +0.10 / -0.05
    log.session(s, turns=12, ended=True)                 # the session manager's turn count
    log.outcome(s, task_id="t1", success=True)           # task_postflight, linked to s
    log.agent_output(s, reply_text)                      # for copy/reference detection
    log.validate_batch(s, {"m1": True, "m7": False}, task_id="t1")  # after the task

A call appends one flat tuple of strings and numbers to an in-memory buffer (no lock, no I/O;
the caller's dicts and lists as JSON text, its sequences one item each, so the garbage
collector stops tracking a buffered record the first time it sees it) and returns; a
background thread writes the buffer every `flush_interval` seconds (50 ms by default; sooner
once a batch's worth is buffered, and again at once while a burst fills whole batches), one
transaction per batch of at most 2,048 records (queries first, then feedback, then the rest),
so several processes can log into one SQLite file (WAL, busy timeout, retries). A process that exits normally flushes what it buffered (atexit, and
multiprocessing's finalizers in a forked child, which gets a writer of its own). `kill -9`
loses what was buffered and not yet committed: the records since the last batch (about
`flush_interval` of traffic while the disk keeps up, never more than `max_buffer` queries,
`max_buffer` feedback events and `max_buffer` session / outcome / output records) and the batch
being written, whose transaction rolls back; it never corrupts the database (SQLite
transactions). A power cut can also lose committed rows SQLite has not checkpointed yet (WAL,
`synchronous = NORMAL`): it checkpoints every 1,000 pages of WAL, but during a burst only after
it, or every `BURST_CHECKPOINT_PAGES` (`store.querylog.QueryLogWriter.burst` says why). If
the buffer holds `max_buffer` records (the disk cannot keep up), new records are counted in `dropped` rather than grow memory
without bound. A record the database cannot take (a value JSON cannot hold) is left out and
counted in `rejected`, never the batch around it; a batch the database refuses (locked too
long, disk full) stays buffered and is retried, and `flush()` raises that error once.

`flush()` returns only once everything logged before it is committed (a batch the writer has
taken but not yet committed included), and `confidence(m)` flushes first, so it sees every
`validate(m)` made before it.

Feedback logged without a query id is linked, when written, to the session's most recent
query whose results held the memory (seed 002 sections 5.2, 5.3).

Confidence (`memory_validate`): starts at 0.5, +0.10 when useful, -0.05 when not, clamped to
[0, 1]; a memory is eligible for promotion at >= 0.9 with >= 5 validations.

Standard library only: importing this module does not load NumPy, SciPy, pydantic or
SQLAlchemy, and logging into a SQLite store already at the newest schema does not either (a new
store is created once through SQLAlchemy and Alembic, the store's one migration history).
On `postgresql://` the only addition is the driver, psycopg.
"""

from __future__ import annotations

import atexit
import itertools
import os
import sys
import threading
import time
import weakref
from collections import deque
from collections.abc import Iterable, Iterator, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from memgauge.store.querylog import QueryLogWriter, QueryRow, encode_mapping, encode_stages
from memgauge.store.url import StoreURL, store_url

__all__ = ["FEEDBACK_EVENTS", "QueryLog", "promotion_eligible"]

FEEDBACK_EVENTS = frozenset(
    {
        "read_after_search",
        "re_search",
        "scroll_past",
        "reference",
        "validate_useful",
        "validate_not_useful",
    }
)


#: records per transaction at most (see QueryLog._drain)
_BATCH = 2048

#: the first query id's number in a process: its first 900,000 ids have one width, so they sort
#: in the order logged, and each goes at the end of `eval_queries`' unique index on query_id.
#: Counted from 1, each ten-fold (10 to 99, 100 to 999...) went in between the shorter ones
#: already there ("_10000" < "_1001" < "_10010"): index pages split in their middle, not at
#: the end, and more pages were written (SQLite's CPU 0.3 us a row more, 2.3 against 2.6)
_FIRST_ID = 100_000


def promotion_eligible(confidence: float, validations: int) -> bool:
    """Seed 002: confidence >= 0.9 with at least 5 validations."""
    return round(confidence, 6) >= 0.9 and validations >= 5


_LIVE: weakref.WeakSet[QueryLog] = weakref.WeakSet()


def _finalize_at_exit(log: QueryLog) -> None:
    sys.modules["multiprocessing.util"].Finalize(log, log.close, exitpriority=10)


class _TextForIds:
    """Memory ids given as one string (`result_ids`, a channel's ids in
    `channel_contributions`), which a type checker takes for a sequence and which unpacked
    would log each of its characters as a memory id (a channel's: no result it surfaced).
    Encoding it raises, so the writer rejects the record (counted in `rejected`, named in
    `last_rejected`), as it does one JSON cannot hold, and the caller's request never sees an
    error."""

    __slots__ = ("name", "text")

    def __init__(self, name: str, text: str) -> None:
        self.name = name
        self.text = text

    def __iter__(self) -> Iterator[Any]:
        raise TypeError(
            f"{self.name} is a string ({self.text[:40]!r}), not a list of memory ids:"
            " give [id, ...]"
        )


def _channels(contributions: Mapping[str, Any]) -> Mapping[str, Any]:
    """`contributions` with a channel's ids given as one string refused as `result_ids` is
    (`_TextForIds`); as given when there is none (the usual call: one pass over the values)."""
    if not any(isinstance(ids, str) for ids in contributions.values()):
        return contributions
    return {
        channel: _TextForIds(f"channel_contributions[{channel!r}]", ids)
        if isinstance(ids, str)
        else ids
        for channel, ids in contributions.items()
    }


def _scored_tail(
    ids: Iterable[Any], scores: Iterable[float] | None, unboosted: Iterable[float] | None
) -> tuple[list[Any], int | None, int | None]:
    """A query record's tail when scores are given: the result ids, then the scores, then the
    unboosted scores, and the two counts (None: not given; `querylog_rows.record_tail`)."""
    tail = [*ids]
    counts: list[int | None] = []
    for values in (scores, unboosted):
        if values is None:
            counts.append(None)
        else:
            before = len(tail)
            tail.extend(values)
            counts.append(len(tail) - before)
    return tail, counts[0], counts[1]


def _after_fork() -> None:
    for log in list(_LIVE):
        log._after_fork_in_child()


#: (second since the epoch, its "YYYY-MM-DDTHH:MM:SS" in UTC): made once a second
_second: tuple[int, str] = (-1, "")
#: (millisecond since the epoch, `_now()`'s text for it): a burst logs hundreds of calls a
#: millisecond, each of which would format the same text
_stamp: tuple[int, str] = (-1, "")


def _now() -> str:
    """`datetime.now(UTC).isoformat(timespec="milliseconds")`, the same text (both floor the
    clock to the millisecond) at a fraction of the cost: the date and time of day are
    formatted once a second, the whole text once a millisecond. Two threads crossing a
    second or a millisecond both format it; either result is right."""
    global _second, _stamp
    ms = time.time_ns() // 1_000_000
    stamp = _stamp
    if ms == stamp[0]:
        return stamp[1]
    sec, text = _second
    if ms // 1000 != sec:
        sec = ms // 1000
        text = datetime.fromtimestamp(sec, UTC).isoformat()[:19]
        _second = (sec, text)
    now = f"{text}.{ms % 1000:03d}+00:00"
    _stamp = (ms, now)
    return now


class QueryLog:
    """Buffered, non-blocking logging of queries and feedback into one store: a SQLite file
    (a path or `sqlite:///PATH`), or PostgreSQL (`postgresql://...`, with
    `memgauge[postgres]`), which processes on many hosts may log into at once."""

    def __init__(
        self,
        path: str | Path | StoreURL,
        *,
        flush_interval: float = 0.05,
        max_buffer: int = 100_000,
    ) -> None:
        self.store = store_url(path)
        #: the SQLite file, or the server's URL (without its password)
        self.path: Path | str = self.store.path or str(self.store)
        self.flush_interval = flush_interval
        #: records buffered that send a call off the hot path's one check (`_limit_reached`)
        self._limit = min(_BATCH, max_buffer)
        self.max_buffer = max_buffer
        self.dropped = 0
        #: records the database could not take (a value JSON cannot hold), left out
        self.rejected = 0
        self.last_rejected: str | None = None
        self._queries: deque[QueryRow] = deque()
        self._feedback: deque[tuple[Any, ...]] = deque()
        self._events: deque[tuple[Any, ...]] = deque()
        self.error: BaseException | None = None
        self._abandoned: list[QueryLogWriter] = []
        self._start()
        atexit.register(self.close)
        _LIVE.add(self)

    @property
    def max_buffer(self) -> int:
        """Records of each kind buffered at most; a call past it is counted in `dropped`."""
        return self._max_buffer

    @max_buffer.setter
    def max_buffer(self, value: int) -> None:
        self._max_buffer = value
        self._limit = min(self._limit, value)

    def _start(self) -> None:
        self._ids = itertools.count(_FIRST_ID)
        self._prefix = f"eq_{os.getpid():x}_{time.time_ns():x}_"
        self._writer = QueryLogWriter(self.store)
        self._wake = threading.Event()
        self._stop = False
        self._idle = threading.Condition()
        # writer rounds begun and finished: flush() waits for one that began after it was called
        self._rounds_started = self._rounds_done = 0
        self._thread = threading.Thread(target=self._run, name="memgauge-querylog", daemon=True)
        self._thread.start()

    def _after_fork_in_child(self) -> None:
        """A forked child has no writer thread and must not use the parent's connection: it
        starts its own, with an empty buffer (the parent writes what it had buffered). A child
        of `multiprocessing` (fork) leaves through os._exit, skipping atexit, so its close
        is registered with multiprocessing's finalizers as well."""
        if self._stop:
            return
        self._abandoned.append(self._writer)  # never closed here: the parent's connection
        self._queries = deque()
        self._feedback = deque()
        self._events = deque()
        self.error = None
        self._start()
        mp_util = sys.modules.get("multiprocessing.util")
        if mp_util is not None:
            # a multiprocessing child clears its finalizers after the fork, then runs the
            # after-fork callbacks: register the finalizer from one of those
            mp_util.register_after_fork(self, _finalize_at_exit)

    # --- the hot path -------------------------------------------------------------------

    def query(
        self,
        query: str,
        *,
        session_id: str | None = None,
        tool_name: str = "memory_search",
        result_ids: Sequence[Any] = (),
        channel_contributions: Mapping[str, Sequence[Any]] | None = None,
        latency_ms: float | None = None,
        mode: str | None = None,
        intent: str | None = None,
        trace_id: str | None = None,
        query_id: str | None = None,
        category: str | None = None,
        fusion_weights: Mapping[str, float] | None = None,
        quality_proxy: float | None = None,
        fallback: bool | None = None,
        fallback_reason: str | None = None,
        degraded: bool | None = None,
        stages: Sequence[Mapping[str, Any]] | None = None,
        token_usage_ratio: float | None = None,
        pressure_level: str | None = None,
        scores: Sequence[float] | None = None,
        unboosted_scores: Sequence[float] | None = None,
        boost_impact_delta: float | None = None,
        limit: int | None = None,
        dedup_tokens_saved: int | None = None,
    ) -> str:
        """Log one search; returns its query id (link feedback to it).

        Everything seed 002's `eval_queries` holds: `category` (the query taxonomy of its
        section 2.2), `fusion_weights` (channel -> weight), `quality_proxy` (the telemetry's
        0-1 `qualityProxyScore`), `fallback` / `fallback_reason` / `degraded` (the
        `fallbackTriggered`, `fallbackReason` and `degradedModeActive` flags) and `stages`, the
        retrieval trace: one mapping per stage, e.g. `{"stage": "fusion", "input_count": 40,
        "output_count": 20, "duration_ms": 1.2}`; `token_usage_ratio` and `pressure_level`
        (`tokenUsageRatio`, `pressureLevel`): the share of its token budget the returned
        context used and the pressure state the system was in (`metrics.tokens.pressure_level`
        names memgauge's states, for a system that has none of its own). Mappings and
        `stages` are turned into JSON text here, as they are when the call is made; the rest by
        the writer.

        The quality telemetry (seed 002 section 1.1; `memgauge.store.quality`): `scores`, the
        results' 0-1 scores in rank order, give `avg_relevance_score` and `top_result_score`,
        and, when `quality_proxy` is not given, the seed's proxy (avgRelevance .40 + topResult
        .25 + countSaturation .20 + latencyPenalty .15, with `limit` the results asked for);
        `unboosted_scores` (the same results' scores before session / causal boosting) give
        `boost_impact_delta` unless it is given; `dedup_tokens_saved`: the tokens of the results
        the session dedup filtered out. The writer computes them, off this path."""
        qid = query_id or f"{self._prefix}{next(self._ids)}"
        if len(self._queries) >= self._limit and self._limit_reached(self._queries):
            return qid
        n_scores = n_unboosted = None
        if isinstance(result_ids, str):
            result_ids = (_TextForIds("result_ids", result_ids),)
        if scores is not None or unboosted_scores is not None:  # after the ids, in the tail
            result_ids, n_scores, n_unboosted = _scored_tail(result_ids, scores, unboosted_scores)
        self._queries.append(
            (  # one flat tuple of strings and numbers (QueryRow says why)
                qid,
                query,
                intent,
                mode,
                session_id,
                tool_name,
                # JSON text now: a record holding the caller's dicts and lists stays in the
                # garbage collector's reach (store.querylog.encode_mapping says why)
                None
                if channel_contributions is None
                else encode_mapping(_channels(channel_contributions)),
                latency_ms,
                trace_id,
                _now(),
                category,
                None if fusion_weights is None else encode_mapping(fusion_weights),
                quality_proxy,
                fallback,
                fallback_reason,
                degraded,
                None if stages is None else encode_stages(stages),
                token_usage_ratio,
                pressure_level,
                n_scores,
                n_unboosted,
                boost_impact_delta,
                limit,
                dedup_tokens_saved,
                # copied: a generator or a list the caller reuses stays as it was
                *result_ids,
            )
        )
        return qid

    def feedback(
        self,
        event_type: str,
        *,
        session_id: str,
        query_id: str | None = None,
        memory_id: Any = None,
        rank: int | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> None:
        """Log a feedback event (one of FEEDBACK_EVENTS) about a memory a query surfaced."""
        if event_type not in FEEDBACK_EVENTS:
            raise ValueError(
                f"unknown feedback event {event_type!r}; one of {sorted(FEEDBACK_EVENTS)}"
            )
        if len(self._feedback) >= self._limit and self._limit_reached(self._feedback):
            return
        mid = None if memory_id is None else str(memory_id)
        meta = None if metadata is None else encode_mapping(metadata)
        self._feedback.append((event_type, session_id, query_id, mid, rank, meta, _now()))

    def validate(
        self, memory_id: Any, *, useful: bool, session_id: str, query_id: str | None = None
    ) -> None:
        """`memory_validate(wasUseful)`: feedback plus the confidence update."""
        self._validated(memory_id, useful, session_id, query_id, None)

    def _validated(
        self,
        memory_id: Any,
        useful: bool,
        session_id: str,
        query_id: str | None,
        metadata: Mapping[str, Any] | None,
    ) -> None:
        event = "validate_useful" if useful else "validate_not_useful"
        self.feedback(
            event, session_id=session_id, query_id=query_id, memory_id=memory_id, metadata=metadata
        )

    def validate_batch(
        self,
        session_id: str,
        verdicts: Mapping[Any, bool],
        *,
        task_id: str | None = None,
    ) -> None:
        """Batch validation after a task (seed 002 section 5.2, `task_postflight`): one
        `memory_validate` per memory accessed during the task (`sessions.session_summary`'s
        `to_validate` lists them), marked with the task in the event's metadata."""
        meta = {"batch": True, **({"task_id": task_id} if task_id is not None else {})}
        for memory_id, useful in verdicts.items():
            self._validated(memory_id, useful, session_id, None, meta)

    def session(
        self,
        session_id: str,
        *,
        turns: int | None = None,
        ended: bool = False,
        metadata: Mapping[str, Any] | None = None,
    ) -> None:
        """The session manager's view of a session (seed 002 section 5.3, session length): its
        turn count so far (the latest call wins) and, with `ended`, that it is over."""
        meta = None if metadata is None else encode_mapping(metadata)
        self._event(("session", session_id, turns, ended, meta, _now()))

    def outcome(
        self,
        session_id: str,
        *,
        task_id: str | None = None,
        success: bool | None = None,
        score: float | None = None,
        knowledge_delta: float | None = None,
        uncertainty_reduction: float | None = None,
        learning_index: float | None = None,
        spec_folder: str | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> None:
        """A task's outcome, linked to the session it ran in (seed 002 section 5.4,
        `task_postflight`): success and / or a score, and the seed's knowledge delta,
        uncertainty reduction and learning index where the caller has them."""
        self._event(
            (
                "outcome",
                session_id,
                task_id,
                success,
                score,
                knowledge_delta,
                uncertainty_reduction,
                learning_index,
                spec_folder,
                None if metadata is None else encode_mapping(metadata),
                _now(),
            )
        )

    def agent_output(self, session_id: str, text: str, *, query_id: str | None = None) -> None:
        """What the agent wrote (a reply, a tool call's content): `memgauge logs signals` finds
        verbatim memory spans in it, the copy/reference signal of seed 002 section 5.3."""
        self._event(("output", session_id, query_id, text, _now()))

    def _event(self, record: tuple[Any, ...]) -> None:
        """Buffer a session, outcome or output record: its kind, then its fields, one flat
        tuple (a kind beside a tuple of fields was tracked by the collector a pass longer)."""
        if len(self._events) >= self._limit and self._limit_reached(self._events):
            return
        self._events.append(record)

    def _limit_reached(self, buffer: deque[Any]) -> bool:
        """A call found `_limit` records in `buffer`: a batch's worth while the writer sleeps,
        which wakes it (once: the limit is then the buffer's bound until it sleeps again), or
        `max_buffer`; whether the record is dropped (the buffer is full).

        Why wake it: a burst's first batch waited out `flush_interval` (50 ms, at about 300,000
        calls a second 15,000 records) before the writer began, time the writer then lacked
        at the burst's end. The hot path pays nothing for it: the check was there, against
        `max_buffer`."""
        if self._limit < self._max_buffer:
            self._limit = self._max_buffer
            self._wake.set()
        if len(buffer) >= self._max_buffer:
            self.dropped += 1
            return True
        return False

    # --- the writer ----------------------------------------------------------------------

    def _drain(self) -> int:
        """Write what the buffers hold as this round begins, queries first (feedback is linked
        to them when written), in transactions of at most `_BATCH` records; returns how many.

        Why batches of a bounded size: a record taken from the buffer stays alive until its
        transaction commits, and under a burst one transaction for everything buffered holds
        tens of thousands of them, each a tuple the garbage collector walks on every full
        collection, which runs in whichever thread allocates, often the application's. The
        round still takes only what it found, so a burst cannot keep one round going and
        `flush()`'s rounds stay finite."""
        written = 0
        buffers: tuple[deque[Any], ...] = (self._queries, self._feedback, self._events)
        # counted together, before any is written: feedback found here has its query found too
        counts = [len(buffer) for buffer in buffers]
        for slot, (buffer, left) in enumerate(zip(buffers, counts, strict=True)):
            while left > 0:
                batch = [buffer.popleft() for _ in range(min(left, _BATCH))]
                left -= len(batch)
                parts: list[list[Any]] = [[], [], []]
                parts[slot] = batch
                try:
                    rejected = self._writer.write(parts[0], parts[1], parts[2])
                except BaseException:
                    # the database failed (locked too long, disk full): keep the batch for the
                    # next round, ahead of newer records, as far as the buffer bound allows
                    buffer.extendleft(reversed(batch[: self.max_buffer]))
                    raise
                written += len(batch)
                if rejected:
                    self.rejected += len(rejected)
                    self.last_rejected = rejected[-1]
        return written

    def _run(self) -> None:
        busy = draining = False
        late: BaseException | None = None  # the burst's end failed (`burst`): the next round's
        while True:
            if not busy:  # a round that found a full batch goes on at once: a burst
                self._limit = min(_BATCH, self._max_buffer)  # a batch's worth wakes it
                self._wake.wait(self.flush_interval)
            self._wake.clear()
            with self._idle:
                self._rounds_started += 1
            try:
                error, late = late, None
                if not draining and self._pending() >= _BATCH:
                    draining = True
                    self._writer.burst(True)  # its checkpoints after it (QueryLogWriter.burst)
                busy = self._drain() >= _BATCH
            except BaseException as exc:  # kept for flush() to raise
                busy, error = False, exc
            with self._idle:
                self.error = error
                self._rounds_done = self._rounds_started
                self._idle.notify_all()
            if draining and not busy:
                # after the round is reported: flush() does not wait for the checkpoint
                draining = False
                try:
                    self._writer.burst(False)
                except BaseException as exc:
                    late = exc
            pending = self._queries or self._feedback or self._events
            if self._stop and (error is not None or not pending):
                return

    def _pending(self) -> int:
        return len(self._queries) + len(self._feedback) + len(self._events)

    def flush(self, timeout: float = 30.0) -> None:
        """Block until everything logged before this call is committed; raise the database's
        error if that write failed (the records are kept and retried), `TimeoutError` after
        `timeout` seconds.

        Why rounds and not an empty buffer: the writer takes a batch out of the buffer before
        it commits it, so an empty buffer says nothing about the batch in flight. A round of
        the writer that starts after this call takes every record logged before it (and the
        round in flight, if any, ends first), so once such a round is done, they are all
        committed. The hot path pays nothing for this: only the writer counts rounds."""
        if self._stop:
            return  # closed: close() wrote the buffer
        deadline = time.monotonic() + timeout
        with self._idle:
            target = self._rounds_started + 1
            self._wake.set()
            while self._rounds_done < target:
                left = deadline - time.monotonic()
                if left <= 0 or not self._thread.is_alive():
                    raise TimeoutError(f"query log {self.path}: not written within {timeout:g} s")
                self._idle.wait(min(left, 0.1))
            error, self.error = self.error, None
        if error is not None:
            raise error

    def confidence(self, memory_id: Any) -> tuple[float, int] | None:
        """(confidence, validations) once every `validate` logged before this call is
        committed."""
        self.flush()
        return self._writer.confidence(str(memory_id))

    def close(self) -> None:
        """Write what is buffered and stop (also run at normal interpreter exit)."""
        if self._stop:
            return
        self._stop = True
        self._wake.set()
        self._thread.join(timeout=30)
        try:
            self._drain()
        finally:
            self._writer.close()
            atexit.unregister(self.close)


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork)
