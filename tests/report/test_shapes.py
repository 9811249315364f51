"""Typed results (issue 30 item 2): each shape drawn by its type in every medium (terminal,
Markdown, the HTML of the viewer and the one-file report, JSON), and a run of the write
pipeline's kinds (knowledge-graph triples, embedding pairs) shown through them in `memgauge
report` (Markdown and HTML) and in the viewer."""

from __future__ import annotations

import json
import re
from html import unescape
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from pydantic import TypeAdapter
from rich.console import Console
from starlette.testclient import TestClient

from memgauge.cli.main import main
from memgauge.data.records import AggregateResult
from memgauge.data.shapes import (
    FORM,
    Breakdown,
    Confusion,
    Curve,
    Example,
    Examples,
    Paired,
    PairedRow,
    Series,
    Shape,
    Table,
    cell,
    text,
)
from memgauge.report.fmt import fmt_signed
from memgauge.report.shapes import Section, cell_text, grid, shapes_json, shapes_of
from memgauge.report.shapes_markdown import sections_markdown
from memgauge.report.shapes_terminal import print_sections
from memgauge.view.app import create_app
from memgauge.view.render import environment

DATA = Path(__file__).resolve().parents[1] / "data"

SHAPES: list[Shape] = [
    Table(
        title="Rates",
        note="Wilson CIs",
        columns=["measure", "target", "a"],
        rows=[
            [text("recall"), text(">= 90%"), cell(0.8, [0.7, 0.9], 10, pct=True, met=False)],
            [text("f1"), text(""), cell(None, None, 0, 2)],
        ],
        key="rates",
    ),
    Breakdown(
        title="F1 by category",
        measure="f1",
        by="category",
        subjects=["a", "b"],
        values={"temporal": [cell(0.5, [0.25, 0.75], 4), cell(0.625, None, 4)]},
    ),
    Confusion(
        title="Pairs",
        labels=["similar", "different"],
        counts={"a": [[3, 1], [2, 4]]},
    ),
    Paired(
        title="Paired",
        baseline="a",
        correction="Holm across measures",
        rows=[
            PairedRow(
                candidate="b",
                measure="nDCG@10",
                a=0.5,
                b=0.75,
                delta=0.25,
                ci=(0.125, 0.375),
                p=0.0004,
                p_adjusted=0.0125,
                n=12,
                mark="*",
            )
        ],
    ),
    Curve(
        title="Precision at k",
        x="k",
        y="P",
        series=[Series(name="a", points=[(1, 0.75), (5, 0.5)])],
    ),
    Examples(
        title="Failed items",
        items=[Example(id="q7", subject="a", text="invented: the sky is green", ok=False)],
    ),
]

#: what each shape must show, in every medium
SHOWN = {
    "Rates": ["80.0% [70.0%, 90.0%] (n=10)", "n/a (0 scored, 2 failed)", ">= 90%", "Wilson CIs"],
    "F1 by category": ["temporal", "0.500 [0.250, 0.750] (n=4)", "0.625 (n=4)"],
    "Pairs": ["similar", "different", "3", "4"],
    "Paired": ["nDCG@10", "+0.250", "[0.125, 0.375]", "<0.001", "0.013", "against a"],
    "Precision at k": ["0.750", "0.500", "P: a"],
    "Failed items": ["q7", "invented: the sky is green", "failed"],
}


def test_a_cell_says_its_value_ci_count_or_why_it_is_n_a() -> None:
    assert cell_text(cell(0.8123, [0.7, 0.9], 10)) == "0.812 [0.700, 0.900] (n=10)"
    assert cell_text(cell(0.5, [None, None], 3, pct=True)) == "50.0% (n=3)"
    assert cell_text(cell(None, None, 0, 2)) == "n/a (0 scored, 2 failed)"
    # a value over the items that were scored says how many failed, as an n/a does (it said
    # `(n=2)` for an audit's recall over 2 of 7 probes, the 5 whose judge call failed unsaid)
    assert (
        cell_text(cell(0.0, [0.0, 0.658], 2, 5, pct=True)) == "0.0% [0.0%, 65.8%] (n=2, 5 failed)"
    )
    assert cell_text(cell(None)) == "n/a"
    assert cell_text(text("x")) == "x"


