"""The one reader of OpenInference / OpenTelemetry span files: OTLP-JSON exports and Phoenix's
span exports, walked into one `RawSpan` per span, each with its attributes as flat dotted keys.

Two shapes of file are read, told apart per record:

- OTLP-JSON: `{"resourceSpans": [{"scopeSpans": [{"spans": [...]}]}]}`, as the OTLP/HTTP JSON
  encoding and the OpenTelemetry Collector's file exporter write it (one such object, or one
  per line), each span's `attributes` a list of `{"key", "value": {"stringValue" | "intValue"
  | "doubleValue" | "boolValue" | "arrayValue" | "kvlistValue"}}`; ids are hex (the OTLP/JSON
  rule) or, from a generic protobuf-to-JSON encoder, base64: both read as lowercase hex;
- flattened spans, one JSON object per line or a list, as Phoenix exports them (its spans
  dataframe as JSON lines, or its REST API's `{"data": [...]}`): `context.span_id`,
  `span_kind`, `parent_id`, `attributes.input.value`, ..., or the same keys nested
  (`{"attributes": {"input": {"value": ...}}}`). Nested objects and lists of objects are
  flattened to dotted keys, so every spelling reads alike.

What a span means (a retriever's search, a whole trace) is for the modules that read these:
`spans` (retriever searches for the query log) and `tracing` (traces and sessions).
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from memgauge._util.numbers import INT64_MAX, INT64_MIN, int_of_digits
from memgauge.data.importers.common import ImportReport, json_type
from memgauge.data.jsonio import decode_text, iter_jsonl
from memgauge.data.parsing import ParseError, loads_json
from memgauge.errors import Problem

__all__ = [
    "ENDS_BEFORE_START",
    "RawSpan",
    "SpanError",
    "SpanTimes",
    "first",
    "key_values",
    "nanos",
    "normal_id",
    "records",
    "span_times",
    "walk",
]

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_ANY_VALUE = ("stringValue", "boolValue", "intValue", "doubleValue", "bytesValue")
_HEX = re.compile(r"[0-9a-fA-F]+")
_DIGITS = re.compile(r"[0-9]+")
_B64 = re.compile(r"[A-Za-z0-9+/]+={0,2}")


class SpanError(Exception):
    """A problem inside one record: the field, and what is wrong."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field, self.message = field, message


def _values(value: dict[str, Any], key: str, where: str) -> list[Any]:
    """The `values` list of an AnyValue's `arrayValue` or `kvlistValue` (`key`); [] for none."""
    inner = value[key] or {}
    if not isinstance(inner, dict):
        raise SpanError(
            f"{where}.{key}", f"must be an object {{values: [...]}}, got {json_type(inner)}"
        )
    items = inner.get("values") or []
    if not isinstance(items, list):
        raise SpanError(f"{where}.{key}.values", f"must be a list, got {json_type(items)}")
    return items


def _any_value(value: Any, where: str) -> Any:
    """An OTLP `AnyValue` as a plain value."""
    if not isinstance(value, dict):
        raise SpanError(where, f"must be an OTLP AnyValue object, got {json_type(value)}")
    if "arrayValue" in value:
        items = _values(value, "arrayValue", where)
        return [_any_value(v, f"{where}.arrayValue.values.{i}") for i, v in enumerate(items)]
    if "kvlistValue" in value:
        return key_values(_values(value, "kvlistValue", where), where)
    for key in _ANY_VALUE:
        if key in value:
            raw = value[key]
            # proto3 JSON writes 64-bit integers as strings
            if key == "intValue" and isinstance(raw, str):
                try:
                    return int(raw)
                except ValueError:
                    raise SpanError(f"{where}.intValue", f"{raw!r} is not an integer") from None
            return raw
    return None  # an empty AnyValue: the attribute is unset


def key_values(pairs: Any, where: str) -> dict[str, Any]:
    """OTLP's list of `{key, value: AnyValue}` as a dict of plain values."""
    if not isinstance(pairs, list):
        raise SpanError(where, f"must be a list of {{key, value}}, got {json_type(pairs)}")
    out: dict[str, Any] = {}
    for i, pair in enumerate(pairs):
        if not isinstance(pair, dict) or not isinstance(pair.get("key"), str):
            raise SpanError(f"{where}.{i}", "an attribute needs a string `key`")
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


