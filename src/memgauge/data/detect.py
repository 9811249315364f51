"""Which kind of dataset a file is, from its name and, when that is not enough, its content."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Literal, get_args

from memgauge.data.parsing import ParseError, loads_json

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

__all__ = ["KINDS", "Kind", "detect_kind"]

_BY_STEM = {
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


def _peek(path: Path, size: int = 4096) -> str:
    try:
        with open(path, "rb") as fh:
            return fh.read(size).decode("utf-8", errors="replace")
    except OSError:
        return ""


def _by_keys(keys: set[str]) -> Kind | None:
    """The kind of a record with these fields, for the kinds whose fields tell them apart."""
    if {"incoming", "expected"} <= keys:
        return "operations"
    if "output" in keys and ("conversation" in keys or "case_id" in keys):
        return "trace"
    if {"a", "b", "label"} <= keys:
        return "pairs"
    if "conversation" in keys:
        return "extraction"
    if {"id", "input"} <= keys:
        return "items"
    return None


def _sniff_records(head: str) -> Kind | None:
    """Operation cases, extraction cases or task items, from the field names near the start of
    a JSON or YAML file (a whole file may be large; its first record says enough)."""
    if re.search(r"\bincoming[\"']?\s*:", head):
        return "operations"
    if re.search(r"\bconversation[\"']?\s*:", head):  # (memaudit's is `conversations`)
        return "extraction"
    if re.search(r"\binput[\"']?\s*:", head) and re.search(r"^\[|\bitems[\"']?\s*:", head):
        return "items"
    return None


def detect_kind(path: Path) -> Kind | None:
    """Guess the kind of `path`; None when nothing fits (the caller asks for --kind)."""
    if path.is_dir():
        return "dataset-dir"
    name = path.name.lower()
    for stem, kind in _BY_STEM.items():
        if name.startswith(stem) or name.removesuffix(path.suffix.lower()).endswith(stem):
            if kind == "bundle" and re.search(r"[\"']?\bconversations[\"']?\s*:", _peek(path)):
                return "conversations"  # memaudit's data/sample-dataset.json
            return kind  # type: ignore[return-value]
    suffix = path.suffix.lower()
    if suffix in (".csv", ".tsv"):
        return "items"  # the one kind read from a sheet (data.importers.csv_items)
    head = _peek(path).lstrip("\ufeff").lstrip()
    if suffix in (".txt", ".trec", ".qrels", ".run", "") and head:
        cols = len(head.splitlines()[0].split())
        return "qrels" if cols == 4 else "run" if cols == 6 else None
    if suffix in (".json", ".yaml", ".yml"):
        if head.startswith("[") and ('"haystack_session' in head or '"question_id"' in head):
            return "longmemeval"
        if head.startswith("[") and ('"sample_id"' in head or '"qa"' in head):
            return "locomo"
        found = _sniff_records(head)
        if found is not None:
            return found
        if '"conversations"' in head or "conversations:" in head:
            return "conversations"
        return "bundle"
    if suffix == ".jsonl":
        first = head.splitlines()[0] if head else ""
        try:
            obj = loads_json(first)
        except ParseError:  # a cut-off, hostile or deeply nested first line: no guess
            return None
        if isinstance(obj, dict):
            keys = set(obj)
            if {"query_id", "memory_id"} <= keys:
                return "judgments"
            if "turns" in keys:
                return "conversations"
            if "memory_ids" in keys:
                return "chains" if "query_ids" in keys else "equivalence"
            if {"text", "vector"} <= keys:
                return "vectors"
            if "text" in keys and ("tier" in keys or "folder" in keys or "created_at" in keys):
                return "memories"
            if "text" in keys:
                return "queries"
            return _by_keys(keys)
    return None
