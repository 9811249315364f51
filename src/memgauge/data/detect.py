"""Which kind of dataset a file is: its content decides, its name only breaks a tie.

`kinds_by_content` reads the start of the file (a large file's first records say enough): the
outline of a JSON or YAML document (`data.sniff`: object or list, top-level keys, the fields
of the first record), the first record of a JSONL file, the columns of a text file's first
line. That gives the kinds the file can be, most likely first. `kind_by_name` reads the name
(`memories.jsonl`, `suite.yaml`, `*locomo.json`). `detect_kind` takes the content's first
kind, or the name's when the content allows it too, and the name's alone only when the
content says nothing (an empty, cut-off or unreadable file: the name then decides whose
errors the user gets). So memaudit's `data/real/memorybench-locomo.json` is read as the
memaudit conversations it holds, and a suite called `nightly.yaml` as a suite.
"""

from __future__ import annotations

import gzip
import re
import zlib
from pathlib import Path
from typing import Literal, get_args

from memgauge._util.builtins import BUILTINS, REFERENCE_MODES
from memgauge.data.sniff import Outline, json_outline, yaml_outline
from memgauge.errors import DataError, Problem, UsageError

Kind = Literal[
    "dataset-dir",
    "bundle",
    "memories",
    "queries",
    "judgments",
    "equivalence",
    "chains",
    "qrels",
    "run",
    "conversations",
    "locomo",
    "longmemeval",
    "suite",
    "subject",
    "labels",
    "extraction",
    "operations",
    "trace",
    "pairs",
    "vectors",
    "items",
]
KINDS: tuple[str, ...] = get_args(Kind)

__all__ = [
    "DATASET_KINDS",
    "KINDS",
    "Kind",
    "also_fits",
    "detect_kind",
    "kind_by_name",
    "kinds_by_content",
    "read_as",
]

#: the kinds of file each reader takes, when it takes several: what `--kind` offers on the
#: command that reads them (evaluate, audit, extraction), and a suite task's `dataset_kind`
DATASET_KINDS: dict[str, tuple[Kind, ...]] = {
    "retrieval": ("dataset-dir", "bundle", "locomo", "longmemeval"),
    "probes": ("conversations", "locomo", "longmemeval"),
    "extraction": ("extraction", "locomo"),
}

_BY_STEM: dict[str, Kind] = {
    "suite": "suite",
    "extraction": "extraction",
    "operations": "operations",
    "items": "items",
    "probes": "items",
    "trace": "trace",
    "pairs": "pairs",
    "vectors": "vectors",
    "subject": "subject",
    "labels": "labels",
    "locomo": "locomo",
    "longmemeval": "longmemeval",
    "memories": "memories",
    "queries": "queries",
    "judgments": "judgments",
    "equivalence": "equivalence",
    "chains": "chains",
    "qrels": "qrels",
    "run": "run",
    "conversations": "conversations",
    "bundle": "bundle",
    "dataset": "bundle",
}

# a bundle's keys, and the kind of a file holding only one of them (`{"memories": [...]}`)
_PARTS: dict[str, Kind] = {
    "memories": "memories",
    "queries": "queries",
    "judgments": "judgments",
    "equivalence_classes": "equivalence",
    "causal_chains": "chains",
}
#: the kinds whose files the content alone cannot always tell apart (`also_fits`)
_TIES = ({"queries", "memories"}, {"equivalence", "chains"}, {"qrels", "run"})
_MEMORY_ONLY = {"tier", "folder", "session", "created_at"}
_QUERY_ONLY = {"intent", "category", "session_context", "harvested_at"}
#: the fields of a trace export's record (data.tracing): LangSmith, OTLP-JSON, Phoenix
_TRACE_EXPORT = {"run_type", "resourceSpans", "span_kind", "context.span_id"}
#: the subject kinds memgauge has (a spec file's one key), and the reference memory's modes
_SUBJECT_KINDS = frozenset(BUILTINS["memgauge.subjects"]) | set(REFERENCE_MODES)
_TEXT_SUFFIXES = (".txt", ".trec", ".qrels", ".run", "")
_HEAD = 64 * 1024


def _head(path: Path) -> str:
    try:
        with open(path, "rb") as fh:
            data = fh.read(_HEAD)
        if data.startswith(b"\x1f\x8b"):  # a gzip-compressed TREC file (data.trec reads it)
            with gzip.open(path, "rb") as fh:
                data = fh.read(_HEAD)
    except (OSError, EOFError, zlib.error):
        return ""
    return data.decode("utf-8", errors="replace").lstrip("\ufeff")


