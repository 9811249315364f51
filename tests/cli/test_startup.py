"""Start-up cost: `memgauge --help` and the light commands (`metrics`, `validate`, `schema` of a
dataset kind, `runs list`, `sample-size`) load only what their own work needs: no web viewer,
no LLM or embedding stack, no optimizer, and per command no NumPy, SciPy, SQLAlchemy, pydantic
or rich where it does not use them. Asserted on what a fresh interpreter has imported (never on
time: the figures, and the command that measures them, are in BENCHMARKS.md), so the test fails
the day a module-level import drags one of them back in."""

from __future__ import annotations

import importlib
import json
import os
import pkgutil
import subprocess
import sys
import types
from pathlib import Path

import click
import pytest
import yaml

from memgauge.cli.main import _COMMANDS, cli, main

ROOT = Path(__file__).resolve().parents[2]
GOOD = ROOT / "tests" / "data" / "good"

# what start-up must not pay for: each costs tens to hundreds of milliseconds of CPU
HEAVY = ("numpy", "scipy", "aiohttp", "memgauge.llm", "sqlalchemy", "starlette", "httpx")

# what no light command uses: the web viewer and its server, the store's migrations, the
# optimizer, the ONNX and LLM stacks, HTTP clients, the engine, subjects and scorers
NEVER = (
    "starlette",
    "sse_starlette",
    "jinja2",
    "uvicorn",
    "alembic",
    "optuna",
    "onnx",
    "onnxruntime",
    "aiohttp",
    "httpx",
    "scipy",
    "regex",
    "nltk",
    "memgauge.view.render",
    "memgauge.view.app",
    "memgauge.llm",
    "memgauge.embed",
    "memgauge.subjects",
    "memgauge.scorers",
    "memgauge.runs.engine",
    "memgauge.runs.suite",
    "memgauge.optimize",
    "memgauge.aggregates",
)

# run the CLI in-process, then print what it imported as the last line of stdout
_PROBE = (
    "import json, sys\n"
    "from memgauge.cli.main import main\n"
    "code = main(sys.argv[1:])\n"
    "print()\n"
    "print(json.dumps({'code': code, 'modules': sorted(sys.modules)}))\n"
)


def _loaded(modules: set[str], names: tuple[str, ...]) -> list[str]:
    return sorted(m for m in modules for n in names if m == n or m.startswith(n + "."))


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
    heavy = _loaded(loaded, HEAVY)
    assert not heavy, f"`memgauge {' '.join(args)}` imported {heavy[:10]}"


def _run_in_store(tmp: Path) -> str:
    """A store holding one finished suite run (one item, the reference memory, offline)."""
    suite = tmp / "suite.yaml"
    suite.write_text(
        yaml.safe_dump(
            {
                "name": "startup",
                "subjects": {"memory": {"reference": {"mode": "lexical"}}},
                "tasks": [
                    {
                        "name": "t",
                        "kind": "expected-output",
                        "items": [{"id": "q1", "input": "port?", "expected": "8080"}],
                        "evaluators": ["exact"],
                    }
                ],
            }
        )
    )
    store = str(tmp / "r.db")
    assert main(["run", str(suite), "--store", store]) in (0, 1)
    return store


def _trec_files(tmp: Path) -> tuple[str, str]:
    """A qrels file and a 14-line run (the issue's small input)."""
    qrels, run = tmp / "qrels.txt", tmp / "run.txt"
    qrels.write_text("q1 0 m1 2\nq1 0 m2 0\nq1 0 m3 1\nq2 0 m1 3\nq2 0 m4 2\nq3 0 m5 1\n")
    ranked = {"q1": ["m1", "m2", "m3", "m6", "m7"], "q2": ["m4", "m1", "m3", "m8", "m9"]}
    ranked["q3"] = ["m5", "m2", "m1", "m9"]
    run.write_text(
        "".join(
            f"{q} Q0 {d} {r} {10 - r} tag\n"
            for q, docs in ranked.items()
            for r, d in enumerate(docs, 1)
        )
    )
    return str(qrels), str(run)


# command -> (its arguments, what it must not import beyond NEVER): each keeps what its own work
# needs (metrics: NumPy; validate a dataset file: pydantic's models; runs list: SQLAlchemy, the
# records and rich's table; sample-size: NumPy for the t tails)
LIGHT: dict[str, tuple[list[str], tuple[str, ...]]] = {
    "metrics": (
        ["metrics", "QRELS", "RUN"],
        ("sqlalchemy", "pydantic", "yaml", "rich", "memgauge.store", "memgauge.data.models"),
    ),
    "metrics-trec": (
        ["metrics", "QRELS", "RUN", "--conventions", "trec_eval"],
        ("sqlalchemy", "pydantic", "yaml", "rich", "memgauge.store"),
    ),
    "validate-qrels": (
        ["validate", "QRELS"],
        ("numpy", "sqlalchemy", "pydantic", "rich", "memgauge.store", "memgauge.metrics"),
    ),
    "validate-memories": (
        ["validate", str(GOOD / "memories_bom.jsonl")],
        ("numpy", "sqlalchemy", "rich", "memgauge.store", "memgauge.data.importers"),
    ),
    "validate-dataset": (
        ["validate", "DATASET_DIR"],
        ("numpy", "sqlalchemy", "rich", "memgauge.store", "memgauge.data.importers"),
    ),
    "schema-memories": (
        ["schema", "memories"],
        ("numpy", "sqlalchemy", "rich", "memgauge.store", "memgauge.data.importers"),
    ),
    "runs-list": (
        ["runs", "list", "--store", "STORE"],
        ("numpy", "yaml", "memgauge.stats", "memgauge.data.models", "memgauge.report.terminal"),
    ),
    "sample-size": (
        ["sample-size", "--per-group", "15"],
        ("sqlalchemy", "pydantic", "yaml", "rich", "memgauge.store", "memgauge.metrics"),
    ),
}


