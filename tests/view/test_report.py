"""`memgauge report RUN_ID --out FILE.html`: the run page's templates, one file, no script."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from viewer_store import ViewerStore, snapshot

from memgauge.cli.main import main
from memgauge.view.render import inline_css, render, static_bytes


def test_report_writes_one_self_contained_file(
    tmp_path: Path, viewer_store: ViewerStore, capsys: pytest.CaptureFixture[str]
) -> None:
    before = snapshot(viewer_store.path)
    out = tmp_path / "out" / "run.html"
    run_id = viewer_store.judged[1]
    assert main(["report", run_id[:-2], "--out", str(out), "--store", str(viewer_store.path)]) == 0
    assert snapshot(viewer_store.path) == before
    assert run_id in capsys.readouterr().out
    html = out.read_text()
    assert "<script" not in html  # nothing runs in a report
    assert "default-src 'none'" in html  # and nothing may
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", html)
    assert "<style>" in html
    assert "svg.chart" in html
    # the run page's sections, then every item with its judge's reasoning and raw reply
    for part in ('id="grid"', 'id="gate"', 'id="usage"', "Provenance", 'id="items"'):
        assert part in html
    assert "the response lacks k4x" in html
    assert 'id="item-1"' in html
    assert 'href="#item-1"' in html
    # failures come first
    first = re.search(r'href="#item-1">([^<]+)<', html)
    assert first is not None
    assert int(first.group(1)[1:]) % 2 == 0


def test_report_of_an_unknown_run_exits_2(
    tmp_path: Path, viewer_store: ViewerStore, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "r.html"
    assert main(["report", "nope", "--out", str(out), "--store", str(viewer_store.path)]) == 2
    assert "no run 'nope'" in capsys.readouterr().err
    assert not out.exists()


def test_evaluate_writes_its_report_html_with_the_templates(viewer_store: ViewerStore) -> None:
    html = (viewer_store.path.parent / "ev" / "report.html").read_text()
    assert 'id="retrieval-summary"' in html
    assert 'id="grid"' in html
    assert "<script" not in html
    assert 'class="hits"' in html  # every query's ranked hits, relevant ones highlighted


def test_a_report_inlines_its_stylesheet_as_css_not_as_escaped_text(tmp_path: Path) -> None:
    """Issue 27 item 11: `<style>` text is raw (entities are not decoded there), so the
    stylesheet goes in as it is; HTML-escaped, its `"Segoe UI"` voided the body's font rule."""
    out = tmp_path / "ev"
    bundle = Path(__file__).resolve().parents[1] / "data" / "good" / "bundle.yaml"
    assert main(["evaluate", str(bundle), "-s", "lexical", "--out", str(out), "--no-store"]) == 0
    css = static_bytes("style.css").decode()
    assert '"Segoe UI"' in css
    html = (out / "report.html").read_text()
    assert f"<style>{css}</style>" in html
    assert "&#34;" not in html.split("</style>")[0]


def test_nothing_in_a_stylesheet_can_end_its_style_element() -> None:
    hostile = 'a{content:"</style><script>alert(1)</script>"} /* </STYLE> */ b{color:red}'
    inlined = inline_css(hostile)
    assert "</" not in inlined
    assert inlined == hostile.replace("</", "<\\/")  # a CSS string or comment reads the same
    html = render("base.html", standalone=True, css=inlined)
    assert html.count("</style>") == 1
    assert f"<style>{inlined}</style>" in html  # one element, the whole sheet inside it


def test_a_lone_surrogate_in_an_output_is_shown_as_a_replacement_character(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """JSON holds a lone surrogate ("\\ud800") that UTF-8 cannot: the report exited 70 and
    the viewer's item and items pages answered 500 on a run whose subject returned one."""
    from starlette.testclient import TestClient

    from memgauge.view.app import create_app

    (tmp_path / "lone_agent.py").write_text(
        "class Lone:\n    def answer(self, question: str) -> str:\n"
        "        return 'half \\ud800 of a pair'\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    suite = tmp_path / "s.yaml"
    suite.write_text(
        "name: lone\nsubjects:\n  lone: {python: {target: 'lone_agent:Lone'}}\n"
        "tasks:\n  - name: t\n    kind: expected-output\n"
        "    items: [{id: q1, input: 'Which port?', expected: 'pair'}]\n"
        "    evaluators: [contains]\n"
    )
    db = tmp_path / "store.db"
    assert main(["run", str(suite), "--store", str(db)]) == 0
    run_id = re.findall(r"\d{8}-\d{6}-[0-9a-f]{8}", capsys.readouterr().out)[0]
    out = tmp_path / "run.html"
    assert main(["report", run_id, "--out", str(out), "--store", str(db)]) == 0
    assert "half \ufffd of a pair" in out.read_text()
    client = TestClient(create_app(db))
    for page in ("items", "items?q=half", "item?subject=lone&task=t&item=q1"):
        response = client.get(f"/runs/{run_id}/{page}")
        assert response.status_code == 200
        assert "half \ufffd of a pair" in response.text
    # the CSV export wrote the value as it is, which stdout could not encode (exit 70)
    csv_out = tmp_path / "items.csv"
    assert (
        main(
            ["runs", "export", run_id, "--store", str(db), "--format", "csv", "--out", str(csv_out)]
        )
        == 0
    )
    assert "half \ufffd of a pair" in csv_out.read_text(encoding="utf-8")
