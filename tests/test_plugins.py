"""A plug-in from outside: a real distribution on sys.path registers an evaluator, an aggregate
and a subject through entry points, and they work in `memgauge run`, `schema` and `validate`
without a change to memgauge.

The distribution is what pip leaves in site-packages: a package and a `.dist-info` directory
with `METADATA` and `entry_points.txt`. A suite run is a subprocess, which discovers the
plug-in at start-up exactly as an installed one would be; the other commands run in-process
with the distribution on the import path and the registries read again, as at a fresh start
(a subprocess costs a Python start and the imports: 0.6-1 CPU-s). One test also shows that
`Registry.reload()` picks up a distribution added after the first use.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from tests.helpers import run_memgauge

import memgauge
from memgauge.api import open_store, read_run

PLUGIN = '''
"""mg_plugin: what a third-party memgauge plug-in looks like."""

from dataclasses import dataclass
from typing import ClassVar

from memgauge.data.records import AggregateResult, MeasureValue
from memgauge.data.shapes import Example, Examples
from memgauge.scorers import Score
from memgauge.subjects.protocol import Answer


@dataclass(frozen=True)
class WordLimit:
    """Passes when the output has at most `max_words` words.

    Attributes:
        max_words: the most words an answer may have.
    """

    max_words: int = 5
    name: ClassVar[str] = "word-limit"

    def evaluate(self, ctx):
        n = len(str(ctx.output or "").split())
        ok = n <= self.max_words
        return Score(value=1.0 if ok else 0.0, passed=ok, reason=f"{n} words")


@dataclass(frozen=True)
class LongestAnswer:
    """The most words any answer of a subject has."""

    name: ClassVar[str] = "longest-answer"
    title: ClassVar[str] = "Longest answer"

    def measure_names(self, task):
        return ["longest_answer"]

    def targets(self, task):
        return []

    def compute(self, task, items):
        measures = []
        for subject in task.subjects:
            rows = items.get(subject, ())
            words = [len(str(it.output or "").split()) for it in rows]
            measures.append(
                MeasureValue(
                    subject=subject,
                    task=task.name,
                    name="longest_answer",
                    value=float(max(words)) if words else None,
                    n_scored=len(words),
                    source=self.name,
                )
            )
        longest = [
            Example(id=max(rows, key=lambda it: len(str(it.output))).item_id, subject=s, text="longest")
            for s, rows in items.items() if rows
        ]
        shapes = [Examples(title="Longest answers", items=longest)]
        return AggregateResult(aggregate=self.name, task=task.name, measures=measures, shapes=shapes)


class ParrotAgent:
    """Answers every question by repeating it after `prefix`.

    Args:
        prefix: what each answer starts with.
    """

    is_memory = False

    def __init__(self, prefix: str = "you asked:") -> None:
        self.prefix = prefix

    def answer(self, question, *, history=None):
        return Answer(f"{self.prefix} {question}")


class WordMemory:
    """A memory that knows nothing of memgauge: search takes no session and returns dicts.

    Args:
        min_word: the shortest query word searched for.
    """

    closed = []  # the instances closed, in order

    def __init__(self, min_word: int = 4) -> None:
        self.min_word = min_word
        self.texts = {}

    def close(self):
        WordMemory.closed.append(self)

    def reset(self):
        self.texts.clear()

    def ingest(self, memories):
        self.texts.update({m.id: m.text for m in memories})

    def search(self, query, k):
        words = [w for w in query.lower().split() if len(w) >= self.min_word]
        found = [i for i, t in self.texts.items() if any(w in t.lower() for w in words)]
        return [{"id": i, "text": self.texts[i]} for i in found[:k]]


class PlainAgent:
    """Answers with plain text, as a plug-in that knows nothing of `Answer` would.

    Args:
        reply: what it answers; `count` answers the question's length, an int.
    """

    is_memory = False

    def __init__(self, reply: str = "port 8080") -> None:
        self.reply = reply

    def answer(self, question, *, history=None):
        return len(question) if self.reply == "count" else self.reply
'''

ENTRY_POINTS = """
[memgauge.evaluators]
word-limit = mg_plugin:WordLimit

[memgauge.aggregates]
longest-answer = mg_plugin:LongestAnswer

