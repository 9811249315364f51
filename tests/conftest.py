"""Fixtures shared across test packages."""

from __future__ import annotations

import ast
import gc
import json
import logging
import re
import shutil
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from tests.helpers import LAZY_PACKAGES, shares_onnx_graphs, write_recall_suite

from memgauge.cli.main import main

# with MEMGAUGE_NO_SKIP=1 (scripts/check.sh), a test skipped for a missing tool fails the run;
# the xdist groups below hold under pytest 9.2 too (xdist_group_ids.py)
pytest_plugins = ["tool_skips", "xdist_group_ids"]


# trylast: after pytest's own plug-ins, so that the cleanup added here runs before theirs
@pytest.hookimpl(trylast=True)
def pytest_configure(config: pytest.Config) -> None:
    """A shell without job control starts `cmd &` with SIGINT ignored, and every process the
    tests start inherits that: the tests of Ctrl-C (a serving docs line, `watch`, an interrupted
    run) then wait for a child that never hears it. Python's own handler again, which the
    children (xdist's workers included) start with. And a cheaper end (below)."""
    import atexit
    import signal

    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    # At the interpreter's exit (after pytest's own end-of-session collections, which look for
    # unraisable exceptions), what the session still holds is frozen out of the cyclic
    # collector's sight, as the console script does (`memgauge.cli.main.run`): the shutdown's
    # collections walked every module, test and fixture object of the process again. After
    # pytest_unconfigure, tests/metrics, stats and report in one process: 2.9-3.1 to 1.8 s wall,
    # 3.2-3.6 to 2.2 CPU-s; each xdist worker pays it at the end of the whole suite.
    atexit.register(gc.freeze)
    config.add_cleanup(collect_once_then_freeze)


def collect_once_then_freeze() -> None:
    """Run just before pytest's end-of-session look for unraisable exceptions, which collects
    five times over (its unraisableexception plug-in's cleanup): one full collection here, whose
    unraisable exceptions pytest reports as its own would be (its hook is still in place), then
    what survived it frozen, so that pytest's five walk what is made from then on, not every
    module, test and fixture object of the process again (a worker holding the suite's imports:
    about 0.35 CPU-s a collection)."""
    gc.collect()
    gc.freeze()


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """`-n auto`: one worker more than the cores this process may use. Tests spend part of
    their time waiting on the processes, servers and browser they start, and a third worker
    on two cores fills it: the whole suite 270 s against 300 s with two, on a fresh clone of
    an idle 2-core machine."""
    import os

    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return (cores or 1) + 1


RunSuite = Callable[[dict[str, Any]], tuple[int, dict[str, Any]]]

#: session fixtures built once and only read: every test using one runs on one xdist worker
#: (the docs' pages: one fork server's preload and one embedding cache, not one a worker)
SHARED_ONCE = frozenset({"viewer_store", "pg_viewer_store", "fork_pool"})


def _shared_fixtures(item: pytest.Item) -> list[str]:
    """What a test shares with others: each fixture in SHARED_ONCE it uses, its file when it
    uses a module-scoped fixture (a server, a browser, a dataset built once), and each package
    its module imports lazily (tests.helpers.lazy_import) that no collected module imported:
    one worker imports statsmodels, mem0 or NLTK (1-1.5 CPU-s each), not every worker."""
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return []
    used = sorted(getattr(item, "fixturenames", []))
    keys = [name for name in used if name in SHARED_ONCE]
    module = getattr(getattr(item, "module", None), "__name__", "")
    for top in sorted(LAZY_PACKAGES.get(module, ())):
        if top not in sys.modules:  # the same on every worker: they collect the same modules
            keys.append(f"import {top}")
    for name in used:
        defs = info.name2fixturedefs.get(name)
        if defs and defs[-1].scope in ("module", "package", "class"):
            keys.append(item.nodeid.split("::", 1)[0])
            break
    return keys


