"""Every IR value, through every entry point, equal bit for bit to what it was before the
scoring code was last refactored (see `metrics_pin.py`)."""

from __future__ import annotations

import json

from metrics_pin import GOLDEN, pins


def test_every_value_is_unchanged() -> None:
    expected = json.loads(GOLDEN.read_text())
    got = json.loads(json.dumps(pins()))
    assert sorted(got) == sorted(expected)
    changed = [
        f"{path} {measure}"
        for path, digests in expected.items()
        for measure, digest in digests.items()
        if got[path][measure] != digest
    ]
    assert not changed, f"{len(changed)} changed, e.g. {changed[:8]}"
