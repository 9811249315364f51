"""Forms of stored values that the live store and the shipped migrations must agree on, kept
once for both: a deflated JSON column (`packed`, `unpacked`), an item's verdicts digest
(`suite_run_items.verdicts_digest`), an item's search document and the rows that hold them
(`suite_run_search`), and the column names two schemas repeat.

One copy because they are one rule, not two that happen to match: a digest a migration filled
is compared with one the store writes (the items changed against a baseline), a document it
filled is searched as the store's are, a column it created is read through `tables.py`.

Frozen as `columns.py` is: revisions 0009, 0012, 0016, 0022 and 0023 call these, so a change
here changes what they did (tests/store's upgrade tests and the viewer's big-run tests pin it).
A new rule goes where the live code keeps it, with a revision that rewrites the stored values.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import zlib
from collections.abc import Iterable, Iterator
from typing import Any

import sqlalchemy as sa

__all__ = [
    "INSERT_SEARCH",
    "ITERATION_SCORES",
    "RESULT_METRICS",
    "SEPARATOR",
    "document",
    "forms",
    "packed",
    "search_batches",
    "search_rows",
    "unpacked",
    "verdicts_digest",
]

_PACK_FROM = 512  # bytes of JSON from which an output or summary is stored deflated

#: seed 002's eval_results metric columns (revision 0009)
RESULT_METRICS = (
    "mrr_at_5",
    "mrr_at_10",
    "ndcg_at_5",
    "ndcg_at_10",
    "ndcg_at_20",
    "recall_at_5",
    "recall_at_10",
    "constitutional_surfacing_rate",
    "importance_weighted_recall",
    "cold_start_mrr",
    "session_personalization_lift",
    "causal_chain_completeness",
    "avg_latency_ms",
)

#: an optimization iteration's score, and its paired deltas (to the best so far, to the
#: baseline), each with its 95% CI (revision 0012; documented in store/optimization.py)
ITERATION_SCORES = (
    "score",
    "ci_low",
    "ci_high",
    "delta",
    "delta_ci_low",
    "delta_ci_high",
    "baseline_delta",
    "baseline_delta_ci_low",
    "baseline_delta_ci_high",
)

#: between the forms of a search document: a needle holding it is searched as before
SEPARATOR = "\x1f"
#: writes `search_rows`' rows
INSERT_SEARCH = sa.text(
    "INSERT INTO suite_run_search (run_id, subject, task, item_id, doc)"
    " VALUES (:run_id, :subject, :task, :item_id, :doc)"
)


def packed(text: str) -> str | bytes:
    """`text` as stored: deflated past `_PACK_FROM` bytes (a sixth of the size; these are read
    whole, never searched with SQL's JSON functions)."""
    if len(text) < _PACK_FROM:
        return text
    return zlib.compress(text.encode(), 1)


def unpacked(value: str | bytes) -> str:
    """The JSON text of a stored packed value (zlib's stream starts with 0x78, which no JSON
    text does)."""
    if isinstance(value, str):
        return value
    if value[:1] == b"\x78":
        return zlib.decompress(value).decode()
    return bytes(value).decode()


def verdicts_digest(verdicts: Iterable[tuple[str, float | None, Any, bool]]) -> str:
    """A digest of an item's verdicts as stored, each (evaluator, value, passed, error is
    None), in any order: equal digests, equal verdicts (the same evaluators, values, passes
    and errors), which is all the items page's `changed` and `regressed` compare."""
    text = "\n".join(
        sorted(
            f"{e}\t{'-' if v is None else repr(float(v))}\t"
            f"{'-' if p is None else int(bool(p))}\t{int(bool(ok))}"
            for e, v, p, ok in verdicts
        )
    )
    return hashlib.blake2b(text.encode(), digest_size=12).hexdigest()


def forms(value: Any) -> list[str]:
    """`value` (a stored column: text, JSON or a deflated blob) as `run_pages._has` reads it
    (`text_forms` of its text)."""
    if value is None:
        return []
    if isinstance(value, memoryview):
        value = value.tobytes()
    return text_forms(unpacked(value) if isinstance(value, bytes) else str(value))


def _strings(value: Any) -> Iterator[str]:
    """Every string of a JSON value (keys and values), depth first."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield k
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)


def text_forms(text: str) -> list[str]:
    """A stored text's forms, each lower-cased: the text; where it has an escape (a
    backslash), its JSON decoded: written again without `\\uXXXX` escapes (when it has one),
    and each string holding a double quote or a backslash (which JSON writes escaped) as the
    page shows it, so `"quoted"` or `C:\\dir` is found as shown (revision 0024 added these)."""
    out = [text.lower()]
    if "\\u" not in text and '\\"' not in text and "\\\\" not in text:
        return out  # no escape a search could miss (a newline's `\\n` is left as written)
    try:
        parsed = json.loads(text)
    except ValueError:
        return out
    if "\\u" in text:
        out.append(json.dumps(parsed, ensure_ascii=False).lower())
    # only the strings JSON writes otherwise than shown for what a search box can hold: a
    # string with a newline alone (most long outputs) would double the document for nothing
    out.extend(t.lower() for t in _strings(parsed) if '"' in t or "\\" in t)
    return out


def document(values: Iterable[Any]) -> str | None:
    """One item's search document of its searched values; None when SQL text cannot hold it."""
    parts: list[str] = []
    for v in values:
        if type(v) is str and "\\" not in v:
            parts.append(v.lower())  # no escape: its one form (`text_forms`), without the calls
        elif v is not None:
            parts += forms(v)
    doc = SEPARATOR.join(parts)
    if "\x00" in doc:
        return None
    try:
        doc.encode()
    except UnicodeEncodeError:  # a lone surrogate
        return None
    return doc