def test_a_difference_that_rounds_to_zero_has_no_minus_sign() -> None:
    # `-0.000` reads as a loss where there is none; every signed difference is written by
    # fmt_signed (the paired table, runs compare, ab, shadow, the optimizer, the viewer)
    assert [fmt_signed(v) for v in (-0.0004, -0.0, 0.0, 0.0004)] == ["+0.000"] * 4
    assert [fmt_signed(-0.0006), fmt_signed(0.25), fmt_signed(-1e-7, 4)] == [
        "-0.001",
        "+0.250",
        "+0.0000",
    ]
    assert fmt_signed(None) == "n/a"
    row = PairedRow(candidate="b", measure="RR", a=0.5, b=0.4999, delta=-1e-4, n=3)
    shown = [cell_text(c) for c in grid(Paired(title="P", baseline="a", rows=[row])).rows[0]]
    assert shown[4] == "+0.000"


def _section() -> Section:
    return Section("toy", "t1", "Toy", SHAPES)


def test_each_shape_in_markdown() -> None:
    md = sections_markdown([_section()])
    assert "## Toy (task t1)" in md
    for title, shown in SHOWN.items():
        part = md.split(f"### {title}\n", 1)[1].split("\n### ", 1)[0]
        for s in shown:
            assert s in unescape(part), (title, s)  # `>` is written `&gt;`: untrusted text
    assert "| recall | &gt;= 90% | 80.0% [70.0%, 90.0%] (n=10) (NOT met) |" in md


def test_each_shape_on_the_terminal() -> None:
    out = Console(width=250, record=True)
    print_sections(out, [_section()])
    printed = " ".join(out.export_text().split())  # a title wraps to a narrow table's width
    for title, shown in SHOWN.items():
        part = printed.split(f"t1 · Toy: {title}", 1)[1].split("t1 · Toy:", 1)[0]
        for s in shown:
            assert s in part, (title, s)


def test_a_terminal_80_columns_wide_cuts_no_cell() -> None:
    """The value columns that do not fit go to a table below, which repeats the leading
    text columns (the row's name, its target)."""
    subjects = [f"subject-{i}" for i in range(5)]
    table = Table(
        title="Wide",
        columns=["measure", "target", *subjects],
        rows=[[text("recall"), text(">= 90%"), *(cell(0.8, [0.7, 0.9], 10) for _ in subjects)]],
    )
    out = Console(width=80, record=True)
    print_sections(out, [Section("toy", "t1", "Toy", [table])])
    printed = out.export_text()
    assert "…" not in printed
    assert max(len(line) for line in printed.splitlines()) <= 80
    assert "t1 · Toy: Wide (continued)" in printed
    assert all(f" {s} " in printed for s in subjects)
    rows = [line for line in printed.splitlines() if line.startswith("│ recall")]
    assert len(rows) >= 2
    assert all(row.count("0.800 [0.700, 0.900] (n=10)") >= 1 for row in rows)


def test_each_shape_in_html() -> None:
    page = SimpleNamespace(sections=[_section()])
    html = environment().get_template("_shapes.html").render(p=page)
    assert '<section class="aggregate" id="toy-t1"><h2>Toy</h2>' in html
    assert '<table class="shape" id="rates">' in html
    for title, shown in SHOWN.items():
        part = html.split(f"<h3>{title}</h3>", 1)[1].split("<h3>", 1)[0]
        for s in shown:
            assert s in unescape(part), (title, s)
    assert '<td class="num bad">80.0% [70.0%, 90.0%] (n=10)</td>' in html
    assert "<svg" in html.split("<h3>Precision at k</h3>", 1)[1]  # a curve is drawn
    assert "<svg" in html.split("<h3>Rates</h3>", 1)[1].split("<h3>", 1)[0]  # values with CIs


