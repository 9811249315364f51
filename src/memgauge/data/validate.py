"""Cross-record checks that one record alone cannot make: ids, references, chains."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from datetime import datetime

from memgauge.data.models import ConversationDataset, RetrievalDataset
from memgauge.errors import Problem

__all__ = ["validate_conversations", "validate_retrieval_dataset"]


def _dupes(ids: list[str]) -> list[str]:
    return sorted(i for i, n in Counter(ids).items() if n > 1)


def validate_retrieval_dataset(ds: RetrievalDataset, files: Mapping[str, str]) -> list[Problem]:
    """Every cross-record problem: duplicate ids, judgments or classes naming unknown ids,
    duplicate judgments. `files` maps a part ("memories", ...) to the file it came from.

    A record's position in its part is reported as the field (`judgments[3]`); in directory
    form that is line 4 of the JSONL file when there are no blank lines.
    """
    problems: list[Problem] = []
    mem_ids = [m.id for m in ds.memories]
    query_ids = [q.id for q in ds.queries]
    for part, ids in (("memories", mem_ids), ("queries", query_ids)):
        for dup in _dupes(ids):
            lines = [i + 1 for i, x in enumerate(ids) if x == dup]
            problems.append(
                Problem(
                    files[part],
                    lines[1],
                    "id",
                    f"duplicate id {dup!r} (records {lines}); ids must be unique",
                )
            )
    memories, queries = set(mem_ids), set(query_ids)
    seen: dict[tuple[str, str, str], int] = {}
    for i, j in enumerate(ds.judgments):
        where = files["judgments"]
        if j.query_id not in queries:
            problems.append(
                Problem(where, i + 1, "query_id", f"judgment for unknown query {j.query_id!r}")
            )
        if j.memory_id not in memories:
            problems.append(
                Problem(where, i + 1, "memory_id", f"judgment for unknown memory {j.memory_id!r}")
            )
        key = (j.query_id, j.memory_id, j.source)
        if key in seen:
            problems.append(
                Problem(
                    where,
                    i + 1,
                    None,
                    f"({j.query_id}, {j.memory_id}, {j.source}) is judged twice "
                    f"(first at record {seen[key]})",
                )
            )
        else:
            seen[key] = i + 1
    groups: list[tuple[str, int, str, list[str], list[str]]] = [
        ("equivalence_classes", i, e.id, e.memory_ids, [])
        for i, e in enumerate(ds.equivalence_classes)
    ] + [
        ("causal_chains", i, c.id, c.memory_ids, c.query_ids)
        for i, c in enumerate(ds.causal_chains)
    ]
    for part, i, gid, memory_ids, query_ids in groups:
        unknown = [m for m in memory_ids if m not in memories]
        if unknown:
            problems.append(
                Problem(files[part], i + 1, "memory_ids", f"{gid}: unknown memories {unknown}")
            )
        unknown_q = [q for q in query_ids if q not in queries]
        if unknown_q:
            problems.append(
                Problem(files[part], i + 1, "query_ids", f"{gid}: unknown queries {unknown_q}")
            )
    return problems


def _bad_time(value: str | None) -> bool:
    if value is None:
        return False
    try:
        datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return True
    return False


def validate_conversations(ds: ConversationDataset, file: str) -> list[Problem]:
    """Duplicate fact ids, `supersedes` naming an unknown fact (dangling) or forming a cycle,
    timestamps that are not ISO 8601 dates."""
    problems: list[Problem] = []
    for c in ds.conversations:
        stamped = [(f"turns[{i}]", "", t.timestamp) for i, t in enumerate(c.turns)]
        stamped += [(f"facts[{i}]", f"fact {f.id!r}: ", f.timestamp) for i, f in enumerate(c.facts)]
        problems += [
            Problem(
                file,
                None,
                f"conversations[{c.id}].{where}.timestamp",
                f"{who}{ts!r} is not a date: use ISO 8601, e.g. 2024-01-15T09:00:00Z",
            )
            for where, who, ts in stamped
            if _bad_time(ts)
        ]
    facts = [(c.id, i, f) for c in ds.conversations for i, f in enumerate(c.facts)]
    ids = Counter(f.id for _, _, f in facts)
    for fid, n in ids.items():
        if n > 1:
            problems.append(Problem(file, None, "facts", f"duplicate fact id {fid!r} ({n} times)"))
    by_id = {f.id: f for _, _, f in facts}
    replaced = Counter(f.supersedes for _, _, f in facts if f.supersedes)
    for target, n in sorted(replaced.items()):
        if n > 1:
            by = ", ".join(repr(f.id) for _, _, f in facts if f.supersedes == target)
            problems.append(
                Problem(
                    file,
                    None,
                    "facts",
                    f"fact {target!r} is superseded by {n} facts ({by}): only one fact can replace "
                    "it; chain them instead (a later fact supersedes the newer one)",
                )
            )
    for conv, i, f in facts:
        field = f"conversations[{conv}].facts[{i}].supersedes"
        if f.supersedes is None:
            continue
        if f.supersedes not in by_id:
            problems.append(
                Problem(
                    file, None, field, f"fact {f.id!r} supersedes unknown fact {f.supersedes!r}"
                )
            )
            continue
        path, cur = [f.id], by_id[f.supersedes]
        while True:
            if cur.id in path:
                problems.append(
                    Problem(
                        file,
                        None,
                        field,
                        f"supersedes chain is circular: {' -> '.join([*path, cur.id])}",
                    )
                )
                break
            path.append(cur.id)
            if cur.supersedes is None or cur.supersedes not in by_id:
                break
            cur = by_id[cur.supersedes]
    return problems
