"""The sharded-run tests' fixtures: a LoCoMo-like dataset directory, and the test subjects
importable by worker processes (the shared helpers are in runs_alike.py)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.shards.runs_alike import SUBJECTS, locomo_like

from memgauge.data.io import save_retrieval_dataset


@pytest.fixture
def locomo_dir(tmp_path: Path) -> Path:
    """12 conversations of 15 turns and 5 questions each, saved as a dataset directory."""
    out = tmp_path / "locomo-like"
    save_retrieval_dataset(locomo_like(12, 15, 5), out)
    return out


@pytest.fixture(autouse=True)
def _workers_import_test_subjects(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Worker processes (spawned, or Dask's) import the test subjects through PYTHONPATH."""
    monkeypatch.setenv(
        "PYTHONPATH", os.pathsep.join([str(SUBJECTS), os.environ.get("PYTHONPATH", "")])
    )
    monkeypatch.syspath_prepend(str(SUBJECTS))
    # these tests are about what runs on the pool: it takes every shard, however little work
    # they are (by default a run this small would stay in the driver)
    monkeypatch.setenv("MEMGAUGE_SHARD_STARTUP", "0")
    return
