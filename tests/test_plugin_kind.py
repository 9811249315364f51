"""A kind of evaluation from outside: a real distribution (a package and its `.dist-info`, as pip
leaves them) declares a task kind, a subject and an aggregate through entry points, and a suite
of that kind is validated, run, stored, resumed after kill -9, gated, shown by `runs show`, in
the HTML report and in the viewer, without a line of memgauge changed.

The kind (`sums`) makes its own items from its `options:` (no dataset), asks its own method of
a subject (`add(a, b)`), and names its default aggregate; it uses only the `TaskKind` protocol
and the planned-item types, not memgauge's base classes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from starlette.testclient import TestClient
from tests.helpers import finished, run_memgauge

import memgauge
from memgauge.aggregates import AGGREGATES
from memgauge.api import read_run
from memgauge.runs.kinds import KINDS
from memgauge.runs.suite import suite_json_schema
from memgauge.subjects.registry import SUBJECTS
from memgauge.view.app import create_app

PLUGIN = '''
"""mg_kind: a task kind from outside memgauge."""

import random
import time
from dataclasses import dataclass
from typing import ClassVar

from pydantic import BaseModel, ConfigDict, Field

from memgauge.data.records import AggregateResult, MeasureValue
from memgauge.runs.kinds.base import PlannedItem


class SumsOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")
    count: int = Field(ge=1, le=1000, description="How many sums to ask.")
    seed: int = Field(default=0, ge=0, description="Seed of the numbers.")


class SumsKind:
    """Sums of two numbers, made from the task's options and asked with add(a, b)."""

    name: ClassVar[str] = "sums"
    description: ClassVar[str] = "sums of two numbers, asked with add(a, b)"
    default_k: ClassVar[int] = 1
    fields: ClassVar[frozenset[str]] = frozenset()
    options: ClassVar[type[BaseModel]] = SumsOptions

    def reads(self, task):
        return None

    def problems(self, task):
        if task.dataset is not None:
            return [("dataset", "a sums task makes its own items; leave dataset: out")]
        return []

    def default_aggregates(self, task):
        return ["sum-accuracy"]

    def plan(self, planning):
        opts = SumsOptions.model_validate(planning.task.options or {})
        rng = random.Random(opts.seed)
        items = []
        for i in range(opts.count):
            a, b = rng.randint(0, 99), rng.randint(0, 99)
            items.append(PlannedItem(id=f"s{i:03d}", input={"a": a, "b": b}, expected=str(a + b)))
        return planning.planned(items)

    def ask(self, subject, answers, task, item):
        t0 = time.perf_counter()
        out = subject.add(item.input["a"], item.input["b"])
        return str(out), {"total": (time.perf_counter() - t0) * 1000}, {}

    def found_nothing(self, row):
        return None


class Adder:
    """Adds; every `wrong_every`-th sum is off by one (0: never).

    Args:
        wrong_every: how often it is wrong.
        delay: seconds each sum takes.
    """

    def __init__(self, wrong_every: int = 0, delay: float = 0.0) -> None:
        self.wrong_every = wrong_every
        self.delay = delay

    def add(self, a, b):
        time.sleep(self.delay)
        wrong = self.wrong_every and (a * 7 + b) % self.wrong_every == 0
        return a + b + (1 if wrong else 0)


@dataclass(frozen=True)
class SumAccuracy:
    """The share of sums a subject got right."""

    name: ClassVar[str] = "sum-accuracy"

    def measure_names(self, task):
        return ["sum_accuracy"]

    def targets(self, task):
        return []

    def compute(self, task, items):
        measures = []
        for subject in task.subjects:
            rows = [it for it in items.get(subject, ()) if it.status == "completed"]
            right = [it.output == it.expected for it in rows]
            measures.append(
                MeasureValue(
                    subject=subject,
                    task=task.name,
                    name="sum_accuracy",
                    value=sum(right) / len(right) if right else None,
                    n_scored=len(right),
                    source=self.name,
                )
            )
        return AggregateResult(aggregate=self.name, task=task.name, measures=measures)