def first(flat: dict[str, Any], *keys: str) -> Any:
    """The value of the first of `keys` that `flat` holds, not null nor empty."""
    return next((flat[k] for k in keys if flat.get(k) not in (None, "")), None)


def normal_id(value: Any) -> str | None:
    """A trace or span id as text: OTLP/JSON's hex as lowercase hex; base64 of 8 or 16 bytes
    (a protobuf JSON encoder's spelling of the same bytes) as their hex; anything else (a
    Phoenix or LangSmith id) as it is."""
    if value is None or value == "":
        return None
    text = str(value)
    if len(text) in (16, 32) and _HEX.fullmatch(text):
        return text.lower()
    if len(text) in (12, 24) and _B64.fullmatch(text):
        try:
            raw = base64.b64decode(text, validate=True)
        except (binascii.Error, ValueError):
            return text
        if len(raw) in (8, 16):
            return raw.hex()
    return text


def nanos(span: dict[str, Any], *keys: str) -> int | None:
    """A span's time in integer nanoseconds since the epoch (exact: a float would lose the
    microseconds of a 2020s time): OTLP's integer (or its string), or ISO 8601 (Phoenix,
    LangSmith), under the first of `keys` it has."""
    where = next((k for k in keys if span.get(k) not in (None, "")), None)
    if where is None:
        return None
    value = span[where]
    ns: int | None = None
    if (
        isinstance(value, int | str)
        and not isinstance(value, bool)
        and _DIGITS.fullmatch(str(value))
    ):
        # an int here is one JSON read, which fits in 64 bits (`parsing.loads_json`)
        ns = value if isinstance(value, int) else int_of_digits(value)
    elif isinstance(value, str):
        try:
            at = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            pass
        else:
            if at.tzinfo is None:
                at = at.replace(tzinfo=UTC)  # Phoenix and LangSmith write UTC
            ns = (at - _EPOCH) // timedelta(microseconds=1) * 1000
    if ns is None:
        raise SpanError(where, f"{value!r} is not a time (Unix nanoseconds or ISO 8601)")
    if not INT64_MIN <= ns <= INT64_MAX:
        raise SpanError(
            where, f"{value!r} is out of range: a time in Unix nanoseconds must fit in 64 bits"
        )
    return ns


#: what a report counts a span whose end precedes its start under (a clock stepped back, an
#: exporter's bug): its start is kept, its end and its duration are n/a, never negative or 0
ENDS_BEFORE_START = "spans_ending_before_start"


@dataclass(frozen=True)
class SpanTimes:
    """A span's start and end (Unix nanoseconds; None: not given, or an end before the start,
    `backwards`) and its duration."""

    start_ns: int | None
    end_ns: int | None
    backwards: bool = False

    @property
    def latency_ms(self) -> float | None:
        """From start to end; None (n/a) when either is unknown."""
        if self.start_ns is None or self.end_ns is None:
            return None
        return (self.end_ns - self.start_ns) / 1e6


def span_times(span: dict[str, Any]) -> SpanTimes:
    """The times of a span (OTLP's `startTimeUnixNano` / `endTimeUnixNano`, Phoenix's and
    LangSmith's `start_time` / `end_time`): an end before the start is dropped, `backwards`
    (the caller counts it as `ENDS_BEFORE_START`)."""
    start = nanos(span, "startTimeUnixNano", "start_time")
    end = nanos(span, "endTimeUnixNano", "end_time")
    if start is not None and end is not None and end < start:
        return SpanTimes(start, None, backwards=True)
    return SpanTimes(start, end)


@dataclass(frozen=True)
class RawSpan:
    """One span as read: where it is, its own fields and its attributes (flat dotted keys)."""

    line: int | None
    path: str  # the span's place in its record: `0`, `resourceSpans.0.scopeSpans.0.spans.1`
    span: dict[str, Any]
    attrs: dict[str, Any]

    def field(self, name: str = "") -> str | None:
        """A Problem's field for `name` inside this span."""
        return ".".join(x for x in (self.path, name) if x) or None

    @property
    def span_id(self) -> str | None:
        return normal_id(first(self.span, "spanId", "span_id", "context.span_id"))

    @property
    def trace_id(self) -> str | None:
        return normal_id(first(self.span, "traceId", "trace_id", "context.trace_id"))

    @property
    def parent_id(self) -> str | None:
        return normal_id(first(self.span, "parentSpanId", "parent_id", "parent_span_id"))

    @property
    def kind(self) -> str | None:
        """OpenInference's kind (`openinference.span.kind`, or Phoenix's `span_kind`); never
        OTLP's own `kind` (SERVER, CLIENT, INTERNAL...)."""
        found = first(self.attrs, "openinference.span.kind") or first(self.span, "span_kind")
        return None if found is None else str(found).upper()


