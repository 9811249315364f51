"""Outputs recorded in production (seed 001's and seed 000's "online" phase), one line per call.

A line is `{case_id (or id), output}`: the output of a labelled case, scored against the case
file. A line that carries its own `conversation` (and `existing_memory`) is a production trace:
unless it names a `case_id`, it is *unlabelled*, and only the fact-enumeration judge can score
it, from its conversation, existing memory and output alone (never against empty expected facts
nor for minimalism: nobody said what it should have extracted). Its `id` is its own (a trace or
run id), or `trace-` and 12 hex digits of its content's sha256 when it has none, so the same
line gets the same id in every run and a resumed run finds it.

A trace export (LangSmith's runs as JSON, OpenInference spans as OTLP-JSON or Phoenix's export)
is read by `data.tracing`: its runs tagged `memory_extraction` are the lines (see
`data.tracing.extraction`), and what could not be read from them is counted (`export_report`).

`tags` select the lines of one kind of call (seed 001 scores the runs tagged
`memory_extraction`); `sample` keeps a share of them, decided per line from a hash of the seed
and its id: the same seed keeps the same lines, and a line's fate does not change when the trace
grows (a draw over the whole file would reshuffle every line when one is appended).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ConfigDict, Field, ValidationError, model_validator

from memgauge._util.listing import counted
from memgauge._util.model import Model
from memgauge.data.jsonio import problems_from_validation, read_records
from memgauge.data.models import ExtractionCase, Turn, blank
from memgauge.errors import DataError, Problem

if TYPE_CHECKING:
    from memgauge.data.importers.common import ImportReport

__all__ = [
    "TraceLine",
    "export_report",
    "load_recorded",
    "read_lines",
    "sampled",
    "trace_summary",
    "unlabelled_cases",
]


class TraceLine(Model):
    """One recorded call. Unknown keys (a trace export's own fields) are ignored."""

    model_config = ConfigDict(extra="ignore", allow_inf_nan=False)

    case_id: str | None = Field(default=None, description="The labelled case it answers.")
    id: str | None = Field(default=None, description="The line's own id (a trace or run id).")
    output: Any = Field(description="What the extractor (or decider) returned.")
    conversation: list[Turn] | None = Field(
        default=None,
        min_length=1,
        description="The conversation it extracted from (a production trace).",
    )
    existing_memory: list[str] = Field(
        default_factory=list, description="The memory before the conversation."
    )
    tags: list[str] = Field(default_factory=list, description="The call's tags.")

    @model_validator(mode="before")
    @classmethod
    def _shapes(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        data = dict(data)
        if isinstance(data.get("conversation"), str):
            # a transcript as one text: the user's turn, as an extractor sees it
            data["conversation"] = [{"role": "user", "content": data["conversation"]}]
        if isinstance(data.get("existing_memory"), str):
            data["existing_memory"] = [
                ln.strip() for ln in data["existing_memory"].splitlines() if ln.strip()
            ]
        if "case_id" not in data and "conversation" not in data and "id" in data:
            # the recorded-outputs shape: `id` names the case
            data["case_id"] = data.pop("id")
        if data.get("case_id") is None and data.get("conversation") is None:
            raise ValueError(
                "a line needs case_id (the labelled case it answers) or its conversation (a "
                "production trace, scored by the fact-enumeration judge)"
            )
        return data

    @property
    def unlabelled(self) -> bool:
        """A trace line no case labels."""
        return self.case_id is None

    @property
    def key(self) -> str:
        """Its item id: the case id, its own id, or a hash of its content."""
        if self.case_id is not None:
            return self.case_id
        if self.id:
            return self.id
        body = json.dumps(
            self.model_dump(mode="json", exclude={"tags"}), sort_keys=True, default=str
        )
        return "trace-" + hashlib.sha256(body.encode("utf-8")).hexdigest()[:12]


def export_report(path: str | Path) -> tuple[list[TraceLine], ImportReport]:
    """The trace lines of a trace export's extraction runs, and the report of what was read
    and skipped (per reason). A DataError when the file has none that can be judged."""
    # imported here: the importers package imports data.io, which imports this module
    from memgauge.data.tracing.extraction import EXTRACTION_TAG, extraction_lines
    from memgauge.data.tracing.read import read_traces

    file = str(path)
    traces, report = read_traces(path)
    lines: list[TraceLine] = []
    bad: list[Problem] = []
    for raw in extraction_lines(traces, report):
        try:
            lines.append(TraceLine.model_validate(raw))
        except ValidationError as exc:
            report.add("extraction_runs_unreadable_skipped")
            bad.extend(problems_from_validation(exc, file, None, f"run {raw['id']}"))
    if bad:
        first = bad[0]
        report.notes.append(
            f"extraction_runs_unreadable_skipped: the first at {first.field}: {first.message}"
        )
    if not lines:
        why = [n for n in report.notes if n.startswith("extraction_runs")]
        raise DataError(
            Problem(
                file,
                None,
                None,
                f"a {traces.format} trace export with no run tagged {EXTRACTION_TAG} that can"
                f" be judged ({'; '.join(why) if why else 'none is tagged'})",
            )
        )
    report.counts["extraction_lines"] = len(lines)
    return lines, report


def read_lines(path: str | Path) -> list[TraceLine]:
    """The lines of a trace file: memgauge's own JSONL, or a trace export's extraction runs."""
    from memgauge.data.tracing.read import export_format  # see export_report

    if export_format(path) is not None:
        return export_report(path)[0]
    return read_records(path, TraceLine)


def load_recorded(path: str | Path) -> dict[str, Any]:
    """Item id -> recorded output, for every line; later lines win for a repeated id."""
    return {line.key: line.output for line in read_lines(path)}


def sampled(key: str, rate: float, seed: int) -> bool:
    """Whether the line `key` is in a `rate` sample under `seed`: sha256(seed:key) read as a
    number in [0, 1) is below `rate`."""
    if rate >= 1.0:
        return True
    digest = hashlib.sha256(f"{seed}:{key}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64 < rate


def unlabelled_cases(
    path: str | Path, *, tags: Sequence[str] = (), sample: float = 1.0, seed: int = 0
) -> tuple[list[ExtractionCase], int]:
    """The unlabelled lines of a trace as extraction cases without expected facts, keeping
    lines tagged with any of `tags` (all, when none is given) and then the `sample` share; and
    how many unlabelled lines the file has before filtering. A turn without text (an
    assistant's tool call) says nothing to extract: left out, and a line with no other turn
    is not kept (it has no conversation to judge its output against)."""
    # a later line of a key wins, as for its output
    lines = {line.key: line for line in read_lines(path) if line.unlabelled}
    said = {
        key: [t for t in line.conversation or [] if blank(t.content) is None]
        for key, line in lines.items()
    }
    cases = [
        ExtractionCase(
            id=key,
            conversation=said[key],
            existing_memory=line.existing_memory,
            metadata={"tags": line.tags} if line.tags else {},
        )
        for key, line in lines.items()
        if said[key] and (not tags or set(tags) & set(line.tags)) and sampled(key, sample, seed)
    ]
    return cases, len(lines)


def trace_summary(path: str | Path) -> str:
    """What `memgauge validate` says of a valid trace: its lines, labelled and not, and tags."""
    from memgauge.data.importers.otel import ENDS_BEFORE_START
    from memgauge.data.tracing.extraction import EXTRACTION_TAG  # see export_report
    from memgauge.data.tracing.read import export_format, read_traces

    if export_format(path) is not None:
        traces, report = read_traces(path)
        try:
            n = len(export_report(path)[0])
        except DataError:
            n = 0  # a valid export without extraction runs: `extraction --outputs` says so
        c = report.counts
        backwards = c.get(ENDS_BEFORE_START, 0)
        return (
            f"{traces.format} trace export: {counted(c['traces'], 'trace')} in"
            f" {counted(c['sessions'], 'session')}, {counted(c['spans'], 'span')};"
            f" {counted(n, 'run')} tagged {EXTRACTION_TAG} as trace lines"
            + (
                f"; {ENDS_BEFORE_START}: {backwards} (its end read as unknown: its duration n/a)"
                if backwards
                else ""
            )
        )
    lines = read_lines(path)
    unlabelled = [ln for ln in lines if ln.unlabelled]
    tags = sorted({t for ln in unlabelled for t in ln.tags})
    return (
        f"{counted(len(lines), 'recorded output')}: {len(lines) - len(unlabelled)} of labelled"
        f" cases, {counted(len(unlabelled), 'unlabelled trace line')}"
        + (f" (tags: {', '.join(tags)})" if tags else "")
    )
