"""`memgauge view --review` through Starlette's test client over a copy of the viewer tests'
store: the CSRF token (missing, wrong, another session's, right), labels validated (a 400 with
the reason, nothing written), two reviewers' labels both kept and a reviewer's later label
superseding their own, the queue's order and filters, the read-only viewer refusing a POST,
and every text a label or an item carries shown as text."""

from __future__ import annotations

import re
import shutil
import sqlite3
from html import unescape
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest
from starlette.testclient import TestClient
from viewer_store import PAYLOADS, XSS, ViewerStore

from memgauge.cli.main import main
from memgauge.data.records import ItemRecord, ScoreRecord
from memgauge.track.review import verdicts_disagree
from memgauge.view.app import create_app

JUDGED_ITEM = {"subject": "memory", "task": "recall"}


@pytest.fixture
def db(tmp_path: Path, viewer_store: ViewerStore) -> Path:
    """A copy of the session's store: review mode writes labels."""
    copy = tmp_path / "review.db"
    shutil.copy(viewer_store.path, copy)
    return copy


def _client(db: Path, reviewer: str | None) -> TestClient:
    return TestClient(create_app(db, reviewer=reviewer), follow_redirects=False)


def _item_url(run: str, subject: str, task: str, item: str) -> str:
    return "/review/item?" + urlencode({"run": run, "subject": subject, "task": task, "item": item})


def _token(client: TestClient, url: str) -> str:
    r = client.get(url)
    assert r.status_code == 200, r.text[:2000]
    found = re.search(r'name="csrf" value="([0-9a-f]+)"', r.text)
    assert found is not None
    return found.group(1)


def _rows(db: Path) -> list[tuple[Any, ...]]:
    conn = sqlite3.connect(db)
    try:
        return conn.execute(
            "SELECT reviewer, run_id, item_id, kind, target, grade, label, machine, note"
            " FROM review_labels ORDER BY id"
        ).fetchall()
    finally:
        conn.close()


def _verdict(run: str, item: str, action: str, token: str, note: str = "") -> dict[str, str]:
    return {
        "csrf": token,
        "run": run,
        **JUDGED_ITEM,
        "item": item,
        "kind": "verdict",
        "target": "qa-judge",
        "action": action,
        "note": note,
    }


def test_a_post_needs_its_sessions_token(db: Path, viewer_store: ViewerStore) -> None:
    run = viewer_store.judged[0]
    page = _item_url(run, "memory", "recall", "q1")
    alice, other = _client(db, "alice"), _client(db, "alice")
    token = _token(alice, page)
    other_token = _token(other, page)
    assert token != other_token  # one token per session
    for given in ("", "0" * 64, other_token):
        r = alice.post("/review/label", data=_verdict(run, "q1", "confirm", given))
        assert r.status_code == 403, r.text[:500]
        assert "token" in unescape(r.text)
    # no session cookie at all: the right token of another session is still refused
    bare = _client(db, "alice")
    assert bare.post("/review/label", data=_verdict(run, "q1", "confirm", token)).status_code == 403
    assert _rows(db) == []
    r = alice.post("/review/label", data=_verdict(run, "q1", "confirm", token, "looks right"))
    assert r.status_code == 303
    assert r.headers["location"].startswith("/review/item?")
    # q1's memory is found in run 0, so the judge passed it
    assert _rows(db) == [
        ("alice", run, "q1", "verdict", "qa-judge", None, "pass", "pass", "looks right")
    ]


def test_a_token_that_is_not_ascii_is_a_403_not_a_500(db: Path, viewer_store: ViewerStore) -> None:
    """hmac.compare_digest raises TypeError on a str with a non-ASCII character: a hand-made
    or mangled form's token was a 500 (a traceback in the server's log)."""
    run = viewer_store.judged[0]
    alice = _client(db, "alice")
    token = _token(alice, _item_url(run, "memory", "recall", "q1"))
    for given in ("\u00e9", token[:-1] + "\u00e9", "\U0001f600" * 64):
        r = alice.post("/review/label", data=_verdict(run, "q1", "confirm", given))
        assert r.status_code == 403, r.text[:500]
        assert "token does not match" in unescape(r.text)
    assert _rows(db) == []


