"""Helpers shared by test files in several packages (`from tests.helpers import ...`): the
CLI in-process as a child would answer, a run's progress read from its store, a fake judge.
Fixtures live in the conftest files; a test file never imports another test file."""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import io
import json
import os
import re
import sqlite3
import subprocess
import sys
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
import yaml

from memgauge.cli.main import main
from memgauge.data.models import Memory, SessionContext
from memgauge.subjects.protocol import Hit, SearchResult

__all__ = [
    "QUIET_PLUGINS",
    "ScriptedSystem",
    "cli_output",
    "finished",
    "gated_suite",
    "judge_rule",
    "last_json",
    "lazy_import",
    "repeatable",
    "run_memgauge",
    "write_recall_suite",
]

#: for a pytest started by a test (pytester's runpytest_subprocess, which does not read
#: pyproject.toml's addopts): third-party plug-ins off that the generated tests do not use.
#: LangSmith's (langmem brings it) and Hypothesis's (its summary imports hypothesis) each cost
#: about 2 s of CPU a start; pytest-benchmark, where installed, warns under pytest-xdist,
#: which `-W error` turns into a failed run. pytest-xdist, pytest-cov, anyio's and
#: platformdirs' plug-ins serve nothing in a one-file run and cost 0.4 CPU-s a start
QUIET_PLUGINS = (
    *("-p", "no:langsmith_plugin", "-p", "no:hypothesispytest", "-p", "no:benchmark"),
    *("-p", "no:xdist", "-p", "no:xdist.looponfail", "-p", "no:pytest_cov"),
    *("-p", "no:anyio", "-p", "no:platformdirs"),
)


@contextlib.contextmanager
def _environ(env: Mapping[str, str]) -> Iterator[None]:
    """`env` set (and an import path in its PYTHONPATH importable) for the duration."""
    saved = dict(os.environ)
    path = list(sys.path)
    os.environ.update(env)
    sys.path[:0] = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)
        sys.path[:] = path


def shares_onnx_graphs(home: Path, graphs: Path) -> Path:
    """`home` (a MEMGAUGE_HOME, made if need be) with the ONNX graph `minilm` builds under
    `home/onnx` taken from `graphs`, the worker's (about 1 CPU-s and 87 MB a new home saves)."""
    home.mkdir(parents=True, exist_ok=True)
    (home / "onnx").symlink_to(graphs, target_is_directory=True)
    return home


