"""Exports are safe to open (issue 13, item 10): the CSV export neutralizes formulas and keeps
numbers, and every Markdown report (`summary.md`, the audit's `report.md`, the gate's
pull-request summary) escapes hostile names, queries, memories and answers: no raw HTML, and
no `|` or line break that reshapes a table."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from memgauge.cli.main import main
from memgauge.llm import FakeOpenAIServer
from memgauge.report.escape import _LONE_SURROGATE, csv_cell, encodable, latex_text, md_text

HTML = '<img src=x onerror="alert(1)"><script>alert(2)</script>'
BREAKER = "a | b\nc\r\n| --- |\tz"
MARKUP = "**bold** _it_ [link](http://evil.example) ![img](http://evil.example/i.png) `code`"
FORMULAS = ("=1+1", "+cmd|' /C calc'!A0", "-2+3", "@SUM(A1:A9)", "\tTAB=1", "\rCR=1")


def _unescaped_pipes(line: str) -> int:
    """Pipes a Markdown table parser sees as cell borders (not preceded by a backslash)."""
    n, i = 0, 0
    while i < len(line):
        if line[i] == "\\":
            i += 2
            continue
        n += line[i] == "|"
        i += 1
    return n


def _assert_tables_intact(md: str) -> None:
    """Every row of every table has as many cell borders as its header."""
    lines = md.splitlines()
    for i, line in enumerate(lines):
        if line.startswith(("|---", "|:")):
            width = _unescaped_pipes(lines[i - 1])
            j = i + 1
            while j < len(lines) and lines[j].startswith("|"):
                assert _unescaped_pipes(lines[j]) == width, (lines[i - 1], lines[j])
                j += 1


def _assert_no_raw_html(md: str) -> None:
    for tag in ("<img", "<script", "</script"):
        assert tag not in md.lower()


# --- the helpers ----------------------------------------------------------------------------


def test_md_text_renders_as_itself_on_one_line() -> None:
    out = md_text(f"{HTML} {BREAKER} {MARKUP} back\\slash")
    _assert_no_raw_html(out)
    assert "\n" not in out
    assert "\r" not in out
    assert _unescaped_pipes(out) == 0
    for ch in "*`":
        assert ch not in out.replace("\\" + ch, "")  # every one escaped
    assert "\\_it\\_" in out  # emphasis at a word's edge is escaped...
    assert "](" not in out  # ...and no link or image can be made
    assert "&lt;script&gt;" in out
    assert "back\\\\slash" in out
    # what means nothing stays readable: names, metric ids, confidence intervals
    for plain in ("plain name-1.2", "nDCG@10", "iw_recall_critical@5", "0.612 [0.553, 0.671]"):
        assert md_text(plain) == plain


def test_md_text_writes_no_nul() -> None:
    """A NUL went into Markdown as it was (a file holding one is binary to grep and to a diff):
    it is written as U+FFFD, which CommonMark reads it as; the other characters are kept."""
    assert md_text("a\x00b\x1bc") == "a\ufffdb\x1bc"


def test_latex_text_prints_as_itself_on_one_line() -> None:
    assert latex_text("50% of a_b & {c}") == r"50\% of a\_b \& \{c\}"
    assert latex_text("\\input{/etc/passwd}") == r"\textbackslash{}input\{/etc/passwd\}"
    assert latex_text("$x^2$ #1 ~a") == r"\$x\textasciicircum{}2\$ \#1 \textasciitilde{}a"
    assert latex_text("a<b>|c") == r"a\textless{}b\textgreater{}\textbar{}c"
    # a line break would end a table row's line; \x0c is a form feed, \x00 a NUL
    assert latex_text("two\n\nlines\x0c\x00 end") == "two lines end"


@pytest.mark.parametrize("text", FORMULAS)
def test_csv_cell_neutralizes_formulas(text: str) -> None:
    assert csv_cell(text) == "'" + text


@pytest.mark.parametrize("value", [-0.5, 3, 0.0, None, True, "-0.5", "+1", "1e-3", "ok", ""])
def test_csv_cell_never_touches_numbers_or_plain_text(value: Any) -> None:
    assert csv_cell(value) == value


# --- the CSV export -------------------------------------------------------------------------


def test_csv_export_neutralizes_every_text_cell_and_keeps_numbers(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], recall_suite: Any
) -> None:
    items = [
        {"id": f"i{n}", "input": f"{text} code {n}", "expected": text, "category": text}
        for n, text in enumerate(FORMULAS)
    ]
    memories = [{"id": f"m{n}", "text": f"{text} code {n}"} for n, text in enumerate(FORMULAS)]
    path = recall_suite(
        items, memories, ["exact", "icontains"], name='=HYPERLINK("http://evil.example","open")'
    )
    db = str(tmp_path / "r.db")
    assert main(["run", str(path), "--store", db, "--json"]) == 0
    run_id = json.loads(capsys.readouterr().out.strip().splitlines()[-1])["run_id"]
    assert main(["runs", "export", run_id, "--store", db, "--format", "csv"]) == 0
    rows = list(csv.reader(io.StringIO(capsys.readouterr().out, newline="")))
    header, body = rows[0], rows[1:]
    assert len(body) == len(FORMULAS)
    for row in [header, *body]:
        for cell in row:
            if cell[:1] in ("=", "+", "-", "@", "\t", "\r"):
                float(cell)  # only a plain number may start so
    records = [dict(zip(header, row, strict=True)) for row in body]
    for rec in records:
        n = int(rec["item_id"][1:])
        assert rec["expected"] == "'" + FORMULAS[n]  # the text is kept, behind a quote
        assert rec["input"] == f"'{FORMULAS[n]} code {n}"
        assert rec["category"] == "'" + FORMULAS[n]
        assert rec["output"].startswith("'")
        assert float(rec["icontains"]) in (0.0, 1.0)  # numbers stay numbers
        assert float(rec["score"]) >= 0.0


# --- summary.md -----------------------------------------------------------------------------


def _hostile_dataset(root: Path) -> Path:
    root.mkdir()
    (root / "dataset.yaml").write_text(yaml.safe_dump({"name": f"ds {HTML} {BREAKER}"}))
    memories = [
        {"id": "m1", "text": f"tax rounding per line {HTML}"},
        {"id": "m2", "text": "stripe webhooks are idempotent"},
    ]
    queries = [
        {"id": "q1", "text": "tax rounding", "category": HTML, "intent": BREAKER},
        {"id": "q2", "text": "stripe webhooks", "category": MARKUP, "intent": "x|y"},
    ]
    judgments = [
        {"query_id": "q1", "memory_id": "m1", "grade": 3},
        {"query_id": "q2", "memory_id": "m2", "grade": 2},
    ]
    for name, rows in (("memories", memories), ("queries", queries), ("judgments", judgments)):
        (root / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return root


def test_summary_md_escapes_every_name(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    dataset = _hostile_dataset(tmp_path / "ds")
    out = tmp_path / "out"
    code = main(
        [
            "evaluate",
            str(dataset),
            "-s",
            "lexical@<b>base</b>|one",
            "-s",
            "lexical@two`**|**`",
            "--resamples",
            "100",
            "--out",
            str(out),
            "--no-store",
            "--quiet",
        ]
    )
    assert code == 0, capsys.readouterr()
    md = (out / "summary.md").read_text()
    _assert_no_raw_html(md)
    assert "<b>" not in md
    _assert_tables_intact(md)
    assert "&lt;b&gt;base&lt;/b&gt;\\|one" in md  # the name is there, as text
    assert "## RR@5 by category" in md
    assert "\\*\\*bold\\*\\*" in md
    assert "[link]\\(" in md  # no link is made


# --- the audit's report.md ------------------------------------------------------------------


def test_audit_report_escapes_the_agents_answers(
    llm_server: FakeOpenAIServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    llm_server.respond(lambda _payload: f"{HTML} {BREAKER} {MARKUP}")
    conversation = {
        "id": "c1",
        "turns": [
            {"role": "user", "content": f"My name is {HTML}", "timestamp": "2024-01-15T09:00:00Z"}
        ],
        "facts": [
            {"id": "f|1", "content": f"User's name is {HTML}", "timestamp": "2024-01-15T09:00:00Z"}
        ],
    }
    data = tmp_path / "audit.json"
    data.write_text(json.dumps({"id": f"ds {HTML}", "conversations": [conversation]}))
    code = main(
        [
            "audit",
            str(data),
            "--agent",
            "chat",
            "--scoring",
            "offline",
            "--output",
            str(tmp_path / "out"),
            "--store",
            str(tmp_path / "r.db"),
            "--no-progress",
        ]
    )
    assert code == 0, capsys.readouterr()
    md = (tmp_path / "out" / "report.md").read_text()
    _assert_no_raw_html(md)
    _assert_tables_intact(md)
    assert "&lt;script&gt;alert(2)&lt;/script&gt;" in md


# --- the gate's pull-request summary --------------------------------------------------------


def test_gate_markdown_escapes_names() -> None:
    from memgauge.report.gate import gate_markdown as markdown
    from memgauge.track.gate import GateResult, MetricCheck

    check = MetricCheck(
        subject=f"subject {HTML}",
        task=f"task {BREAKER}",
        evaluator="eval`|`<script>x</script>",
        current=0.5,
        ci=(0.4, 0.6),
        baseline=0.9,
        history=[0.9, 0.9, 0.9],
        drop=0.44,
        threshold=0.15,
        regressed=True,
        within_ci=False,
        note=f"dropped below the baseline {MARKUP}",
    )
    result = GateResult(
        run_id="r1",
        suite=f"suite` {HTML}",
        status="fail",
        n_history=3,
        checks=[check],
        excluded=[f"run {HTML}"],
        warnings=[f"too small {MARKUP} {BREAKER}"],
    )
    md = markdown(result)
    _assert_no_raw_html(md)
    _assert_tables_intact(md)
    assert "Suite suite\\` &lt;img src=x" in md
    assert "eval\\`\\|\\`&lt;script&gt;" in md
    assert "[link](" not in md


@pytest.mark.parametrize(
    "text",
    [
        "",
        "plain ascii",
        "caf\u00e9 \u00b7 \u2026 \U0001f600 \uffff \ud7ff \ue000",
        "lone \ud800 high",
        "lone \udfff low",
        "\ud83d\ude00 a pair of halves, each lone to a str",
        "\udbff" * 3 + "x" + "\udc00",
    ],
)
def test_encodable_shows_each_surrogate_as_the_replacement_character(text: str) -> None:
    """Every code point in U+D800-U+DFFF (and nothing else) becomes U+FFFD, as the pattern's
    substitution gives it; the result encodes as UTF-8."""
    got = encodable(text)
    assert got == _LONE_SURROGATE.sub("\ufffd", text)
    assert got.encode("utf-8").decode("utf-8") == got
    surrogates = [i for i, c in enumerate(text) if "\ud800" <= c <= "\udfff"]
    assert [i for i, c in enumerate(got) if c == "\ufffd"] == surrogates
