"""Retriever spans of OpenInference traces (Arize Phoenix, OpenLLMetry-style OTel exports) as
query-log searches.

OpenInference's semantic conventions put a retrieval on a span of kind `RETRIEVER`
(`openinference.span.kind`) with the query in `input.value`, the ranked documents in
`retrieval.documents.{i}.document.id` / `.document.score` / `.document.content`, and the
conversation in `session.id`. Two shapes of file are read, told apart per record:

- OTLP-JSON: `{"resourceSpans": [{"scopeSpans": [{"spans": [...]}]}]}`, as the OTLP/HTTP JSON
  encoding and the OpenTelemetry Collector's file exporter write it (one such object, or one
  per line), each span's `attributes` a list of `{"key", "value": {"stringValue" | "intValue"
  | "doubleValue" | "boolValue" | "arrayValue" | "kvlistValue"}}`;
- flattened spans, one JSON object per line, as Phoenix exports them (its spans dataframe as
  JSON lines, or its REST API): `context.span_id`, `span_kind`, `attributes.input.value`,
  `attributes.retrieval.documents` as a list of `{"document.id", "document.score"}`, or the
  same keys nested (`{"attributes": {"input": {"value": ...}}}`). Nested objects and lists are
  flattened to dotted keys, so every spelling reads alike.

What is kept, dropped and normalised, each counted: spans of other kinds (LLM, chain, tool...)
are skipped; a span with retrieval documents but no kind is taken as a retriever; a retriever
span without `input.value`, or whose `retrieval.documents` is not a list of documents (a
string, a number, a list of strings...), cannot be logged and is dropped, counted per reason
and listed (`ImportReport.dropped`, the first of each reason in a note): logging it as a
search that found nothing would be a false zero. A document without an id is dropped from its
ranking; documents are ranked by their index `i`. The query log keeps ranked ids, not scores:
scores are checked (finite numbers) and counted as not stored. Span ids become query ids
(`span:<spanId>`), so importing one file twice logs each search once.

Malformed input is a `DataError` naming the file, the line (JSON lines) or the record's path,
and the field: not JSON, no spans where spans belong, an attribute without a key, a document
id that is not text or an integer, a score that is not a finite number, a time that is not
one; and a file with retriever spans none of which can be logged (every one dropped).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from memgauge.data.importers.common import ImportReport, json_type
from memgauge.data.jsonio import decode_text, iter_jsonl
from memgauge.data.parsing import ParseError, loads_json
from memgauge.errors import DataError, Problem

__all__ = ["SpanSearch", "read_spans"]

_DOC = re.compile(r"retrieval\.documents\.(\d+)\.document\.(\w+)")
_DOCS = "retrieval.documents"
_MAX_LISTED = 50  # dropped spans listed one by one in the report; the rest are counted
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_ANY_VALUE = ("stringValue", "boolValue", "intValue", "doubleValue", "bytesValue")


@dataclass(frozen=True)
class SpanSearch:
    """One retriever span as a query-log search."""

    query: str
    result_ids: tuple[str, ...]
    session_id: str | None = None
    trace_id: str | None = None
    query_id: str | None = None
    latency_ms: float | None = None
    tool_name: str = "memory_search"
    scores: tuple[float | None, ...] = field(default_factory=tuple)


class _DroppedSpanError(Exception):
    """A retriever span that cannot be logged: the count it goes to, the field, and why."""

    def __init__(self, key: str, field: str, message: str) -> None:
        super().__init__(message)
        self.key, self.field, self.message = key, field, message


class _SpanError(Exception):
    """A problem inside one record: the field, and what is wrong."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field, self.message = field, message


def _any_value(value: Any, where: str) -> Any:
    """An OTLP `AnyValue` as a plain value."""
    if not isinstance(value, dict):
        raise _SpanError(where, f"must be an OTLP AnyValue object, got {json_type(value)}")
    if "arrayValue" in value:
        items = (value["arrayValue"] or {}).get("values") or []
        return [_any_value(v, f"{where}.arrayValue.values.{i}") for i, v in enumerate(items)]
    if "kvlistValue" in value:
        return _key_values((value["kvlistValue"] or {}).get("values") or [], where)
    for key in _ANY_VALUE:
        if key in value:
            raw = value[key]
            # proto3 JSON writes 64-bit integers as strings
            if key == "intValue" and isinstance(raw, str):
                try:
                    return int(raw)
                except ValueError:
                    raise _SpanError(f"{where}.intValue", f"{raw!r} is not an integer") from None
            return raw
    return None  # an empty AnyValue: the attribute is unset


