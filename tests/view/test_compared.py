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