def test_bad_labels_are_a_400_that_says_why_and_write_nothing(
    db: Path, viewer_store: ViewerStore
) -> None:
    run, retrieval = viewer_store.judged[0], viewer_store.retrieval
    alice = _client(db, "alice")
    token = _token(alice, _item_url(run, "memory", "recall", "q1"))
    hit = {"csrf": token, "run": retrieval, "kind": "hit", "item": "q1"}
    with_subject = _subjects_of(db, retrieval, "q1")
    cases: list[tuple[dict[str, str], str]] = [
        ({**hit, **with_subject, "target": "m1", "grade": "4"}, "grade is 0, 1, 2 or 3"),
        ({**hit, **with_subject, "target": "m1", "grade": "x"}, "grade is 0, 1, 2 or 3"),
        ({**hit, **with_subject, "target": "m1"}, "grade is 0, 1, 2 or 3"),
        ({**hit, **with_subject, "target": "m999", "grade": "2"}, "no hit 'm999'"),
        ({**_verdict(run, "q1", "maybe", token)}, "confirmed or overridden"),
        ({**_verdict(run, "q1", "confirm", token), "kind": "bogus"}, "no bogus"),
        ({**_verdict(run, "q1", "confirm", token), "target": "nope"}, "no verdict 'nope'"),
        ({**_verdict(run, "q1", "confirm", token), "note": "x" * 10001}, "at most 10000"),
        ({**_verdict(run, "q1", "confirm", token), "note": "a\x00b"}, "NUL"),
        ({**_verdict(run, "nope", "confirm", token)}, "no such item"),
        ({**_verdict(run, "q1", "confirm", token), "run": ""}, "names no run"),
    ]
    for form, message in cases:
        r = alice.post("/review/label", data=form)
        assert r.status_code in (400, 404), (form, r.status_code)
        assert message in unescape(r.text), (message, r.text[-800:])
    r = alice.post(
        "/review/label",
        content=b'{"csrf": "x"}',
        headers={"content-type": "application/json"},
    )
    assert r.status_code == 400
    assert _rows(db) == []


def _subjects_of(db: Path, run: str, item: str) -> dict[str, str]:
    conn = sqlite3.connect(db)
    try:
        subject, task = conn.execute(
            "SELECT subject, task FROM suite_run_items WHERE run_id = ? AND item_id = ?",
            (run, item),
        ).fetchone()
    finally:
        conn.close()
    return {"subject": subject, "task": task}


def test_two_reviewers_labels_are_both_kept_and_a_later_one_supersedes_its_own(
    db: Path, viewer_store: ViewerStore
) -> None:
    run = viewer_store.judged[0]
    page = _item_url(run, "memory", "recall", "q1")
    alice, bob = _client(db, "alice"), _client(db, "bob")
    a, b = _token(alice, page), _token(bob, page)
    assert alice.post("/review/label", data=_verdict(run, "q1", "override", a, "no")).is_redirect
    assert bob.post("/review/label", data=_verdict(run, "q1", "confirm", b)).is_redirect
    assert alice.post("/review/label", data=_verdict(run, "q1", "confirm", a, "yes")).is_redirect
    assert [(r[0], r[6], r[8]) for r in _rows(db)] == [
        ("alice", "fail", "no"),
        ("bob", "pass", ""),
        ("alice", "pass", "yes"),
    ]
    html = unescape(alice.get(page).text)
    # what the judge judged is on the page: the question, the answer, the expected one
    assert "What is the code for item 1?" in html
    assert '<pre class="output">The code for item 1 is K1X.</pre>' in html
    given = re.findall(r'class="chip label-given">([^<]*)<', html)
    assert given == ["bob: pass", "alice: pass (yes)"]
    history = html[html.index("<h3>History") :]
    assert history.count("<tr><td>") == 3  # the superseded label stays in the history
    # the review reads no other reviewer's label as its own: bob's page shows the same labels
    assert re.findall(r'class="chip label-given">([^<]*)<', unescape(bob.get(page).text)) == given
    out = _json(["review", "labels", "--store", str(db), "--json"])
    assert [(x["reviewer"], x["label"]) for x in out] == [("bob", "pass"), ("alice", "pass")]
    out = _json(["review", "labels", "--store", str(db), "--json", "--history"])
    assert len(out) == 3


def _json(argv: list[str]) -> list[Any]:
    import contextlib
    import io
    import json

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        assert main(argv) == 0
    return [json.loads(line) for line in buf.getvalue().splitlines() if line.strip()]


def _queue(client: TestClient, **params: str) -> list[str]:
    r = client.get("/review?" + urlencode(params))
    assert r.status_code == 200, r.text[:2000]
    body = r.text[r.text.index("<tbody>") :]
    return [unescape(m) for m in re.findall(r"<tr class=\"(?:todo|done)\"><td>([^<]*)</td>", body)]


