"""Where runs are kept: the one `Recorder` protocol, an in-memory recorder (for `--no-store` and
tests), and the writer thread that records finished items in groups.

`runs` never imports `store`: `memgauge.store.suite_runs.SuiteRunStore` satisfies the protocol
structurally, and so does `InMemoryRecorder`, so the engine is tested without SQLite.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

from memgauge.data.records import ItemRecord, RunPlan, RunRecord, RunSummary, utc_now
from memgauge.runs import owner

__all__ = ["MAX_BATCH", "InMemoryRecorder", "KeepsComparisons", "Recorder", "Writer"]

MAX_BATCH = 512  # items per transaction at most
# how long a batch stays open for more items after its first: items that finish a millisecond
# apart share one transaction instead of each paying for its own (and the thread answering
# them is not kept waiting on the GIL by a commit per item); an item reaches the store at most
# this much later (a closing run's last batch is not held: `close` ends the wait)
LINGER_SECONDS = 0.2


class Recorder(Protocol):
    """Where runs are kept (`memgauge.store.suite_runs.SuiteRunStore`, `InMemoryRecorder`)."""

    def create_run(self, run: RunRecord, plan: RunPlan) -> None:
        """Record a new run as queued with every item it will execute, all or nothing."""
        ...

    def get_run(self, run_id: str, *, summary: bool = True) -> RunRecord | None:
        """The run, or None; without `summary`, its summary may be left unread (None)."""
        ...

    def claim_run(self, run_id: str, owner: Mapping[str, Any], *, expect: str | None) -> bool:
        """Make `owner` the one process driving the run if its owner token is still `expect`."""
        ...

    def heartbeat(self, run_id: str, token: str) -> bool:
        """Beat the heartbeat if `token` still owns the run."""
        ...

    def set_status(
        self, run_id: str, status: str, *, reason: str | None = None, owner: str | None = None
    ) -> bool:
        """End the run's current attempt as `status`, releasing ownership."""
        ...

    def set_summary(self, run_id: str, summary: RunSummary) -> None:
        """Keep the run's summary (recomputed from its item records)."""
        ...

    def record_usage(self, run_id: str, model: str, delta: Mapping[str, int]) -> None:
        """Add LLM spend as it happens."""
        ...

    def usage(self, run_id: str) -> dict[str, dict[str, int]]:
        """The run's LLM spend per model, over every attempt."""
        ...

    def unfinished_items(
        self, run_id: str, *, retry_failed: bool = False
    ) -> set[tuple[str, str, str]]:
        """(subject, task, item_id) still to do (with `retry_failed`, failed ones again)."""
        ...

    def record_items(self, run_id: str, rows: Sequence[ItemRecord]) -> None:
        """Keep finished items, in one transaction."""
        ...

    def record_setup(
        self, run_id: str, subject: str, task: str, corpus: str | None, seconds: float
    ) -> None:
        """Keep how long resetting and ingesting one group of items took."""
        ...

    def setup_seconds(self, run_id: str) -> dict[tuple[str, str], float]:
        """(subject, task) -> seconds spent resetting and ingesting, over every attempt."""
        ...

    def item_records(self, run_id: str, *, detail: bool = True) -> list[ItemRecord]:
        """Every item of the run with its output, verdicts and failures, in task order
        (without `detail`, the store may leave out inputs, expected values and verdict
        details)."""
        ...


@runtime_checkable
class KeepsComparisons(Protocol):
    """A recorder that keeps a finished big run's comparison with the suite's run before it
    for the viewer (`SuiteRunStore`; an in-memory run has no viewer): its store's `url`, read
    by `run_comparison.keep`, and the write."""

    url: Any

    def keep_compared(
        self, run_a: str, run_b: str, seed: int, key: str, payload: dict[str, Any]
    ) -> bool:
        """Keep run B's comparison with run A if the runs are still in the state `key`."""
        ...


