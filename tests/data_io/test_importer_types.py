"""Every value of a LoCoMo or LongMemEval file replaced, one at a time, by a value of another
JSON type: the importers (and LoCoMo's reading as extraction cases) import it or refuse it with
a DataError naming the field, never another exception (`category: [4]` was a TypeError, exit
70: issue 27 item 7)."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from memgauge.data.importers import import_locomo, import_longmemeval
from memgauge.data.importers.locomo import locomo_extraction_cases
from memgauge.errors import DataError

DATA = Path(__file__).resolve().parents[1] / "data"

#: one value of every JSON type, and the edge values of the ones the importers read
OTHERS: list[Any] = [[4], {"a": 1}, None, True, 1.5, -1, 10**20, "", "x"]

LOCOMO: list[Any] = [
    {
        "sample_id": "conv-1",
        "conversation": {
            "speaker_a": "Ann",
            "speaker_b": "Bob",
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [
                {"speaker": "Ann", "dia_id": "D1:1", "text": "I moved to Lisbon."},
                {"speaker": "Bob", "dia_id": "D1:2", "text": "When?", "blip_caption": "a map"},
            ],
        },
        "observation": {"session_1_observation": {"Ann": [["Ann moved to Lisbon.", "D1:1"]]}},
        "qa": [
            {"question": "Where?", "answer": "Lisbon", "evidence": ["D1:1"], "category": 4},
            {"question": "Paris?", "adversarial_answer": "no", "evidence": [], "category": 5},
        ],
    }
]


def _paths(node: Any, at: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield at
    if isinstance(node, dict | list):
        children = node.items() if isinstance(node, dict) else enumerate(node[:3])
        for key, child in children:
            yield from _paths(child, (*at, key))


def _with(doc: Any, at: tuple[Any, ...], value: Any) -> Any:
    if not at:
        return value
    out = copy.deepcopy(doc)
    node = out
    for key in at[:-1]:
        node = node[key]
    node[at[-1]] = value
    return out


def _each_variant(doc: Any) -> Iterator[tuple[str, Any]]:
    for at in _paths(doc):
        for value in OTHERS:
            yield f"{list(at)} = {value!r}", _with(doc, at, value)


READERS: dict[str, tuple[Callable[[Path], object], Callable[[], Any]]] = {
    "locomo": (import_locomo, lambda: LOCOMO),
    "locomo-extraction": (locomo_extraction_cases, lambda: LOCOMO),
    "longmemeval": (
        import_longmemeval,
        lambda: json.loads((DATA / "longmemeval" / "sample.json").read_text())[:1],
    ),
    "longmemeval-session": (
        lambda p: import_longmemeval(p, granularity="session"),
        lambda: json.loads((DATA / "longmemeval" / "sample.json").read_text())[:1],
    ),
}


@pytest.mark.parametrize("reader", list(READERS))
def test_a_value_of_another_type_is_imported_or_refused_by_field(
    reader: str, tmp_path: Path
) -> None:
    read, original = READERS[reader]
    path = tmp_path / "data.json"
    read_ok = 0
    refused = 0
    crashes = []
    unnamed = []
    for where, doc in _each_variant(original()):
        path.write_text(json.dumps(doc))
        try:
            read(path)
            read_ok += 1
        except DataError as exc:
            refused += 1
            unnamed += [(where, p) for p in exc.problems if str(path) not in str(p)]
        except Exception as exc:
            crashes.append(f"{where}: {type(exc).__name__}: {exc}")
    assert not crashes, "\n".join(crashes[:20])
    assert not unnamed
    assert refused > 50  # the variants were read, not skipped
    assert read_ok > 0  # a value of another type where any is fine (a caption's text, ...)


def test_locomo_samples_as_json_lines_are_named_by_their_line(tmp_path: Path) -> None:
    """LoCoMo's samples as JSON lines (read since a .json or .jsonl file of JSON lines reads a
    record a line) were named `[1]...` alone: the line each sample is on was dropped, as
    LongMemEval's once was."""
    good = LOCOMO[0]
    bad = {**_with(good, ("qa", 0, "category"), "four"), "sample_id": "conv-2"}
    path = tmp_path / "locomo.jsonl"
    path.write_text(json.dumps(good) + "\n\n" + json.dumps(bad) + "\n")
    with pytest.raises(DataError) as refused:
        import_locomo(path)
    assert [(p.line, p.field) for p in refused.value.problems] == [(3, "[1].qa[0].category")]
