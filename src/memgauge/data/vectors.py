"""Embedding-quality inputs (seed 004: "whether the pipeline that writes to storage is producing
quality embeddings"): known pairs of texts, and a system's stored vectors.

- pairs (JSONL, or a JSON/YAML list or `{"pairs": [...]}`): `{id?, a, b, label}` with label
  `similar` or `different`; a pair without an id is `pair-N` (its 1-based position);
- stored vectors (JSONL): `{text, vector, id?}`, as a memory system stores them; every vector of
  the file has the same length, and every number is finite.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

from pydantic import ConfigDict, Field

from memgauge._util.listing import counted
from memgauge._util.model import Model
from memgauge.data.jsonio import load_records
from memgauge.data.models import FiniteFloat
from memgauge.errors import DataError, Problem

__all__ = [
    "EmbeddingPair",
    "StoredVector",
    "load_pairs",
    "load_vectors",
    "pairs_summary",
    "vectors_summary",
]

Text = Annotated[str, Field(min_length=1)]


class EmbeddingPair(Model):
    """Two texts known to mean the same thing, or known not to."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    id: str | None = Field(default=None, description="Pair id (default: pair-N).")
    a: Text = Field(description="One text.")
    b: Text = Field(description="The other text.")
    label: Literal["similar", "different"] = Field(description="similar or different.")


class StoredVector(Model):
    """One vector a memory system stored, with the text it embeds."""

    model_config = ConfigDict(extra="ignore", allow_inf_nan=False)

    text: Text = Field(description="The embedded text.")
    vector: list[FiniteFloat] = Field(min_length=1, description="The stored vector.")
    id: str | None = Field(default=None, description="The memory's id.")


def load_pairs(path: str | Path) -> list[EmbeddingPair]:
    """Known pairs, each with an id; DataError on every bad line and repeated id."""
    loaded = load_records(path, EmbeddingPair, key="pairs")
    problems = loaded.problems + loaded.duplicate_ids("pair")
    if problems:
        raise DataError(problems)
    pairs = loaded.records
    out = [p if p.id else p.model_copy(update={"id": f"pair-{i}"}) for i, p in enumerate(pairs, 1)]
    seen: set[str] = set()
    for p in out:  # a given id against the one made for a pair without: still a repeat
        if p.id in seen:
            problems.append(Problem(str(path), None, "id", f"duplicate pair id {p.id!r}"))
        seen.add(str(p.id))
    if problems:
        raise DataError(problems)
    return out


def load_vectors(path: str | Path) -> dict[str, list[float]]:
    """Text -> stored vector (a later line wins); DataError on every bad line and every vector
    whose length differs from the first valid one's."""
    loaded = load_records(path, StoredVector)
    problems = list(loaded.problems)
    if loaded.valid:
        first_at, first = loaded.valid[0]
        dim = len(first.vector)
        where = "the first line" if first_at.line == 1 else first_at.name()
        problems += [
            Problem(
                loaded.file,
                at.line,
                at.field("vector"),
                f"{counted(len(row.vector), 'number')} where {where} has {dim}: every stored vector"
                " must have the same dimension",
            )
            for at, row in loaded.valid
            if len(row.vector) != dim
        ]
    if problems:
        raise DataError(problems)
    return {r.text: list(r.vector) for r in loaded.records}


def pairs_summary(path: str | Path) -> str:
    """What `memgauge validate` says of valid pairs."""
    pairs = load_pairs(path)
    n_similar = sum(p.label == "similar" for p in pairs)
    return (
        f"{counted(len(pairs), 'pair')} ({n_similar} similar, {len(pairs) - n_similar} different)"
    )


def vectors_summary(path: str | Path) -> str:
    """What `memgauge validate` says of valid stored vectors."""
    vectors = load_vectors(path)
    dim = len(next(iter(vectors.values())))
    return f"{len(vectors)} stored vectors of dimension {dim}"
