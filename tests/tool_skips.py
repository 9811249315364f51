"""A test skipped because a tool or package is missing fails the run where nothing may be missing.

With `MEMGAUGE_NO_SKIP=1` (scripts/check.sh sets it: the README's test command installs every
tool the tests need, or stops naming the line that does), a skip whose reason is not one of the
deliberate skips below (each with why it may skip in CI) makes the run exit 1, and the end of
the run lists those skips with their reasons under their own heading; every skip, deliberate or
not, is also in pytest's short summary (`-ra` in pyproject's addopts). The skips stay skips in
the counts: a module skipped while collected (`importorskip` at module level) would otherwise be
a collection error, which stops the run before any test.

The skips are read where reports arrive (in the controller with pytest-xdist). Loaded by
tests/conftest.py (`pytest_plugins`); a plug-in of its own so that pytester can load it alone
(`-p tool_skips`).
"""

from __future__ import annotations

import os

import pytest

#: reason text -> why a test may skip in CI
DELIBERATE = {
    "MEMGAUGE_REAL_LLM": "it calls a real, paid model: opt-in",
    "MEMGAUGE_MEMAUDIT_DIR": "the live memaudit oracle needs a memaudit checkout built by hand",
    "'ranx'": "ranx, the live fusion oracle, is in the bench extra, not in dev",
    "shared/datasets": "LoCoMo and memaudit's data sit beside the repository, never in it",
    "shared/seeds": "the seeds sit beside the repository, never in it",
    "evaluate has no judge": "a case of a parametrized test that does not apply",
    "fork is POSIX": "not on this platform",
    "reads processes in /proc": "not on this platform",
}


def deliberate(reason: str) -> str | None:
    """Why a skip with this reason is allowed in CI, or None: a tool is missing."""
    return next((why for text, why in DELIBERATE.items() if text in reason), None)


def _reason(report: pytest.TestReport | pytest.CollectReport) -> str:
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        return str(longrepr[2]).removeprefix("Skipped: ")
    return str(longrepr)


class NoSkip:
    """The skips of one run that a missing tool caused."""

    def __init__(self) -> None:
        self.missing: list[tuple[str, str]] = []

    def _seen(self, report: pytest.TestReport | pytest.CollectReport) -> None:
        if not report.skipped or hasattr(report, "wasxfail"):  # an xfail is reported skipped
            return
        reason = _reason(report)
        if deliberate(reason) is None:
            self.missing.append((report.nodeid, reason))

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """A test's skip (a skip mark, `pytest.skip` or `importorskip` in a test or fixture)."""
        self._seen(report)

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        """A module's skip while it is collected."""
        self._seen(report)

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        """Exit 1 when a tool was missing (the tests that ran passed)."""
        if self.missing and session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        """The skips a missing tool caused, at the end, each with its reason."""
        if not self.missing:
            return
        tr = terminalreporter
        tr.section("skipped because a tool or package is missing", sep="=", red=True)
        for nodeid, reason in self.missing:
            tr.line(f"{nodeid}: {reason}")
        tr.line(
            f"{len(self.missing)} skipped for a missing tool or package: with MEMGAUGE_NO_SKIP=1 "
            "(scripts/check.sh, CI) that fails the run. `bash scripts/check.sh` installs them or "
            "names the line that does; tests/tool_skips.py lists the deliberate skips.",
            red=True,
        )


def pytest_configure(config: pytest.Config) -> None:
    """Watch the skips when MEMGAUGE_NO_SKIP=1, in the process the reports reach."""
    if os.environ.get("MEMGAUGE_NO_SKIP") == "1" and not hasattr(config, "workerinput"):
        config.pluginmanager.register(NoSkip(), "memgauge-no-skip")
