"""`fewer_collections` (held while a run goes) shares its setting the way `one_blas_thread`
does: the first context in raises and freezes, the last out restores, in whatever order they
leave."""

from __future__ import annotations

import gc

from memgauge._util.gcquiet import GC_THRESHOLD, fewer_collections


def test_the_collector_is_restored_once_by_the_last_to_leave() -> None:
    before = gc.get_threshold()
    first, second = fewer_collections(), fewer_collections()
    first.__enter__()
    second.__enter__()
    inside = gc.get_threshold()[0], gc.get_freeze_count() > 0
    first.__exit__(None, None, None)
    after_first = gc.get_threshold()[0], gc.get_freeze_count() > 0
    second.__exit__(None, None, None)
    assert inside == after_first == (max(before[0], GC_THRESHOLD), True)
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() == 0
