"""The README's test command runs every test (issue 29 item 7): scripts/test-tools.sh installs
what the tests need besides Python packages (as root) or stops naming the line that does, and
with MEMGAUGE_NO_SKIP=1 (scripts/check.sh) a test skipped for a missing tool fails, while the
deliberate skips stay skips; every skip is listed at the end with its reason."""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from tests.helpers import QUIET_PLUGINS, lazy_import

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "test-tools.sh"

TESTS = """
import pytest


def test_runs():
    pass


def test_in_the_browser():
    pytest.skip("no /usr/bin/chromium here (CI installs it: apt-get install chromium)")


@pytest.mark.skipif(True, reason="needs a real model: MEMGAUGE_REAL_LLM=1")
def test_with_a_real_model():
    pass


@pytest.mark.xfail(reason="not yet", strict=True)
def test_expected_to_fail():
    assert False
"""


def _run(pytester: pytest.Pytester) -> pytest.RunResult:
    pytester.makepyfile(test_tools=TESTS)
    pytester.makepyfile(test_module_skip="import pytest\npytest.importorskip('no_such_tool_xyz')\n")
    return pytester.runpytest_inprocess("-p", "tool_skips", "-ra", *QUIET_PLUGINS)


def test_without_no_skip_every_skip_is_a_skip_and_listed(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("MEMGAUGE_NO_SKIP", raising=False)
    result = _run(pytester)
    result.assert_outcomes(passed=1, skipped=3, xfailed=1)


def test_with_no_skip_a_missing_tool_fails_the_run_and_a_deliberate_skip_does_not(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMGAUGE_NO_SKIP", "1")
    result = _run(pytester)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    # the counts stay as they were: a module skipped while collected stops nothing
    result.assert_outcomes(passed=1, skipped=3, xfailed=1)
    result.stdout.fnmatch_lines(
        [
            "*short test summary info*",
            "SKIPPED [[]1[]] test_tools.py:*: needs a real model: MEMGAUGE_REAL_LLM=1",
        ]
    )
    # the skips a missing tool caused, at the end, each with its reason; not the deliberate one
    result.stdout.fnmatch_lines(
        [
            "*= skipped because a tool or package is missing =*",
            "test_module_skip.py: could not import 'no_such_tool_xyz': *",
            "test_tools.py::test_in_the_browser: no /usr/bin/chromium here *",
            "2 skipped for a missing tool or package: with MEMGAUGE_NO_SKIP=1 *",
        ]
    )
    assert "test_with_a_real_model: " not in result.stdout.str()


def test_with_no_skip_and_none_missing_the_run_passes(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMGAUGE_NO_SKIP", "1")
    pytester.makepyfile(test_ok=TESTS.replace("def test_in_the_browser", "def _not_a_test"))
    result = pytester.runpytest_inprocess("-p", "tool_skips", *QUIET_PLUGINS)
    assert result.ret == pytest.ExitCode.OK
    result.assert_outcomes(passed=1, skipped=1, xfailed=1)
    assert "skipped because a tool" not in result.stdout.str()


def test_a_lazy_import_skips_as_importorskip_skips_and_imports_on_first_use(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`tests.helpers.lazy_import`: a module whose package is missing is skipped with
    importorskip's reason (so MEMGAUGE_NO_SKIP=1 counts it as missing); one that is there is
    imported when a test first reads from it, not while the module is collected (pytest asks
    every module-level object for `__test__`)."""
    monkeypatch.setenv("MEMGAUGE_NO_SKIP", "1")
    monkeypatch.delitem(sys.modules, "tabnanny", raising=False)
    pytester.makepyfile(
        test_lazy="from tests.helpers import lazy_import\nlazy_import('no_such_tool_xyz.sub')\n",
        test_ok="def test_runs():\n    pass\n",
        test_unused=(  # collected (so asked for `__test__`), then run
            "import sys\nfrom tests.helpers import lazy_import\n"
            "tabnanny = lazy_import('tabnanny')\n\n\n"
            "def test_the_module_is_not_imported_yet():\n    assert 'tabnanny' not in sys.modules\n"
        ),
    )
    result = pytester.runpytest_inprocess("-p", "tool_skips", *QUIET_PLUGINS)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.assert_outcomes(passed=2, skipped=1)
    result.stdout.fnmatch_lines(["test_lazy.py: could not import 'no_such_tool_xyz': *"])

    tabnanny = lazy_import("tabnanny")
    assert "tabnanny" not in sys.modules
    assert callable(tabnanny.check)
    assert "tabnanny" in sys.modules


def _fake_bin(tmp_path: Path, uid: int) -> tuple[Path, Path]:
    """A PATH with a fake `id`, a fake `apt-get` that logs its arguments, `env`, and no npm,
    sudo or PostgreSQL: (its directory, the log)."""
    bin_dir, log = tmp_path / "bin", tmp_path / "apt-get.log"
    bin_dir.mkdir()
    (bin_dir / "id").write_text(f"#!/bin/sh\necho {uid}\n")
    (bin_dir / "apt-get").write_text(f'#!/bin/sh\necho "$@" >> {log}\n')
    for tool in ("id", "apt-get"):
        (bin_dir / tool).chmod(0o755)
    env = shutil.which("env")
    assert env is not None
    (bin_dir / "env").symlink_to(env)
    return bin_dir, log


def _missing_here() -> list[str]:
    """What the script sees missing with the fake PATH: npm always, the others as on this
    machine."""
    missing = [] if Path("/usr/bin/chromium").is_file() else ["chromium"]
    pg = any(
        Path(d, "initdb").exists() and Path(d, "pg_ctl").exists()
        for d in glob.glob("/usr/lib/postgresql/*/bin")
    )
    return [*missing, *([] if pg else ["postgresql"]), "npm"]


def _script(bin_dir: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "MEMGAUGE_TEST_PG_BIN"}
    env["PATH"] = str(bin_dir)
    bash = shutil.which("bash")
    assert bash is not None
    return subprocess.run(
        [bash, str(SCRIPT)], env=env, capture_output=True, text=True, timeout=60, check=False
    )


def test_without_root_the_setup_stops_with_the_install_line(tmp_path: Path) -> None:
    bin_dir, log = _fake_bin(tmp_path, uid=1000)
    done = _script(bin_dir)
    missing = " ".join(_missing_here())
    assert done.returncode == 1
    assert f"the tests need {missing}, not installed here" in done.stderr
    assert f"  sudo apt-get update && sudo apt-get install -y {missing}\n" in done.stderr
    assert not log.exists()  # nothing was tried


def test_as_root_the_setup_installs_what_is_missing(tmp_path: Path) -> None:
    bin_dir, log = _fake_bin(tmp_path, uid=0)
    done = _script(bin_dir)
    assert done.returncode == 0, done.stderr
    missing = " ".join(_missing_here())
    assert log.read_text().splitlines() == ["update -qq", f"install -y -qq {missing}"]