def _otlp_spans(record: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any], dict[str, Any]]]:
    """(path, span, attributes) of every span of an OTLP-JSON export request."""
    resources = record["resourceSpans"]
    if not isinstance(resources, list):
        raise SpanError("resourceSpans", f"must be a list, got {json_type(resources)}")
    for r, resource in enumerate(resources):
        scopes = resource.get("scopeSpans") if isinstance(resource, dict) else None
        if not isinstance(scopes, list):
            raise SpanError(f"resourceSpans.{r}.scopeSpans", "must be a list of scope spans")
        for s, scope in enumerate(scopes):
            spans = scope.get("spans") if isinstance(scope, dict) else None
            if not isinstance(spans, list):
                raise SpanError(
                    f"resourceSpans.{r}.scopeSpans.{s}.spans", "must be a list of spans"
                )
            for i, span in enumerate(spans):
                path = f"resourceSpans.{r}.scopeSpans.{s}.spans.{i}"
                if not isinstance(span, dict):
                    raise SpanError(path, f"a span must be an object, got {json_type(span)}")
                attrs = key_values(span.get("attributes") or [], f"{path}.attributes")
                # a list of kvlists (documents as an arrayValue) reads as the indexed keys
                yield path, span, _flatten(attrs, "", {})


def _flat_span(record: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """(span fields, attributes) of a flattened or nested Phoenix-style span."""
    flat = _flatten(record, "", {})
    attrs = {
        k.removeprefix("attributes."): v for k, v in flat.items() if k.startswith("attributes.")
    }
    return flat, attrs


def records(path: Path, problems: list[Problem]) -> Iterator[tuple[int | None, Any]]:
    """(line or None, JSON value): the file as one JSON document, else as JSON lines."""
    file = str(path)
    text = decode_text(path.read_bytes(), file)
    if not text.strip():
        problems.append(Problem(file, None, None, "file is empty"))
        return
    try:
        document = loads_json(text)
    except ParseError:
        pass  # not one document: JSON lines, each reported by its line
    else:
        # a JSON-lines file of one line is still read by lines: its problems name that line
        # (a document over several lines names its fields alone)
        body = text.lstrip()
        one_line = path.suffix.lower() == ".jsonl" and "\n" not in body.rstrip()
        yield (text[: len(text) - len(body)].count("\n") + 1 if one_line else None), document
        return
    yield from iter_jsonl(path, problems)


def _record_spans(one: dict[str, Any], where: str, line: int | None) -> list[RawSpan]:
    if "resourceSpans" in one:
        return [RawSpan(line, f"{where}{p}", span, attrs) for p, span, attrs in _otlp_spans(one)]
    flat, attrs = _flat_span(one)
    if not attrs and first(flat, "context.span_id", "span_id", "spanId") is None:
        raise SpanError(
            "",
            "neither a span (no attributes, no span id) nor an OTLP export (no resourceSpans)",
        )
    return [RawSpan(line, where.rstrip("."), flat, attrs)]


def walk(
    path: Path,
    problems: list[Problem],
    report: ImportReport,
    recs: Iterable[tuple[int | None, Any]] | None = None,
) -> Iterator[RawSpan]:
    """Every span of the file (of `recs`, its records when they have been read already). A
    record that cannot be read (not an object, an attribute without a key...) is a Problem
    naming its line and path, and yields none of its spans; `report` counts the OTLP exports
    read."""
    file = str(path)
    for line, record in records(path, problems) if recs is None else recs:
        if isinstance(record, dict) and isinstance(record.get("data"), list):
            record = record["data"]  # Phoenix's REST API: {"data": [spans], "next_cursor"}
        many = record if isinstance(record, list) else [record]
        for n, one in enumerate(many):
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
                spans = _record_spans(one, where, line)
            except SpanError as bad:
                problems.append(
                    Problem(file, line, f"{where}{bad.field}".strip(".") or None, bad.message)
                )
                continue
            if "resourceSpans" in one:
                report.add("otlp_exports")
            yield from spans
