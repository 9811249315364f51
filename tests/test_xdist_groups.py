"""Tests sharing a fixture built once run on one xdist worker (tests/conftest.py groups them,
`--dist loadgroup` as scripts/check.sh runs the suite), under pytest 9.2 too, where xdist's
own renaming of a grouped test no longer takes (tests/xdist_group_ids.py)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

TESTS_DIR = Path(__file__).resolve().parent

GROUPED = """
import os

import pytest


@pytest.mark.xdist_group("together")
@pytest.mark.parametrize("i", range(4))
def test_grouped(i):
    with open(os.path.join(os.environ["WORKERS_SEEN"], f"{__name__}-{i}"), "w") as f:
        f.write(os.environ["PYTEST_XDIST_WORKER"])


@pytest.mark.parametrize("i", range(4))
def test_free(i):
    pass
"""


def test_tests_of_one_xdist_group_run_on_one_worker(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    seen = tmp_path / "seen"
    seen.mkdir()
    monkeypatch.setenv("WORKERS_SEEN", str(seen))
    # the workers import the plug-in as tests/conftest.py's `pytest_plugins` does
    path = os.environ.get("PYTHONPATH", "")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(p for p in (str(TESTS_DIR), path) if p))
    pytester.makepyfile(test_a=GROUPED, test_b=GROUPED)
    result = pytester.runpytest_subprocess(
        "-p", "xdist_group_ids", "-n", "2", "--dist", "loadgroup", "-v",
        *("-p", "no:langsmith_plugin", "-p", "no:hypothesispytest", "-p", "no:benchmark"),
        *("-p", "no:cacheprovider", "-p", "no:pytest_cov", "-p", "no:anyio"),
    )  # fmt: skip
    result.assert_outcomes(passed=16)
    # the controller saw the group in the ids it scheduled
    result.stdout.fnmatch_lines(["*test_a.py::test_grouped[[]0[]]@together*"])
    workers = {path.name: path.read_text() for path in seen.iterdir()}
    assert len(workers) == 8
    assert len(set(workers.values())) == 1, workers
