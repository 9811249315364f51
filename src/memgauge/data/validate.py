"""Cross-record checks that one record alone cannot make: ids, references, chains."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from memgauge.data.jsonio import At, Records
from memgauge.data.models import Conversation
from memgauge.errors import Problem

__all__ = ["PARTS", "retrieval_problems", "validate_conversations"]


#: a retrieval dataset's parts, in the order they are checked
PARTS = ("memories", "queries", "judgments", "equivalence_classes", "causal_chains")
_WHAT = {"memories": "memories", "queries": "queries"}


def _unchecked(referring: Records[Any], referred: Records[Any], what: str) -> Problem:
    # a part of which no id was read was not read at all (a missing file): it has no records
    # to fix
    name = Path(referred.file).name
    why = (
        "has records whose id could not be read (above); fix them"
        if referred.ids
        else "could not be read (above); fix it"
    )
    return Problem(
        referring.file,
        None,
        None,
        f"not checked for {what} that do not exist: {name} {why} and run again",
    )


def retrieval_problems(parts: Mapping[str, Records[Any]]) -> list[Problem]:
    """Every cross-record problem of a retrieval dataset read part by part (a `Records` of each
    of PARTS, valid records and not): duplicate memory and query ids (a record that failed its
    own checks has its id too), judgments, classes and chains naming a memory or query that no
    record has, and a (query, memory, source) judged twice. A reference can be checked only
    against a part whose every id was read: when some were not, a problem says the check was
    not made, rather than calling every reference to them dangling."""
    problems: list[Problem] = []
    for part in ("memories", "queries"):
        problems += parts[part].duplicate_ids()
    known = {part: {rid for _, rid in parts[part].ids} for part in _WHAT}
    judgments = parts["judgments"]
    skipped: list[tuple[Records[Any], str]] = []

    def unknown(referring: Records[Any], part: str, wanted: list[str]) -> list[str] | None:
        """The ids in `wanted` that `part` lacks; None when that cannot be told."""
        if not parts[part].complete:
            if wanted and (referring, part) not in skipped:
                skipped.append((referring, part))
            return None
        return [w for w in wanted if w not in known[part]]

    seen: dict[tuple[str, str, str], At] = {}
    for at, j in judgments.valid:
        if unknown(judgments, "queries", [j.query_id]):
            problems.append(
                Problem(
                    judgments.file,
                    at.line,
                    at.field("query_id"),
                    f"judgment for unknown query {j.query_id!r}",
                )
            )
        if unknown(judgments, "memories", [j.memory_id]):
            problems.append(
                Problem(
                    judgments.file,
                    at.line,
                    at.field("memory_id"),
                    f"judgment for unknown memory {j.memory_id!r}",
                )
            )
        key = (j.query_id, j.memory_id, j.source)
        if key in seen:
            problems.append(
                Problem(
                    judgments.file,
                    at.line,
                    at.field(),
                    f"({j.query_id}, {j.memory_id}, {j.source}) is judged twice "
                    f"(first at {seen[key].name()})",
                )
            )
        else:
            seen[key] = at
    for part in ("equivalence_classes", "causal_chains"):
        groups = parts[part]
        for at, g in groups.valid:
            for ref, name, ids in (
                ("memories", "memory_ids", g.memory_ids),
                ("queries", "query_ids", getattr(g, "query_ids", [])),
            ):
                missing = unknown(groups, ref, list(ids))
                if missing:
                    problems.append(
                        Problem(
                            groups.file, at.line, at.field(name), f"{g.id}: unknown {ref} {missing}"
                        )
                    )
    problems += [_unchecked(r, parts[p], _WHAT[p]) for r, p in skipped]
    return problems


def _bad_time(value: str | None) -> bool:
    if value is None:
        return False
    try:
        datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return True
    return False


def validate_conversations(
    conversations: Sequence[tuple[At, Conversation]],
    file: str,
    *,
    other_facts: Sequence[str] = (),
    complete: bool = True,
) -> list[Problem]:
    """Duplicate fact ids, `supersedes` naming an unknown fact (dangling) or forming a cycle,
    timestamps that are not ISO 8601 dates, in the conversations that are valid (each where it
    is, or the valid turns and facts of one that is not). `other_facts` are the ids of facts
    that are not valid: a repeat of one is a duplicate, a `supersedes` naming one is not
    dangling. Unless `complete` (every fact's id was read), a dangling `supersedes` cannot be
    told: a problem says the check was not made."""
    problems: list[Problem] = []
    line = {c.id: at.line for at, c in conversations}
    for _, c in conversations:
        stamped = [(f"turns[{i}]", "", t.timestamp) for i, t in enumerate(c.turns)]
        stamped += [(f"facts[{i}]", f"fact {f.id!r}: ", f.timestamp) for i, f in enumerate(c.facts)]
        problems += [
            Problem(
                file,
                line[c.id],
                f"conversations[{c.id}].{where}.timestamp",
                f"{who}{ts!r} is not a date: use ISO 8601, e.g. 2024-01-15T09:00:00Z",
            )
            for where, who, ts in stamped
            if _bad_time(ts)
        ]
    facts = [(c.id, i, f) for _, c in conversations for i, f in enumerate(c.facts)]
    ids = Counter([*(f.id for _, _, f in facts), *other_facts])
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
    unchecked = False
    for conv, i, f in facts:
        field = f"conversations[{conv}].facts[{i}].supersedes"
        if f.supersedes is None:
            continue
        if f.supersedes not in by_id:
            if f.supersedes in other_facts:
                continue  # a fact of a conversation with problems of its own: it exists
            if not complete:
                unchecked = True
                continue
            problems.append(
                Problem(
                    file,
                    line[conv],
                    field,
                    f"fact {f.id!r} supersedes unknown fact {f.supersedes!r}",
                )
            )
            continue
        path, cur = [f.id], by_id[f.supersedes]
        while True:
            if cur.id in path:
                problems.append(
                    Problem(
                        file,
                        line[conv],
                        field,
                        f"supersedes chain is circular: {' -> '.join([*path, cur.id])}",
                    )
                )
                break
            path.append(cur.id)
            if cur.supersedes is None or cur.supersedes not in by_id:
                break
            cur = by_id[cur.supersedes]
    if unchecked:
        problems.append(
            Problem(
                file,
                None,
                None,
                "not checked for `supersedes` naming a fact that does not exist: some "
                "conversations could not be read far enough to list their facts (above)",
            )
        )
    return problems