class InMemoryRecorder:
    """Keeps runs in dicts: for `--no-store` (such a run cannot be resumed) and tests."""

    def __init__(self) -> None:
        self.runs: dict[str, RunRecord] = {}
        self.subjects: dict[str, dict[str, Any]] = {}
        self.tasks: dict[str, list[dict[str, Any]]] = {}
        self.items: dict[str, dict[tuple[str, str, str], ItemRecord]] = {}
        self.owners: dict[str, str | None] = {}
        self.setups: dict[str, dict[tuple[str, str], float]] = {}
        self.spend: dict[str, dict[str, dict[str, int]]] = {}
        self._lock = threading.Lock()

    def create_run(self, run: RunRecord, plan: RunPlan) -> None:
        """See `Recorder`."""
        with self._lock:
            self.runs[run.run_id] = run.model_copy()
            self.subjects[run.run_id] = dict(plan.subjects)
            self.tasks[run.run_id] = [dict(t) for t in plan.tasks]
            self.items[run.run_id] = {it.key: it for it in plan.items}
            self.owners[run.run_id] = None

    def get_run(self, run_id: str, *, summary: bool = True) -> RunRecord | None:
        """See `Recorder`."""
        run = self.runs.get(run_id)
        return None if run is None else run.model_copy()

    def claim_run(self, run_id: str, owner: Mapping[str, Any], *, expect: str | None) -> bool:
        """See `Recorder`."""
        with self._lock:
            if self.owners.get(run_id) != expect:
                return False
            self.owners[run_id] = str(owner["token"])
            run = self.runs[run_id]
            now = utc_now()
            self.runs[run_id] = run.model_copy(
                update={
                    "status": "running",
                    "reason": None,
                    "finished_at": None,
                    "started_at": run.started_at or now,
                    "heartbeat_at": now,
                    "pid": owner["pid"],
                    "host": owner["host"],
                    "owner": owner["token"],
                }
            )
            return True

    def heartbeat(self, run_id: str, token: str) -> bool:
        """See `Recorder`."""
        return self.owners.get(run_id) == token

    def set_status(
        self, run_id: str, status: str, *, reason: str | None = None, owner: str | None = None
    ) -> bool:
        """See `Recorder`."""
        with self._lock:
            if owner is not None and self.owners.get(run_id) != owner:
                return False
            self.owners[run_id] = None
            self.runs[run_id] = self.runs[run_id].model_copy(
                update={"status": status, "reason": reason, "finished_at": utc_now(), "owner": None}
            )
            return True

    def set_summary(self, run_id: str, summary: RunSummary) -> None:
        """See `Recorder`."""
        with self._lock:
            self.runs[run_id] = self.runs[run_id].model_copy(update={"summary": summary})

    def record_usage(self, run_id: str, model: str, delta: Mapping[str, int]) -> None:
        """See `Recorder`."""
        with self._lock:
            per = self.spend.setdefault(run_id, {}).setdefault(model, {})
            for k, v in delta.items():
                per[k] = per.get(k, 0) + int(v)

    def usage(self, run_id: str) -> dict[str, dict[str, int]]:
        """See `Recorder`."""
        return {m: dict(v) for m, v in self.spend.get(run_id, {}).items()}

    def unfinished_items(
        self, run_id: str, *, retry_failed: bool = False
    ) -> set[tuple[str, str, str]]:
        """See `Recorder`."""
        with self._lock:
            items = self.items[run_id]
            if retry_failed:
                for key, it in list(items.items()):
                    retry = it.status == "failed" or (
                        it.status == "completed"
                        and any(s.detail.get("retryable") for s in it.scores)
                    )
                    if retry:
                        items[key] = it.model_copy(
                            update={"status": "queued", "score": None, "scores": []}
                        )
            return {k for k, it in items.items() if it.status == "queued"}

    def record_items(self, run_id: str, rows: Sequence[ItemRecord]) -> None:
        """See `Recorder` (failures accumulate as history, as in the store)."""
        with self._lock:
            items = self.items[run_id]
            for r in rows:
                before = items.get(r.key)
                seq = before.seq if before is not None else r.seq
                inp = before.input if before is not None and not r.input else r.input
                expected = before.expected if before is not None else r.expected
                history = list(before.failures) if before is not None else []
                kept = [f for f in r.failures if f not in history]
                items[r.key] = r.model_copy(
                    update={
                        "seq": seq,
                        "input": inp,
                        "expected": expected,
                        "failures": history + kept,
                    }
                )
            self.runs[run_id] = self.runs[run_id].model_copy(update={"heartbeat_at": utc_now()})

    def record_setup(
        self, run_id: str, subject: str, task: str, corpus: str | None, seconds: float
    ) -> None:
        """See `Recorder`."""
        with self._lock:
            per = self.setups.setdefault(run_id, {})
            per[(subject, task)] = per.get((subject, task), 0.0) + seconds

    def setup_seconds(self, run_id: str) -> dict[tuple[str, str], float]:
        """See `Recorder`."""
        return dict(self.setups.get(run_id, {}))

    def item_records(self, run_id: str, *, detail: bool = True) -> list[ItemRecord]:
        """See `Recorder` (everything is in memory: `detail` changes nothing)."""
        return sorted(self.items[run_id].values(), key=lambda r: (r.subject, r.task, r.seq))