def kind_by_name(path: Path) -> Kind | None:
    """The kind the file's name suggests (`memories.jsonl`, `judge_suite.yaml`), if any."""
    name = path.name.lower()
    stem = name.removesuffix(path.suffix.lower())
    for key, kind in _BY_STEM.items():
        if name.startswith(key) or stem.endswith(key):
            return kind
    return None


def _by_record(keys: set[str]) -> tuple[Kind, ...]:
    """The kinds whose records have these fields, most likely first."""
    if keys & _TRACE_EXPORT:
        return ("trace",)  # a LangSmith run, an OTLP export, a Phoenix span
    if {"query_id", "memory_id"} <= keys:
        return ("judgments",)
    if keys & {"haystack_sessions", "question_id", "answer_session_ids"}:
        return ("longmemeval",)
    if keys & {"qa", "sample_id"}:
        return ("locomo",)
    if "incoming" in keys:
        return ("operations",)
    if "output" in keys:
        return ("trace",) if keys & {"conversation", "case_id"} else ("labels", "trace")
    if {"a", "b", "label"} <= keys:
        return ("pairs",)
    if "conversation" in keys:
        return ("extraction",)
    if "turns" in keys:
        return ("conversations",)
    if "memory_ids" in keys:
        return ("chains",) if "query_ids" in keys else ("equivalence", "chains")
    if "text" in keys:
        if "vector" in keys:
            return ("vectors",)
        if keys & _MEMORY_ONLY:
            return ("memories",)
        if keys & _QUERY_ONLY:
            return ("queries",)
        return ("queries", "memories")
    if "input" in keys:
        return ("items",)
    return ()


def _by_object(outline: Outline) -> tuple[Kind, ...]:
    """The kinds of a document whose top level is an object."""
    keys = set(outline.keys)
    record = set(outline.record)
    if keys & {"tasks", "subjects"}:
        return ("suite",)
    if keys & _TRACE_EXPORT or ("runs" in keys and "run_type" in record):
        return ("trace",)
    if "data" in keys and {"span_kind", "context"} <= record:
        return ("trace",)  # Phoenix's REST API: {"data": [spans], "next_cursor": ...}
    if "conversations" in keys:
        return ("conversations",)
    parts = [k for k in outline.keys if k in _PARTS]
    if parts:
        return (_PARTS[parts[0]], "bundle") if len(parts) == 1 else ("bundle",)
    if "cases" in keys:
        if "incoming" in record:
            return ("operations",)
        return ("extraction",) if "conversation" in record else ("extraction", "operations")
    if "items" in keys:
        return ("items",)
    if keys & {"qa", "sample_id"}:
        return ("locomo",)  # one sample where LoCoMo has a list: its reader says so
    if keys & {"haystack_sessions", "question_id"}:
        return ("longmemeval",)
    if len(keys) == 1 and not record:
        return ("subject",)  # {KIND: {arguments}}: one subject spec (`-s FILE`)
    return ()


def _by_outline(outline: Outline) -> tuple[Kind, ...]:
    if outline.top == "object":
        return _by_object(outline)
    if outline.top == "list":
        return _by_record(set(outline.record))
    return ()


def _by_columns(head: str) -> tuple[Kind, ...]:
    for line in head.splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            cols = len(line.split())
            return ("qrels",) if cols == 4 else ("run",) if cols >= 6 else ()
    return ()


#: the head of `{"qid": {"docid": number`: ranx's, pytrec_eval's JSON qrels and runs
_NESTED_NUMBER = re.compile(
    r'\s*\{\s*"(?:[^"\\]|\\.)*"\s*:\s*\{\s*"(?:[^"\\]|\\.)*"\s*:\s*(-?[0-9][0-9.eE+-]*)'
)


def _by_nested_numbers(head: str) -> tuple[Kind, ...]:
    """A JSON `{qid: {docid: number}}` (data.trec reads it): qrels when its first number is an
    integer (a grade), else a run; whichever, the other may be it too."""
    found = _NESTED_NUMBER.match(head)
    if found is None:
        return ()
    return ("qrels", "run") if found.group(1).lstrip("-").isdigit() else ("run", "qrels")


def _by_tsv(head: str) -> tuple[Kind, ...]:
    """A `.tsv` file: a sheet of task items, whose header names an `input` column
    (data.importers.csv_items), or else TREC lines, as MS MARCO names its qrels
    (`qrels.dev.small.tsv`: `qid 0 pid 1`) and runs."""
    first = next((line for line in head.splitlines() if line.strip()), "")
    if "input" in (cell.strip() for cell in first.split("\t")):
        return ("items",)
    return (*_by_columns(head), "items")


