"""docs/ci.md's recipes name real options: each YAML block parses, and every `memgauge COMMAND
--option` in them is an option of that command (a renamed flag breaks the recipe here first)."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
import yaml

from memgauge.cli.main import main

DOC = Path(__file__).resolve().parents[2] / "docs" / "ci.md"


def _blocks(lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", DOC.read_text(), flags=re.DOTALL)


def test_the_yaml_blocks_parse_and_gitlab_reports_junit() -> None:
    blocks = [yaml.safe_load(b) for b in _blocks("yaml")]
    assert len(blocks) >= 3
    gitlab = next(b for b in blocks if isinstance(b, dict) and "memgauge" in b)
    assert gitlab["memgauge"]["artifacts"]["reports"]["junit"] == [
        "memgauge-ci/run.xml",
        "memgauge-ci/gate.xml",
    ]


def test_every_memgauge_option_in_the_recipes_exists(capsys: pytest.CaptureFixture[str]) -> None:
    script = "\n".join(
        line
        for b in _blocks("yaml")
        for job in [yaml.safe_load(b)]
        if isinstance(job, dict) and "memgauge" in job
        for line in job["memgauge"]["script"]
    )
    used: dict[str, set[str]] = {}
    for m in re.finditer(r"memgauge ((?:runs )?\w+) ([^|\n]*)", script):
        words = shlex.split(m.group(2).replace("$", ""), comments=False)
        used.setdefault(m.group(1), set()).update(w for w in words if w.startswith("--"))
    assert {"run", "gate", "runs export"} <= set(used)
    for command, options in used.items():
        assert main([*command.split(), "--help"]) == 0
        text = capsys.readouterr().out
        for option in options:
            assert option in text, f"memgauge {command} {option}"