[memgauge.subjects]
parrot = mg_plugin:ParrotAgent
plain = mg_plugin:PlainAgent
words = mg_plugin:WordMemory
"""


def install_plugin(site: Path) -> Path:
    """Write the distribution `mg-plugin` 0.1 into `site`, as pip would."""
    (site / "mg_plugin").mkdir(parents=True)
    (site / "mg_plugin" / "__init__.py").write_text(textwrap.dedent(PLUGIN))
    info = site / "mg_plugin-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: mg-plugin\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(ENTRY_POINTS.lstrip())
    return site


SUITE = {
    "name": "plugin-suite",
    "subjects": {"parrot": {"parrot": {"prefix": "you said:", "agent": True}}},
    "tasks": [
        {
            "name": "answers",
            "kind": "expected-output",
            "items": [
                {"id": "short", "input": "hi", "expected": "hi"},
                {"id": "long", "input": "what is the port of the api", "expected": "8080"},
            ],
            "evaluators": [{"word-limit": 4}, {"icontains": {}, "weight": 2}],
            "aggregates": ["longest-answer"],
        }
    ],
}


def memgauge_cmd(
    *args: str, site: Path, home: Path, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    src = str(Path(memgauge.__file__).resolve().parents[1])
    path = os.pathsep.join([str(site), src, os.environ.get("PYTHONPATH", "")])
    env = {**os.environ, "PYTHONPATH": path, "MEMGAUGE_HOME": str(home), "COLUMNS": "200"}
    return subprocess.run(
        [sys.executable, "-m", "memgauge", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=300,
        check=False,
    )


@pytest.fixture
def site(tmp_path: Path) -> Path:
    return install_plugin(tmp_path / "site")


def mg(*args: str) -> subprocess.CompletedProcess[str]:
    """`memgauge ARGS` in-process (tests.helpers.run_memgauge), as wide as memgauge_cmd's."""
    return run_memgauge(*args, env={"COLUMNS": "200"})


@contextlib.contextmanager
def installed_in_process(site: Path) -> Iterator[None]:
    """The plug-in installed for this process, as at a fresh start: on the import path, and
    every registry it adds to read again; all as before afterwards."""
    from memgauge.aggregates import AGGREGATES
    from memgauge.scorers import EVALUATORS
    from memgauge.subjects.registry import SUBJECTS

    registries = (EVALUATORS, AGGREGATES, SUBJECTS)
    sys.path.insert(0, str(site))
    for registry in registries:
        registry.reload()
    try:
        yield
    finally:
        sys.path.remove(str(site))
        sys.modules.pop("mg_plugin", None)
        for registry in registries:
            registry.reload()


@pytest.fixture
def installed(site: Path) -> Iterator[Path]:
    """`site` installed in-process (installed_in_process) for the test's duration."""
    with installed_in_process(site):
        yield site


