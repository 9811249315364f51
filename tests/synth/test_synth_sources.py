"""What MEMORIES can be: a memories file, a memaudit file (its facts), LoCoMo (its turns, read
by the importer), a dataset directory, or a subject's store through its dump."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.synth.conftest import MEMORIES

from memgauge import api
from memgauge.cli.main import main
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


def test_a_locomo_file_without_questions_still_gives_its_memories() -> None:
    """synth makes the questions: a LoCoMo file with no QA is a memory source, though
    `evaluate` refuses it (nothing judged; tests/data/bad/locomo_no_questions.json)."""
    path = Path(__file__).resolve().parents[1] / "data" / "bad" / "locomo_no_questions.json"
    got = api.read_memories(path)
    assert [m.text for m in got] == ["Ann: I moved to Lisbon.", "Bob: When?"]


def test_a_dataset_directory(tmp_path: Path) -> None:
    save_retrieval_dataset(demo_dataset(), tmp_path / "demo")
    assert api.read_memories(tmp_path / "demo") == demo_dataset().memories


def test_a_subject_through_its_dump(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "synth_store.py").write_text(STORE)
    monkeypatch.syspath_prepend(str(tmp_path))
    got = api.read_memories("python:synth_store:Store")
    assert [m.id for m in got] == ["s1", "s2"]
    # a subject's spec file too: named as one, or with --kind subject
    spec = tmp_path / "subject.yaml"
    spec.write_text("python: {target: 'synth_store:Store'}\n")
    assert api.read_memories(spec) == got
    assert api.read_memories(spec.rename(tmp_path / "prod.yaml"), kind="subject") == got
    with pytest.raises(SubjectError, match="MEMORIES python:synth_store:Empty: the system dumped"):
        api.read_memories("python:synth_store:Empty", kind="subject")


def test_a_missing_file_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "memories.jsonl"
    assert main(["synth", str(missing), "--out", str(tmp_path / "out")]) == 2
    assert f"error: {missing}: no such file or directory" in capsys.readouterr().err


def test_a_critic_model_with_no_critic_is_a_usage_error(
    memories_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["synth", str(memories_file), "--out", str(tmp_path / "o"), "--no-critic"]
    assert main([*args, "--critic-model", "gpt-4o"]) == 2
    assert "a critic model and no critic pass" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()
