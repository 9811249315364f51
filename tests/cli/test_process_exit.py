"""The console script's exit: what the command built is left out of the interpreter's
shutdown collections (`memgauge.cli.main.run`), and only there."""

from __future__ import annotations

import gc
import os
import subprocess
import sys
from pathlib import Path

import pytest

from memgauge.cli import main as cli_main


def test_the_console_script_freezes_what_the_command_built_then_exits_with_its_code(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    order: list[str] = []
    monkeypatch.setattr(cli_main, "main", lambda argv=None: order.append("main") or 3)
    monkeypatch.setattr(gc, "freeze", lambda: order.append("freeze"))
    with pytest.raises(SystemExit) as exited:
        cli_main.run(["runs", "list"])
    assert exited.value.code == 3
    assert order == ["main", "freeze"]


def _freezes(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Calls of `gc.freeze` from now on. Counted by the call, not by `gc.get_freeze_count()`:
    that count also falls when an object another test froze is freed, which made the check
    flaky on a shared worker."""
    calls: list[str] = []
    monkeypatch.setattr(gc, "freeze", lambda: calls.append("freeze"))
    return calls


def test_main_in_process_leaves_the_collector_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    freezes = _freezes(monkeypatch)
    assert cli_main.main(["--version"]) == 0
    assert freezes == []


def _last_line(probe: str, home: Path) -> str:
    """The last line `probe` prints, run as its own Python process (exit 0 asserted)."""
    env = {**os.environ, "MEMGAUGE_HOME": str(home)}
    done = subprocess.run(
        [sys.executable, "-c", probe], env=env, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()[-1]


def test_a_real_process_exits_with_the_commands_objects_frozen(tmp_path: Path) -> None:
    """At the exit handlers (which still run), the objects are frozen: the shutdown's
    collections do not walk them."""
    probe = (
        "import atexit, gc\n"
        "atexit.register(lambda: print('frozen', gc.get_freeze_count() > 0))\n"
        "from memgauge.cli.main import run\n"
        "run(['--version'])\n"
    )
    assert _last_line(probe, tmp_path) == "frozen True"


def test_the_console_script_imports_its_command_without_collecting(tmp_path: Path) -> None:
    """The command's modules (a second of imports for `evaluate`) are made with the cyclic
    collector paused and then frozen: no collection walks them while they load, and it runs
    again afterwards."""
    probe = (
        "import atexit, gc, sys\n"
        "seen = []\n"
        "gc.callbacks.append(lambda phase, info: phase == 'start' and seen.append(1))\n"
        "from memgauge.cli.main import run\n"
        "seen.clear()\n"
        "atexit.register(lambda: print('loaded', 'memgauge.cli.evaluate' in sys.modules,"
        " 'collections', len(seen), 'enabled', gc.isenabled()))\n"
        "run(['evaluate', '--help'])\n"
    )
    assert _last_line(probe, tmp_path) == "loaded True collections 0 enabled True"


def test_main_in_process_imports_a_command_with_the_collector_on(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    freezes = _freezes(monkeypatch)
    assert cli_main.main(["evaluate", "--help"]) == 0
    assert gc.isenabled()
    assert freezes == []


def test_a_reader_gone_before_the_first_line_does_not_cut_the_command_short(
    tmp_path: Path,
) -> None:
    """`memgauge evaluate ... | head`: rich's default, at the first write after the reader left,
    ended the process with exit 1 before the reports were written and before the run's end
    was said; the rest is printed to the null device and the command goes on to its end."""
    bundle = Path(__file__).parents[1] / "data" / "good" / "bundle.yaml"
    out = tmp_path / "out"
    env = {**os.environ, "MEMGAUGE_HOME": str(tmp_path / "home")}
    args = ["evaluate", str(bundle), "-s", "lexical", "--out", str(out)]
    proc = subprocess.Popen(
        [sys.executable, "-m", "memgauge", *args],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    proc.stdout.close()  # the reader is gone before the command writes anything
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    assert "Traceback" not in err
    assert sorted(p.name for p in out.iterdir()) == ["report.html", "result.json", "summary.md"]


# the console script, stopped by `kill PID` while `import` writes its dataset's temporary
# directory: the write of queries.jsonl says so in the file named by argv[1], then waits
_STOPPED_WRITING = """
import sys, time
from pathlib import Path
import memgauge.data.io as io
real = io.write_jsonl
def waiting(path, records):
    real(path, records)
    if Path(path).name == "queries.jsonl":
        Path(sys.argv[1]).write_text(str(path))
        time.sleep(60)
io.write_jsonl = waiting
from memgauge.cli.main import run
run(sys.argv[2:])
"""


def test_sigterm_stops_any_command_as_ctrl_c_does_leaving_nothing_written(tmp_path: Path) -> None:
    """SIGTERM's default action ended `memgauge import` where it stood, its temporary
    `.out.XXXX` directory left beside the output for good; it is now the clean interruption
    Ctrl-C is, the directory removed, with the code the README's table gives `kill PID`: 143
    (128 + SIGTERM, what shells and CI runners expect; it was 130, Ctrl-C's)."""
    import signal
    import time

    source = Path(__file__).parents[1] / "data" / "locomo" / "normalisations.json"
    marker, out = tmp_path / "writing", tmp_path / "data" / "out"
    env = {**os.environ, "MEMGAUGE_HOME": str(tmp_path / "home")}
    args = ["import", "locomo", str(source), "--out", str(out)]
    proc = subprocess.Popen(
        [sys.executable, "-c", _STOPPED_WRITING, str(marker), *args],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 60
    # write_text makes the file before it writes the path in it: wait for the path
    while not (marker.exists() and marker.read_text()):
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "the import never wrote its queries"
        time.sleep(0.02)
    # its temporary directory (`.out.XXXX/files/`, beside the file naming its owner)
    assert Path(marker.read_text()).parent.parent.name.startswith(".out.")
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 143, err
    assert "Traceback" not in err
    assert err.strip() == "aborted"  # what a Ctrl-C outside a run says
    assert list((tmp_path / "data").iterdir()) == []  # no output, no temporary directory
