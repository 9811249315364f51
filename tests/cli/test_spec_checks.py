"""A misspelt key in a component spec is bad input: exit 2 before anything runs or is stored,
naming the file, line and key (a suite) or the flag (a spec given on the command line)."""

from __future__ import annotations

from pathlib import Path

import pytest

from memgauge.cli.main import main

DATA = Path(__file__).resolve().parents[1] / "data"

SUITE = """\
name: misspelt
subjects:
  mine:
    python:
      target: keyword_memory:KeywordMemory
      ARGS
tasks:
  - name: recall
    kind: retrieval
    dataset: BUNDLE
    evaluators: [{retrieval: nDCG@10}]
"""


def write_suite(path: Path, args: str) -> Path:
    path.write_text(
        SUITE.replace("ARGS", args).replace("BUNDLE", str(DATA / "good" / "bundle.yaml"))
    )
    return path


@pytest.mark.parametrize(
    ("subject", "line", "field", "hint"),
    [
        ("kwarg: {boost_recent: true}", 6, "subjects.mine.python.kwarg", "did you mean 'kwargs'?"),
        # a key the factory's signature does not take
        (
            "kwargs: {boost_recnt: true}",
            6,
            "subjects.mine.python.kwargs.boost_recnt",
            "did you mean 'boost_recent'?",
        ),
    ],
)
def test_a_misspelt_python_subject_key_stops_the_run(
    subject: str,
    line: int,
    field: str,
    hint: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.syspath_prepend(str(DATA / "subjects"))
    suite = write_suite(tmp_path / "suite.yaml", subject)
    db = tmp_path / "r.db"
    assert main(["run", str(suite), "--store", str(db)]) == 2
    err = capsys.readouterr().err
    assert f"{suite}:{line}: {field}: " in err
    assert hint in err
    assert "Traceback" not in err
    assert not db.exists()  # nothing ran, nothing was stored


def test_the_right_keys_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.syspath_prepend(str(DATA / "subjects"))
    suite = write_suite(tmp_path / "suite.yaml", "kwargs: {boost_recent: true}")
    assert main(["run", str(suite), "--store", str(tmp_path / "r.db")]) == 0, capsys.readouterr()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["evaluate", str(DATA / "good" / "bundle.yaml"), "-s", "reference:mdoe=dense"],
            "--system 'reference:mdoe=dense': reference.mdoe: unknown key; did you mean 'mode'?",
        ),
        (
            [
                "extraction",
                str(DATA / "extraction" / "cases.json"),
                "--extractor",
                "{llm: {modle: m}}",
            ],
            "--extractor '{llm: {modle: m}}': llm-extractor.modle: unknown key; did you mean 'model'?",
        ),
        (
            [
                "operations",
                str(DATA / "operations" / "cases.json"),
                "--decider",
                "{python: {target: 'pkg.mod:make', kwarg: {}}}",
            ],
            "python.kwarg: unknown key; did you mean 'kwargs'?",
        ),
        (
            [
                "audit",
                str(DATA / "good" / "conversations.jsonl"),
                "--agent",
                "memory",
                "--model",
                "m",
                "--subject",
                "hybrid:k_rf=10",
            ],
            "--subject 'hybrid:k_rf=10': reference.k_rf: unknown key; did you mean 'k_rrf'?",
        ),
    ],
    ids=["evaluate", "extraction", "operations", "audit"],
)
def test_a_misspelt_key_on_the_command_line_names_the_flag(
    args: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "r.db"
    code = main([*args, "--store", str(db)])
    err = capsys.readouterr().err
    assert code == 2, err
    assert message in err
    assert "Traceback" not in err
    assert not db.exists()