def test_the_queue_puts_unreviewed_then_disagreements_first(
    db: Path, viewer_store: ViewerStore
) -> None:
    run = viewer_store.judged[0]
    alice, bob = _client(db, "alice"), _client(db, "bob")
    in_order = [f"q{i}" for i in range(12)]
    assert _queue(alice, run=run) == in_order
    # bob says the judge was wrong on q5: a disagreement, first in alice's queue
    b = _token(bob, _item_url(run, "memory", "recall", "q5"))
    bob.post("/review/label", data=_verdict(run, "q5", "override", b))
    # alice labels q0 (agreeing): it goes to the end of her queue, not of bob's
    a = _token(alice, _item_url(run, "memory", "recall", "q0"))
    alice.post("/review/label", data=_verdict(run, "q0", "confirm", a))
    rest = [q for q in in_order if q not in ("q0", "q5")]
    assert _queue(alice, run=run) == ["q5", *rest, "q0"]
    # bob has labelled q5: his own labelled items go last, the disagreement first among them
    assert _queue(bob, run=run) == [*[q for q in in_order if q != "q5"], "q5"]
    html = alice.get("/review?" + urlencode({"run": run})).text
    assert "12 item(s); 11 not labelled by you." in html
    # every page of the review mode's viewer links the queue
    assert '<a href="/review">Review</a>' in alice.get(f"/runs/{run}").text


def test_the_queue_filters_by_run_subject_task_and_category(
    db: Path, viewer_store: ViewerStore
) -> None:
    alice = _client(db, "alice")
    ops = viewer_store.operations
    every = _queue(alice, run=ops)
    only = _queue(alice, run=ops, category="contradiction")
    assert only == ["contra-1", "contra-2"]
    assert set(only) < set(every)
    conn = sqlite3.connect(db)
    subject, task = conn.execute(
        "SELECT subject, task FROM suite_run_items WHERE run_id = ? LIMIT 1", (ops,)
    ).fetchone()
    n = conn.execute(
        "SELECT COUNT(*) FROM suite_run_items WHERE run_id = ? AND subject = ? AND task = ?",
        (ops, subject, task),
    ).fetchone()[0]
    conn.close()
    assert len(_queue(alice, run=ops, subject=subject, task=task)) == n
    assert _queue(alice, run=ops, subject="no such subject") == []
    # a run prefix works as elsewhere in the viewer (one that keeps some of the id's random
    # part: the session's runs can start within one second); no run: the newest one
    assert _queue(alice, run=ops[:-4]) == every
    assert alice.get("/review?run=nope").status_code == 404


def test_facts_and_operation_decisions_are_labelled_with_the_scorers_view(
    db: Path, viewer_store: ViewerStore
) -> None:
    ext, ops = viewer_store.extraction, viewer_store.operations
    alice = _client(db, "alice")
    where = _subjects_of(db, ext, "conflict")
    page = _item_url(ext, where["subject"], where["task"], "conflict")
    token = _token(alice, page)
    html = unescape(alice.get(page).text)
    assert "Actually, let's charge 35 euros per month instead of 20." in html
    base = {"csrf": token, "run": ext, **where, "item": "conflict"}
    # fact 1 is invented (the scorer counted it a false positive): the reviewer agrees
    assert alice.post(
        "/review/label", data={**base, "kind": "fact", "target": "1", "label": "incorrect"}
    ).is_redirect
    bad = alice.post(
        "/review/label", data={**base, "kind": "fact", "target": "1", "label": "maybe"}
    )
    assert bad.status_code == 400
    assert "correct, incorrect" in unescape(bad.text)
    # the validator's own words, as a sentence: no pydantic "Value error, " before them
    assert "<p>a fact's label is one of correct, incorrect; got 'maybe'</p>" in unescape(bad.text)
    where = _subjects_of(db, ops, "contra-2")
    token = _token(alice, _item_url(ops, where["subject"], where["task"], "contra-2"))
    form = {
        "csrf": token,
        "run": ops,
        **where,
        "item": "contra-2",
        "kind": "operation",
        "target": "",
    }
    bad = alice.post("/review/label", data={**form, "label": "maybe"})
    assert bad.status_code == 400
    assert "<p>an operation's label is one of right, wrong; got 'maybe'</p>" in unescape(bad.text)
    assert alice.post(
        "/review/label", data={**form, "label": "wrong", "note": "should update"}
    ).is_redirect
    assert [r[3:] for r in _rows(db)] == [
        ("fact", "1", None, "incorrect", "incorrect", ""),
        ("operation", "", None, "wrong", "wrong", "should update"),
    ]


def test_the_read_only_viewer_takes_no_post_and_has_no_review_page(
    viewer_store: ViewerStore, unchanged: None
) -> None:
    client = TestClient(create_app(viewer_store.path))
    run = viewer_store.judged[0]
    r = client.post("/review/label", data=_verdict(run, "q1", "confirm", "0" * 64))
    assert r.status_code in (404, 405)
    for url in ("/", f"/runs/{run}", f"/runs/{run}/item?subject=memory&task=recall&item=q1"):
        assert client.post(url, data={"x": "1"}).status_code == 405
    assert client.get("/review").status_code == 404
    assert 'href="/review"' not in client.get("/").text
    assert "memgauge_review" not in client.get("/").headers.get("set-cookie", "")


