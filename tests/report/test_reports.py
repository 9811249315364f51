"""Reports rendered from a real (small, lexical) evaluation: escaping, n/a, self-containment."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from memgauge import api
from memgauge.aggregates.retrieval_result import RetrievalEvalResult
from memgauge.data.models import EvalQuery, Judgment, Memory, RetrievalDataset
from memgauge.errors import DataError, UnavailableError
from memgauge.report import read_json, render_markdown, retrieval_result, write_json
from memgauge.subjects.reference import ReferenceMemory
from memgauge.view import render_run_report

HOSTILE = "<script>alert('x')</script> & \"quotes\""


def no_embedder() -> ReferenceMemory:
    raise UnavailableError("dense channel unavailable: no embedder")


@pytest.fixture(scope="module")
def report() -> api.RunReport:
    memories = [
        Memory(id="a", text="tax rounding per line", tier="critical", folder="billing"),
        Memory(id="b", text="stripe webhooks are idempotent", folder="billing"),
        Memory(id=HOSTILE, text="a memory whose id is hostile html", folder="x"),
    ]
    queries = [
        EvalQuery(id="q1", text="tax rounding", category="intent-specific"),
        EvalQuery(id="q2", text=f"webhooks {HOSTILE}", category="multi-concept"),
        EvalQuery(id="q3", text="hostile html", category="cold-start"),
    ]
    judgments = [
        Judgment(query_id="q1", memory_id="a", grade=3),
        Judgment(query_id="q2", memory_id="b", grade=2),
        Judgment(query_id="q3", memory_id=HOSTILE, grade=3),
    ]
    ds = RetrievalDataset(
        name=f"tiny {HOSTILE}", memories=memories, queries=queries, judgments=judgments
    )
    return api.evaluate(
        ds,
        {
            "lexical": ReferenceMemory.in_memory(),
            "dense": {"python": {"target": "test_reports:no_embedder"}},
            "lexical-2": ReferenceMemory.in_memory(),
        },
        measures=("nDCG@10", "RR@10"),
        resamples=200,
        store=False,
    )


@pytest.fixture(scope="module")
def result(report: api.RunReport) -> RetrievalEvalResult:
    return retrieval_result(report.run)


def test_html_is_self_contained_and_escaped(report: api.RunReport) -> None:
    """evaluate's report.html: the run drawn by the viewer's templates, one file."""
    html = render_run_report(report.run, report.items)
    assert "<script>alert" not in html
    assert "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;" in html
    assert "<script" not in html  # a report runs no script at all
    assert "Content-Security-Policy" in html
    # nothing is fetched: no src/href to anything, no @import, no url()
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", html)
    assert "@import" not in html
    assert "url(" not in html
    assert "<svg" in html
    assert "dense" in html
    assert "unavailable" in html


def test_markdown_has_tables_marks_and_accounting(result: RetrievalEvalResult) -> None:
    md = render_markdown(result)
    assert "| system | nDCG@10 | RR@10 |" in md
    assert "| dense | unavailable |" in md
    assert "- dense: unavailable (dense channel unavailable: no embedder)" in md.splitlines()
    assert "## Paired comparisons" in md
    assert "against lexical" in md
    assert "| lexical-2 | nDCG@10 |" in md
    assert "## Agent-memory metrics" in md
    assert "n/a (0 scored)" in md  # no constitutional memory: n/a with its count, never 0
    assert "\\|" not in md.split("## Retrieval measures")[0]  # the header needs no escaping


def test_json_round_trip_and_bad_json(result: RetrievalEvalResult, tmp_path: Path) -> None:
    path = write_json(result, tmp_path / "r.json")
    again = read_json(path)
    assert again == result
    (tmp_path / "bad.json").write_text('{"run_id": 1}')
    with pytest.raises(DataError) as info:
        read_json(tmp_path / "bad.json")
    fields = {p.field for p in info.value.problems}
    assert "run_id" in fields
    assert "created_at" in fields
    (tmp_path / "trunc.json").write_text('{"run_id":')
    with pytest.raises(DataError, match="not a JSON result file"):
        read_json(tmp_path / "trunc.json")
    data = json.loads(path.read_text())
    assert data["systems"][1]["status"] == "unavailable"


def test_every_report_states_the_conventions_it_was_computed_with(tmp_path: Path) -> None:
    """Terminal, Markdown, HTML, result.json and the suite-run table: the evaluation's own
    threshold and gain (here trec_eval's), never the defaults."""
    from io import StringIO

    from rich.console import Console

    from memgauge.report import render_terminal
    from memgauge.report.suite_run import summary_table

    ds = RetrievalDataset(
        name="conventions",
        memories=[Memory(id="a", text="tax rounding per line"), Memory(id="b", text="webhooks")],
        queries=[EvalQuery(id="q1", text="tax rounding")],
        judgments=[Judgment(query_id="q1", memory_id="a", grade=1)],
    )
    run = api.evaluate(
        ds,
        {"lexical": ReferenceMemory.in_memory()},
        measures=("nDCG@10",),
        rel_threshold=1,
        gain="linear",
        resamples=100,
        store=False,
    )
    text = "relevant: grade >= 1, gain: linear, no relevant document: zero"
    result = retrieval_result(run.run)
    buffer = StringIO()
    console = Console(file=buffer, width=200)
    render_terminal(result, console)
    console.print(summary_table(run.summary.model_dump()))
    shown = " ".join(buffer.getvalue().split())  # a title wraps to its table's width
    assert f"bootstrap CIs, {text}" in shown
    assert f"task retrieval / IR measures: {text}" in shown
    assert f"Conventions: {text};" in render_markdown(result)
    html = render_run_report(run.run, run.items)
    escaped = text.replace(">", "&gt;")
    assert f'<span class="conventions">task retrieval / IR measures: {escaped}</span>' in html
    assert (
        f'Retrieval measures</h3><p class="meta">conventions: 2 memories, 1 query, 1 judgment · {escaped}'
        in html
    )
    saved = json.loads(write_json(result, tmp_path / "r.json").read_text())
    assert saved["settings"]["conventions"] == text
    # derived, never trusted from the file: an edited gain prints its own conventions
    saved["settings"]["gain"] = "exp"
    (tmp_path / "edited.json").write_text(json.dumps(saved))
    edited = read_json(tmp_path / "edited.json").settings
    assert edited.conventions == "relevant: grade >= 1, gain: exp, no relevant document: zero"


def test_a_subject_with_no_data_renders_beside_one_with_categories(
    result: RetrievalEvalResult,
) -> None:
    """A subject whose every search failed has no metrics, breakdowns or rows: each view
    shows it (n/a, `-`) beside the others, first or last, and never assumes it has them."""
    from io import StringIO

    from rich.console import Console

    from memgauge.aggregates.retrieval_result import SystemResult
    from memgauge.report import render_terminal

    empty = SystemResult(name="empty", spec={}, status="ok", counts={"n_failed": 3})
    for systems in ([empty, *result.systems], [*result.systems, empty]):
        mixed = result.model_copy(update={"systems": systems})
        buffer = StringIO()
        render_terminal(mixed, Console(file=buffer, width=300))
        shown = buffer.getvalue()
        assert "by category" in shown
        by_category = shown.split("by category", 1)[1]
        row = next(line for line in by_category.splitlines() if "intent-specific" in line)
        assert "│ -" in row  # the empty subject's cell in the lexical subjects' category row
        md = render_markdown(mixed)
        assert "| empty | - | - |" in md
        assert "| empty | n_failed 3 |" in md


def test_at_80_columns_no_cell_is_cut(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`evaluate` on a terminal 80 columns wide: the systems that do not fit beside the others
    go to a table below, which repeats the metric and target columns; nothing is cut."""
    import sys

    from memgauge.cli.main import main
    from memgauge.data.demo import demo_dataset
    from memgauge.data.io import save_retrieval_dataset

    save_retrieval_dataset(demo_dataset(), tmp_path / "demo")
    monkeypatch.setenv("COLUMNS", "80")
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)
    systems = ["lexical", "lexical@second-lexical", "lexical@third-lexical"]
    argv = ["evaluate", str(tmp_path / "demo"), "--out", str(tmp_path / "o"), "--no-progress"]
    assert main([*argv, *(a for s in systems for a in ("-s", s))]) == 0
    out = re.sub(r"\x1b\[[0-9;]*m", "", capsys.readouterr().out)
    lines = out.splitlines()
    assert "…" not in out
    tables = [line for line in lines if line[:1] in "┏┃┡│└"]
    assert max(len(line) for line in tables) <= 80  # prose is soft-wrapped by the terminal
    # every agent-memory metric and target whole, and each system's value beside it
    for name in ("tier_precision[constitutional]@5", "constitutional_surfacing@5"):
        rows = [line for line in lines if f"│ {name} " in line]
        assert len(rows) >= 2  # the metric column is repeated in the table below
        assert all(re.search(r"│ \d\.\d{3} \(n=\d+\) +│$", row) for row in rows)
    headers = " ".join(line for line in lines if line.startswith("┃"))
    assert all(f" {s.split('@')[-1]} " in headers for s in systems)
    assert "Agent-memory metrics (continued)" in out
    assert "│ tier_order_holds@5" in out
    assert re.search(r"│ critical > +│", out)  # the target wraps in its own column


def test_agent_metrics_state_their_definition_and_why_they_are_n_a() -> None:
    """On data without folders folder_ils is n/a with the reason, in the terminal view and in
    summary.md, and every agent-memory metric shown states its one-line definition."""
    from io import StringIO

    from rich.console import Console

    from memgauge.metrics.agent import agent_metric_definition
    from memgauge.report import render_terminal
    from memgauge.report.escape import md_text

    ds = RetrievalDataset(
        name="no folders",
        memories=[Memory(id="a", text="tax rounding per line"), Memory(id="b", text="webhooks")],
        queries=[EvalQuery(id="q1", text="tax rounding"), EvalQuery(id="q2", text="webhooks")],
        judgments=[
            Judgment(query_id="q1", memory_id="a", grade=2),
            Judgment(query_id="q2", memory_id="b", grade=2),
        ],
    )
    run = api.evaluate(
        ds, {"lexical": ReferenceMemory.in_memory()}, measures=("RR@5",), store=False
    )
    result = retrieval_result(run.run)
    buffer = StringIO()
    render_terminal(result, Console(file=buffer, width=300))
    shown = buffer.getvalue()
    md = render_markdown(result)
    assert re.search(r"│ folder_ils@5 +│ +│ n/a \(0 scored\) +│", shown)
    reason = "folder_ils@5 is n/a for lexical: no memory in the dataset has a folder"
    assert reason in shown.splitlines()
    assert "| folder_ils@5 |  | n/a (0 scored) |" in md
    assert f"- {reason}" in md.splitlines()
    names = list(result.systems[0].agent_metrics)
    assert "constitutional_surfacing@5" in names
    for name in names:
        definition = agent_metric_definition(name)
        assert definition
        assert f"{name}: {definition}" in shown.splitlines()
        assert f"- {md_text(f'{name}: {definition}')}" in md.splitlines()


def test_the_shapes_are_drawn_from_the_result_without_its_per_query_records(
    result: RetrievalEvalResult,
) -> None:
    """The terminal tables and summary.md dumped every per-query record (1,536 for LoCoMo,
    33 ms of CPU each time) for shapes that read none of them."""
    from memgauge.aggregates.ir_shapes import ir_shapes

    assert any(s.per_query for s in result.systems)
    whole = result.model_dump(mode="json")
    source = result.shapes_source()
    assert all("per_query" not in s for s in source["systems"])
    for s in whole["systems"]:
        del s["per_query"]
    assert source == whole
    assert ir_shapes(source) == ir_shapes(result.model_dump(mode="json"))
