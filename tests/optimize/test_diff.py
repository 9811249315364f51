"""`diff_iterations` (`memgauge optimize show --diff`, the viewer's diff): a text's changed
last line, which has no newline, is a line of its own in the unified diff."""

from __future__ import annotations

from memgauge.optimize import MemoryHistory, diff_iterations


def _row(step: int, prompt: str, k: int) -> dict[str, object]:
    return {
        "study_id": "s",
        "phase": "tune",
        "step": step,
        "candidate": 0,
        "params": {"k": k},
        "texts": {"prompt": prompt},
        "score": 0.5 + step / 10,
    }


def test_a_changed_last_line_is_its_own_diff_line() -> None:
    history = MemoryHistory()
    history.put_iteration(_row(0, "Decide.\nBe brief.", 3))
    history.put_iteration(_row(1, "Decide.\nBe very brief.", 5))
    diff = diff_iterations(history, "s", "0", "1")
    assert diff["params"] == [{"field": "k", "a": 3, "b": 5}]
    lines = diff["texts"]["prompt"].splitlines()
    assert lines[:2] == ["--- prompt @ 0", "+++ prompt @ 1"]
    assert lines[-3:] == [" Decide.", "-Be brief.", "+Be very brief."]
    assert (diff["score_a"], diff["score_b"]) == (0.5, 0.6)