def test_evaluate_of_one_system_imports_no_scipy_nor_the_tokenizers_package(
    tmp_path: Path,
) -> None:
    """`scipy.stats` costs about 0.75 CPU-seconds to import: a one-system evaluate has no
    paired test to run, and its 95% Wilson intervals need no SciPy at all. It used
    to be imported twice over: preloaded in the background for paired tests that never ran,
    and by every agent-metric interval. The `bpe_openai` package decodes its three
    vocabularies in Python when imported (about 0.5 CPU-seconds): the token counts of the
    cost aggregate need only its Rust extension module."""
    ds = _dataset_dir(tmp_path)
    out = tmp_path / "out"
    loaded = _modules_after(
        "evaluate", str(ds), "-s", "lexical", "--out", str(out), "--quiet", home=tmp_path / "h"
    )
    assert not _loaded(loaded, ("scipy",))
    assert "memgauge.aggregates.ir" in loaded  # it did evaluate
    assert "bpe_openai._bindings" in loaded  # it counted tokens
    assert not {"bpe_openai", "bpe_openai.registry"} & loaded
    # the evaluators it builds, not every one (F1's `regex`, text matching, write-path checks),
    # nor the LLM judges, which only a run pooling with a relevance judge uses
    assert "memgauge.scorers.retrieval" in loaded
    unused = (
        "regex",
        "memgauge.scorers.f1",
        "memgauge.scorers.text",
        "memgauge.scorers.write_path",
        "memgauge.scorers.judges",
        "memgauge.aggregates.pool_judge",
        # the LLM layer's clients, cache front and structured output: a run holds the LLM
        # context and reads its meter, and asks for no client
        "memgauge.llm.config",
        "memgauge.llm.providers",
        "memgauge.llm.scripted",
        "memgauge.llm.structured",
        # the subject kinds over another memory (agents, extractors, their prompt templates),
        # which a run of the reference memory does not build
        "memgauge.subjects.over_memory",
        "memgauge.subjects.agents",
        "memgauge.subjects.extractors",
        "memgauge.subjects.templates",
        # the other aggregates' facts models (ranking, write path, attribution, audit): the
        # report reads a ranking's only where a run has one
        "memgauge.aggregates.facts",
        # the JUnit writer and its XML, for --junit only; the progress bar, which --quiet
        # does not draw; the process pool and multiprocessing, for a sharded run only
        "memgauge.report.junit",
        "xml",
        "rich.progress",
        "multiprocessing",
        "concurrent.futures.process",
    )
    assert not _loaded(loaded, unused)
    assert "memgauge.llm.context" in loaded  # it held the LLM context
    report = json.loads((out / "result.json").read_text())
    assert report["systems"][0]["agent_metrics"]["tier_precision[normal]@5"]["ci_low"] is not None


@pytest.mark.parametrize("name", list(LIGHT))
def test_a_light_command_imports_only_what_it_uses(name: str, tmp_path: Path) -> None:
    """The issue's `memgauge metrics` on a 14-line run loaded the web viewer (Starlette,
    Jinja2), the store and the LLM stack through the helpers every command shares."""
    args, forbidden = LIGHT[name]
    qrels, run = _trec_files(tmp_path)
    given = {"QRELS": qrels, "RUN": run, "DATASET_DIR": str(_dataset_dir(tmp_path))}
    if "STORE" in args:
        given["STORE"] = _run_in_store(tmp_path)
    loaded = _modules_after(*(given.get(a, a) for a in args), home=tmp_path / "home")
    found = _loaded(loaded, NEVER + forbidden)
    assert not found, f"`memgauge {' '.join(args)}` imported {found[:12]}"


def test_help_lists_each_command_with_its_own_summary() -> None:
    """`--help` shows summaries kept beside the command table (so it imports no command): each
    must be the command's own first docstring sentence, as click would show it."""
    for name, (module, attr, summary) in _COMMANDS.items():
        command = cli.get_command(None, name)  # type: ignore[arg-type]
        assert command is not None, f"{name}: {module}.{attr}"
        for limit in (30, 45, 60, 80, 10_000):
            shown = click.Command(name, help=summary).get_short_help_str(limit)
            assert shown == command.get_short_help_str(limit), (name, limit)


@pytest.mark.parametrize(
    "package",
    [
        "memgauge.llm",
        "memgauge.metrics",
        "memgauge.report",
        "memgauge.scorers",
        "memgauge.stats",
        "memgauge.view",
    ],
)
def test_a_lazy_package_exports_exactly_its_names(package: str) -> None:
    """The packages whose names load on first use (so that importing one of their modules
    does not load them all): every public name resolves to what its module defines, even once
    every submodule is imported (a submodule binds its own name in the package: a function
    named like its module must be bound eagerly), and none is missing from `__all__`."""
    module = importlib.import_module(package)
    lazy = set(module._LAZY)
    assert lazy <= set(module.__all__), sorted(lazy - set(module.__all__))
    for info in pkgutil.iter_modules(module.__path__):
        if info.name != "__main__":  # a command (`python -m memgauge.llm`), not a module
            importlib.import_module(f"{package}.{info.name}")
    for name in module.__all__:
        value = getattr(module, name)
        assert not isinstance(value, types.ModuleType), f"{package}.{name} is a module"
        if name in lazy:  # `module` or `module:attribute` (a name under another)
            where, _, original = module._LAZY[name].partition(":")
            assert value is getattr(importlib.import_module(where), original or name), name
