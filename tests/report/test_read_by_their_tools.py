"""The files memgauge writes, read by the tools users hand them to: Markdown by markdown-it-py
with GitHub's tables (as GitHub renders a pull-request summary), LaTeX by pylatexenc's parser,
CSV, JSON lines and Parquet by pandas and pyarrow. Names, ids and texts hold every character
that means something to one of them; each tool must read back the values memgauge printed
(test_hostile_exports.py checks the escaping helpers themselves)."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from tests.helpers import cli_output, last_json

from memgauge.report.escape import md_text

markdown_it = pytest.importorskip("markdown_it")
latexwalker = pytest.importorskip("pylatexenc.latexwalker")
latex2text = pytest.importorskip("pylatexenc.latex2text")
pd = pytest.importorskip("pandas")
pq = pytest.importorskip("pyarrow.parquet")

#: a name holding what Markdown, HTML, LaTeX, CSV and TSV each read as syntax
HOSTILE = 'a|b_c%d&e<script>x</script>"g,h\ni\tj \u00e9 \U0001f600 $#{~^}\\'
SUBJECTS = (f"mem|one_{HOSTILE}", "two%&<i>")
TASK = f"task|{HOSTILE}"
#: ids a reader would take for numbers, and ids holding a separator, a quote or a newline
IDS = ("007", "1e5", "x|y", "<b>z</b>", 'id,"q"\nnl')
LONG = "long " * 300
#: the paired t-test: the tables' layout without 10,000 random sign flips
FAST = ["--test", "student"]
SUBJECTS_DIR = Path(__file__).resolve().parents[1] / "data" / "subjects"


def _shown(text: str) -> str:
    """A name as a one-line table cell shows it: every run of white space one space."""
    return " ".join(text.split())


def _hostile_runs(root: Path) -> tuple[str, list[str], dict[str, Any]]:
    """Two runs of a suite whose subject, task and category names and item ids are hostile
    (the reference memory, so both runs score alike): the store, the run ids and the second
    run's `--json` summary."""
    items = [
        {
            "id": item_id,
            "input": f"code {n} {HOSTILE}",
            "expected": f"C{n}" if n % 2 else f"{HOSTILE}\n{LONG}",
            "category": f"cat{n % 2} {HOSTILE}",
        }
        for n, item_id in enumerate(IDS)
    ]
    memories = [{"id": f"m{n}", "text": f"code {n} C{n} {HOSTILE}"} for n in range(len(IDS))]
    for name, rows in (("items", items), ("memories", memories)):
        (root / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    suite = {
        "name": f"suite {HOSTILE}",
        "subjects": {name: {"reference": {"mode": "lexical"}} for name in SUBJECTS},
        "tasks": [
            {
                "name": TASK,
                "kind": "expected-output",
                "dataset": "items.jsonl",
                "memories": "memories.jsonl",
                "k": 1,
                "evaluators": ["exact", "icontains"],
            }
        ],
    }
    (root / "suite.yaml").write_text(yaml.safe_dump(suite))
    db = str(root / "r.db")
    runs = [last_json(cli_output(["run", str(root / "suite.yaml"), "--store", db, "--json"]))]
    runs.append(last_json(cli_output(["run", str(root / "suite.yaml"), "--store", db, "--json"])))
    return db, [r["run_id"] for r in runs], runs[-1]


# --- Markdown -------------------------------------------------------------------------------


def _inline_text(token: Any) -> str:
    """What an inline token shows as text; a raw HTML, link or image token fails."""
    out = []
    for child in token.children or []:
        assert not child.type.startswith("html"), child.content
        assert child.type not in ("link_open", "image"), child.attrs
        if child.type in ("text", "code_inline"):
            out.append(child.content)
        elif child.type in ("softbreak", "hardbreak"):
            out.append("\n")
    return "".join(out)


def _md_tables(md: str) -> list[list[list[str]]]:
    """Every table as GitHub renders `md` (GFM tables, raw HTML allowed as GitHub allows
    it): rows of cell texts, each row as wide as the header; no raw HTML anywhere."""
    parser = markdown_it.MarkdownIt("commonmark", {"html": True}).enable("table")
    tables: list[list[list[str]]] = []
    row: list[str] | None = None
    for token in parser.parse(md):
        assert not token.type.startswith("html"), token.content
        if token.type == "table_open":
            tables.append([])
        elif token.type == "tr_open":
            row = []
            tables[-1].append(row)
        elif token.type == "tr_close":
            row = None
        elif token.type == "inline":
            text = _inline_text(token)
            if row is not None:
                row.append(text)
    for table in tables:
        assert {len(r) for r in table} == {len(table[0])}, table
    # a line that starts a row of a table but is no row of one would be a broken table
    rows = sum(len(t) for t in tables)
    assert rows == sum(1 for line in md.splitlines() if line.startswith("| ")), md
    return tables


def test_markdown_reports_render_as_github_renders_them(tmp_path: Path) -> None:
    db, (first, second), summary = _hostile_runs(tmp_path)
    report = tmp_path / "run.md"
    cli_output(["report", second, "--out", str(report), "--store", db])
    gate = tmp_path / "gate.md"
    cli_output(["gate", second, "--store", db, "--markdown", str(gate), "--no-learn"])
    docs = {
        "report": report.read_text(encoding="utf-8"),
        "gate": gate.read_text(encoding="utf-8"),
        "compare runs": cli_output(
            ["runs", "compare", first, second, *FAST, "--store", db, "--format", "markdown"]
        ),
        "compare subjects": cli_output(
            ["runs", "compare", second, *FAST, "--store", db, "--format", "markdown"]
        ),
    }
    tables = {name: _md_tables(md) for name, md in docs.items()}

    # the report's results table: a column per subject, a row per measure, the JSON's values
    (results, *_) = tables["report"]
    assert results[0] == ["task", "measure", *(_shown(s) for s in SUBJECTS)]
    for m in summary["measures"]:
        (row,) = [r for r in results[1:] if r[:2] == [_shown(m["task"]), m["name"]]]
        cell = row[2 + SUBJECTS.index(m["subject"])]
        want = f"{m['value']:.3f} [{m['ci_low']:.3f}, {m['ci_high']:.3f}] (n={m['n_scored']})"
        assert cell == want
    # the gate's table: a row per deciding measure, its subject and task whole in their cells
    (checks,) = tables["gate"]
    assert checks[0][:3] == ["subject", "task", "measure"]
    assert {tuple(r[:3]) for r in checks[1:]} == {
        (_shown(m["subject"]), _shown(m["task"]), m["name"]) for m in summary["measures"]
    }
    # the tables of means: a column per system and measure, the JSON's means to 4 places
    means = {(m["subject"], m["name"]): m["value"] for m in summary["measures"]}
    (by_run,) = tables["compare runs"]
    assert by_run[0][2:] == [f"{_shown(s)} / {_shown(t)} / {e}" for (s, e) in means for t in [TASK]]
    assert [r[1] for r in by_run[1:]] == [first, second]
    for r in by_run[1:]:
        assert [float(c) for c in r[2:]] == [round(v, 4) for v in means.values()]
    (by_subject,) = tables["compare subjects"]
    assert [r[1] for r in by_subject[1:]] == [_shown(s) for s in SUBJECTS]
    for name, r in zip(SUBJECTS, by_subject[1:], strict=True):
        assert [float(c) for c in r[2:]] == [
            round(means[name, e], 4) for e in ("exact", "icontains")
        ]


# --- LaTeX ----------------------------------------------------------------------------------


def _latex_cells(tex: str) -> list[list[str]]:
    """The rows of the tabular in `tex` as pylatexenc parses them: split at each `&` and `\\\\`
    that LaTeX itself would split at, each cell turned back into its text."""
    walker = latexwalker.LatexWalker(tex, tolerant_parsing=False)
    nodes, _, _ = walker.get_latex_nodes()
    (tabular,) = [
        n
        for env in nodes
        if env.isNodeType(latexwalker.LatexEnvironmentNode)
        for n in env.nodelist
        if n.isNodeType(latexwalker.LatexEnvironmentNode) and n.environmentname == "tabular"
    ]
    # what the escapes print (pylatexenc's table lacks these text-mode symbols)
    macros = [
        latex2text.MacroTextSpec(name, text)
        for name, text in (
            ("textbar", "|"),
            ("textless", "<"),
            ("textgreater", ">"),
            ("textasciicircum", "^"),
            ("textasciitilde", "~"),
            ("textbackslash", "\\"),
            ("hphantom", ""),
            ("toprule", ""),
            ("midrule", ""),
            ("bottomrule", ""),
        )
    ]
    db = latex2text.get_default_latex_context_db().filter_context(exclude_categories=())
    db.add_context_category("memgauge", macros=macros, prepend=True)
    to_text = latex2text.LatexNodes2Text(latex_context=db, math_mode="verbatim")
    rows: list[list[str]] = [[]]
    cell: list[Any] = []
    for node in tabular.nodelist[1:]:  # after the column spec
        if node.isNodeType(latexwalker.LatexSpecialsNode) and node.specials_chars == "&":
            rows[-1].append(to_text.nodelist_to_text(cell).strip())
            cell = []
        elif node.isNodeType(latexwalker.LatexMacroNode) and node.macroname == "\\":
            rows[-1].append(to_text.nodelist_to_text(cell).strip())
            rows.append([])
            cell = []
        else:
            cell.append(node)
    return [r for r in rows if any(r)]


def test_latex_tables_read_back_each_name_and_mean(tmp_path: Path) -> None:
    db, (first, second), summary = _hostile_runs(tmp_path)
    args = ["runs", "compare", first, second, *FAST, "--store", db, "--format", "latex"]
    tex = cli_output(args)
    header, *body = _latex_cells(tex)
    means = {(m["subject"], m["name"]): m["value"] for m in summary["measures"]}
    assert header == ["", "System", *(f"{_shown(s)} / {_shown(TASK)} / {e}" for s, e in means)]
    assert [r[1] for r in body] == [first, second]
    for row in body:
        assert [float(c) for c in row[2:]] == [round(v, 4) for v in means.values()]


def test_metrics_tables_keep_run_names_whole(tmp_path: Path) -> None:
    """`metrics` names a system by its run file: in Markdown and LaTeX the name is one cell,
    the same text, and the means are those of `--json`."""
    (tmp_path / "qrels.txt").write_text("007 0 m0 2\n1e5 0 m1 2\nq|2 0 m2 2\n")
    runs = [tmp_path / "run_a|b%&_x.txt", tmp_path / "run{2}$#~^<i>.txt"]
    runs[0].write_text("007 Q0 m0 1 2.0 t\n007 Q0 m1 2 1.0 t\n1e5 Q0 m1 1 3 t\nq|2 Q0 m0 1 3 t\n")
    runs[1].write_text("007 Q0 m1 1 2.0 t\n1e5 Q0 m1 1 3 t\nq|2 Q0 m2 1 3 t\n")
    args = ["metrics", str(tmp_path / "qrels.txt"), *map(str, runs), *FAST]
    args += ["-m", "nDCG@10", "-m", "recall_any@5"]
    doc = json.loads(cli_output([*args, "--json"]))
    names = doc["systems"]
    assert names == [r.name for r in runs]
    (table,) = _md_tables(cli_output([*args, "--format", "markdown"]))
    header, *body = _latex_cells(cli_output([*args, "--format", "latex"]))
    assert table[0] == header == ["", "System", "nDCG@10", "recall_any@5"]
    for rows in (table[1:], body):
        assert [r[1] for r in rows] == names
        for name, row in zip(names, rows, strict=True):
            want = [round(doc["means"][m][name], 4) for m in ("nDCG@10", "recall_any@5")]
            assert [float(c.strip("*")) for c in row[2:]] == want


def test_a_mean_of_nothing_is_n_a_with_its_count_in_every_table(tmp_path: Path) -> None:
    """A system with no scored query for a measure (every query without a relevant document,
    skipped): n/a with the count, 0 scored, in the terminal's, Markdown's and LaTeX's table
    alike, as `--json` has it; never a bare n/a, never 0."""
    (tmp_path / "qrels.txt").write_text("1 0 d1 0\n2 0 d2 0\n")
    runs = [tmp_path / "a.txt", tmp_path / "b.txt"]
    for run in runs:
        run.write_text("1 Q0 d1 1 2.0 t\n2 Q0 d2 1 1.0 t\n")
    args = ["metrics", str(tmp_path / "qrels.txt"), *map(str, runs), *FAST, "-m", "P@1"]
    args += ["--no-relevant", "skip"]
    doc = json.loads(cli_output([*args, "--json"]))
    assert doc["means"]["P@1"] == {"a.txt": None, "b.txt": None}
    assert doc["n_scored"]["P@1"] == {"a.txt": 0, "b.txt": 0}
    (table,) = _md_tables(cli_output([*args, "--format", "markdown"]))
    _, *body = _latex_cells(cli_output([*args, "--format", "latex"]))
    for rows in (table[1:], body):
        assert [r[2] for r in rows] == ["n/a (0 scored)"] * 2
    assert cli_output(args).count("n/a (0 scored)") == 2


# --- CSV, JSON lines, Parquet ---------------------------------------------------------------


#: ids a reader takes for numbers, ids holding a separator, a quote or a newline, and one a
#: spreadsheet would run as a formula
EXPORT_IDS = ["007", "1e5", "0x1F", "12", *IDS[2:], "@alice"]


def _failing_run(root: Path) -> tuple[str, str]:
    """A run of an agent that fails every other item (ids a reader takes for numbers, texts
    with quotes, separators and newlines): its store and id."""
    items = [
        {"id": item_id, "input": f"q {n} {'boom' if n % 2 else ''} {HOSTILE}", "expected": f"A{n}"}
        for n, item_id in enumerate(EXPORT_IDS)
    ]
    agent = {
        "target": "lookup_agents:LookupAgent",
        "kwargs": {"answers": {"q 0": "A0", "q 2": f"wrong\n{HOSTILE}"}, "fail_on": ["boom"]},
    }
    spec = {
        "name": "fails",
        "max_failure_rate": 1.0,
        "subjects": {"agent|x": {"python": agent}},
        "tasks": [
            {"name": "qa", "kind": "expected-output", "items": items, "evaluators": ["exact"]}
        ],
    }
    (root / "suite.yaml").write_text(yaml.safe_dump(spec))
    db = str(root / "r.db")
    return db, last_json(cli_output(["run", str(root / "suite.yaml"), "--store", db, "--json"]))[
        "run_id"
    ]


def test_the_gate_comment_gives_a_measure_of_nothing_its_count(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A subject that failed every item has no score: the pull-request comment's cell is n/a
    with its count, as `--json` has it (`n_scored` 0), never a bare n/a."""
    monkeypatch.syspath_prepend(str(SUBJECTS_DIR))
    items = [{"id": f"i{n}", "input": f"q {n} boom", "expected": f"A{n}"} for n in range(3)]
    agent = {"target": "lookup_agents:LookupAgent", "kwargs": {"fail_on": ["boom"]}}
    spec = {
        "name": "fails",
        "max_failure_rate": 1.0,
        "subjects": {"broken": {"python": agent}},
        "tasks": [
            {"name": "qa", "kind": "expected-output", "items": items, "evaluators": ["exact"]}
        ],
    }
    (tmp_path / "suite.yaml").write_text(yaml.safe_dump(spec))
    db = str(tmp_path / "r.db")
    for _ in range(2):
        cli_output(["run", str(tmp_path / "suite.yaml"), "--store", db])
    md = tmp_path / "gate.md"
    gate = ["gate", str(tmp_path / "suite.yaml"), "--store", db, "--no-learn"]
    doc = last_json(cli_output([*gate, "--json", "--markdown", str(md)]))
    (check,) = doc["metrics"]
    assert (check["current"], check["n_scored"]) == (None, 0)
    (table,) = _md_tables(md.read_text(encoding="utf-8"))
    (row,) = table[1:]
    assert row[table[0].index("current (95% CI)")] == "n/a (0 scored)"


def test_exports_read_by_pandas_and_pyarrow_hold_the_stored_values(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.syspath_prepend(str(SUBJECTS_DIR))
    db, run_id = _failing_run(tmp_path)
    files = {fmt: tmp_path / f"items.{fmt}" for fmt in ("jsonl", "csv", "parquet")}
    for fmt, path in files.items():
        cli_output(["runs", "export", run_id, "--store", db, "--format", fmt, "--out", str(path)])
    stored = [json.loads(line) for line in files["jsonl"].read_text("utf-8").splitlines()]
    # ids are text: the CSV's read as text, the JSON lines' and Parquet's typed so; the CSV,
    # for spreadsheets, writes a formula's first character behind a quote (README)
    csv_text = pd.read_csv(files["csv"], dtype=str, keep_default_na=False)
    csv_typed = pd.read_csv(files["csv"])
    lines = pd.read_json(files["jsonl"], lines=True, dtype={"item_id": str})
    parquet = pq.read_table(files["parquet"]).to_pandas()
    ids = [r["item_id"] for r in stored]
    assert ids == EXPORT_IDS
    for frame in (lines, parquet):
        assert frame["item_id"].tolist() == ids
    for frame in (csv_text, csv_typed):
        assert frame["item_id"].tolist() == [*ids[:-1], "'@alice"]
    # texts with quotes, separators, tabs and newlines come back whole
    assert csv_text["input"].tolist() == parquet["input"].tolist()
    assert [r["input"]["text"] for r in stored] == parquet["input"].tolist()
    assert csv_text["output"].tolist()[2] == f"wrong\n{HOSTILE}"
    # a failed item has no score: empty in the CSV, null in Parquet and JSON, never 0
    for n, rec in enumerate(stored):
        failed = n % 2 == 1
        assert rec["status"] == ("failed" if failed else "completed")
        assert (rec["score"] is None) == failed
        for frame in (csv_typed, parquet):
            for column in ("score", "exact"):
                value = frame[column].tolist()[n]
                if failed:
                    assert value is None or math.isnan(value), (column, n, value)
                else:
                    assert value == rec["score"]
        assert parquet["exact.passed"].tolist()[n] is (None if failed else rec["score"] == 1.0)


#: texts that mean something to Markdown in a table cell, at the start of a line or at the end
#: of a heading
MD_SAMPLES = [HOSTILE, "&copy; &#60; &amp;", "`x|y`", "~~s~~", "*a* **b** _c_", "[x](y) ![i](j)"]
MD_SAMPLES += ["<http://a.b>", "a\\", "#1", "# h", "- a", "+ b", "1. x", "2) y", "> q", "\\`"]
MD_SAMPLES += ["<!-- c -->", "][", "---", "--", "===", "+", "support bot #", "v2 ##", "#"]
MD_SAMPLES += ["a # b #"]
MD_SAMPLES += ["-0.5", "+0.000", "1.5", "x#"]
# a name that starts `[LABEL]`: in `- {name}: n/a` a link reference definition, the line gone
MD_SAMPLES += ["[x]", "[x]: y", "[^1]", "[0.1, 0.9] (n=4)"]


def _md_blocks(md: str) -> list[tuple[str, str]]:
    """Each text markdown-it makes of `md`, with the blocks it sits in (`/`-joined, list items
    and paragraphs left out: `bullet_list`, `heading`, `paragraph` for none)."""
    parser = markdown_it.MarkdownIt("commonmark", {"html": True}).enable("table")
    blocks, stack = [], []
    for token in parser.parse(md):
        if token.nesting == 1:
            stack.append(token.type.removesuffix("_open"))
        elif token.nesting == -1:
            stack.pop()
        elif token.type == "inline":
            inside = [t for t in stack if t not in ("list_item", "paragraph")]
            blocks.append(("/".join(inside) or "paragraph", _inline_text(token)))
    return blocks


@pytest.mark.parametrize("text", MD_SAMPLES)
def test_md_text_shows_every_character_it_keeps_wherever_it_goes(text: str) -> None:
    """markdown-it's text of an escaped text is the text itself (white space made one space):
    in a table cell, starting a list item or a line, and ending a heading."""
    shown, escaped = _shown(text), md_text(text)
    (table,) = _md_tables(f"| h |\n|---|\n| {escaped} |\n")
    assert table[1] == [shown]
    assert _md_blocks(f"- {escaped}: n/a\n") == [("bullet_list", f"{shown}: n/a")]
    assert _md_blocks(f"para\n{escaped}\n") == [("paragraph", f"para\n{shown}")]
    assert _md_blocks(f"# Memory audit: {escaped}\n") == [("heading", f"Memory audit: {shown}")]


#: what Markdown, GFM and HTML read as syntax, and whatever else a name may hold
_MD_PIECES = st.one_of(
    st.sampled_from([*"ab #*_-+=`\\|<>[]()!~&;:.09)\t\n>\"'{}^$%@/", "&amp;", "&#42;", "<a>"]),
    st.sampled_from(["http://x.y", "www.x.y", "a@b.co", "<!--", "-->", "![", "](", "[x]", "1."]),
    st.sampled_from(["12345678901.", "\u00a0", "\u3000", "\u2028", "\u200b", "e\u0301"]),
    st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"),
)


@settings(max_examples=150, deadline=None, derandomize=True)
@given(st.lists(_MD_PIECES, min_size=1, max_size=12).map("".join))
def test_md_text_of_any_name_renders_as_the_name(text: str) -> None:
    """The samples above, and any name made of Markdown's syntax (NUL aside: CommonMark shows
    it as U+FFFD; a lone `-` is the tables' placeholder): markdown-it renders the escaped
    text as the text, in a cell, a list item, a paragraph's line and a heading."""
    shown = _shown(text)
    assume(shown and shown != "-")
    test_md_text_shows_every_character_it_keeps_wherever_it_goes(text)


def test_a_name_ending_in_hashes_keeps_them_in_the_report_headings(
    tmp_path: Path, llm_server: Any
) -> None:
    """`summary.md`'s and the audit report's first heading end with the dataset's name, and a
    note starts a line with it: a name ending in ` #` kept its `#` (a heading's closing
    sequence otherwise), one starting with `# ` stays text."""
    name = "# support bot #"
    data = tmp_path / "ds"
    data.mkdir()
    (data / "dataset.yaml").write_text(yaml.safe_dump({"name": name}))
    rows = {
        "memories": [{"id": "m1", "text": "stripe webhooks are idempotent"}],
        "queries": [{"id": "q1", "text": "stripe webhooks", "category": "1. intro"}],
        "judgments": [{"query_id": "q1", "memory_id": "m1", "grade": 2}],
    }
    for file, records in rows.items():
        (data / f"{file}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    out = tmp_path / "out"
    args = ["evaluate", str(data), "-s", "lexical", "--resamples", "100", "--no-store"]
    cli_output([*args, "--quiet", "--out", str(out)])
    summary = _md_blocks((out / "summary.md").read_text(encoding="utf-8"))
    assert summary[0] == ("heading", f"Retrieval evaluation: {name}")
    # the measures' note starts a line with the name: a paragraph still, the name whole
    assert ("paragraph", f"{name}: 1 memory, 1 query, 1 judgment") in [
        (kind, text.split(" · ")[0]) for kind, text in summary
    ]
    # every table as GitHub draws it, the first one's value that of result.json
    result = json.loads((out / "result.json").read_text())
    measures = _md_tables((out / "summary.md").read_text(encoding="utf-8"))[0]
    rr = result["systems"][0]["metrics"]["RR@10"]
    want = f"{rr['value']:.3f} [{rr['ci_low']:.3f}, {rr['ci_high']:.3f}] (n={rr['n_scored']})"
    assert measures[1][measures[0].index("RR@10")] == want

    llm_server.respond(lambda _payload: "I do not know")
    conversation = {
        "id": "c1",
        "turns": [{"role": "user", "content": "I live in Oslo", "timestamp": "2024-01-15"}],
        "facts": [{"id": "f1", "content": "User lives in Oslo", "timestamp": "2024-01-15"}],
    }
    (tmp_path / "audit.json").write_text(json.dumps({"id": name, "conversations": [conversation]}))
    args = ["audit", str(tmp_path / "audit.json"), "--agent", "chat", "--scoring", "offline"]
    cli_output([*args, "--output", str(tmp_path / "audit"), "--store", str(tmp_path / "r.db")])
    report = _md_blocks((tmp_path / "audit" / "report.md").read_text(encoding="utf-8"))
    assert report[0] == ("heading", f"Memory audit: {name}")
