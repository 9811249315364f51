"""A test's directories (`tmp_path`, its MEMGAUGE_HOME) are new and numbered without listing the
session's base temporary directory, which grows by two entries a test (tests/conftest.py)."""

from __future__ import annotations

import os
from pathlib import Path

import _pytest.pathlib
import pytest
from tests.conftest import _DIRS


def _number(path: Path, prefix: str) -> int:
    assert path.name.startswith(prefix), path
    return int(path.name.removeprefix(prefix))


def test_a_tests_directories_come_from_one_counter_beside_each_other(
    tmp_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    home = Path(os.environ["MEMGAUGE_HOME"])
    base = tmp_path_factory.getbasetemp()
    assert tmp_path.parent == home.parent == base
    assert list(tmp_path.iterdir()) == []
    # made one after the other (`_isolated_llm` asks for tmp_path, then makes the home)
    n = _number(tmp_path, "test_a_tests_directories_come_")
    assert _number(home, "memgauge-home") == n + 1


def test_no_directory_is_made_by_listing_the_base(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    def listed(*args: object) -> None:
        raise AssertionError("the base temporary directory was listed")

    monkeypatch.setattr(_pytest.pathlib, "find_prefixed", listed)
    base = tmp_path_factory.getbasetemp()
    taken = base / f"clash{_DIRS.next}"
    taken.mkdir()  # a name pytest's own numbering took first
    made = [_DIRS.make(tmp_path_factory, "clash") for _ in range(3)]
    assert len(set(made)) == 3
    assert taken not in made
    assert all(p.parent == base and p.is_dir() and not any(p.iterdir()) for p in made)
