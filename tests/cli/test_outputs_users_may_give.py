"""The other side of the refusals of outputs (tests/cli/test_bad_inputs.py): what a user
legitimately gives is not refused. A device two outputs both name, a file beside the input that
is not the input, a rerun over the command's own outputs."""

from __future__ import annotations

from pathlib import Path

import pytest

from memgauge.cli.main import main

DATA = Path(__file__).resolve().parents[1] / "data"


def test_two_outputs_sent_to_dev_null_are_not_one_file_overwritten(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`evaluate --run-json /dev/null --junit /dev/null` (a CI job that wants neither today)
    was refused as two outputs naming one file: a device is written, never replaced."""
    args = ["evaluate", str(DATA / "good" / "bundle.yaml"), "-s", "lexical", "--quiet"]
    args += ["--out", str(tmp_path / "report"), "--store", str(tmp_path / "r.db")]
    assert main([*args, "--run-json", "/dev/null", "--junit", "/dev/null"]) == 0
    assert "both name" not in capsys.readouterr().err
    assert (tmp_path / "report" / "result.json").is_file()