class _Progress(Protocol):
    def phase(self, subject: str, task: str, corpus: str | None) -> None: ...

    def advance(self, row: ItemRecord) -> None: ...


_STOP = object()


class Writer:
    """Records finished items on a thread of its own, as many per transaction as finish within
    `LINGER_SECONDS` of the first (group commit): an item is in the store one commit after it
    finishes, and a fast run is not held back by one commit per item. It also beats the run's
    heartbeat every `owner.HEARTBEAT_SECONDS`, even while no item finishes, and notices a
    takeover by another process (`--force`)."""

    def __init__(
        self,
        recorder: Recorder,
        run_id: str,
        token: str,
        progress: _Progress,
    ) -> None:
        self.recorder, self.run_id, self.token = recorder, run_id, token
        self.progress = progress
        self.queue: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self.error: BaseException | None = None
        self.beat_at = time.monotonic()
        self.closing = threading.Event()
        self.thread = threading.Thread(target=self._loop, name="memgauge-recorder", daemon=True)
        self.thread.start()

    def put(self, row: ItemRecord) -> None:
        """Queue a finished item; re-raise a recording error."""
        if self.error is not None:
            raise self.error
        self.queue.put(row)

    def _beat(self) -> bool:
        if time.monotonic() - self.beat_at < owner.HEARTBEAT_SECONDS:
            return True
        self.beat_at = time.monotonic()
        if self.recorder.heartbeat(self.run_id, self.token):
            return True
        current = self.recorder.get_run(self.run_id)
        self.error = owner.lost(self.run_id, None if current is None else current.model_dump())
        return False

    def _loop(self) -> None:
        stop = False
        while not stop:
            try:
                first = self.queue.get(timeout=owner.HEARTBEAT_SECONDS)
            except queue.Empty:
                first = None
            try:
                if not self._beat():
                    return
            except BaseException as exc:  # surfaced in the run's thread at the next put/close
                self.error = exc
                return
            if first is None:
                continue
            if first is _STOP:
                return
            batch = [first]
            # sleep, then take what came meanwhile: waking for each item as it comes would
            # take the GIL from the threads answering them
            self.closing.wait(LINGER_SECONDS)
            while len(batch) < MAX_BATCH:
                try:
                    nxt = self.queue.get_nowait()
                except queue.Empty:
                    break
                if nxt is _STOP:
                    stop = True
                    break
                batch.append(nxt)
            try:
                self.recorder.record_items(self.run_id, batch)
            except BaseException as exc:  # surfaced in the run's thread at the next put/close
                self.error = exc
                return
            for row in batch:
                self.progress.advance(row)

    def close(self) -> None:
        """Record everything queued, then stop; re-raise a recording error."""
        self.queue.put(_STOP)
        self.closing.set()
        self.thread.join()
        if self.error is not None:
            raise self.error
