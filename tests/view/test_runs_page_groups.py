"""The runs page: an optimization's candidate runs grouped under their study, the user's own
runs listed as they are, and a filter that lists the candidates under their study (issue 29:
19 candidate runs of one study buried a user's runs)."""

from __future__ import annotations

import re
import shutil
import sqlite3
from collections.abc import Iterator
from contextlib import closing
from html import unescape
from pathlib import Path

import pytest
from starlette.testclient import TestClient
from viewer_store import ViewerStore, snapshot

from memgauge.store.run_pages import RunReader
from memgauge.view.app import create_app
from memgauge.view.runs_list import runs_list


@pytest.fixture(scope="module")
def client(viewer_store: ViewerStore) -> Iterator[TestClient]:
    with TestClient(create_app(viewer_store.path)) as c:
        yield c


def _rows(client: TestClient, store: ViewerStore, url: str) -> tuple[str, list[dict[str, str]]]:
    """The page, and each row of its runs table: its class, study and run ids and text."""
    before = snapshot(store.path)
    r = client.get(url)
    assert r.status_code == 200, r.text[:2000]
    assert snapshot(store.path) == before
    html = r.text
    body = html.split('<table id="runs">', 1)[1].split("</table>", 1)[0].split("<tbody>", 1)[1]
    rows = []
    for attrs, inner in re.findall(r"<tr([^>]*)>(.*?)</tr>", body, re.S):
        rows.append(
            {
                "class": (re.findall(r'class="([^"]*)"', attrs) or [""])[0],
                "study": unescape((re.findall(r'data-study="([^"]*)"', attrs) or [""])[0]),
                "run": (re.findall(r'class="run-link" href="/runs/([^"]+)"', inner) or [""])[0],
                "text": unescape(re.sub(r"<[^>]+>", "", inner)),
            }
        )
    return html, rows


def _candidates(store: ViewerStore) -> dict[str, set[str]]:
    with RunReader(store.path) as r:
        return {
            sid: set(r.study_run_ids(sid))
            for sid in (store.hostile_optimization, store.optimization)
        }


def _own(store: ViewerStore) -> set[str]:
    return {
        *store.judged,
        store.retrieval,
        store.audit,
        store.extraction,
        store.operations,
        store.hostile,
    }


def test_candidate_runs_are_grouped_under_their_study_and_hidden(
    client: TestClient, viewer_store: ViewerStore
) -> None:
    studies = _candidates(viewer_store)
    assert [len(v) for v in studies.values()] == [5, 6]
    html, rows = _rows(client, viewer_store, "/")
    # the studies ran last (the hostile run is dated 2000): each is one row, newest first,
    # then the user's own runs, every one of them
    assert [(r["class"], r["study"]) for r in rows[:2]] == [
        ("study-group", viewer_store.hostile_optimization),
        ("study-group", viewer_store.optimization),
    ]
    assert {r["run"] for r in rows[2:]} == _own(viewer_store)
    assert all(r["class"] == "" for r in rows[2:])
    for row, (sid, runs) in zip(rows, studies.items(), strict=False):
        assert f"{len(runs)} candidate runs" in row["text"]
        assert f'href="/optimizations/{sid}"' in html
    for run_id in set().union(*studies.values()):
        assert f"/runs/{run_id}" not in html
    note = unescape(html.split('id="candidates-note">', 1)[1].split("</p>", 1)[0])
    assert "its 11 candidate runs are grouped under their study" in note
    assert 'href="/?candidates=show">show them</a>' in note


def test_the_filter_lists_each_study_s_candidate_runs_under_it(
    client: TestClient, viewer_store: ViewerStore
) -> None:
    studies = _candidates(viewer_store)
    html, rows = _rows(client, viewer_store, "/?candidates=show")
    assert '<option value="show" selected>' in html
    assert 'href="/">hide them</a>' in html
    # a group row, then its candidates (and only its), then the next group
    groups = [i for i, r in enumerate(rows) if r["class"] == "study-group"]
    assert [rows[i]["study"] for i in groups] == list(studies)
    for i, (sid, runs) in zip(groups, studies.items(), strict=True):
        block = rows[i + 1 : i + 1 + len(runs)]
        assert {r["run"] for r in block} == runs
        assert {(r["class"], r["study"]) for r in block} == {("candidate", sid)}
    own = [r for r in rows if r["class"] == ""]
    assert {r["run"] for r in own} == _own(viewer_store)
    assert len(rows) == len(studies) + sum(map(len, studies.values())) + len(own)


