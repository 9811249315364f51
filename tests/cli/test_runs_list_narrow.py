"""`runs list` on a terminal 80 columns wide: each run id whole on one line, to be copied into
`runs show`, `gate` or `report`; no cell cut with an ellipsis (issue 29 item 6)."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from memgauge.cli.main import main
from memgauge.data.demo import demo_dataset
from memgauge.data.io import save_retrieval_dataset


def test_at_80_columns_every_run_id_is_whole_and_nothing_is_cut(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    save_retrieval_dataset(demo_dataset(), tmp_path / "demo")
    store = str(tmp_path / "r.db")
    for _ in range(2):
        argv = ["evaluate", str(tmp_path / "demo"), "-s", "lexical", "--store", store]
        assert main([*argv, "--out", str(tmp_path / "o"), "--quiet"]) == 0
    assert main(["runs", "list", "--store", store, "--json"]) == 0
    ids = re.findall(r'"run_id": "([^"]+)"', capsys.readouterr().out)
    assert len(ids) == 2
    monkeypatch.setenv("COLUMNS", "80")
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)
    assert main(["runs", "list", "--store", store]) == 0
    out = re.sub(r"\x1b\[[0-9;]*m", "", capsys.readouterr().out)
    assert "…" not in out
    assert max(len(line) for line in out.splitlines()) <= 80
    for run_id in ids:
        assert re.search(rf"(^|\s){re.escape(run_id)}\s", out, re.M), out
    assert "completed" in out  # a status is a word, not cut inside it