def run_memgauge(
    *args: str, env: Mapping[str, str] | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """`memgauge ARGS` in this process, answered as a child process would answer: its exit
    code, stdout and stderr; `env` added to the environment (its PYTHONPATH on sys.path) and
    `cwd` the working directory. A child costs a Python start and the engine's imports (1-2 s
    of CPU a command): keep real processes for what only a process shows (kill -9, signals,
    start-up, a child's exit)."""
    out, err = io.StringIO(), io.StringIO()
    with (
        _environ(env or {}),
        contextlib.chdir(cwd or Path.cwd()),
        contextlib.redirect_stdout(out),
        contextlib.redirect_stderr(err),
    ):
        code = main(list(args))
    return subprocess.CompletedProcess(
        ["memgauge", *args], code, stdout=out.getvalue(), stderr=err.getvalue()
    )


def finished(db: Path) -> tuple[str | None, int]:
    """The suite run in the SQLite store `db` (a child process may be writing it) and how many
    of its items are finished (completed or failed); (None, 0) before there is one."""
    if not db.exists():
        return None, 0
    try:
        with sqlite3.connect(db, timeout=10) as conn:
            row = conn.execute("SELECT run_id FROM suite_runs").fetchone()
            if row is None:
                return None, 0
            (n,) = conn.execute(
                "SELECT COUNT(*) FROM suite_run_items WHERE status IN ('completed', 'failed')"
            ).fetchone()
            return str(row[0]), int(n)
    except sqlite3.OperationalError:  # the schema is being created
        return None, 0


_QA = re.compile(r"CORRECT ANSWER:\n(.*?)\n\nMODEL'S RESPONSE:\n(.*?)\n\n", re.S)


def judge_rule(payload: dict[str, Any]) -> str | None:
    """A deterministic judge: yes iff the expected answer occurs in the response (it reads the
    whole conversation, as a model does: panels and repairs append messages)."""
    text = "\n".join(m["content"] for m in payload["messages"])
    m = _QA.search(text)
    if m is None:
        return '{"score": 75, "issues": [], "strengths": ["fine"]}'
    label = "yes" if m.group(1).strip().lower() in m.group(2).lower() else "no"
    return json.dumps({"reasoning": "compared", "label": label})


def gated_suite(where: Path, right: int, n: int = 6) -> Path:
    """A suite file in `where` of `n` questions whose agent answers the first `right` of them
    (the `lookup_agents` module of tests/data/subjects, found beside the suite or on the
    path)."""
    items = [{"id": f"q{i}", "input": f"What is code {i}?", "expected": f"C{i}"} for i in range(n)]
    answers = {f"code {i}?": f"C{i}" if i < right else "no idea" for i in range(n)}
    spec = {
        "name": "gated",
        "max_failure_rate": 0.5,
        "subjects": {
            "agent": {
                "python": {"target": "lookup_agents:LookupAgent", "kwargs": {"answers": answers}}
            }
        },
        "tasks": [
            {"name": "qa", "kind": "expected-output", "items": items, "evaluators": ["icontains"]}
        ],
    }
    path = where / "suite.yaml"
    path.write_text(yaml.safe_dump(spec))
    return path


def write_recall_suite(
    root: Path,
    items: list[dict[str, Any]],
    memories: list[dict[str, Any]],
    evaluators: list[Any],
    task: dict[str, Any] | None = None,
    **spec: Any,
) -> Path:
    """The suite of conftest's `recall_suite`, written into `root` (also for a fixture of a
    wider scope than a test); a `subjects` in `spec` replaces the reference memory."""
    for name, rows in (("items", items), ("memories", memories)):
        (root / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    suite = {
        "name": "recall-suite",
        "subjects": {"memory": {"reference": {"mode": "lexical"}}},
        **spec,
        "tasks": [
            {
                "name": "recall",
                "kind": "expected-output",
                "dataset": "items.jsonl",
                "memories": "memories.jsonl",
                "k": 1,
                "evaluators": evaluators,
                **(task or {}),
            }
        ],
    }
    path = root / "suite.yaml"
    path.write_text(yaml.safe_dump(suite))
    return path


def repeatable(measures: list[Any]) -> list[Any]:
    """A run's measures without those of wall-clock time (`latency_ms.*` of the cost
    aggregate): what two runs of the same suite must agree on."""
    return [m for m in measures if not m.name.startswith("latency_ms.")]


def revisions_after(stamp: str) -> list[str]:
    """The revisions `upgrade` applies to a store stamped at `stamp`, in order: each one after
    it up to the code's HEAD (they are numbered one by one), so that a new migration is not a
    list to extend in every upgrade test."""
    from memgauge.store.url import HEAD

    return [f"{n:04d}" for n in range(int(stamp) + 1, int(HEAD) + 1)]


class _Lazy:
    """A module imported on its first access to a public attribute: pytest's collector asks
    every module-level object for private names (`__test__`; pytest 9.2 also `_mock_name`, to
    find a fixture wrapped by a mock; plug-ins for more), which imported the module while its
    test module was collected, on every xdist worker. A test reads a module's public names."""

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, attr: str) -> Any:
        if attr.startswith("_"):
            raise AttributeError(attr)
        return getattr(importlib.import_module(self._name), attr)


#: the packages each test module imports lazily (by the module's `__name__`)
LAZY_PACKAGES: dict[str, set[str]] = {}


def lazy_import(name: str, reason: str | None = None) -> Any:
    """The module `name`, imported when a test first uses it, or the calling test module
    skipped as `pytest.importorskip` skips it when its package is not installed. Every xdist
    worker collects every test module, so a third-party package imported at a module's top
    (statsmodels, mem0, NLTK, Dask: 0.5-2 CPU-s each) is imported by every worker, where only
    the one that runs the module's tests needs it; tests/conftest.py sends the tests of the
    modules that import a package no collected module imported to one worker."""
    top = name.partition(".")[0]
    if importlib.util.find_spec(top) is None:
        pytest.skip(
            reason or f"could not import {top!r}: No module named {top!r}", allow_module_level=True
        )
    LAZY_PACKAGES.setdefault(sys._getframe(1).f_globals["__name__"], set()).add(top)
    return _Lazy(name)


class ScriptedSystem:
    """Returns, for each query text, a fixed ranked list; raises for texts listed in `fail`."""

    def __init__(self, name: str, answers: dict[str, list[str]], fail: Sequence[str] = ()) -> None:
        self._name = name
        self._answers = answers
        self._fail = set(fail)
        self._memories: dict[str, Memory] = {}

    @property
    def name(self) -> str:
        return self._name

    def reset(self) -> None:
        self._memories.clear()

    def ingest(self, memories: Sequence[Memory]) -> None:
        self._memories.update({m.id: m for m in memories})

    def flush(self) -> None:
        pass

    def search(self, query: str, k: int, *, session: SessionContext | None = None) -> SearchResult:
        if query in self._fail:
            raise RuntimeError("backend timed out")
        ids = self._answers.get(query, [])[:k]
        if session is not None and session.working_memory_ids:
            ids = [
                *session.working_memory_ids,
                *[i for i in ids if i not in session.working_memory_ids],
            ][:k]
        hits = [
            Hit(id=i, text=self._memories[i].text, score=1.0 / r, rank=r, channels=("lexical",))
            for r, i in enumerate(ids, 1)
        ]
        return SearchResult(hits=hits, latency_ms={"total": 1.0})

    def dump(self) -> list[Memory]:
        return list(self._memories.values())


def cli_output(argv: list[str], ok: int = 0, *, with_stderr: bool = False) -> str:
    """Run a command in process, asserting its exit code `ok`; its stdout (then its stderr,
    `with_stderr`)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    assert code == ok, (argv, code, out.getvalue()[-3000:], err.getvalue()[-3000:])
    return out.getvalue() + (err.getvalue() if with_stderr else "")


def last_json(text: str) -> Any:
    """The last line of `text` that is a JSON object (a command's `--json` summary)."""
    return json.loads(next(line for line in reversed(text.splitlines()) if line.startswith("{")))
