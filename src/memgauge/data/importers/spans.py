"""Retriever spans of OpenInference traces (Arize Phoenix, OpenLLMetry-style OTel exports) as
query-log searches.

OpenInference's semantic conventions put a retrieval on a span of kind `RETRIEVER`
(`openinference.span.kind`) with the query in `input.value`, the ranked documents in
`retrieval.documents.{i}.document.id` / `.document.score` / `.document.content`, and the
conversation in `session.id`. The file is read by `otel` (OTLP-JSON, or Phoenix's span
exports); this module turns its retriever spans into searches.

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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memgauge.data.importers.common import ImportReport, json_type
from memgauge.data.importers.otel import (
    ENDS_BEFORE_START,
    RawSpan,
    SpanError,
    first,
    span_times,
    walk,
)
from memgauge.data.jsonio import existing
from memgauge.errors import DataError, Problem

__all__ = ["DroppedSpanError", "SpanSearch", "drop", "read_spans", "search_of"]

_DOC = re.compile(r"retrieval\.documents\.(\d+)\.document\.(\w+)")
_DOCS = "retrieval.documents"
_MAX_LISTED = 50  # dropped spans listed one by one in the report; the rest are counted


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


class DroppedSpanError(Exception):
    """A retriever span that cannot be logged: the count it goes to, the field, and why."""

    def __init__(self, key: str, field: str, message: str) -> None:
        super().__init__(message)
        self.key, self.field, self.message = key, field, message


def _malformed_documents(attrs: dict[str, Any]) -> DroppedSpanError | None:
    """Why the span's `retrieval.documents` is not a list of documents, if it is not.

    Attributes arrive flattened: a list of document objects as `retrieval.documents.{i}.
    document.*` keys, an empty list or null as it is; anything else at or under the attribute
    is a shape no document can be read from."""
    field = f"attributes.{_DOCS}"
    raw = attrs.get(_DOCS)
    if isinstance(raw, str):
        return DroppedSpanError(
            "retriever_spans_documents_a_string_dropped",
            field,
            "is a string, not a list of documents",
        )
    if isinstance(raw, list) and raw:
        kinds = sorted({json_type(v) for v in raw if not isinstance(v, dict)})
        return DroppedSpanError(
            "retriever_spans_documents_not_objects_dropped",
            field,
            f"is a list holding {' and '.join(kinds)}, not a list of document objects",
        )
    if raw is not None and not isinstance(raw, list):
        return DroppedSpanError(
            "retriever_spans_documents_not_a_list_dropped",
            field,
            f"is {json_type(raw)}, not a list of documents",
        )
    for key, value in attrs.items():
        if not key.startswith(f"{_DOCS}."):
            continue
        index, _, rest = key.removeprefix(f"{_DOCS}.").partition(".")
        if not index.isdigit():
            return DroppedSpanError(
                "retriever_spans_documents_not_a_list_dropped",
                f"attributes.{key}",
                f"{_DOCS} is an object keyed by {index!r}, not a list of documents",
            )
        if not rest.startswith("document."):
            return DroppedSpanError(
                "retriever_spans_documents_not_objects_dropped",
                f"attributes.{key}",
                f"is {json_type(value)}, not a document object (`document.id`, ...)",
            )
    return None


def search_of(raw: RawSpan, report: ImportReport) -> SpanSearch | None:
    """The search a span records, or None when it is not a retriever span (counted);
    DroppedSpanError when it is one that cannot be logged, SpanError when it is malformed."""
    attrs, span, kind = raw.attrs, raw.span, raw.kind
    documents: dict[int, dict[str, Any]] = {}
    for key, value in attrs.items():
        m = _DOC.fullmatch(key)
        if m:
            documents.setdefault(int(m.group(1)), {})[m.group(2)] = (key, value)
    if kind != "RETRIEVER" and not (kind is None and documents):
        report.add("spans_skipped_not_retriever")
        return None
    if kind is None:
        report.add("spans_without_kind_read_as_retriever")
    query = attrs.get("input.value")
    if not isinstance(query, str) or not query:
        raise DroppedSpanError(
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
            raise SpanError(
                f"attributes.{doc['id'][0]}", f"a document id must be text, got {json_type(raw_id)}"
            )
        score = doc.get("score", (None, None))
        if score[1] is not None:
            if (
                not isinstance(score[1], int | float)
                or isinstance(score[1], bool)
                or not math.isfinite(score[1])
            ):
                raise SpanError(
                    f"attributes.{score[0]}", f"a score must be a finite number, got {score[1]!r}"
                )
            report.add("scores_not_stored")
        ids.append(raw_id)
        scores.append(None if score[1] is None else float(score[1]))
    report.add("documents", len(ids))
    session = attrs.get("session.id")
    return SpanSearch(
        query=query,
        result_ids=tuple(ids),
        session_id=None if session is None else str(session),
        trace_id=raw.trace_id,
        query_id=None if raw.span_id is None else f"span:{raw.span_id}",
        latency_ms=span_times(span).latency_ms,
        tool_name=str(first(span, "name") or "memory_search"),
        scores=tuple(scores),
    )


def _spans(n: int) -> str:
    return f"{n} retriever span{'' if n == 1 else 's'}"


def drop(
    report: ImportReport, firsts: dict[str, Problem], where: Problem, key: str, what: str
) -> None:
    """Count a dropped span under `key`, list it, and note the first of each key."""
    report.add(key)
    if len(report.dropped) < _MAX_LISTED:
        report.dropped.append({"line": where.line, "field": where.field, "why": where.message})
    if key not in firsts:
        firsts[key] = where
        at = f"line {where.line}, " if where.line is not None else ""
        report.notes.append(f"{key}: {what}; the first at {at}{where.field}: {where.message}")


def read_spans(path: str | Path) -> tuple[list[SpanSearch], ImportReport]:
    """The searches the retriever spans of `path` record (module docstring), and the report."""
    p, file = existing(path)
    report = ImportReport(source=file, format="openinference-spans")
    problems: list[Problem] = []
    searches: list[SpanSearch] = []
    firsts: dict[str, Problem] = {}  # the first span dropped for each reason
    for raw in walk(p, problems, report):
        report.add("spans")
        try:
            if span_times(raw.span).backwards:
                report.add(ENDS_BEFORE_START)
            found = search_of(raw, report)
        except SpanError as bad:
            problems.append(Problem(file, raw.line, raw.field(bad.field), bad.message))
            continue
        except DroppedSpanError as dropped:
            where = Problem(file, raw.line, raw.field(dropped.field), dropped.message)
            drop(report, firsts, where, dropped.key, "retriever spans not logged")
            continue
        if found is not None:
            searches.append(found)
    if problems:
        raise DataError(problems)
    if not report.counts.get("spans"):
        raise DataError(Problem(file, None, None, "no spans: not an OTLP-JSON or span export"))
    if firsts and not searches:  # nothing to log but what was dropped: the file is not usable
        raise DataError(
            [
                Problem(
                    file,
                    where.line,
                    where.field,
                    f"{where.message} ({_spans(report.counts[key])} dropped for this); no"
                    " retriever span of the file can be logged",
                )
                for key, where in firsts.items()
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