def _key_values(pairs: Any, where: str) -> dict[str, Any]:
    if not isinstance(pairs, list):
        raise _SpanError(where, f"must be a list of {{key, value}}, got {json_type(pairs)}")
    out: dict[str, Any] = {}
    for i, pair in enumerate(pairs):
        if not isinstance(pair, dict) or not isinstance(pair.get("key"), str):
            raise _SpanError(f"{where}.{i}", "an attribute needs a string `key`")
        out[pair["key"]] = _any_value(pair.get("value"), f"{where}.{i}.value")
    return out


def _flatten(value: Any, prefix: str, out: dict[str, Any]) -> dict[str, Any]:
    """Nested objects and lists as dotted keys (`a.b.0.c`); leaves as they are."""
    if isinstance(value, dict):
        for key, inner in value.items():
            _flatten(inner, f"{prefix}.{key}" if prefix else str(key), out)
    elif isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
        for i, inner in enumerate(value):
            _flatten(inner, f"{prefix}.{i}", out)
    else:
        out[prefix] = value
    return out


def _first(flat: dict[str, Any], *keys: str) -> Any:
    return next((flat[k] for k in keys if flat.get(k) not in (None, "")), None)


def _nanos(span: dict[str, Any], *keys: str) -> int | None:
    """A span's time in integer nanoseconds since the epoch (exact: a float would lose the
    microseconds of a 2020s time): OTLP's integer (or its string), or ISO 8601 (Phoenix),
    under the first of `keys` it has."""
    where = next((k for k in keys if span.get(k) not in (None, "")), None)
    if where is None:
        return None
    value = span[where]
    if isinstance(value, int | str) and not isinstance(value, bool) and str(value).isdigit():
        return int(value)
    if isinstance(value, str):
        try:
            at = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            pass
        else:
            if at.tzinfo is None:
                at = at.replace(tzinfo=UTC)  # Phoenix writes UTC
            return (at - _EPOCH) // timedelta(microseconds=1) * 1000
    raise _SpanError(where, f"{value!r} is not a time (Unix nanoseconds or ISO 8601)")


def _malformed_documents(attrs: dict[str, Any]) -> _DroppedSpanError | None:
    """Why the span's `retrieval.documents` is not a list of documents, if it is not.

    Attributes arrive flattened: a list of document objects as `retrieval.documents.{i}.
    document.*` keys, an empty list or null as it is; anything else at or under the attribute
    is a shape no document can be read from."""
    field = f"attributes.{_DOCS}"
    raw = attrs.get(_DOCS)
    if isinstance(raw, str):
        return _DroppedSpanError(
            "retriever_spans_documents_a_string_dropped",
            field,
            "is a string, not a list of documents",
        )
    if isinstance(raw, list) and raw:
        kinds = sorted({json_type(v) for v in raw if not isinstance(v, dict)})
        return _DroppedSpanError(
            "retriever_spans_documents_not_objects_dropped",
            field,
            f"is a list holding {' and '.join(kinds)}, not a list of document objects",
        )
    if raw is not None and not isinstance(raw, list):
        return _DroppedSpanError(
            "retriever_spans_documents_not_a_list_dropped",
            field,
            f"is {json_type(raw)}, not a list of documents",
        )
    for key, value in attrs.items():
        if not key.startswith(f"{_DOCS}."):
            continue
        index, _, rest = key.removeprefix(f"{_DOCS}.").partition(".")
        if not index.isdigit():
            return _DroppedSpanError(
                "retriever_spans_documents_not_a_list_dropped",
                f"attributes.{key}",
                f"{_DOCS} is an object keyed by {index!r}, not a list of documents",
            )
        if not rest.startswith("document."):
            return _DroppedSpanError(
                "retriever_spans_documents_not_objects_dropped",
                f"attributes.{key}",
                f"is {json_type(value)}, not a document object (`document.id`, ...)",
            )
    return None