def test_payloads_in_hits_names_and_notes_are_shown_as_text(
    db: Path, viewer_store: ViewerStore
) -> None:
    run = viewer_store.hostile
    alice = _client(db, f"reviewer {PAYLOADS['script']}")
    queue = alice.get("/review?" + urlencode({"run": run})).text
    conn = sqlite3.connect(db)
    subject, task, item = conn.execute(
        "SELECT subject, task, item_id FROM suite_run_items WHERE run_id = ? LIMIT 1", (run,)
    ).fetchone()
    hit, evaluator = conn.execute(
        "SELECT json_extract(output_json, '$[0].id'), s.evaluator FROM suite_run_outputs o"
        " JOIN suite_run_scores s USING (run_id, subject, task, item_id)"
        " WHERE run_id = ? AND item_id = ?",
        (run, item),
    ).fetchone()
    conn.close()
    page = _item_url(run, subject, task, item)
    token = _token(alice, page)
    base = {"csrf": token, "run": run, "subject": subject, "task": task, "item": item}
    assert alice.post(
        "/review/label", data={**base, "kind": "hit", "target": hit, "grade": "2", "note": XSS}
    ).is_redirect
    assert alice.post(
        "/review/label",
        data={**base, "kind": "verdict", "target": evaluator, "action": "override", "note": XSS},
    ).is_redirect
    html = alice.get(page).text
    for text in (queue, html):
        for payload in PAYLOADS.values():
            assert payload not in text
        assert "<script>window" not in text
        assert "&lt;script&gt;window.__xss=1&lt;/script&gt;" in text
    assert 'onerror="window' not in html
    assert html.count("&lt;script&gt;window.__xss=1&lt;/script&gt;") >= 5


def test_verdicts_that_differ_among_themselves_are_a_disagreement() -> None:
    def item(*passed: bool | None) -> ItemRecord:
        scores = [
            ScoreRecord(evaluator=f"e{i}", value=None, passed=p) for i, p in enumerate(passed)
        ]
        return ItemRecord(subject="s", task="t", item_id="i", scores=scores)

    assert verdicts_disagree(item(True, False))
    assert not verdicts_disagree(item(True, True, None))
    assert not verdicts_disagree(item())


def test_view_binds_localhost_in_review_mode_and_needs_review_for_a_reviewer(
    viewer_store: ViewerStore, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    calls: list[dict[str, Any]] = []

    def serve(store: object, announce: Any, **kw: Any) -> None:
        announce(kw["port"])  # as serve does once the store is accepted and the port bound
        calls.append(kw)

    monkeypatch.setattr("memgauge.cli.view.serve", serve)
    argv = ["view", "--store", str(viewer_store.path)]
    assert main([*argv, "--review", "--reviewer", "alice"]) == 0
    # what serve is given (and no other way to name a reviewer)
    one_name = {"reviewer_header": None, "ask_reviewer": False, "root": ""}
    assert len(calls) == 1
    assert (
        calls[0].items()
        >= {
            "host": "127.0.0.1",
            "port": 8765,
            "reviewer": "alice",
            "watch_states": (),
            **one_name,
        }.items()
    )
    assert "review mode as alice" in capsys.readouterr().out
    assert main([*argv, "--reviewer", "alice"]) == 2
    assert "add --review" in capsys.readouterr().err
    assert main([*argv, "--review", "--reviewer", " "]) == 2
    monkeypatch.setenv("MEMGAUGE_REVIEWER", "carol")
    assert main([*argv, "--review", "--host", "0.0.0.0"]) == 0
    assert (
        calls[-1].items()
        >= {
            "host": "0.0.0.0",
            "port": 8765,
            "reviewer": "carol",
            "watch_states": (),
            **one_name,
        }.items()
    )
    assert "add labels as carol" in capsys.readouterr().err
    assert main(argv) == 0
    assert calls[-1]["reviewer"] is None
    # an empty --host (`--host "$HOST"`, HOST unset) bound every interface behind a warning
    # that read "binding :", and announced http://:8765/ (fuzzC-5)
    n = len(calls)
    for empty in ("", " "):
        assert main([*argv, "--host", empty]) == 2
        assert f"--host {empty!r}: give an interface to bind" in capsys.readouterr().err
    assert len(calls) == n


def test_a_nul_byte_in_a_review_parameter_is_a_400(db: Path, viewer_store: ViewerStore) -> None:
    run = viewer_store.judged[0]
    alice = _client(db, "alice")
    nul = "x\x00y"
    for url in (
        "/review?" + urlencode({"run": nul}),
        "/review?" + urlencode({"run": run, "category": nul}),
        _item_url(run, "memory", "recall", nul),
        _item_url(nul, "memory", "recall", "q1"),
    ):
        r = alice.get(url)
        assert r.status_code == 400, url
        assert "NUL" in r.text