def search_rows(
    c: sa.Connection, run_id: str, params: dict[str, Any], only_i: str = "", only_s: str = ""
) -> list[dict[str, Any]]:
    """The `suite_run_search` rows of a run's items from their rows as stored: each item's
    document of its id, category, input, expected value, output, then every verdict's reason
    and error (`run_pages._SEARCHED`). `params` binds `:run` to `run_id` and whatever the
    extra conditions `only_i` (on the items, `i`) and `only_s` (on the verdicts, `s`) name."""
    return list(_search_rows(c, run_id, params, only_i, only_s))


#: documents a batch of `search_batches` holds, unless its caller says
SEARCH_BATCH = 5000


def search_batches(
    c: sa.Connection,
    run_id: str,
    size: int | None = None,
    params: dict[str, Any] | None = None,
    only_i: str = "",
    only_s: str = "",
) -> Iterator[list[dict[str, Any]]]:
    """A run's `search_rows` (all of them, or those `params`, `only_i` and `only_s` select),
    `size` (`SEARCH_BATCH`) at a time, each document made as its batch is asked for: a run's documents (its
    outputs inflated, lower-cased, with their decoded forms: several times what the run's rows
    take) are never all in memory at once. A batch is emptied when the next is asked for.
    The run's rows are all read before the first batch is given: the caller may write then."""
    rows = _search_rows(c, run_id, params or {"run": run_id}, only_i, only_s)
    size = size or SEARCH_BATCH
    while batch := list(itertools.islice(rows, size)):
        yield batch
        # the caller, asking for the next batch, is done with this one (which its loop
        # variable still holds): emptied, two batches are never in memory at once
        batch.clear()


def _search_rows(
    c: sa.Connection, run_id: str, params: dict[str, Any], only_i: str, only_s: str
) -> Iterator[dict[str, Any]]:
    # both reads finish before the first row is given: the caller may write between rows
    values: dict[tuple[str, str, str], list[Any]] = {}
    for r in c.execute(
        sa.text(
            "SELECT i.subject, i.task, i.item_id, i.category, i.input_json, i.expected_json,"
            " o.output_json FROM suite_run_items i LEFT JOIN suite_run_outputs o"
            " ON o.run_id = i.run_id AND o.subject = i.subject AND o.task = i.task"
            f" AND o.item_id = i.item_id WHERE i.run_id = :run{only_i}"
        ),
        params,
    ):
        values[(r[0], r[1], r[2])] = [r[2], *r[3:]]
    for r in c.execute(
        sa.text(
            "SELECT s.subject, s.task, s.item_id, s.reason, s.error FROM suite_run_scores s"
            f" WHERE s.run_id = :run{only_s}"
        ),
        params,
    ):
        found = values.get((r[0], r[1], r[2]))
        if found is not None:
            found += [r[3], r[4]]
    for (subject, task, item_id), vals in values.items():
        doc = document(vals)
        if doc is not None:
            yield {
                "run_id": run_id,
                "subject": subject,
                "task": task,
                "item_id": item_id,
                "doc": doc,
            }
