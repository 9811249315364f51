"""A SQLite store removed (its directory with it) or replaced while a command writes to it: SQLite
goes on writing to the file it holds open, so the command must not end saying the run is stored
there; it stops with exit 3 naming the store, and writes no reports."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from memgauge.cli.main import main
from memgauge.data.demo import demo_dataset
from memgauge.data.io import save_retrieval_dataset
from memgauge.errors import UnavailableError
from memgauge.store.suite_runs import SuiteRunStore

# a memory that removes the directory named by MEMGAUGE_TEST_GONE at its first search
VANISHING = """
import os, shutil

class Vanishing:
    def reset(self):
        self.texts = {}

    def ingest(self, memories):
        self.texts.update({m.id: m.text for m in memories})

    def search(self, query, k):
        gone = os.environ.pop("MEMGAUGE_TEST_GONE", None)
        if gone:
            shutil.rmtree(gone)
        words = set(query.lower().split())
        ranked = sorted(self.texts, key=lambda i: -len(words & set(self.texts[i].lower().split())))
        return ranked[:k]
"""


def test_a_store_removed_mid_run_stops_it_with_exit_3_and_no_reports(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "vanishing_memory.py").write_text(VANISHING)
    monkeypatch.syspath_prepend(str(tmp_path))
    dataset = tmp_path / "dataset"
    save_retrieval_dataset(demo_dataset(), dataset)
    where = tmp_path / "stores"
    monkeypatch.setenv("MEMGAUGE_TEST_GONE", str(where))
    out = tmp_path / "out"
    code = main(
        [
            "evaluate",
            str(dataset),
            "-s",
            "lexical",
            "-s",
            "python:vanishing_memory:Vanishing@vanishing",
            "--store",
            str(where / "r.db"),
            "--out",
            str(out),
            "--quiet",
        ]
    )
    captured = capsys.readouterr()
    assert code == 3, captured.err
    assert f"results store {where / 'r.db'}: the file was removed or replaced" in captured.err
    # it was exit 0 saying "recorded run ... in .../r.db", with the reports written
    assert "recorded run" not in captured.out + captured.err
    assert not out.exists()
    assert not where.exists()


def test_a_replaced_store_file_is_noticed_and_one_in_place_is_not(tmp_path: Path) -> None:
    db = tmp_path / "r.db"
    with SuiteRunStore(db) as store:
        assert store.heartbeat("no-such-run", "token") is False  # in place: a plain answer
        shutil.copy(db, tmp_path / "copy.db")
        os.replace(tmp_path / "copy.db", db)  # another file at the path now
        with pytest.raises(UnavailableError, match="removed or replaced"):
            store.heartbeat("no-such-run", "token")
