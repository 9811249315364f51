"""The docs site says what the code does: the quick start's `python:` and `subprocess:` examples
run as written against the demo dataset, and the contracts page quotes the search contract the
adapters enforce, word for word."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from memgauge import api
from memgauge.data.demo import demo_dataset
from memgauge.subjects.python_import import SEARCH_CONTRACT

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"


def _block(page: str, first_line: str) -> str:
    """The python block of `page` that starts with `first_line` (the file name comment)."""
    text = (DOCS / page).read_text(encoding="utf-8")
    for block in re.findall(r"```python\n(.*?)```", text, re.DOTALL):
        if block.startswith(first_line):
            return str(block)
    raise AssertionError(f"{page} has no python block starting {first_line!r}")


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    where = tmp_path_factory.mktemp("docs") / "dataset"
    api.save_dataset(demo_dataset(), where)
    return where


def _ndcg(report: api.RunReport, system: str) -> float | None:
    values = {(m.subject, m.name): m.value for m in report.summary.measures()}
    return values[(system, "nDCG@10")]


def test_the_quickstart_python_subject_runs(
    dataset: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "mymemory.py").write_text(_block("quickstart.md", "# mymemory.py"))
    monkeypatch.syspath_prepend(str(tmp_path))
    report = api.evaluate(
        dataset, ["python:mymemory:make@mine"], measures=("nDCG@10",), resamples=20, store=False
    )
    assert report.summary.n_failed == 0
    value = _ndcg(report, "mine")
    assert value is not None
    assert value > 0.1  # word overlap finds something on the demo


def test_the_quickstart_subprocess_subject_runs(dataset: Path, tmp_path: Path) -> None:
    script = tmp_path / "my_memory.py"
    script.write_text(_block("quickstart.md", "# my_memory.py"))
    system = f"subprocess:{sys.executable} {script}@child"
    report = api.evaluate(dataset, [system], measures=("nDCG@10",), resamples=20, store=False)
    assert report.summary.n_failed == 0
    value = _ndcg(report, "child")
    assert value is not None
    assert value > 0.1
    # and it speaks the protocol the contracts page documents: one line in, one line out
    out = subprocess.run(
        [sys.executable, str(script)],
        input='{"id": 7, "method": "reset", "params": {}}\n',
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    assert out.stdout == '{"id": 7, "result": null}\n'


def test_the_contracts_page_quotes_the_search_contract() -> None:
    page = " ".join((DOCS / "contracts.md").read_text(encoding="utf-8").split())
    quoted = " ".join(SEARCH_CONTRACT.split())
    assert quoted in page.replace("> ", "")
