"""`memgauge logs import-spans`: OpenInference retriever spans, from an OTLP-JSON export and
from Phoenix's flattened JSON lines, become query-log searches in a real store."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from memgauge.cli.main import main
from memgauge.data.importers.spans import read_spans

SPANS = Path(__file__).resolve().parents[1] / "data" / "spans"
BAD = SPANS.parent / "bad"


def _logged(db: Path) -> dict[str, dict[str, Any]]:
    with sqlite3.connect(db) as conn:
        conn.row_factory = sqlite3.Row
        rows = conn.execute(
            "SELECT query_id, query, session_id, tool_name, result_ids, result_count,"
            " total_latency_ms, trace_id FROM eval_queries"
        ).fetchall()
    return {r["query_id"]: dict(r) for r in rows}


def _import(path: Path, db: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    assert main(["logs", "import-spans", str(path), "--store", str(db)]) == 0
    return dict(json.loads(capsys.readouterr().out))


def test_otlp_json_retriever_spans_become_searches(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "log.db"
    counts = _import(SPANS / "otlp.json", db, capsys)
    logged = _logged(db)
    assert set(logged) == {"span:eee19b7ec3c1b175", "span:b7ad6b7169203331"}
    first = logged["span:eee19b7ec3c1b175"]
    assert first["query"] == "where is the boat kept"
    assert first["session_id"] == "s-1"
    assert first["tool_name"] == "retrieve"
    assert first["trace_id"] == "5b8efff798038103d269b633813fc60c"
    # ranked by the documents' index, not by the order of the attributes; an int id is text
    assert json.loads(first["result_ids"]) == ["m-boat", "m-harbour", "17"]
    assert first["total_latency_ms"] == pytest.approx(12.5)
    second = logged["span:b7ad6b7169203331"]
    assert json.loads(second["result_ids"]) == ["m-colour"]
    assert second["total_latency_ms"] is None  # the span has no times
    assert counts["spans"] == 4
    assert counts["spans_skipped_not_retriever"] == 2  # the chain and the LLM span
    assert counts["documents_without_id_dropped"] == 1
    assert counts["scores_not_stored"] == 3
    assert counts["queries_logged"] == 2
    assert counts["sessions"] == 1
    assert any("not the retriever's scores" in n for n in counts["notes"])

    # the same file again logs each search once (span ids are query ids)
    _import(SPANS / "otlp.json", db, capsys)
    assert len(_logged(db)) == 2


def test_phoenix_flattened_and_nested_spans(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "log.db"
    counts = _import(SPANS / "phoenix.jsonl", db, capsys)
    logged = _logged(db)
    assert set(logged) == {"span:p-1", "span:p-3"}
    assert json.loads(logged["span:p-1"]["result_ids"]) == ["m-oauth", "m-tokens"]
    assert logged["span:p-1"]["session_id"] == "s-9"
    assert logged["span:p-1"]["total_latency_ms"] == pytest.approx(30.0)
    assert logged["span:p-3"]["query"] == "billing webhooks"  # nested attributes read alike
    assert json.loads(logged["span:p-3"]["result_ids"]) == ["m-webhook"]
    assert counts["spans_skipped_not_retriever"] == 1
    assert counts["retriever_spans_without_query_dropped"] == 1
    assert counts["queries_logged"] == 2


def test_spans_whose_documents_are_not_a_list_are_dropped_and_counted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "log.db"
    counts = _import(BAD / "spans_documents_malformed.jsonl", db, capsys)
    logged = _logged(db)
    # never a search that found nothing: only the readable span and the one that found nothing
    assert set(logged) == {"span:p-1", "span:p-6"}
    assert json.loads(logged["span:p-1"]["result_ids"]) == ["m-boat"]
    assert json.loads(logged["span:p-6"]["result_ids"]) == []
    assert counts["spans"] == 6
    assert counts["retriever_spans_documents_a_string_dropped"] == 1  # line 2
    assert counts["retriever_spans_documents_not_objects_dropped"] == 1  # line 3
    assert counts["retriever_spans_documents_not_a_list_dropped"] == 2  # lines 4 and 5
    assert counts["queries"] == counts["queries_logged"] == 2
    assert (
        "retriever_spans_documents_a_string_dropped: retriever spans not logged; the first at "
        "line 2, attributes.retrieval.documents: is a string, not a list of documents"
    ) in counts["notes"]
    _, report = read_spans(BAD / "spans_documents_malformed.jsonl")
    assert [(d["line"], d["field"]) for d in report.dropped] == [
        (2, "attributes.retrieval.documents"),
        (3, "attributes.retrieval.documents"),
        (4, "attributes.retrieval.documents"),
        (5, "attributes.retrieval.documents.first.document.id"),
    ]


def test_otlp_documents_as_an_array_of_key_value_lists(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def doc(i: str) -> dict[str, Any]:
        return {"kvlistValue": {"values": [{"key": "document.id", "value": {"stringValue": i}}]}}

    span = {
        "spanId": "c0ffee",
        "attributes": [
            {"key": "openinference.span.kind", "value": {"stringValue": "RETRIEVER"}},
            {"key": "input.value", "value": {"stringValue": "q"}},
            {
                "key": "retrieval.documents",
                "value": {"arrayValue": {"values": [doc("m-1"), doc("m-2")]}},
            },
        ],
    }
    path = tmp_path / "otlp.json"
    path.write_text(json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]}))
    _import(path, tmp_path / "log.db", capsys)
    assert json.loads(_logged(tmp_path / "log.db")["span:c0ffee"]["result_ids"]) == ["m-1", "m-2"]


@pytest.mark.parametrize(
    ("body", "words"),
    [
        ("", "file is empty"),
        ('{"hello": 1}\n', "spans.json: neither a span (no attributes, no span id)"),
        ('{"resourceSpans": []}', "no spans: not an OTLP-JSON or span export"),
        ('{"resourceSpans": {"a": 1}}', "resourceSpans: must be a list"),
        ("[1]", "0: a span or an OTLP export must be an object"),
        (
            '{"span_kind": "RETRIEVER", "attributes.input.value": "q", "start_time": "later"}',
            "start_time: 'later' is not a time",
        ),
        (
            '{"span_kind": "RETRIEVER", "attributes.input.value": "q",'
            ' "attributes.retrieval.documents": [{"document.id": ["a"]}]}',
            "attributes.retrieval.documents.0.document.id: a document id must be text",
        ),
        (  # every retriever span dropped: nothing to log is not a success
            '{"span_kind": "RETRIEVER", "context.span_id": "p-1"}\n'
            '{"span_kind": "RETRIEVER", "attributes.input.value": "q",'
            ' "attributes.retrieval.documents": ["a", 1]}\n',
            "spans.json:1: attributes.input.value: a retriever span needs its query",
        ),
        (
            '{"span_kind": "RETRIEVER", "context.span_id": "p-1"}\n'
            '{"span_kind": "RETRIEVER", "attributes.input.value": "q",'
            ' "attributes.retrieval.documents": ["a", 1]}\n',
            "spans.json:2: attributes.retrieval.documents: is a list holding a string and an "
            "integer, not a list of document objects (1 retriever span dropped for this)",
        ),
    ],
)
def test_malformed_span_files(
    body: str, words: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "spans.json"
    path.write_text(body)
    db = tmp_path / "log.db"
    assert main(["logs", "import-spans", str(path), "--store", str(db)]) == 2
    err = capsys.readouterr().err
    assert words in err, err
    assert "spans.json" in err
    assert not db.exists()