# tryfirst: pytest-xdist's own hook reads the xdist_group marks into the test ids (the
# `@group` suffix its scheduler groups by); run after it, the marks were added too late and
# every group was spread over both workers, each building the shared fixtures again
@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Under pytest-xdist (`-n 2 --dist loadgroup`, as scripts/check.sh runs the tests), a
    fixture built once per module or session is built once, on the worker that runs every test
    that uses it, instead of once on each worker; the other tests go to whichever worker is
    free. Tests sharing anything are one group, transitively (a browser test that uses both the
    module's browser and the session's store joins the two)."""
    if not config.pluginmanager.hasplugin("xdist"):
        return
    parent: dict[str, str] = {}

    def root(key: str) -> str:
        while parent.setdefault(key, key) != key:
            key = parent[key]
        return key

    shared = {item.nodeid: _shared_fixtures(item) for item in items}
    for keys in shared.values():
        for key in keys[1:]:
            parent[root(key)] = root(keys[0])
    for item in items:
        keys = shared[item.nodeid]
        if keys:
            item.add_marker(pytest.mark.xdist_group(root(keys[0])))


# session-scoped: written once per xdist worker (cheap), its tests not held on one worker
@pytest.fixture(scope="session")
def demo_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo's dataset as a dataset directory (`.../demo/dataset`), written once as `memgauge
    demo` writes it; read-only: a test that changes a dataset writes its own."""
    from memgauge import api

    where = tmp_path_factory.mktemp("demo") / "demo" / "dataset"
    api.save_dataset(api.demo_dataset(), where)
    return where


