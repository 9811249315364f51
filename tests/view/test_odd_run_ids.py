"""Run ids holding a space, `/`, `?`, `#` or `%`: the import refuses them now, but a store an
older memgauge imported into may hold one, and `runs show` reads it. Every page that links to
a run put the id into the URL as it is, so `/runs/my run/1 ?#%` opened another run, another
page or none. Each link quotes the id (`render.run_url`), and the viewer reads the id from the
path as it was sent, where a `/` of the id (`%2F`) is not the one before the page."""

from __future__ import annotations

import re
import shutil
import sqlite3
from collections.abc import Iterator
from html import unescape
from pathlib import Path
from urllib.parse import unquote

import pytest
from starlette.testclient import TestClient
from viewer_store import ViewerStore

from memgauge.view.app import create_app

#: what the judged runs and the optimization's runs are renamed to; the first is a prefix of
#: the second, and the third ends in what a page's name looks like
ODD = ["my run/1 ?#%", "my run/1 ?#%/x", "opt/items"]


def _rename(db: Path, old: str, new: str) -> None:
    with sqlite3.connect(db) as conn:
        conn.execute("PRAGMA foreign_keys = OFF")
        tables = [t for (t,) in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        for table in tables:
            for col in (c[1] for c in conn.execute(f"PRAGMA table_info({table})")):
                if col == "run_id" or col.endswith("_run_id") or col == "baseline_id":
                    conn.execute(f"UPDATE {table} SET {col} = ? WHERE {col} = ?", (new, old))
    conn.close()


@pytest.fixture(scope="module")
def odd(
    viewer_store: ViewerStore, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[TestClient, list[str]]]:
    db = tmp_path_factory.mktemp("odd") / "r.db"
    shutil.copy(viewer_store.path, db)
    with sqlite3.connect(db) as conn:
        optimized = [
            r
            for (r,) in conn.execute(
                "SELECT run_id FROM optimization_iterations WHERE study_id = ? ORDER BY step",
                (viewer_store.optimization,),
            )
        ]
    conn.close()
    renamed = dict(zip([*viewer_store.judged, optimized[0]], ODD, strict=True))
    renamed |= {r: f"opt run/{i} ?#%" for i, r in enumerate(optimized[1:])}
    for old, new in renamed.items():
        _rename(db, old, new)
    with sqlite3.connect(db) as conn:  # a run going on: its page reloads itself
        conn.execute("UPDATE suite_runs SET status = 'running' WHERE run_id = 'opt/items'")
    conn.close()
    with TestClient(create_app(db)) as client:
        yield client, list(renamed.values())


def _run_links(html: str) -> list[str]:
    return [unescape(h) for h in re.findall(r'href="(/runs/[^"]*)"', html)]


def _opens(client: TestClient, link: str, ids: list[str]) -> str:
    """The id `link` names, after checking that it opens that run's page."""
    segment = link.removeprefix("/runs/").split("?", 1)[0].split("/", 1)[0]
    run_id = unquote(segment)
    assert run_id in ids, f"{link} names no stored run"
    r = client.get(link)
    assert r.status_code == 200, (link, r.text[:500])
    assert unescape(r.text).count(run_id) >= 1
    return run_id


@pytest.mark.parametrize(
    "page",
    ["/", "/?candidates=show", "/trends?suite=judged", "/optimizations/{study}"],
)
def test_every_run_link_of_a_page_opens_its_run(
    odd: tuple[TestClient, list[str]], viewer_store: ViewerStore, page: str
) -> None:
    client, ids = odd
    r = client.get(page.format(study=viewer_store.optimization))
    assert r.status_code == 200
    links = [link for link in _run_links(r.text) if any(i in unquote(link) for i in ids)]
    assert links
    for link in links:
        _opens(client, link, ids)


def test_run_items_item_and_compare_pages_of_an_odd_id(
    odd: tuple[TestClient, list[str]],
) -> None:
    client, ids = odd
    a, b = ids[0], ids[1]
    html = client.get("/").text
    run_b = next(h for h in _run_links(html) if unquote(h) == f"/runs/{b}")
    page = client.get(run_b)
    assert f"run {b}" in unescape(page.text)
    items = next(h for h in _run_links(page.text) if h.split("?")[0].endswith("/items"))
    assert _opens(client, items, ids) == b
    listed = client.get(items).text
    item_links = [h for h in _run_links(listed) if "/item?" in h]
    assert item_links
    for link in item_links:
        assert _opens(client, link, ids) == b
        item_page = client.get(link).text
        for back in _run_links(item_page):
            assert _opens(client, back, ids) == b
    compare = client.get("/compare", params={"a": a, "b": b})
    assert compare.status_code == 200
    named = {_opens(client, h, ids) for h in _run_links(compare.text)}
    assert named == {a, b}
    same = client.get("/compare", params={"a": a, "b": a})
    assert [_opens(client, h, ids) for h in _run_links(same.text)] == [a]


def test_a_page_name_after_an_odd_id_is_still_that_runs_page(
    odd: tuple[TestClient, list[str]],
) -> None:
    """`opt/items` is a run's id, not the items page of a run `opt`."""
    client, _ = odd
    r = client.get("/runs/opt%2Fitems")
    assert r.status_code == 200
    assert "run opt/items" in unescape(r.text)
    items = client.get("/runs/opt%2Fitems/items")
    assert "Items of opt/items" in unescape(items.text)


def test_a_live_run_page_reloads_its_own_url(odd: tuple[TestClient, list[str]]) -> None:
    """A live page polls the URL it was opened at: the path as sent, `%2F` kept."""
    client, _ = odd
    for path in ("/runs/opt%2Fitems", "/runs/opt%2Fitems/items"):
        html = client.get(path).text
        assert f'hx-get="{path}"' in html, path
