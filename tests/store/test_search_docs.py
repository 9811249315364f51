"""Each item's searchable document (`store.search_docs`) as a recording writes it: from the
values it writes, the same text `refill` makes of the rows as stored, through retries,
re-recordings, repeated evaluators and items given twice."""

from __future__ import annotations

import zlib
from pathlib import Path

import pytest
import sqlalchemy as sa

from memgauge.data.records import Failure, ItemRecord, RunPlan, RunRecord, ScoreRecord
from memgauge.store import item_rows
from memgauge.store.search_docs import SEPARATOR, document, forms, refill
from memgauge.store.suite_runs import SuiteRunStore

_DOCS = "SELECT subject, task, item_id, doc FROM suite_run_search ORDER BY 1, 2, 3"

Docs = list[tuple[str, str, str, str]]


def _docs(store: SuiteRunStore) -> Docs:
    with store._write() as c:
        return [tuple(r) for r in c.execute(sa.text(_DOCS))]


def _refilled(store: SuiteRunStore, run: str) -> Docs:
    """The documents `refill` makes of the run's rows as stored (written in place)."""
    with store._write() as c:
        refill(c, run)
    return _docs(store)


def _same(recorded: Docs, refilled: Docs, dialect: str) -> bool:
    """Equal documents: byte for byte on SQLite; on PostgreSQL, where `refill` reads an item's
    verdicts in no set order, equal as each document's forms in any order."""
    if dialect == "sqlite":
        return recorded == refilled

    def forms(docs: Docs) -> list[tuple[str, str, str, list[str]]]:
        return [(s, t, i, sorted(d.split(SEPARATOR))) for s, t, i, d in docs]

    return forms(recorded) == forms(refilled)


def _store(db: Path | str) -> tuple[SuiteRunStore, list[ItemRecord]]:
    run = RunRecord(
        run_id="r",
        suite_name="s",
        status="queued",
        created_at="2000-01-01T00:00:00+00:00",
        suite_sha256="0" * 64,
        suite={"name": "s"},
    )
    inputs = ["Apple", "caf\u00e9", "K\u212aelvin", "plain", "x" * 700, "\u00c9t\u00e9"]
    items = [
        ItemRecord(
            subject=subject,
            task=task,
            item_id=f"i{n}",
            seq=n,
            category="Cat" if n % 2 else None,
            input={"text": text},
            expected={"m": [n, "Z\u00fcrich"]},
        )
        for subject in ("a", "b")
        for task in ("t", "u")
        for n, text in enumerate(inputs)
    ]
    store = SuiteRunStore(db)
    store.create_run(
        run,
        RunPlan(
            {"a": {}, "b": {}},
            [{"task": t, "kind": "qa", "n_items": len(inputs)} for t in ("t", "u")],
            items,
        ),
    )
    store.claim_run("r", {"token": "t", "pid": 1, "host": "h"}, expect=None)
    return store, items


def _verdict(evaluator: str, reason: str, error: str | None = None) -> ScoreRecord:
    return ScoreRecord(
        evaluator=evaluator, value=None if error else 1.0, reason=reason, error=error
    )