def test_each_shape_in_json_round_trips_with_its_type() -> None:
    dumped = shapes_json(SHAPES)
    assert [d["type"] for d in dumped] == [
        "table",
        "breakdown",
        "confusion",
        "paired",
        "curve",
        "examples",
    ]
    back = TypeAdapter(list[Shape]).validate_json(json.dumps(dumped))
    assert back == SHAPES


def test_a_result_is_stored_with_its_form_and_read_back_by_it() -> None:
    new = AggregateResult(aggregate="audit", task="t", shapes=SHAPES[:1])
    assert new.form == FORM
    again = AggregateResult.model_validate_json(new.model_dump_json())
    assert (again.form, again.shapes) == (FORM, SHAPES[:1])
    # one written before shapes: form 1, drawn by its aggregate from the detail it kept
    detail = {
        "subjects": {
            "agent": {
                "counts": {
                    "recall_accuracy": {
                        "value": 0.75,
                        "ci95": [0.5, 0.9],
                        "n_scored": 4,
                        "n_failed": 1,
                    }
                },
                "probes": [],
            }
        }
    }
    old = AggregateResult.model_validate({"aggregate": "audit", "task": "t", "detail": detail})
    assert old.form == 1
    [table] = shapes_of(old)
    assert isinstance(table, Table)
    assert table.rows[0][0].text == "Recall accuracy"
    assert cell_text(table.rows[0][1]) == "75.0% [50.0%, 90.0%] (n=4, 1 failed)"


# --- a run of the knowledge-graph and embedding kinds -----------------------------------------


