"""A store written before aggregates kept typed facts (tests/data/stores/main-detail.db: form 2,
each result with its free `detail` dict and its shapes) opens, and every program that reads those
results reads what the version that wrote it read (main-detail.read.json, made by `_reads` below
run on that version: `python tests/store/test_store_before_facts.py DB OUT`)."""

from __future__ import annotations

import contextlib
import io
import json
import shutil
import sys
from pathlib import Path
from typing import Any

from memgauge.cli.main import main
from memgauge.report.fmt import conventions_lines
from memgauge.report.retrieval import retrieval_result
from memgauge.report.shapes import sections, shapes_json
from memgauge.report.shapes_markdown import run_markdown
from memgauge.report.write_path import extraction_report
from memgauge.store.headline import headline, query_rows
from memgauge.store.suite_runs import SuiteRunStore

STORES = Path(__file__).parents[1] / "data" / "stores"


def _cli(args: list[str]) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(args) == 0
    return out.getvalue()


def _reads(db: Path) -> dict[str, Any]:
    """What programs read of each run of `db`: its report's sections and Markdown, its IR
    conventions, its nondeterminism flags, `runs show` (text and JSON), and per kind the file
    its command writes (result.json, extraction.json) and the store's headline and query rows."""
    out: dict[str, Any] = {}
    with SuiteRunStore(db) as store:
        for row in store.list_runs():
            run_id = row["run_id"]
            run = store.get_run(run_id)
            assert run is not None
            assert run.summary is not None
            items = store.item_records(run_id)
            got: dict[str, Any] = {
                "sections": [
                    {"aggregate": s.aggregate, "title": s.title, "shapes": shapes_json(s.shapes)}
                    for s in sections(run.summary)
                ],
                "markdown": run_markdown(run),
                "conventions": conventions_lines(run.summary),
                "nondeterminism": [n.model_dump(mode="json") for n in run.summary.nondeterminism()],
                "show": _cli(["runs", "show", run_id, "--store", str(db)]),
                "show_json": json.loads(
                    _cli(["runs", "show", run_id, "--store", str(db), "--json"])
                ),
            }
            if run.summary.aggregate("ir") is not None:
                got["result"] = retrieval_result(run).model_dump(mode="json")
                got["headline"] = headline(run.summary).model_dump(mode="json")
                got["query_rows"] = {"|".join(k): v for k, v in query_rows(run.summary).items()}
            if run.summary.aggregate("extraction") is not None:
                got["extraction"] = extraction_report(run, items, cases="c", extractor="e")
            out[run_id] = got
    return json.loads(json.dumps(out, sort_keys=True, default=str))


def test_a_store_written_with_detail_reads_as_it_did(tmp_path: Path) -> None:
    db = tmp_path / "old.db"
    shutil.copy(STORES / "main-detail.db", db)
    want = json.loads((STORES / "main-detail.read.json").read_text())
    got = _reads(db)
    assert sorted(got) == sorted(want)
    kinds = {r: sorted(k for k in v if k in {"result", "extraction"}) for r, v in want.items()}
    assert sorted(map(tuple, kinds.values())) == [(), ("extraction",), ("result",)]
    for run_id, reads in want.items():
        for key, value in reads.items():
            assert got[run_id][key] == value, (run_id, key)


if __name__ == "__main__":
    Path(sys.argv[2]).write_text(json.dumps(_reads(Path(sys.argv[1])), sort_keys=True) + "\n")