def test_a_recorded_batch_is_not_read_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Items recorded for the first time: their documents are made of the values written, the
    deflated outputs not inflated again, and are what `refill` reads back."""
    db = tmp_path / "r.db"
    store, items = _store(db)

    def read_back(*args: object, **kwargs: object) -> None:
        raise AssertionError("a first recording read its rows back")

    monkeypatch.setattr(item_rows, "refill_search", read_back)
    done = [
        it.model_copy(
            update={
                "status": "completed",
                "output": {"hits": [f"H{n}", "Z\u00fcrich " * (n * 100)]},
                # not in the evaluators' order: a document holds them as their key sorts
                "scores": [_verdict("z", "Zed"), _verdict("B", "Bee"), _verdict("a", "", "Err")],
            }
        )
        for n, it in enumerate(items)
    ]
    with store:
        store.record_items("r", done)
        recorded = _docs(store)
        monkeypatch.undo()
        assert recorded == _refilled(store, "r")
    assert len(recorded) == len(items)
    doc = {(s, t, i): d for s, t, i, d in recorded}[("a", "t", "i1")]
    # id, category, input (and its escape decoded), expected (both forms), output, verdicts
    assert doc.split("\x1f") == [
        "i1",
        "cat",
        '{"text":"caf\\u00e9"}',
        '{"text": "café"}',
        '{"m":[1,"z\\u00fcrich"]}',
        '{"m": [1, "zürich"]}',
        '{"hits":["h1","' + "zürich " * 100 + '"]}',
        "bee",  # B: no error, nothing for it
        "",  # a: an empty reason
        "err",
        "zed",
    ]


def test_every_recording_writes_the_documents_refill_reads_back(store_where: str) -> None:
    """Recordings that leave rows of an earlier one in place (an output not replaced, verdicts
    of other evaluators), requeued items, an evaluator given twice, an item given twice in a
    batch, a document SQL text cannot hold: after each, the documents are `refill`'s."""
    store, items = _store(store_where)
    dialect = "sqlite" if store_where.endswith(".db") else "postgresql"
    # a text SQL cannot hold as a document (PostgreSQL refuses it as any text)
    nul = "nul \x00 inside" if dialect == "sqlite" else "nul"
    by_id = {(it.subject, it.task, it.item_id): it for it in items}

    def row(key: tuple[str, str, str], **update: object) -> ItemRecord:
        return by_id[key].model_copy(update=update)

    a0, a1, a2, a3 = (("a", "t", f"i{n}") for n in range(4))
    b0, b5 = ("b", "u", "i0"), ("b", "u", "i5")
    steps: list[list[ItemRecord]] = [
        [
            row(
                a0,
                status="completed",
                output="First",
                scores=[_verdict("e", "Old"), _verdict("f", "F")],
            ),
            row(
                a1,
                status="failed",
                output="Partial",
                failures=[Failure(stage="answer", kind="K", message="m")],
            ),
            row(
                a2,
                status="completed",
                output="x",
                scores=[_verdict("e", "one"), _verdict("e", "Two")],
            ),
            row(b0, status="completed", output="o", scores=[_verdict("e", nul)]),
        ],
        # a0 again with one evaluator: f's verdict and nothing else of it stays
        [row(a0, status="completed", output="Second", scores=[_verdict("e", "New")])],
        # a1 failed again with no output: the first output stays
        [row(a1, status="failed", output=None)],
        # failed: its verdicts go, whatever evaluators it had
        [row(a0, status="failed", output=None, scores=[])],
        # the same item twice in one batch, and a new one beside it
        [
            row(a3, status="completed", output="one", scores=[_verdict("g", "G1")]),
            row(a3, status="completed", output="two", scores=[_verdict("h", "H2")]),
            row(b5, status="completed", output='"caf\\u00e9"', scores=[_verdict("e", "", "Boom")]),
        ],
        # the NUL's item without it now, so it has a document again
        [row(b0, status="completed", output="clean", scores=[_verdict("e", "ok")])],
    ]
    with store:
        for n, batch in enumerate(steps):
            store.record_items("r", batch)
            recorded = _docs(store)
            assert _same(recorded, _refilled(store, "r"), dialect), n
            if n == 0 and dialect == "sqlite":
                assert b0 not in {d[:3] for d in recorded}
            if n == 1:
                doc = {(s, t, i): d for s, t, i, d in recorded}[a0]
                assert doc.endswith('\x1f"second"\x1fnew\x1ff')
                assert "old" not in doc
        store.unfinished_items("r", retry_failed=True)
        assert _same(_docs(store), _refilled(store, "r"), dialect)
        store.record_items("r", [row(a1, status="completed", output=None, scores=[])])
        assert _same(_docs(store), _refilled(store, "r"), dialect)


def test_a_new_runs_documents_are_made_of_the_values_it_writes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A new run's items: their documents are made of the rows written (none read back), and
    are what `refill` reads back; an item whose document SQL text cannot hold has none."""

    def read_back(*args: object, **kwargs: object) -> None:
        raise AssertionError("a new run's items were read back")

    monkeypatch.setattr(item_rows, "refill_search", read_back)
    store, items = _store(tmp_path / "r.db")
    run = RunRecord(run_id="r2", suite_name="s", suite_sha256="0" * 64, suite={"name": "s"})
    # a lone surrogate, written escaped: its decoded form cannot be SQL text
    odd = [it.model_copy(update={"input": {"text": "lone \ud800"}}) for it in items[:1]]
    with store:
        store.create_run(run, RunPlan({"a": {}}, [], odd))
        recorded = _docs(store)
        monkeypatch.undo()
        assert len(recorded) == len(items)  # all of run r, none for r2's item
        assert recorded == _refilled(store, "r")
        assert _refilled(store, "r2") == recorded


def test_a_document_is_its_values_forms_joined() -> None:
    """`document` is each value's `forms` joined by the separator, whatever the value: none,
    text with and without escapes, deflated or raw bytes, a number; None past SQL text."""
    packed_text = zlib.compress(b'{"Big":"caf\\u00e9"}', 1)
    values: list[object] = [
        "Id",
        None,
        "Plain Text",
        '{"t":"caf\\u00e9"}',
        '{"q":"say \\"Hi\\""}',
        "a\\nB",
        "",
        packed_text,
        memoryview(packed_text),
        b'{"raw":"X"}',
        3,
        2.5,
    ]
    for n in range(len(values) + 1):
        some = values[n:] + values[:n]
        assert document(some) == SEPARATOR.join(f for v in some for f in forms(v))
    assert document(["ok", "nul \x00"]) is None
    assert document(["ok", '"lone \\ud800"']) is None