def _search(span: dict[str, Any], attrs: dict[str, Any], report: ImportReport) -> SpanSearch | None:
    """The search a span records, or None when it is not a retriever span (counted); _DroppedSpanError
    when it is one that cannot be logged."""
    # not OTLP's own `kind` (SERVER, CLIENT, INTERNAL...): OpenInference's, or Phoenix's column
    kind = _first(attrs, "openinference.span.kind") or _first(span, "span_kind")
    documents: dict[int, dict[str, Any]] = {}
    for key, value in attrs.items():
        m = _DOC.fullmatch(key)
        if m:
            documents.setdefault(int(m.group(1)), {})[m.group(2)] = (key, value)
    if str(kind).upper() != "RETRIEVER" and not (kind is None and documents):
        report.add("spans_skipped_not_retriever")
        return None
    if kind is None:
        report.add("spans_without_kind_read_as_retriever")
    query = attrs.get("input.value")
    if not isinstance(query, str) or not query:
        raise _DroppedSpanError(
            "retriever_spans_without_query_dropped",
            "attributes.input.value",
            "a retriever span needs its query (a non-empty string)",
        )
    malformed = _malformed_documents(attrs)
    if malformed is not None:
        raise malformed
    ids: list[str] = []
    scores: list[float | None] = []
    for _index, doc in sorted(documents.items()):
        raw_id = doc.get("id", (None, None))[1]
        if isinstance(raw_id, int) and not isinstance(raw_id, bool):
            raw_id = str(raw_id)
        if raw_id is None or raw_id == "":
            report.add("documents_without_id_dropped")
            continue
        if not isinstance(raw_id, str):
            raise _SpanError(
                f"attributes.{doc['id'][0]}", f"a document id must be text, got {json_type(raw_id)}"
            )
        score = doc.get("score", (None, None))
        if score[1] is not None:
            if (
                not isinstance(score[1], int | float)
                or isinstance(score[1], bool)
                or not math.isfinite(score[1])
            ):
                raise _SpanError(
                    f"attributes.{score[0]}", f"a score must be a finite number, got {score[1]!r}"
                )
            report.add("scores_not_stored")
        ids.append(raw_id)
        scores.append(None if score[1] is None else float(score[1]))
    report.add("documents", len(ids))
    start = _nanos(span, "startTimeUnixNano", "start_time")
    end = _nanos(span, "endTimeUnixNano", "end_time")
    span_id = _first(span, "spanId", "span_id", "context.span_id")
    session = attrs.get("session.id")
    return SpanSearch(
        query=query,
        result_ids=tuple(ids),
        session_id=None if session is None else str(session),
        trace_id=_first(span, "traceId", "trace_id", "context.trace_id"),
        query_id=None if span_id is None else f"span:{span_id}",
        latency_ms=None if start is None or end is None else max(0.0, (end - start) / 1e6),
        tool_name=str(_first(span, "name") or "memory_search"),
        scores=tuple(scores),
    )


def _otlp_spans(record: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any], dict[str, Any]]]:
    """(path, span, attributes) of every span of an OTLP-JSON export request."""
    resources = record["resourceSpans"]
    if not isinstance(resources, list):
        raise _SpanError("resourceSpans", f"must be a list, got {json_type(resources)}")
    for r, resource in enumerate(resources):
        scopes = resource.get("scopeSpans") if isinstance(resource, dict) else None
        if not isinstance(scopes, list):
            raise _SpanError(f"resourceSpans.{r}.scopeSpans", "must be a list of scope spans")
        for s, scope in enumerate(scopes):
            spans = scope.get("spans") if isinstance(scope, dict) else None
            if not isinstance(spans, list):
                raise _SpanError(
                    f"resourceSpans.{r}.scopeSpans.{s}.spans", "must be a list of spans"
                )
            for i, span in enumerate(spans):
                path = f"resourceSpans.{r}.scopeSpans.{s}.spans.{i}"
                if not isinstance(span, dict):
                    raise _SpanError(path, f"a span must be an object, got {json_type(span)}")
                attrs = _key_values(span.get("attributes") or [], f"{path}.attributes")
                # a list of kvlists (documents as an arrayValue) reads as the indexed keys
                yield path, span, _flatten(attrs, "", {})


