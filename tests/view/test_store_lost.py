"""The viewer while its PostgreSQL store is gone (a restart of the server, a network cut): each
page and each label posted is a 503 that says so, where it was a bare "Internal Server Error"
(not even the viewer's page) and a traceback in the server's log; once the store is back, the
pages are back."""

from __future__ import annotations

import logging
import re
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient
from viewer_store import one_query_run

from memgauge.view.app import create_app


def test_a_store_gone_is_a_503_saying_so_and_the_pages_come_back(
    pg_server: Any, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    from pgserver import PGServer

    server = PGServer(pg_server.bindir)  # its own server: this test stops it
    try:
        server.start()
        url = server.new_database()
        run, item = one_query_run(url, tmp_path, k=1)
        browser = TestClient(create_app(url, reviewer="alice"), follow_redirects=False)
        page = f"/review/item?run={run}&subject={item.subject}&task={item.task}&item=q1"
        token = re.search(r'name="csrf" value="([0-9a-f]+)"', browser.get(page).text)
        assert token is not None
        server.stop()
        caplog.set_level(logging.WARNING)
        for url_path in ("/", f"/runs/{run}", "/traces", "/ab", "/review"):
            r = browser.get(url_path)
            assert r.status_code == 503, (url_path, r.text[:300])
            assert "Results store unavailable" in r.text
            assert "unreachable" in r.text
            assert "script-src 'self'" in r.headers["content-security-policy"]
        form = {
            "csrf": token.group(1),
            "run": run,
            "subject": item.subject,
            "task": item.task,
            "item": "q1",
            "kind": "hit",
            "target": "a1",
            "grade": "2",
        }
        r = browser.post("/review/label", data=form)
        assert r.status_code == 503
        assert "what you posted was not saved" in r.text
        logged = [rec.getMessage() for rec in caplog.records]
        assert any("GET /traces" in line and "unreachable" in line for line in logged)
        assert not any(rec.exc_info for rec in caplog.records)
        server.start()
        assert browser.get("/").status_code == 200
        assert browser.post("/review/label", data=form).status_code == 303
    finally:
        server.close()
