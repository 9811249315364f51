"""The writer thread's group commit (`runs.recording.Writer`), on the in-memory recorder."""

from __future__ import annotations

import threading

import pytest

from memgauge.data.records import ItemRecord, RunPlan, RunRecord
from memgauge.runs import recording
from memgauge.runs.recording import InMemoryRecorder, Writer


class _Seen:
    def __init__(self) -> None:
        self.rows: list[str] = []

    def phase(self, subject: str, task: str, corpus: str | None) -> None:
        pass

    def advance(self, row: ItemRecord) -> None:
        self.rows.append(row.item_id)


def test_close_records_the_lingering_batch_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """A batch lingers for more items, but `close` does not wait out the linger: with an hour's
    linger, every queued item is recorded, in one batch, and the writer stops (the join is
    bounded only so that a writer that does wait fails the test instead of hanging it)."""
    monkeypatch.setattr(recording, "LINGER_SECONDS", 3600.0)
    items = [ItemRecord(subject="s", task="t", item_id=f"q{i}", seq=i) for i in range(3)]
    rec = InMemoryRecorder()
    run = RunRecord(run_id="r", suite_name="demo", suite_sha256="ab" * 32, suite={})
    rec.create_run(run, RunPlan({"s": {}}, [], items))
    batches: list[int] = []
    record = rec.record_items
    monkeypatch.setattr(
        rec, "record_items", lambda r, rows: (batches.append(len(rows)), record(r, rows))
    )
    seen = _Seen()
    writer = Writer(rec, "r", "token", seen)
    for it in items:
        writer.put(it.model_copy(update={"status": "completed"}))
    closer = threading.Thread(target=writer.close, daemon=True)
    closer.start()
    closer.join(timeout=60)
    assert not closer.is_alive()
    assert batches == [3]
    assert seen.rows == ["q0", "q1", "q2"]
    assert [it.status for it in rec.item_records("r")] == ["completed"] * 3