'''

ENTRY_POINTS = """
[memgauge.kinds]
sums = mg_kind:SumsKind

[memgauge.subjects]
adder = mg_kind:Adder

[memgauge.aggregates]
sum-accuracy = mg_kind:SumAccuracy
"""

REGISTRIES = (KINDS, SUBJECTS, AGGREGATES)


@pytest.fixture
def site(tmp_path: Path) -> Iterator[Path]:
    """The distribution `mg-kind` 0.1 written into a site directory, on the import path, and
    every registry it adds to read again (as at a fresh start), for the test's duration."""
    site = tmp_path / "site"
    (site / "mg_kind").mkdir(parents=True)
    (site / "mg_kind" / "__init__.py").write_text(textwrap.dedent(PLUGIN))
    info = site / "mg_kind-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: mg-kind\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(ENTRY_POINTS.lstrip())
    sys.path.insert(0, str(site))
    for registry in REGISTRIES:
        registry.reload()
    try:
        yield site
    finally:
        sys.path.remove(str(site))
        sys.modules.pop("mg_kind", None)
        for registry in REGISTRIES:
            registry.reload()


def _suite(where: Path, *, count: int, wrong_every: int = 0, delay: float = 0.0) -> Path:
    suite = {
        "name": "sums-suite",
        "concurrency": 2,
        "subjects": {"adder": {"adder": {"wrong_every": wrong_every, "delay": delay}}},
        "tasks": [
            {
                "name": "sums",
                "kind": "sums",
                "options": {"count": count, "seed": 7},
                "evaluators": ["exact"],
            }
        ],
    }
    path = where / f"sums-{count}-{wrong_every}.yaml"
    path.write_text(yaml.safe_dump(suite, sort_keys=False))
    return path


def _run(path: Path, db: Path, *more: str) -> dict[str, object]:
    proc = run_memgauge("run", str(path), "--store", str(db), "--json", "--no-progress", *more)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    doc: dict[str, object] = json.loads(proc.stdout.strip().splitlines()[-1])
    return doc


def test_a_plugin_kind_is_validated_and_in_the_schema(site: Path, tmp_path: Path) -> None:
    schema = suite_json_schema()
    task = schema["$defs"]["TaskSpec"]
    assert "sums" in task["properties"]["kind"]["enum"]
    (rule,) = [r for r in task["allOf"] if r["if"]["properties"]["kind"]["const"] == "sums"]
    assert set(rule["then"]["properties"]["options"]["properties"]) == {"count", "seed"}

    good = _suite(tmp_path, count=3)
    assert run_memgauge("validate", str(good)).returncode == 0
    bad = yaml.safe_load(good.read_text())
    bad["tasks"][0]["options"] = {"count": 0, "colour": "red"}
    bad["tasks"][0]["dataset"] = "x.jsonl"
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(bad, sort_keys=False))
    proc = run_memgauge("validate", str(path))
    assert proc.returncode == 2
    assert "tasks.0.options: count:" in proc.stderr
    assert "tasks.0.options: colour: unknown key" in proc.stderr
    assert "a sums task makes its own items" in proc.stderr
    assert "Traceback" not in proc.stderr
    unknown = yaml.safe_load(good.read_text())
    unknown["tasks"][0]["kind"] = "sumz"
    path.write_text(yaml.safe_dump(unknown, sort_keys=False))
    proc = run_memgauge("validate", str(path))
    assert proc.returncode == 2
    assert "unknown task kind 'sumz'; did you mean 'sums'?" in proc.stderr


def test_a_plugin_kind_runs_is_stored_gated_and_shown(site: Path, tmp_path: Path) -> None:
    db = tmp_path / "r.db"
    right = _suite(tmp_path, count=20)
    for _ in range(2):
        done = _run(right, db)
    rows = {r["evaluator"]: r for r in done["results"]}  # type: ignore[attr-defined]
    assert rows["exact"]["mean"] == 1.0
    assert rows["exact"]["n_scored"] == 20
    record = read_run(str(done["run_id"]), store=db)
    assert record.summary is not None
    assert [t["kind"] for t in record.suite["tasks"]] == ["sums"]
    accuracy = record.summary.aggregate("sum-accuracy")  # the kind's default aggregate
    assert accuracy is not None
    assert [(m.value, m.n_scored) for m in accuracy.measures] == [(1.0, 20)]

    worse = _run(_suite(tmp_path, count=20, wrong_every=3), db)
    run_id = str(worse["run_id"])
    wrong = read_run(run_id, store=db).summary
    assert wrong is not None
    value = wrong.aggregate("sum-accuracy").measures[0].value  # type: ignore[union-attr]
    assert value is not None
    assert value < 0.85
    proc = run_memgauge("gate", run_id, "--store", str(db), "--measure", "sum_accuracy")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "sum_accuracy" in proc.stdout

    shown = run_memgauge("runs", "show", run_id, "--store", str(db))
    assert shown.returncode == 0
    assert "sum_accuracy" in shown.stdout  # the plug-in aggregate's measures, as a table
    assert f"{value:.3f}" in shown.stdout

    report = tmp_path / "report.html"
    assert run_memgauge("report", run_id, "--out", str(report), "--store", str(db)).returncode == 0
    html = report.read_text()
    assert "sum_accuracy" in html
    assert f"{value:.3f}" in html
    with TestClient(create_app(db)) as client:
        page = client.get(f"/runs/{run_id}")
        assert page.status_code == 200
        assert "sum_accuracy" in page.text
        assert f"{value:.3f}" in page.text
        items = client.get(f"/runs/{run_id}/items")
        assert items.status_code == 200
        assert "s000" in items.text


def test_a_plugin_kind_resumes_after_kill_9(site: Path, tmp_path: Path) -> None:
    db = tmp_path / "killed.db"
    path = _suite(tmp_path, count=200, delay=0.01)
    src = str(Path(memgauge.__file__).resolve().parents[1])
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(site), src, os.environ.get("PYTHONPATH", "")]),
    }
    proc = subprocess.Popen(
        [sys.executable, "-m", "memgauge", "run", str(path), "--store", str(db), "--no-progress"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 120
        while finished(db)[1] < 20 and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.communicate()
    run_id, done_before = finished(db)
    assert run_id is not None
    assert 20 <= done_before < 200
    resumed = _run(path, db, "--resume", run_id)
    assert resumed["run_id"] == run_id
    assert resumed["status"] == "completed"
    record = read_run(run_id, store=db)
    assert record.summary is not None
    accuracy = record.summary.aggregate("sum-accuracy")
    assert accuracy is not None
    assert [(m.value, m.n_scored) for m in accuracy.measures] == [(1.0, 200)]