def _flat_span(record: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """(span fields, attributes) of a flattened or nested Phoenix-style span."""
    flat = _flatten(record, "", {})
    attrs = {
        k.removeprefix("attributes."): v for k, v in flat.items() if k.startswith("attributes.")
    }
    return flat, attrs


def _records(path: Path, problems: list[Problem]) -> Iterator[tuple[int | None, Any]]:
    """(line or None, JSON value): the file as one JSON document, else as JSON lines."""
    file = str(path)
    text = decode_text(path.read_bytes(), file)
    if not text.strip():
        problems.append(Problem(file, None, None, "file is empty"))
        return
    try:
        yield None, loads_json(text)
        return
    except ParseError:
        pass  # not one document: JSON lines, each reported by its line
    yield from iter_jsonl(path, problems)


def _spans(n: int) -> str:
    return f"{n} retriever span{'' if n == 1 else 's'}"


def _drop(report: ImportReport, first: dict[str, Problem], where: Problem, key: str) -> None:
    """Count a dropped retriever span under `key`, list it, and note the first of each key."""
    report.add(key)
    if len(report.dropped) < _MAX_LISTED:
        report.dropped.append({"line": where.line, "field": where.field, "why": where.message})
    if key not in first:
        first[key] = where
        at = f"line {where.line}, " if where.line is not None else ""
        report.notes.append(
            f"{key}: retriever spans not logged; the first at {at}{where.field}: {where.message}"
        )


def read_spans(path: str | Path) -> tuple[list[SpanSearch], ImportReport]:
    """The searches the retriever spans of `path` record (module docstring), and the report."""
    p = Path(path)
    file = str(p)
    if not p.is_file():
        raise DataError(Problem(file, None, None, "no such file"))
    report = ImportReport(source=file, format="openinference-spans")
    problems: list[Problem] = []
    searches: list[SpanSearch] = []
    first: dict[str, Problem] = {}  # the first span dropped for each reason
    for line, record in _records(p, problems):
        if isinstance(record, dict) and isinstance(record.get("data"), list):
            record = record["data"]  # Phoenix's REST API: {"data": [spans], "next_cursor"}
        records = record if isinstance(record, list) else [record]
        for n, one in enumerate(records):
            where = f"{n}." if isinstance(record, list) else ""
            if not isinstance(one, dict):
                problems.append(
                    Problem(
                        file,
                        line,
                        where.rstrip(".") or None,
                        f"a span or an OTLP export must be an object, got {json_type(one)}",
                    )
                )
                continue
            try:
                if "resourceSpans" in one:
                    report.add("otlp_exports")
                    spans = list(_otlp_spans(one))
                else:
                    flat, attrs = _flat_span(one)
                    if not attrs and _first(flat, "context.span_id", "span_id", "spanId") is None:
                        raise _SpanError(
                            "",
                            "neither a span (no attributes, no span id) nor an OTLP export "
                            "(no resourceSpans)",
                        )
                    spans = [("", flat, attrs)]
                for span_path, span, attrs in spans:
                    report.add("spans")
                    try:
                        found = _search(span, attrs, report)
                    except _SpanError as bad:
                        field = f"{span_path}.{bad.field}" if span_path else bad.field
                        raise _SpanError(field, bad.message) from None
                    except _DroppedSpanError as drop:
                        field = ".".join(x for x in (where.rstrip("."), span_path, drop.field) if x)
                        _drop(report, first, Problem(file, line, field, drop.message), drop.key)
                        continue
                    if found is not None:
                        searches.append(found)
            except _SpanError as bad:
                problems.append(
                    Problem(file, line, f"{where}{bad.field}".strip(".") or None, bad.message)
                )
    if problems:
        raise DataError(problems)
    if not report.counts.get("spans"):
        raise DataError(Problem(file, None, None, "no spans: not an OTLP-JSON or span export"))
    if first and not searches:  # nothing to log but what was dropped: the file is not usable
        raise DataError(
            [
                Problem(
                    file,
                    drop.line,
                    drop.field,
                    f"{drop.message} ({_spans(report.counts[key])} dropped for this); no"
                    " retriever span of the file can be logged",
                )
                for key, drop in first.items()
            ]
        )
    report.counts["queries"] = len(searches)
    report.counts["sessions"] = len({s.session_id for s in searches if s.session_id})
    if report.counts.get("scores_not_stored"):
        report.notes.append(
            "the query log keeps each search's ranked ids, not the retriever's scores"
        )
    report.notes.append(
        "searches are logged at import time; the spans' own times give only their latency"
    )
    return searches, report