def test_the_other_filters_apply_to_studies_too(
    client: TestClient, viewer_store: ViewerStore
) -> None:
    _, rows = _rows(client, viewer_store, "/?suite=judged&candidates=show")
    assert {r["run"] for r in rows} == set(viewer_store.judged)
    # a candidate run's kind is `optimize`: that kind is the studies alone
    _, rows = _rows(client, viewer_store, "/?kind=optimize")
    assert [r["class"] for r in rows] == ["study-group", "study-group"]
    _, rows = _rows(client, viewer_store, "/?candidates=nonsense")  # the default: hidden
    assert "candidate" not in {r["class"] for r in rows}


def test_the_reader_tells_candidate_runs_by_their_study(viewer_store: ViewerStore) -> None:
    studies = _candidates(viewer_store)
    with RunReader(viewer_store.path) as r:
        every = r.runs_overview()
        own = r.runs_overview(candidates=False)
        groups = r.study_groups()
        assert r.study_groups(kind="suite") == []
    assert {x["run_id"] for x in own} == _own(viewer_store)
    assert {x["study_id"] for x in own} == {None}
    for sid, runs in studies.items():
        assert {x["run_id"] for x in every if x["study_id"] == sid} == runs
    assert [(g["study_id"], g["n_runs"], g["n_live"], g["n_failed"]) for g in groups] == [
        (sid, len(runs), 0, 0) for sid, runs in studies.items()
    ]
    newest = {sid: max(x["created_at"] for x in every if x["study_id"] == sid) for sid in studies}
    assert {g["study_id"]: g["created_at"] for g in groups} == newest
    assert {g["suite"] for g in groups} == {"tune-prompt", "tune-lexical"}


def test_a_study_sits_at_its_newest_run_s_place() -> None:
    def run(run_id: str, at: str, study: str | None = None) -> dict[str, object]:
        return {"run_id": run_id, "created_at": at, "study_id": study}

    rows = [
        run("c3", "2026-01-05", "s"),
        run("mine2", "2026-01-04"),
        run("c2", "2026-01-03", "s"),
        run("c1", "2026-01-02", "s"),
        run("mine1", "2026-01-01"),
    ]
    group = {"study_id": "s", "created_at": "2026-01-05", "n_runs": 3}
    hidden = runs_list([r for r in rows if r["study_id"] is None], [group], show=False)
    assert [(e.kind, e.row.get("run_id"), len(e.runs)) for e in hidden] == [
        ("study", None, 0),
        ("run", "mine2", 0),
        ("run", "mine1", 0),
    ]
    shown = runs_list(rows, [group], show=True)
    assert [e.kind for e in shown] == ["study", "run", "run"]
    assert [r["run_id"] for r in shown[0].runs] == ["c3", "c2", "c1"]


def test_a_candidate_whose_owner_is_gone_is_not_going_nor_keeps_the_page_live(
    viewer_store: ViewerStore, tmp_path: Path
) -> None:
    """A study killed mid-candidate (kill -9, a lost machine) left that candidate `running`:
    its row said "(owner gone?)", as runs list judges it, but its study's row counted it as
    going and the runs page refreshed itself every 2 s for ever."""
    db = tmp_path / "v.db"
    shutil.copy(viewer_store.path, db)
    sid = viewer_store.optimization
    with RunReader(db) as r:
        candidate = sorted(r.study_run_ids(sid))[-1]
    with closing(sqlite3.connect(db)) as conn, conn:
        conn.execute(
            "UPDATE suite_runs SET status = 'running', finished_at = NULL, pid = 4242,"
            " host = 'build-box-7', heartbeat_at = '2020-01-01T00:00:00+00:00'"
            " WHERE run_id = ?",
            (candidate,),
        )
    with TestClient(create_app(db)) as client:
        for url in ("/", "/?candidates=show"):
            html = client.get(url).text
            assert 'data-live="1"' not in html, url
            group = html.split(f'data-study="{sid}"', 1)[1].split("</tr>", 1)[0]
            assert "going" not in group, url
        assert "(owner gone?)" in client.get("/?candidates=show").text
