"""The numbers every evaluating command produced before the run engine was unified, pinned:
after any refactor they must be exactly equal (see `golden_pin.py`)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from golden_pin import LOCOMO, PINS, Scalar

HERE = Path(__file__).resolve().parent


def _same(a: Scalar, b: Scalar) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return type(a) is type(b) and a == b


@pytest.mark.parametrize(
    "name",
    [
        pytest.param(n, marks=[pytest.mark.locomo, pytest.mark.slow]) if "locomo" in n else n
        for n in sorted(PINS)
    ],
)
def test_numbers_are_unchanged(name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    if "locomo" in name and not LOCOMO.is_file():
        pytest.skip(f"{LOCOMO} is not here")
    monkeypatch.syspath_prepend(str(HERE.parent / "data" / "subjects"))
    # the pins were made with the NumPy MiniLM; ONNX agrees to 1e-6, which can reorder ties
    monkeypatch.setenv("MEMGAUGE_MINILM", "numpy")
    monkeypatch.chdir(tmp_path)
    expected = json.loads((HERE / f"{name}.json").read_text())
    got = json.loads(json.dumps(PINS[name](tmp_path)))  # the same JSON round trip as the file
    missing = sorted(set(expected) - set(got))
    changed = sorted(k for k in set(expected) & set(got) if not _same(expected[k], got[k]))
    assert not missing, f"{len(missing)} pinned values are gone, e.g. {missing[:5]}"
    assert not changed, "changed: " + "; ".join(
        f"{k}: {expected[k]!r} -> {got[k]!r}" for k in changed[:10]
    )
