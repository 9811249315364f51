"""The end of a test session (tests/conftest.py): pytest's own look for unraisable exceptions
still sees what one full collection finds, and walks the heap once, not five times over."""

from __future__ import annotations

import gc
import sys
from typing import Any

import pytest
from tests.conftest import collect_once_then_freeze


def test_one_collection_reports_what_it_finds_then_what_survived_is_frozen(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen: list[Any] = []
    monkeypatch.setattr(sys, "unraisablehook", seen.append)

    class Loud:
        me: Any

        def __del__(self) -> None:
            raise RuntimeError("dropped in a cycle")

    loud = Loud()
    loud.me = loud  # only a collection frees it
    del loud
    kept = [object(), [1, 2]]
    frozen = gc.get_freeze_count()
    try:
        collect_once_then_freeze()
        assert [type(u.exc_value) for u in seen] == [RuntimeError]
        assert gc.get_freeze_count() > frozen  # the survivors: out of later collections' walk
    finally:
        gc.unfreeze()
    assert kept
