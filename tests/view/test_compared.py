"""The compare page's paired comparison is computed once a viewer process for the same runs'
values and seed (`view.compared`), and again when any of them differs."""

from __future__ import annotations

from array import array
from typing import Any

import pytest

from memgauge.runs.suite_compare import compare_measures
from memgauge.view import compared


def _measures(values: list[float], ids: list[str] | None = None) -> Any:
    ids = ids or [f"q{i}" for i in range(len(values))]
    return {
        ("s", "t", "hit"): (ids, array("d", values)),
        ("s", "t", "rr"): (ids, array("d", values)),
    }


def test_a_comparison_is_computed_once_for_the_same_values_and_seed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls: list[int] = []

    def counted(a: Any, b: Any, **options: Any) -> list[dict[str, Any]]:
        calls.append(options["seed"])
        return compare_measures(a, b, **options)

    monkeypatch.setattr(compared, "compare_measures", counted)
    monkeypatch.setattr(compared, "_kept", type(compared._kept)())
    a = _measures([0.0, 1.0, 0.5, 1.0, 0.0, 1.0])
    b = _measures([1.0, 1.0, 0.5, 0.0, 1.0, 1.0])
    first = compared.compared_measures(a, b, seed=3)
    assert first == compare_measures(a, b, seed=3)
    first[0]["delta"] = 99.0  # the caller's copy
    again = compared.compared_measures(_measures([0.0, 1.0, 0.5, 1.0, 0.0, 1.0]), b, seed=3)
    assert again == compare_measures(a, b, seed=3)
    assert calls == [3]
    compared.compared_measures(a, b, seed=4)  # another seed
    compared.compared_measures(a, _measures([1.0, 1.0, 0.5, 0.0, 1.0, 0.0]), seed=3)  # a value
    renamed = [f"q{i}" for i in range(5)] + ["other"]
    compared.compared_measures(a, _measures([1.0, 1.0, 0.5, 0.0, 1.0, 1.0], renamed), seed=3)
    assert calls == [3, 4, 3, 3]


def test_the_changed_verdicts_shown_are_the_first_in_order_of_all_that_changed() -> None:
    """More changes than the page lists (`MAX_CHANGED`): the regressions first, then by subject,
    task, item and evaluator, as sorting every change gives; the count is of all of them."""
    from memgauge.runs import run_comparison as history

    pairs = []
    for i in range(700):
        value, base = (i % 7) / 7, ((i * 3) % 5) / 5
        passed = None if i % 3 else i % 2
        pairs.append((f"s{i % 2}", "t", f"q{i % 350:03d}", f"e{i // 350}", value, passed, None,
                      base, None if i % 3 else 1 - i % 2, "boom" if i % 11 == 0 else None))  # fmt: skip
    shown, total = history.changed_of(pairs)
    every = []
    for p in pairs:
        ta = history._verdict_text(p[7], p[8], p[9])
        tb = history._verdict_text(p[4], p[5], p[6])
        if ta != tb:
            regressed = (p[9] is None and p[6] is not None) or (p[8] == 1 and p[5] == 0)
            if p[8] is None and p[5] is None and p[7] is not None and p[4] is not None:
                regressed = p[4] < p[7]
            every.append(history.ChangedVerdict(*p[:4], ta, tb, regressed))
    every.sort(key=lambda c: (not c.regressed, c.subject, c.task, c.item_id, c.evaluator))
    assert total == len(every) > history.MAX_CHANGED
    assert shown == every[: history.MAX_CHANGED]
    assert any(c.regressed for c in shown)
    assert not all(c.regressed for c in shown)


def test_measures_whose_bytes_run_on_into_the_next_key_are_another_key() -> None:
    # A's second measure (its key's JSON, its ids' digest, its value) read as float64s and
    # appended to B's first measure: the same bytes in the same order, other measures
    import hashlib
    import json

    import numpy as np

    ids = ["q0"]
    tail = (
        json.dumps(["bcdefghijklm"]).encode()  # 16 bytes: the whole reads as float64s
        + hashlib.blake2b(json.dumps(ids).encode()).digest()
        + np.float64(2.0).tobytes()
    )
    a = {("a",): (ids, array("d", [1.0])), ("bcdefghijklm",): (ids, array("d", [2.0]))}
    b = {("a",): (ids, array("d", [1.0, *np.frombuffer(tail, dtype=np.float64)]))}
    other: Any = {("a",): (ids, array("d", [0.0]))}
    assert compared._digest(a, other, 1) != compared._digest(b, other, 1)