def kinds_by_content(path: Path) -> tuple[Kind, ...]:
    """The kinds the start of the file fits, most likely first; () when it says nothing."""
    suffix = path.suffix.lower()
    if suffix == ".gz":  # run.trec.gz, qrels.gz: the TREC files, as ir_measures reads them
        inner = Path(path.stem).suffix.lower()
        if inner in (".json", ".jsonl", ".yaml", ".yml", ".csv", ".tsv"):
            return ()  # read uncompressed only: a JSON line's words are no columns
        return _by_columns(_head(path))
    if suffix == ".tsv":  # MS MARCO's qrels and runs are TREC files named `.tsv`
        return _by_tsv(_head(path))
    if suffix == ".csv":
        return ("items",)  # the one kind read from a sheet (data.importers.csv_items)
    if suffix not in (".json", ".jsonl", ".yaml", ".yml", *_TEXT_SUFFIXES):
        return ()
    head = _head(path)
    if suffix == ".jsonl":
        first = next((line for line in head.splitlines() if line.strip()), "")
        outline = json_outline(first)
        return _by_record(set(outline.keys)) if outline.top == "object" else ()
    if suffix == ".json":
        lines = [line.strip() for line in head.splitlines() if line.strip()][:2]
        if len(lines) == 2 and lines[0].startswith("{") and lines[0].endswith("}"):
            # JSON lines under a .json name (many tools' exports, an earlier memgauge's
            # `review export --out x.json`): read as data.jsonio reads them, a record a line;
            # by the first line alone, so that a bad second line (`[1]`, `5`) is named as a
            # record, not as the whole file's shape
            outline = json_outline(lines[0])
            if outline.top == "object":
                return _by_record(set(outline.keys))
        outline = json_outline(head)
        found = _by_outline(outline)
        if found == ("subject",) and not set(outline.keys) & _SUBJECT_KINDS:
            # one key over numbers: `{"q1": {"d1": 3}}`, a one-query run or qrels, more likely
            # than a subject of a kind memgauge does not know (a plug-in's)
            found = (*_by_nested_numbers(head), "subject")
        elif not found and kind_by_name(path) in (None, "qrels", "run"):  # weak: a name outweighs
            found = _by_nested_numbers(head)
        return found
    if suffix in (".yaml", ".yml"):
        return _by_outline(yaml_outline(head))
    return _by_columns(head)


def detect_kind(path: Path) -> Kind | None:
    """The kind of `path`; None when neither content nor name tells (the caller asks for
    --kind)."""
    if path.is_dir():
        return "dataset-dir"
    if path.exists() and not path.is_file():  # reading a FIFO would block until one writes
        raise DataError(
            Problem(
                str(path),
                None,
                None,
                "not a regular file or directory (a FIFO or device); pass a file or directory",
            )
        )
    found = kinds_by_content(path)
    named = kind_by_name(path)
    if found:
        return named if named in found else found[0]
    if named is not None:
        return named
    if path.suffix.lower() in (".json", ".yaml", ".yml"):
        return "bundle"  # memgauge's own dataset file, whose reader names what is missing
    return None


def also_fits(path: Path, kind: str) -> tuple[Kind, ...]:
    """When `detect_kind` read `path` as `kind` because it comes first among the kinds the
    content fits and the name picks none (`{id, text}` lines are queries or memories), the
    others it fits; () when the content or the name decided."""
    if not path.is_file():
        return ()
    found = kinds_by_content(path)
    if len(found) < 2 or found[0] != kind or kind_by_name(path) in found:
        return ()
    # a weaker reading offered after the first (a TSV of TREC lines as task items) is no tie,
    # nor qrels after a run: read as a run, its first score is no integer, so no grade
    return tuple(k for k in found[1:] if {kind, k} in _TIES and (kind, k) != ("run", "qrels"))


def read_as(path: Path, kind: str | None, reader: str) -> Kind | None:
    """The kind `reader` (a key of `DATASET_KINDS`) reads `path` as: `kind` when given, else the
    detected kind if the reader takes it, else None (the reader's own default)."""
    if kind is not None:
        if kind not in DATASET_KINDS[reader]:
            raise UsageError(f"kind {kind!r}: this reads {', '.join(DATASET_KINDS[reader])}")
        return kind
    found = detect_kind(path) if path.exists() else None
    return found if found in DATASET_KINDS[reader] else None
