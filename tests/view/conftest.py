"""The viewer tests' store, built once per session (see `viewer_store.py`)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from viewer_store import ViewerStore, build_store, snapshot


@pytest.fixture(scope="session")
def viewer_store(tmp_path_factory: pytest.TempPathFactory) -> ViewerStore:
    """The session's store (build it once: a dozen commands)."""
    return build_store(tmp_path_factory.mktemp("viewer"))


@pytest.fixture(scope="session")
def pg_viewer_store(pg_server: Any, tmp_path_factory: pytest.TempPathFactory) -> ViewerStore:
    """The same store, built by the same commands on a PostgreSQL database."""
    return build_store(tmp_path_factory.mktemp("pgviewer"), where=pg_server.new_database())


@pytest.fixture
def unchanged(viewer_store: ViewerStore) -> Iterator[None]:
    """Asserts after the test that the store's migrations and row counts did not move."""
    before = snapshot(viewer_store.path)
    yield
    assert snapshot(viewer_store.path) == before