def test_a_plugin_runs_in_a_suite(site: Path, tmp_path: Path) -> None:
    suite = tmp_path / "suite.yaml"
    suite.write_text(yaml.safe_dump(SUITE, sort_keys=False))
    db = tmp_path / "r.db"
    proc = memgauge_cmd("run", str(suite), "--store", str(db), "--json", site=site, home=tmp_path)
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout.strip().splitlines()[-1])
    rows = {r["evaluator"]: r for r in summary["results"]}
    # the plug-in's evaluator scored the plug-in's subject: "you said: hi" has 3 words (<= 4),
    # "you said: what is the port of the api" 9 (> 4)
    assert rows["word-limit"]["mean"] == pytest.approx(0.5)
    assert rows["word-limit"]["n_scored"] == 2
    assert rows["icontains"]["mean"] == pytest.approx(0.5)  # "hi" is in its answer; 8080 is not
    # the plug-in's aggregate read the stored items: the longest answer has 9 words
    record = read_run(summary["run_id"], store=db)
    longest = record.summary.aggregate("longest-answer")
    assert longest is not None
    assert [(m.subject, m.value, m.n_scored) for m in longest.measures] == [("parrot", 9.0, 2)]
    # and its shapes are its section in the reports, drawn by type like any built-in's
    out = tmp_path / "r.md"
    with installed_in_process(site):
        proc = mg("report", summary["run_id"], "--store", str(db), "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    md = out.read_text()
    assert "## Longest answer (task answers)" in md
    assert "| parrot | long | longest |  |" in md


@pytest.mark.parametrize(
    ("reply", "code", "status", "output"),
    [("port 8080", 0, "completed", "port 8080"), ("count", 4, "failed", None)],
    ids=["str", "int"],
)
def test_a_plugin_subject_answering_plain_values(
    reply: str, code: int, status: str, output: str | None, installed: Path, tmp_path: Path
) -> None:
    suite = json.loads(json.dumps(SUITE))
    suite["subjects"] = {"plain": {"plain": {"reply": reply, "agent": True}}}
    suite["tasks"][0]["aggregates"] = []
    path = tmp_path / "suite.yaml"
    path.write_text(yaml.safe_dump(suite, sort_keys=False))
    db = tmp_path / "r.db"
    proc = mg("run", str(path), "--store", str(db), "--json")
    assert proc.returncode == code, proc.stderr
    assert "Traceback" not in proc.stderr
    run_id = json.loads(proc.stdout.strip().splitlines()[-1])["run_id"]
    with open_store(db) as store:
        items = store.item_records(run_id)
    # a str is the answer; an int is the subject's failure, in words, not an AttributeError
    # (once past max_failure_rate the run stops: an item not yet asked stays queued)
    assert (status, output) in {(it.status, it.output) for it in items}
    assert {it.status for it in items} <= {status, "queued"}
    for failure in (f for it in items for f in it.failures):
        assert (failure.stage, failure.kind) == ("subject", "subject")
        assert re.match(
            r"answer\(\) returned int \((2|27)\); expected text \(str\)", failure.message
        )


def test_a_plugin_memory_is_called_as_the_same_class_given_as_python_would_be(
    installed: Path, tmp_path: Path
) -> None:
    # the quick start's kind of class (search(query, k) returning dicts) as an entry point:
    # it gets the python: adapter, so memgauge neither passes session= nor reads .hits of a list
    suite = {
        "name": "plugin-memory",
        "subjects": {"mine": {"words": {"min_word": 4}}},
        "tasks": [
            {
                "name": "search",
                "kind": "retrieval",
                "dataset": str(Path(__file__).parent / "data" / "good" / "bundle.yaml"),
                "evaluators": [{"retrieval": "Recall@5"}],
            }
        ],
    }
    path = tmp_path / "suite.yaml"
    path.write_text(yaml.safe_dump(suite, sort_keys=False))
    proc = mg("run", str(path), "--store", str(tmp_path / "r.db"), "--json")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (row,) = json.loads(proc.stdout.strip().splitlines()[-1])["results"]
    assert (row["subject"], row["mean"], row["n_failed"]) == ("mine", 1.0, 0)  # "deploys"
    # memgauge built it, so memgauge closed it, adapter or not
    assert len(sys.modules["mg_plugin"].WordMemory.closed) == 1


def test_a_plugin_is_in_the_schema(site: Path, tmp_path: Path) -> None:
    import jsonschema

    with installed_in_process(site):
        proc = mg("schema")
    assert proc.returncode == 0, proc.stderr
    schema = json.loads(proc.stdout)
    defs = schema["$defs"]
    # each component's arguments, with the description its docstring gives
    assert defs["evaluator.word-limit"]["properties"]["max_words"]["description"] == (
        "the most words an answer may have."
    )
    assert defs["subject_kind.parrot"]["properties"]["prefix"]["type"] == "string"
    assert "concurrent" in defs["subject_kind.parrot"]["properties"]  # the run keys too
    assert "aggregate.longest-answer" in defs
    validator = jsonschema.Draft202012Validator(schema)
    assert not list(validator.iter_errors(SUITE))
    misspelt = json.loads(json.dumps(SUITE))
    misspelt["tasks"][0]["evaluators"][0] = {"word-limit": {"max_word": 4}}
    assert list(validator.iter_errors(misspelt))
    # without the plug-in the same suite does not validate: its components are unknown
    bare = json.loads(mg("schema").stdout)
    assert "evaluator.word-limit" not in bare["$defs"]
    assert list(jsonschema.Draft202012Validator(bare).iter_errors(SUITE))


def test_validate_checks_a_plugins_arguments(installed: Path, tmp_path: Path) -> None:
    suite = tmp_path / "suite.yaml"
    suite.write_text(yaml.safe_dump(SUITE, sort_keys=False))
    ok = mg("validate", str(suite))
    assert ok.returncode == 0, ok.stderr
    assert "suite 'plugin-suite'" in ok.stdout
    bad = json.loads(json.dumps(SUITE))
    bad["subjects"]["parrot"]["parrot"]["prefx"] = "x"
    bad["tasks"][0]["evaluators"][0] = {"word-limit": {"max_word": 4}}
    suite.write_text(yaml.safe_dump(bad, sort_keys=False))
    lines = suite.read_text().splitlines()
    proc = mg("validate", str(suite))
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    prefx = next(i for i, line in enumerate(lines, 1) if "prefx" in line)
    max_word = next(i for i, line in enumerate(lines, 1) if "max_word" in line)
    assert (
        f"{suite}:{prefx}: subjects.parrot.parrot.prefx: unknown key; did you mean 'prefix'?"
        in (proc.stderr)
    )
    assert f"{suite}:{max_word}: tasks.0.evaluators.0.word-limit.max_word: unknown key" in (
        proc.stderr
    )


def test_reload_finds_a_distribution_added_later(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memgauge.scorers import EVALUATORS, evaluator_from_spec

    assert "word-limit" not in EVALUATORS.names()
    monkeypatch.syspath_prepend(str(install_plugin(tmp_path / "site")))
    try:
        assert "word-limit" not in EVALUATORS.names()  # what was loaded is kept ...
        EVALUATORS.reload()  # ... until the registry reads its entry points again
        entry = EVALUATORS.get("word-limit")
        assert entry.origin == "mg-plugin"
        assert evaluator_from_spec({"word-limit": 2}).max_words == 2  # type: ignore[attr-defined]
    finally:
        monkeypatch.undo()
        sys.modules.pop("mg_plugin", None)
        EVALUATORS.reload()
    assert "word-limit" not in EVALUATORS.names()