@pytest.fixture(scope="module")
def write_kinds(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """The kg and embedding tasks of the golden pin, stored: (store, run id)."""
    tmp = tmp_path_factory.mktemp("kinds")
    pairs = [
        json.loads(line) for line in (DATA / "embeddings" / "pairs.jsonl").read_text().splitlines()
    ]
    texts = sorted({p[s] for p in pairs for s in ("a", "b")})
    rng = np.random.default_rng(3)
    vectors = tmp / "v.jsonl"
    vectors.write_text(
        "".join(
            json.dumps({"text": t, "vector": rng.normal(size=16).tolist()}) + "\n" for t in texts
        )
    )
    suite = {
        "name": "write-kinds",
        "max_failure_rate": 0.5,
        "subjects": {
            "writer": {"recorded": {"path": str(DATA / "graph" / "outputs.jsonl")}},
            "vectors": {"stored-vectors": {"path": str(vectors)}},
        },
        "tasks": [
            {
                "name": "kg",
                "kind": "expected-output",
                "subjects": ["writer"],
                "dataset": str(DATA / "graph" / "items.jsonl"),
                "evaluators": ["kg-triples"],
                "aggregates": ["kg"],
            },
            {
                "name": "vectors",
                "kind": "embedding",
                "subjects": ["vectors"],
                "dataset": str(DATA / "embeddings" / "pairs.jsonl"),
                "evaluators": ["embedding-pair"],
                "aggregates": [{"embedding": {"k": 1}}],
            },
        ],
    }
    path = tmp / "suite.json"
    path.write_text(json.dumps(suite))
    store = tmp / "r.db"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("MEMGAUGE_MINILM", "numpy")
        assert main(["run", str(path), "--store", str(store), "--no-progress"]) in (0, 1)
    from memgauge.store.suite_runs import SuiteRunStore

    with SuiteRunStore(store) as s:
        [listed] = s.list_runs()
    return store, str(listed["run_id"])


def _measure(store: Path, run_id: str, task: str, name: str) -> float:
    from memgauge.store.suite_runs import SuiteRunStore

    with SuiteRunStore(store) as s:
        run = s.get_run(run_id)
    assert run is not None
    assert run.summary is not None
    m = next(m for m in run.summary.measures() if (m.task, m.name) == (task, name))
    assert m.value is not None
    return m.value


def _checks(doc: str, store: Path, run_id: str) -> None:
    f1 = _measure(store, run_id, "kg", "triples.f1")
    auc = _measure(store, run_id, "vectors", "auc")
    assert "Knowledge graph" in doc
    assert "Triples, entities and relations" in doc
    assert re.search(rf"triples f1 \(micro\)\W+{f1:.3f} \[", doc), doc
    assert "Embedding quality" in doc
    assert re.search(rf"auc\W+{auc:.3f} \(n=6\)", doc)
    assert "Known pairs in the system space" in doc
    assert "prose" in doc  # the item whose triples could not be read, listed as failed


def test_kg_and_embedding_sections_in_memgauge_report(
    write_kinds: tuple[Path, str], tmp_path: Path
) -> None:
    store, run_id = write_kinds
    md, html = tmp_path / "r.md", tmp_path / "r.html"
    assert main(["report", run_id, "--store", str(store), "--out", str(md)]) == 0
    assert main(["report", run_id, "--store", str(store), "--out", str(html)]) == 0
    text_md = md.read_text()
    assert "## Knowledge graph (task kg)" in text_md
    assert "## Embedding (task vectors)" in text_md
    _checks(text_md, store, run_id)
    page = html.read_text()
    assert '<section class="aggregate" id="kg-kg"><h2>Knowledge graph</h2>' in page
    assert '<section class="aggregate" id="embedding-vectors"><h2>Embedding</h2>' in page
    _checks(unescape(re.sub(r"<[^>]+>", " ", page)), store, run_id)


def test_kg_and_embedding_sections_in_the_viewer(write_kinds: tuple[Path, str]) -> None:
    store, run_id = write_kinds
    with TestClient(create_app(store)) as client:
        r = client.get(f"/runs/{run_id}")
    assert r.status_code == 200
    assert '<section class="aggregate" id="kg-kg"><h2>Knowledge graph</h2>' in r.text
    _checks(unescape(re.sub(r"<[^>]+>", " ", r.text)), store, run_id)


def test_kg_and_embedding_sections_in_runs_show(
    write_kinds: tuple[Path, str], capsys: pytest.CaptureFixture[str]
) -> None:
    store, run_id = write_kinds
    capsys.readouterr()
    assert main(["runs", "show", run_id, "--store", str(store)]) == 0
    shown = " ".join(capsys.readouterr().out.split())
    assert "kg · Knowledge graph: Triples, entities and relations" in shown
    assert "vectors · Embedding: Embedding quality" in shown
    _checks(shown, store, run_id)


def test_the_terminal_shows_the_first_examples_of_a_long_list() -> None:
    items = [Example(id=f"p{i}", text=f"probe {i}", ok=i % 2 == 0) for i in range(45)]
    shown = [Section("audit", "t", "Audit", [Examples(title="Probes", items=items)])]
    out = Console(width=200, record=True)
    print_sections(out, shown)
    printed = out.export_text()
    assert "p19" in printed
    assert "p20" not in printed
    assert "25 more in the report files and the viewer" in printed
    assert "p44" in sections_markdown(shown)


def test_a_systems_notes_read_as_sentences_one_after_another() -> None:
    # the note quoting a failed search's error ended where the error did, and the next note
    # ran on: "... got SearchResult 22 queries were not asked: ..."
    from memgauge.aggregates.ir_shapes import ir_shapes

    notes = [
        "2 searches failed and are not scored; the first: expected a list, got SearchResult",
        "22 queries were not asked: the run stopped this subject.",
    ]
    system = {"name": "mine", "status": "ok", "notes": notes, "counts": {"n_judged": 24}}
    (accounting,) = [s for s in ir_shapes({"systems": [system]}) if s.title == "Accounting"]
    assert isinstance(accounting, Table)
    assert accounting.rows[0][0].note == (
        "2 searches failed and are not scored; the first: expected a list, got SearchResult. "
        "22 queries were not asked: the run stopped this subject."
    )
