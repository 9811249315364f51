"""JSON Schemas of memgauge's own dataset files, for editors and for checks outside memgauge.

A records file (memories, queries, judgments, extraction cases, ...) is a JSON or YAML list of
records, an object holding that list under its key (`{"cases": [...]}`), or JSONL with one
record a line: its schema accepts all three (a JSONL file is valid when each line is). TREC
qrels and run files are text, and LoCoMo and LongMemEval files are their authors' formats
(`memgauge import` reads them), so they have none here.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel
from pydantic.json_schema import models_json_schema

from memgauge.data.models import (
    CausalChain,
    Conversation,
    ConversationDataset,
    EquivalenceClass,
    EvalQuery,
    ExtractionCase,
    JudgedOutput,
    Judgment,
    Memory,
    OperationCase,
    RetrievalDataset,
    TaskItem,
)
from memgauge.data.traces import TraceLine
from memgauge.data.vectors import EmbeddingPair, StoredVector

__all__ = ["DATASET_SCHEMAS", "dataset_json_schema"]

DRAFT = "https://json-schema.org/draft/2020-12/schema"

#: records-file kind -> (record model, the key a JSON/YAML object holds the list under, what)
_RECORDS: dict[str, tuple[type[BaseModel], str, str]] = {
    "memories": (Memory, "memories", "memories"),
    "queries": (EvalQuery, "queries", "queries"),
    "judgments": (Judgment, "judgments", "graded judgments"),
    "equivalence": (EquivalenceClass, "equivalence_classes", "equivalence classes"),
    "chains": (CausalChain, "causal_chains", "causal chains"),
    "items": (TaskItem, "items", "task items (and audit probes)"),
    "labels": (JudgedOutput, "items", "outputs with human labels"),
    "extraction": (ExtractionCase, "cases", "fact-extraction cases (seed 001)"),
    "operations": (OperationCase, "cases", "memory-operation cases (seed 000)"),
    "trace": (TraceLine, "items", "outputs recorded in production, or production traces"),
    "pairs": (EmbeddingPair, "pairs", "known similar / different text pairs (embedding tasks)"),
    "vectors": (StoredVector, "vectors", "a memory system's stored vectors {text, vector}"),
}

#: every dataset kind that has a schema, with what it describes
DATASET_SCHEMAS: dict[str, str] = {
    "bundle": "a retrieval dataset in one JSON or YAML file",
    "conversations": "memaudit conversations (JSON, or JSONL with one conversation a line)",
    **{kind: what for kind, (_, _, what) in _RECORDS.items()},
}


def _one_of(*models: type[BaseModel]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """A `$ref` per model and the `$defs` they share."""
    refs, schema = models_json_schema([(m, "validation") for m in models])
    return [dict(refs[(m, "validation")]) for m in models], dict(schema.get("$defs", {}))


def dataset_json_schema(kind: str) -> dict[str, Any]:
    """The JSON Schema of a dataset file of `kind` (a key of `DATASET_SCHEMAS`)."""
    if kind == "bundle":
        refs, defs = _one_of(RetrievalDataset)
        forms = refs
    elif kind == "conversations":
        refs, defs = _one_of(ConversationDataset, Conversation)
        forms = refs
    else:
        model, key, _ = _RECORDS[kind]
        refs, defs = _one_of(model)
        many = {"type": "array", "items": refs[0]}
        forms = [
            {"type": "object", "properties": {key: many}, "required": [key]},
            many,
            {**refs[0], "description": "One record: a line of a JSONL file."},
        ]
    return {
        "$schema": DRAFT,
        "title": f"memgauge {kind}: {DATASET_SCHEMAS[kind]}",
        "anyOf": forms,
        "$defs": defs,
    }
