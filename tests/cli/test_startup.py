"""Start-up cost: `memgauge --help` and `memgauge validate FILE` load no numerical, network or LLM
stack. Asserted on what a fresh interpreter has imported (never on time: the figures are in
BENCHMARKS.md), so the test fails the day a module-level import drags one of them back in."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import click
import pytest

from memgauge.cli.main import _COMMANDS, cli

ROOT = Path(__file__).resolve().parents[2]
GOOD = ROOT / "tests" / "data" / "good"

# what start-up must not pay for: each costs tens to hundreds of milliseconds of CPU
HEAVY = ("numpy", "scipy", "aiohttp", "memgauge.llm", "sqlalchemy", "starlette", "httpx")

# run the CLI in-process, then print what it imported as the last line of stdout
_PROBE = (
    "import json, sys\n"
    "from memgauge.cli.main import main\n"
    "code = main(sys.argv[1:])\n"
    "print()\n"
    "print(json.dumps({'code': code, 'modules': sorted(sys.modules)}))\n"
)


def _modules_after(*args: str, home: Path) -> set[str]:
    env = {**os.environ, "MEMGAUGE_HOME": str(home), "COLUMNS": "120"}
    proc = subprocess.run(
        [sys.executable, "-c", _PROBE, *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result["code"] == 0, proc.stdout + proc.stderr
    return set(result["modules"])


def _dataset_dir(tmp: Path) -> Path:
    ds = tmp / "dataset"
    ds.mkdir()
    (ds / "memories.jsonl").write_text('{"id": "m1", "text": "Alice moved to Lyon"}\n')
    (ds / "queries.jsonl").write_text('{"id": "q1", "text": "Where does Alice live?"}\n')
    (ds / "judgments.jsonl").write_text('{"query_id": "q1", "memory_id": "m1", "grade": 2}\n')
    return ds


@pytest.mark.parametrize(
    "args",
    [
        ["--help"],
        ["validate", str(GOOD / "qrels.txt")],
        ["validate", str(GOOD / "run.txt")],
        ["validate", str(GOOD / "conversations.jsonl")],
        ["validate", "DATASET_DIR"],
    ],
    ids=["help", "validate-qrels", "validate-run", "validate-conversations", "validate-dataset"],
)
def test_startup_loads_no_heavy_stack(args: list[str], tmp_path: Path) -> None:
    args = [str(_dataset_dir(tmp_path)) if a == "DATASET_DIR" else a for a in args]
    loaded = _modules_after(*args, home=tmp_path / "home")
    heavy = sorted(m for m in loaded for h in HEAVY if m == h or m.startswith(h + "."))
    assert not heavy, f"`memgauge {' '.join(args)}` imported {heavy[:10]}"


def test_help_lists_each_command_with_its_own_summary() -> None:
    """`--help` shows summaries kept beside the command table (so it imports no command): each
    must be the command's own first docstring sentence, as click would show it."""
    for name, (module, attr, summary) in _COMMANDS.items():
        command = cli.get_command(None, name)  # type: ignore[arg-type]
        assert command is not None, f"{name}: {module}.{attr}"
        for limit in (30, 45, 60, 80, 10_000):
            shown = click.Command(name, help=summary).get_short_help_str(limit)
            assert shown == command.get_short_help_str(limit), (name, limit)
