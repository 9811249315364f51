"""The viewer between a run and a later one asked `--repeat 2`: the compare page's link to
"all changed items of B" lists the items whose verdicts it counts as changed, not B's repeats
that A was never asked; and a run's page offers to compare it with the runs before it, never
with later ones (those compare with it from their own pages)."""

from __future__ import annotations

import contextlib
import html
import io
import json
import re
from pathlib import Path

import pytest
import yaml
from starlette.testclient import TestClient

from memgauge.cli.main import main
from memgauge.view.app import create_app

SUBJECTS = Path(__file__).resolve().parents[1] / "data" / "subjects"


def _suite(path: Path, expected_q0: str) -> Path:
    suite = {
        "name": "rep",
        "subjects": {
            "steady": {"python": {"target": "repeat_subjects:CoinAgent", "kwargs": {"seed": 7}}}
        },
        "tasks": [
            {
                "name": "t",
                "kind": "expected-output",
                "items": [
                    {"id": i, "input": f"{i} about port", "expected": exp}
                    for i, exp in (("q0", expected_q0), ("q1", "8080"), ("q2", "8080"))
                ],
                "evaluators": ["contains"],
            }
        ],
    }
    path.write_text(yaml.safe_dump(suite))
    return path


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str, str]:
    """The store, run A (each item once) and the later run B (each twice; q0 now fails)."""
    tmp = tmp_path_factory.mktemp("repeat-pages")
    db = str(tmp / "r.db")
    ids = []
    with pytest.MonkeyPatch.context() as mp:
        mp.syspath_prepend(str(SUBJECTS))
        for name, expected, extra in (("a", "8080", []), ("b", "9090", ["--repeat", "2"])):
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                code = main(
                    [
                        "run",
                        str(_suite(tmp / f"{name}.yaml", expected)),
                        "--store",
                        db,
                        "--json",
                        *extra,
                    ]
                )
            assert code == 0, out.getvalue()
            ids.append(json.loads(out.getvalue().strip().splitlines()[-1])["run_id"])
    return db, ids[0], ids[1]


def _listed(page: str) -> list[str]:
    """The items an items page lists (their links' item ids)."""
    return re.findall(r'/item\?subject=steady&amp;task=t&amp;item=([^"&]+)"', page)


def test_all_changed_items_of_b_are_the_items_whose_verdicts_changed(
    runs: tuple[str, str, str],
) -> None:
    db, a, b = runs
    with TestClient(create_app(db)) as client:
        compare = client.get("/compare", params={"a": a, "b": b}).text
        assert "1 verdict(s) differ." in compare
        table = compare[compare.index('id="changed"') :].split("</table>")[0]
        assert _listed(table) == ["q0"]
        link = re.search(r'<a href="([^"]+)">All changed items of B</a>', compare)
        assert link is not None
        linked = client.get(html.unescape(link.group(1))).text
    # B's repeats q0#r1, q1#r1, q2#r1 have no verdict in A to differ from
    assert "1 item(s) match" in linked
    assert _listed(linked) == ["q0"]


def test_a_run_is_offered_for_comparison_only_with_earlier_runs(
    runs: tuple[str, str, str],
) -> None:
    db, a, b = runs
    with TestClient(create_app(db)) as client:
        first, later = client.get(f"/runs/{a}").text, client.get(f"/runs/{b}").text
        items_first = client.get(f"/runs/{a}/items").text
        items_later = client.get(f"/runs/{b}/items").text
    assert b not in first
    assert "No earlier run of rep to compare with: a later run's page compares" in first
    offered = re.search(r'<select name="a">(.*?)</select>', later)
    assert offered is not None
    assert re.findall(r'<option value="([^"]+)">', offered.group(1)) == [a]
    # the items page's baseline runs likewise
    assert b not in items_first
    baselines = re.search(r'<select name="baseline">(.*?)</select>', items_later)
    assert baselines is not None
    assert re.findall(r'<option value="([^"]*)"', baselines.group(1)) == ["", a]