@pytest.fixture
def run_suite_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> RunSuite:
    """Write a suite (a dict) to a file, `memgauge run` it with --json into a store in
    tmp_path, and return the exit code and the JSON summary of the last line."""

    def run(suite: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        path = tmp_path / "suite.yaml"
        path.write_text(yaml.safe_dump(suite))
        code = main(["run", str(path), "--store", str(tmp_path / "r.db"), "--json"])
        out = capsys.readouterr().out.strip().splitlines()
        return code, json.loads(out[-1]) if out else {}

    return run


SourceTree = Callable[[Path], ast.Module]


@pytest.fixture(scope="module")
def source_tree() -> SourceTree:
    """`source_tree(path)`: the syntax tree of a source file, parsed once for the test module
    and dropped at its end. The tests that read the whole of src (its 440-odd files: 1.2-1.9
    CPU-s a parse) each parsed it again, a dozen times a suite."""
    trees: dict[Path, ast.Module] = {}

    def tree(path: Path) -> ast.Module:
        if path not in trees:
            trees[path] = ast.parse(path.read_text(encoding="utf-8"))
        return trees[path]

    return tree


RecallSuite = Callable[..., Path]


@pytest.fixture
def recall_suite(tmp_path: Path) -> RecallSuite:
    """Write a one-task suite into tmp_path: the reference memory (lexical, top hit as the
    answer) asked `items` over `memories`, scored by `evaluators`; `task` adds task keys
    (`targets`, ...), `spec` suite keys."""

    def write(
        items: list[dict[str, Any]],
        memories: list[dict[str, Any]],
        evaluators: list[Any],
        task: dict[str, Any] | None = None,
        **spec: Any,
    ) -> Path:
        return write_recall_suite(tmp_path, items, memories, evaluators, task, **spec)

    return write


class _Dirs:
    """New directories under the session's base temporary directory, each a name and a number
    this process has not used (the worker's own base, under pytest-xdist). pytest's numbered
    directories (`tmp_path`, `tmp_path_factory.mktemp`) list the whole base directory to find
    the next number: two of them a test, and the base holds two more entries after each test,
    so a worker's thousand tests listed a million entries (about 3 CPU-s, a third of what a
    trivial test costs)."""

    def __init__(self) -> None:
        self.next = 0  # the number the next directory tries first

    def make(self, factory: pytest.TempPathFactory, name: str) -> Path:
        base = factory.getbasetemp()
        while True:
            path, self.next = base / f"{name}{self.next}", self.next + 1
            try:
                path.mkdir(mode=0o700)
            except FileExistsError:  # one pytest's own numbering made
                continue
            return path


_DIRS = _Dirs()


@pytest.fixture
def tmp_path(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Path]:
    """pytest's `tmp_path`: a new directory named after the test in the session's base
    temporary directory, kept as `tmp_path_retention_policy` says, numbered without listing
    the base directory (`_Dirs`)."""
    from _pytest.tmpdir import tmppath_result_key

    path = _DIRS.make(tmp_path_factory, re.sub(r"\W", "_", request.node.name)[:30])
    yield path
    # as pytest's own: the policy `failed` removes a passed test's directory
    passed = request.node.stash[tmppath_result_key].get("call", True)
    if tmp_path_factory._retention_policy == "failed" and passed:
        shutil.rmtree(path, ignore_errors=True)


@pytest.fixture(scope="session")
def _embeddings_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("embeddings")


@pytest.fixture(scope="session")
def _onnx_graphs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("onnx")


@pytest.fixture(autouse=True)
def _isolated_llm(
    tmp_path: Path,
    tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
    _embeddings_cache: Path,
    _onnx_graphs: Path,
) -> Iterator[None]:
    """Each test gets its own MEMGAUGE_HOME (results store, learnings), its own LLM cache file
    and a fresh LLM context (clients, meter); embeddings are cached once for the session (the
    worker's, under pytest-xdist), and so is the ONNX graph `minilm` builds from the packaged
    weights into MEMGAUGE_HOME/onnx (87 MB written and about 1 s of CPU in each new home). The
    home is made beside the test's tmp_path, not in it: a test's tmp_path holds only what the
    test writes there."""
    from memgauge.llm import context

    home = shares_onnx_graphs(_DIRS.make(tmp_path_factory, "memgauge-home"), _onnx_graphs)
    monkeypatch.setenv("MEMGAUGE_HOME", str(home))
    monkeypatch.setenv("MEMGAUGE_EMBEDDINGS", str(_embeddings_cache))
    monkeypatch.setenv("MEMGAUGE_LLM_CACHE", str(tmp_path / "llm-cache.db"))
    # fresh here too: the reset at the end of the test before builds its meter while that
    # test's environment (a MEMGAUGE_PRICES it set) is still in place
    context.reset()
    yield
    context.reset()


class _Collector:
    """`gc.collect()` that scans only what is new since its last call. A full collection in a
    worker holding the suite's imports and caches costs 0.2-1 s of CPU, and `aiohttp_sessions`
    collects after every test that opened a session (a few hundred): what survives a
    collection is frozen (gc.freeze), so the next one scans only the objects made since. When
    the frozen objects have grown by a quarter since the last full collection (Python's own
    rule for its oldest generation), they are thawed and all collected: garbage frozen
    meanwhile (what a test's fixtures released after the check) is freed then.

    A run thaws the heap when it ends (memgauge's `_util.gcquiet` moves what it froze, and
    this freeze with it, to the oldest generation): a collection then would walk the whole
    heap again (0.15-0.7 CPU-s after each test that ran a suite). Then what is there is frozen
    again unwalked, and its garbage waits for the next full collection; a session dropped
    unclosed is found by `SessionWatch`, which holds every session a test opens.

    `gc.get_freeze_count()` counts the frozen objects one by one (CPython 3.11 walks their
    list): 0.04-0.1 CPU-s late in a worker. It is asked once a call, not three times; what a
    young collection adds is counted from what survived it."""

    def __init__(self) -> None:
        self.full_at = 0  # frozen objects after the last full collection
        self.frozen = 0  # frozen objects after the last call (after a thaw: before it)

    def collect(self) -> None:
        frozen = gc.get_freeze_count()
        if frozen >= self.full_at * 5 // 4:
            gc.unfreeze()
            gc.collect()
            gc.freeze()
            self.full_at = frozen = gc.get_freeze_count()
        elif frozen < self.frozen // 2:  # thawed since: no whole-heap walk, nor a count of it
            # (a thaw empties the frozen generation; frozen objects freed since are a few)
            gc.freeze()
            frozen = self.frozen
        else:
            gc.collect()  # the survivors, all in the oldest generation now, are frozen next
            frozen += len(gc.get_objects(generation=2))
            gc.freeze()
        self.frozen = frozen


_COLLECTOR = _Collector()


#: sessions a test left open: kept, so that none is collected (and logged) in a later test
_LEFT_OPEN: list[Any] = []


class SessionWatch(logging.Handler):
    """The aiohttp client sessions opened during a test (held until its end: one dropped
    unclosed is still there to be found open, whether or not a collection has run), and what
    asyncio's exception handler logged about a session or connector collected while open
    (aiohttp says it there as well as in a ResourceWarning, and only there when the warning is
    filtered out)."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.opened: list[Any] = []
        #: how many were opened
        self.count = 0
        self.logged: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        message = record.getMessage()
        if message.startswith(("Unclosed client session", "Unclosed connector")):
            self.logged.append(message.splitlines()[0])

    def still_open(self) -> list[Any]:
        """The sessions opened during the test and not closed (yet)."""
        return [s for s in self.opened if not s.closed]


@pytest.fixture(autouse=True)
def aiohttp_sessions(
    _isolated_llm: None, monkeypatch: pytest.MonkeyPatch
) -> Iterator[SessionWatch]:
    """Every aiohttp client session a test opens (through memgauge's API, CLI, plug-in, or
    itself) is closed by the end of the test, by whoever opened it: one still open, or one
    collected while open ("Unclosed client session"), is an error of the test. Torn down
    before `_isolated_llm` resets the LLM context, which would close what was left open."""
    import aiohttp

    watch = SessionWatch()
    init = aiohttp.ClientSession.__init__

    def tracked(self: aiohttp.ClientSession, *args: Any, **kwargs: Any) -> None:
        init(self, *args, **kwargs)
        watch.opened.append(self)
        watch.count += 1

    monkeypatch.setattr(aiohttp.ClientSession, "__init__", tracked)
    asyncio_log = logging.getLogger("asyncio")
    asyncio_log.addHandler(watch)
    try:
        yield watch
        if watch.count or watch.logged:
            _COLLECTOR.collect()  # what the test dropped, freed or frozen out of sight
        left = watch.still_open()
    finally:
        asyncio_log.removeHandler(watch)
    _LEFT_OPEN.extend(left)
    watch.opened.clear()
    problems = watch.logged + [
        f"Unclosed client session (still open at the end): {s!r}" for s in left
    ]
    if problems:
        pytest.fail("\n".join(problems), pytrace=False)


@pytest.fixture
def llm_server(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """The fake OpenAI-compatible server on 127.0.0.1, with OPENAI_BASE_URL, OPENAI_API_KEY
    and MEMGAUGE_MODEL (`fake`) pointing at it for the test."""
    from memgauge.llm import FakeOpenAIServer

    with FakeOpenAIServer() as srv:
        monkeypatch.setenv("OPENAI_BASE_URL", srv.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "k")
        monkeypatch.setenv("MEMGAUGE_MODEL", "fake")
        yield srv


# --- PostgreSQL ------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def pg_server() -> Iterator[Any]:
    """A real PostgreSQL server for the session (see tests/pgserver.py); skipped, saying why,
    only when its binaries are not installed."""
    from pgserver import PGServer, find_bin

    bindir = find_bin()
    if bindir is None:
        pytest.skip(
            "PostgreSQL's initdb and pg_ctl are not installed (apt-get install postgresql,"
            " or set MEMGAUGE_TEST_PG_BIN)"
        )
    pytest.importorskip("psycopg", reason="the PostgreSQL driver: pip install 'memgauge[postgres]'")
    server = PGServer(bindir)
    try:
        server.start()
        yield server
    finally:
        server.close()


@pytest.fixture
def pg_url(pg_server: Any) -> str:
    """A fresh, empty database on the session's server."""
    return str(pg_server.new_database())


@pytest.fixture(params=["sqlite", "postgresql"])
def store_where(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A new results store, once on a SQLite file and once on PostgreSQL."""
    if request.param == "sqlite":
        return str(tmp_path / "results.db")
    return str(request.getfixturevalue("pg_url"))


@pytest.fixture
def pytester_keeps_modules(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """For pytester's in-process runs (`pytester.runpytest`), which save a pytest process (a
    Python start and the plug-in's and engine's imports, about 2 CPU-s a run). pytester drops,
    after each in-process run and at the test's end, every module imported since it began: the
    generated test files, but also the engine's modules, SciPy and ONNX Runtime as the run first
    imports them. Imported again later in the worker, they are second copies (SQLAlchemy's
    compiled parts then break: 'InternalTraversal' object is not callable; a registry's classes
    stop matching). With this fixture only the generated files go (pytester writes them under
    the session's temporary directory). Ask for it before `pytester` (`usefixtures`, or an
    earlier argument): pytester takes its first snapshot when it is made."""
    from _pytest import pytester as pytester_module

    generated = str(tmp_path_factory.getbasetemp())

    def dropped(name: str) -> bool:
        return str(getattr(sys.modules.get(name), "__file__", None) or "").startswith(generated)

    class Snapshot(pytester_module.SysModulesSnapshot):
        def __init__(self, preserve: Any = None) -> None:
            super().__init__(preserve=lambda name: not dropped(name))

    monkeypatch.setattr(pytester_module, "SysModulesSnapshot", Snapshot)
