"""What a newcomer reads on a run's page and in its report.html (issue 29 item 6): every
agent-memory metric states its one-line definition, a metric with no data says why it is n/a
(`folder_ils` on data without folders), and a 0-1 measure's trend stays on a 0-1 axis."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from html import unescape
from urllib.parse import urlencode

import pytest
from starlette.testclient import TestClient
from viewer_store import ViewerStore

from memgauge.metrics.agent import AGENT_METRIC_DEFINITIONS, agent_metric_definition
from memgauge.store.run_pages import RunReader
from memgauge.view.app import create_app
from memgauge.view.render import report_from_store

NO_FOLDER = "no memory in the dataset has a folder"


@pytest.fixture(scope="module")
def client(viewer_store: ViewerStore) -> Iterator[TestClient]:
    with TestClient(create_app(viewer_store.path)) as c:
        yield c


def _get(client: TestClient, url: str) -> str:
    r = client.get(url)
    assert r.status_code == 200, r.text[:2000]
    return r.text


def _text(html: str) -> str:
    return unescape(re.sub(r"<[^>]+>", " ", html))


def _agent_rows(html: str) -> dict[str, str]:
    """The agent-memory table's rows: metric name -> the row's text (tags out)."""
    table = html.split("<h3>Agent-memory metrics</h3>", 1)[1].split("</table>", 1)[0]
    rows = {}
    for inner in re.findall(r"<tr>(.*?)</tr>", table.split("<tbody>", 1)[1], re.S):
        name = re.match(r"<th>([^<]+)", inner)
        assert name is not None, inner
        rows[unescape(name.group(1))] = " ".join(_text(inner).split())
    return rows


def _grid_rows(html: str) -> dict[str, str]:
    """The results grid's rows: measure -> the row's text (tags out)."""
    grid = html.split('id="grid"', 1)[1].split("</table>", 1)[0]
    rows = {}
    for inner in re.findall(r"<tr>(.*?)</tr>", grid.split("<tbody>", 1)[1], re.S):
        cells = re.findall(r"<td>(.*?)</td>", inner, re.S)
        measure = re.match(r"[^<]+", cells[1])
        assert measure is not None, inner
        rows[unescape(measure.group(0).strip())] = " ".join(_text(inner).split())
    return rows


def _no_folder_run(store: ViewerStore) -> str:
    """A candidate run of the config study: retrieval on a dataset with no folder at all."""
    with RunReader(store.path) as r:
        return next(iter(r.study_run_ids(store.optimization)))


def test_every_agent_metric_states_its_definition_in_the_viewer_and_report_html(
    client: TestClient, viewer_store: ViewerStore
) -> None:
    ev = viewer_store.path.parent / "ev"
    result = json.loads((ev / "result.json").read_text())
    names = {n for s in result["systems"] for n in s["agent_metrics"]}
    assert len(names) >= 15
    pages = {
        "viewer": _get(client, f"/runs/{viewer_store.retrieval}"),
        "report.html": (ev / "report.html").read_text(),
    }
    for where, html in pages.items():
        rows, grid = _agent_rows(html), _grid_rows(html)
        assert set(rows) == names, where
        for name in names:
            definition = agent_metric_definition(name)
            assert definition is not None, name
            assert definition in rows[name], (where, name)
            assert definition in grid[name], (where, name)  # the run's grid too
        # an IR measure has none of them
        assert not any(d in grid["nDCG@10"] for d in AGENT_METRIC_DEFINITIONS.values())


def test_a_querys_own_agent_metrics_state_their_definitions(
    client: TestClient, viewer_store: ViewerStore
) -> None:
    query = urlencode({"subject": "lexical", "task": "retrieval", "item": "q1"})
    html = _get(client, f"/runs/{viewer_store.retrieval}/item?{query}")
    table = html.split('class="query-agent"', 1)[1].split("</table>", 1)[0]
    rows = re.findall(r"<tr><th>([^<]+)(.*?)</tr>", table, re.S)
    assert len(rows) >= 5
    for name, rest in rows:
        definition = agent_metric_definition(unescape(name))
        assert definition is not None, name
        assert definition in _text(rest)


def test_folder_ils_is_na_with_its_reason_where_no_memory_has_a_folder(
    client: TestClient, viewer_store: ViewerStore
) -> None:
    run_id = _no_folder_run(viewer_store)
    _, report = report_from_store(viewer_store.path, run_id)
    for where, html in (("viewer", _get(client, f"/runs/{run_id}")), ("report", report)):
        row = _agent_rows(html)["folder_ils@5"]
        assert f"n/a (0 scored) {NO_FOLDER}" in row, (where, row)
        assert "0.000" not in row
        assert f"n/a (0 scored) n 0 {NO_FOLDER}" in _grid_rows(html)["folder_ils@5"], where
    # where a memory has a folder it is computed: the tiny bundle's m1 is in `infra`
    row = _agent_rows(_get(client, f"/runs/{viewer_store.retrieval}"))["folder_ils@5"]
    assert "n/a" not in row
    assert NO_FOLDER not in row


def _y_ticks(html: str) -> list[float]:
    return [float(t) for t in re.findall(r'<text [^>]*class="y-tick">([^<]+)</text>', html)]


def test_a_0_1_measure_s_trend_stays_on_a_0_1_axis(
    client: TestClient, viewer_store: ViewerStore
) -> None:
    """One evaluate run with Recall@5 = 1.0 was drawn on an axis from 0.42 to 1.58."""
    with RunReader(viewer_store.path) as r:
        run = r.get_run(viewer_store.retrieval)
    assert run is not None
    for measure in ("nDCG@10", "Recall@5", "importance_weighted_recall@5"):
        key = f"lexical / retrieval / {measure}"
        html = _get(client, "/trends?" + urlencode({"suite": run.suite_name, "measure": key}))
        ticks = _y_ticks(html.split('id="trend-chart"', 1)[1])
        assert len(ticks) == 5, measure
        assert (min(ticks), max(ticks)) == (0.0, 1.0), (measure, ticks)
