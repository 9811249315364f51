"""What MEMORIES can be: a memories file, a memaudit file (its facts), LoCoMo (its turns, read
by the importer), a dataset directory, or a subject's store through its dump."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.synth.conftest import MEMORIES

from memgauge import api
from memgauge.data.demo import demo_dataset
from memgauge.data.io import load_conversations, save_retrieval_dataset
from memgauge.errors import SubjectError

SHARED = Path(__file__).resolve().parents[2].parent / "shared" / "datasets"

STORE = """
from memgauge.data.models import Memory


class Store:
    name = "store"

    def reset(self): ...
    def ingest(self, memories): ...
    def flush(self): ...
    def search(self, query, k): ...

    def dump(self):
        return [Memory(id="s1", text="kept in the store"), Memory(id="s2", text="and this")]


class Empty(Store):
    def dump(self):
        return []
"""


def test_a_memories_file(memories_file: Path) -> None:
    got = api.read_memories(memories_file)
    assert [m.id for m in got] == [m["id"] for m in MEMORIES]


def test_a_memaudit_file_gives_its_facts() -> None:
    path = SHARED / "memaudit-sample.json"
    convs = load_conversations(path).conversations
    facts = [(f.id, f.content, c.id) for c in convs for f in c.facts]
    assert facts
    assert [(m.id, m.text, m.corpus) for m in api.read_memories(path)] == facts


def test_locomo_through_its_importer() -> None:
    from memgauge.data.importers.locomo import import_locomo

    path = SHARED / "locomo10.json"
    got = api.read_memories(path)
    assert got == import_locomo(path)[0].memories
    assert len({m.corpus for m in got}) == 10


def test_a_dataset_directory(tmp_path: Path) -> None:
    save_retrieval_dataset(demo_dataset(), tmp_path / "demo")
    assert api.read_memories(tmp_path / "demo") == demo_dataset().memories


def test_a_subject_through_its_dump(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "synth_store.py").write_text(STORE)
    monkeypatch.syspath_prepend(str(tmp_path))
    got = api.read_memories("python:synth_store:Store")
    assert [m.id for m in got] == ["s1", "s2"]
    with pytest.raises(SubjectError, match="dumped no memories"):
        api.read_memories("python:synth_store:Empty", kind="subject")
