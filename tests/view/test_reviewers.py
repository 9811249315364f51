"""Several people reviewing through one `memgauge view --review` server behind a proxy that signs
them in (`--reviewer-header X-Forwarded-User`): each request's labels carry the name the proxy
put in the header, a request without it is refused and writes nothing, and two people labelling
the same thing at the same moment on PostgreSQL both keep their labels."""

from __future__ import annotations

import hmac
import logging
import os
import re
import shutil
import stat
import threading
from html import unescape
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from starlette.testclient import TestClient
from tests.helpers import run_memgauge
from viewer_store import ViewerStore, confirm_form, one_query_run

from memgauge.store.review import ReviewStore, current_labels
from memgauge.view.app import create_app

HEADER = "X-Forwarded-User"


@pytest.fixture
def db(tmp_path: Path, viewer_store: ViewerStore) -> Path:
    copy = tmp_path / "review.db"
    shutil.copy(viewer_store.path, copy)
    return copy


def _person(app: Any, name: str | None) -> TestClient:
    """One person's browser, through a proxy that names them (None: no header at all)."""
    headers = {HEADER: name} if name is not None else {}
    return TestClient(app, headers=headers, follow_redirects=False)


def _token(client: TestClient, url: str) -> str:
    r = client.get(url)
    assert r.status_code == 200, r.text[:1000]
    found = re.search(r'name="csrf" value="([0-9a-f]+)"', r.text)
    assert found is not None
    return found.group(1)


def _page(run: str) -> str:
    return f"/review/item?run={run}&subject=memory&task=recall&item=q1"


def test_each_person_labels_under_the_name_the_proxy_gives(
    db: Path, viewer_store: ViewerStore
) -> None:
    """`--reviewer` was one name for the whole server: every person's labels carried it."""
    app = create_app(db, reviewer_header=HEADER)
    run = viewer_store.judged[0]
    for name in ("alice", "bob"):
        person = _person(app, name)
        token = _token(person, _page(run))
        assert person.post("/review/label", data=confirm_form(run, token)).status_code == 303
        assert f'as <b id="reviewer">{name}</b>' in person.get("/review").text
    with ReviewStore(db, read_only=True) as store:
        labels = store.labels()
    assert [lab.reviewer for lab in labels] == ["alice", "bob"]
    # each sees the item as labelled by themselves, and the other's label beside theirs
    page = _person(app, "bob").get(_page(run)).text
    assert "alice: pass" in page
    assert "bob: pass" in page


def test_a_request_without_the_header_is_refused_and_writes_nothing(
    db: Path, viewer_store: ViewerStore
) -> None:
    app = create_app(db, reviewer_header=HEADER)
    run = viewer_store.judged[0]
    token = _token(_person(app, "alice"), _page(run))
    for name in (None, "", " ", "x" * 201):
        nobody = _person(app, name)
        r = nobody.get("/review")
        assert r.status_code == 403
        assert f"no reviewer in the {HEADER} header" in r.text
        nobody.cookies.set("memgauge_review", "0" * 32)
        assert nobody.post("/review/label", data=confirm_form(run, token)).status_code == 403
    with ReviewStore(db, read_only=True) as store:
        assert store.labels() == []
    # the read-only pages need no name
    assert _person(app, None).get("/").status_code == 200


def test_the_header_names_no_one_unless_the_option_trusts_it(
    db: Path, viewer_store: ViewerStore
) -> None:
    app = create_app(db, reviewer="carol")
    run = viewer_store.judged[0]
    mallory = _person(app, "mallory")
    token = _token(mallory, _page(run))
    assert mallory.post("/review/label", data=confirm_form(run, token)).status_code == 303
    with ReviewStore(db, read_only=True) as store:
        assert [lab.reviewer for lab in store.labels()] == ["carol"]


def test_the_command_takes_a_header_in_review_mode_only(
    viewer_store: ViewerStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[dict[str, Any]] = []

    def serve(store: object, announce: Any, **kw: Any) -> None:
        announce(kw["port"])
        calls.append(kw)

    monkeypatch.setattr("memgauge.cli.view.serve", serve)
    argv = ["view", "--store", str(viewer_store.path)]
    for bad, says in (
        ([], "add --review"),
        (["--review", "--reviewer", "alice"], "give one way to name reviewers"),
        (["--review", "--ask-reviewer"], "give one way to name reviewers"),
        (["--review", "--reviewer-header", "X User"], "give a header name"),
    ):
        r = run_memgauge(
            *argv, *bad, *([] if "--reviewer-header" in bad else ["--reviewer-header", HEADER])
        )
        assert r.returncode == 2, r.stderr
        assert says in r.stderr
    assert calls == []
    r = run_memgauge(*argv, "--review", "--reviewer-header", HEADER, "--host", "0.0.0.0")
    assert r.returncode == 0, r.stderr
    assert calls[-1]["reviewer_header"] == HEADER
    assert calls[-1]["reviewer"] is None
    assert f"add labels as anyone (by sending {HEADER} themselves)" in r.stderr
    assert f"each reviewer named by {HEADER}" in r.stdout
    r = run_memgauge(*argv, "--review", "--ask-reviewer", "--host", "0.0.0.0")
    assert r.returncode == 0, r.stderr
    assert (calls[-1]["ask_reviewer"], calls[-1]["reviewer"]) == (True, None)
    assert "add labels under any name" in r.stderr
    assert "each browser giving its reviewer's name" in r.stdout


def test_two_people_labelling_one_thing_at_once_on_postgresql_keep_both(
    pg_server: Any, tmp_path: Path
) -> None:
    """docs/review.md: a label never replaces another reviewer's. Both people post their
    labels of the same verdict at the same moment, over and over."""
    url = pg_server.new_database()
    run, item = one_query_run(url, tmp_path, k=2)
    app = create_app(url, reviewer_header=HEADER)
    page = f"/review/item?run={run}&subject={item.subject}&task={item.task}&item=q1"
    people = {name: _person(app, name) for name in ("alice", "bob")}
    tokens = {name: _token(p, page) for name, p in people.items()}
    rounds = 8
    start = threading.Barrier(len(people))
    codes: list[int] = []

    def label(name: str) -> None:
        for n in range(rounds):
            start.wait()
            form = {
                "csrf": tokens[name],
                "run": run,
                "subject": item.subject,
                "task": item.task,
                "item": "q1",
                "kind": "hit",
                "target": "a1",
                "grade": str(n % 4),
            }
            codes.append(people[name].post("/review/label", data=form).status_code)

    threads = [threading.Thread(target=label, args=(name,)) for name in people]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert codes == [303] * rounds * len(people)
    with ReviewStore(url, read_only=True) as store:
        history = store.labels()
    assert sorted(lab.reviewer for lab in history) == ["alice"] * rounds + ["bob"] * rounds
    latest = {lab.reviewer: lab.grade for lab in current_labels(history)}
    assert latest == {"alice": (rounds - 1) % 4, "bob": (rounds - 1) % 4}


def test_a_form_loaded_before_a_restart_is_taken_after_it(
    db: Path, viewer_store: ViewerStore, tmp_path: Path
) -> None:
    """A reviewer mid-form while the viewer restarted (a deploy, a crash) got "the review
    session token does not match: reload the page", and their note was gone: the token's key
    was the process's own."""
    run = viewer_store.judged[0]
    before = _person(create_app(db, reviewer_header=HEADER), "alice")
    token = _token(before, _page(run))
    after = _person(create_app(db, reviewer_header=HEADER), "alice")  # the restarted server
    after.cookies = before.cookies
    r = after.post("/review/label", data={**confirm_form(run, token), "note": "a long note"})
    assert r.status_code == 303, r.text[-500:]
    with ReviewStore(db, read_only=True) as store:
        assert [lab.note for lab in store.labels()] == ["a long note"]
    from memgauge.view.review import SECRET_FILE

    kept = Path(os.environ["MEMGAUGE_HOME"]) / SECRET_FILE
    assert stat.S_IMODE(kept.stat().st_mode) == 0o600


def _give_name(browser: TestClient, name: str, page: str, root: str = "") -> Any:
    """What a person does on their first review page: give their name there."""
    r = browser.get(root + page)
    assert r.status_code == 200
    assert 'id="name-form"' in r.text
    assert f'action="{root}/review/name"' in r.text
    token = re.search(r'name="csrf" value="([0-9a-f]+)"', r.text)
    back = re.search(r'name="next" value="([^"]*)"', r.text)
    assert token is not None
    assert back is not None
    form = {"csrf": token.group(1), "name": name, "next": unescape(back.group(1))}
    return browser.post(f"{root}/review/name", data=form)


def test_each_browser_gives_its_name_once_and_labels_under_it(
    db: Path, viewer_store: ViewerStore
) -> None:
    """Without a proxy that signs people in, `--review` labelled everyone as the one name of
    the server (MEMGAUGE_REVIEWER, else the login name of whoever started it)."""
    app = create_app(db, ask_reviewer=True, root="/memgauge")
    run = viewer_store.judged[0]
    for name in ("Ann Lee", "ben"):
        browser = _person(app, None)
        r = _give_name(browser, f"  {name} ", _page(run), root="/memgauge")
        assert r.status_code == 303
        assert r.headers["location"] == "/memgauge" + _page(run)
        assert "Path=/memgauge" in r.headers["set-cookie"]
        page = browser.get(r.headers["location"])
        assert f"as <b>{name}</b>" in page.text
        assert "not you?" in page.text
        token = re.search(r'name="csrf" value="([0-9a-f]+)"', page.text)
        assert token is not None
        r = browser.post("/memgauge/review/label", data=confirm_form(run, token.group(1)))
        assert r.status_code == 303
    with ReviewStore(db, read_only=True) as store:
        assert [lab.reviewer for lab in store.labels()] == ["Ann Lee", "ben"]


def test_no_label_without_a_name_and_no_name_that_does_not_fit(
    db: Path, viewer_store: ViewerStore
) -> None:
    app = create_app(db, ask_reviewer=True)
    run = viewer_store.judged[0]
    browser = _person(app, None)
    page = browser.get(_page(run)).text
    token = re.search(r'name="csrf" value="([0-9a-f]+)"', page)
    assert token is not None
    r = browser.post("/review/label", data=confirm_form(run, token.group(1)))
    assert r.status_code == 403
    assert "give yours on the review page first" in unescape(r.text)
    for bad in ("", "   ", "x" * 201):
        r = _give_name(browser, bad, _page(run))
        assert r.status_code == 400
        assert "give a name of 1-200 characters" in r.text
    # a `next` that is not a review page of this viewer goes to the queue
    r = browser.post(
        "/review/name", data={"csrf": token.group(1), "name": "cy", "next": "https://x.example/"}
    )
    assert (r.status_code, r.headers["location"]) == (303, "/review")
    with ReviewStore(db, read_only=True) as store:
        assert store.labels() == []
    # a server with one reviewer (or a trusted header) asks no one
    assert _person(create_app(db, reviewer="carol"), None).get("/review/name").status_code == 404


def test_the_review_cookies_stay_on_https_when_the_page_came_over_it(
    db: Path, viewer_store: ViewerStore
) -> None:
    """Behind a proxy that ends TLS (its X-Forwarded-Proto trusted, as uvicorn trusts
    127.0.0.1's), the session and name cookies lacked `Secure`: a plain-HTTP link to the host
    would have sent them in the clear."""
    app = create_app(db, ask_reviewer=True)
    run = viewer_store.judged[0]
    over_https = TestClient(app, base_url="https://tools.example", follow_redirects=False)
    r = _give_name(over_https, "ann", _page(run))
    assert r.status_code == 303
    assert "Secure" in r.headers["set-cookie"]
    fresh = TestClient(app, base_url="https://tools.example")
    assert "; Secure" in fresh.get("/review/name").headers["set-cookie"]
    assert "Secure" not in _person(app, None).get("/review/name").headers["set-cookie"]


def test_a_name_the_proxy_sends_in_utf_8_is_kept_as_written(
    db: Path, viewer_store: ViewerStore
) -> None:
    """ASGI gives a header's bytes as Latin-1: José (from an identity provider, in UTF-8)
    labelled as `JosÃ©`."""
    app = create_app(db, reviewer_header=HEADER)
    run = viewer_store.judged[0]
    # the bytes the proxy sends
    person = TestClient(app, headers={HEADER: "José".encode()}, follow_redirects=False)
    token = _token(person, _page(run))
    assert person.post("/review/label", data=confirm_form(run, token)).status_code == 303
    with ReviewStore(db, read_only=True) as store:
        assert [lab.reviewer for lab in store.labels()] == ["José"]


def test_the_review_cookies_survive_a_link_from_another_site(
    db: Path, viewer_store: ViewerStore
) -> None:
    """Chromium, by hand through nginx: a reviewer who had given their name and then opened
    the queue from a link on another site (the team's chat) was asked their name again, and
    their session replaced (the forms of their other tabs then a 403): both cookies were
    SameSite=Strict, which a browser does not send on arriving from another site. Lax is
    sent then, and still with no other site's POST: the token check stands."""
    app = create_app(db, ask_reviewer=True)
    r = _give_name(_person(app, None), "ann", _page(viewer_store.judged[0]))
    assert "samesite=lax" in r.headers["set-cookie"].lower()
    first = _person(app, None).get("/review/name")
    assert "samesite=lax" in first.headers["set-cookie"].lower()


@pytest.mark.parametrize("name", ["a\x00b", "ann\x1b[31m", "\u202enimda", "al\u200bice"])
def test_no_name_holds_a_control_or_invisible_character(
    db: Path, viewer_store: ViewerStore, name: str
) -> None:
    """The name form refused only an empty or long name, and a name cookie set by another
    page of the site (or by hand) was taken as it was: a NUL (PostgreSQL refuses it, a 500), a
    terminal escape (`review export` printed it), a bidi override or a zero-width space (a
    name drawn as someone else's) were labelled under."""
    run = viewer_store.judged[0]
    asked = create_app(db, ask_reviewer=True)
    r = _give_name(_person(asked, None), name, _page(run))
    assert r.status_code == 400
    assert ("NUL byte" if "\x00" in name else "no control or invisible character") in r.text
    browser = TestClient(
        asked, cookies={"memgauge_reviewer": quote(name, safe="")}, follow_redirects=False
    )
    page = browser.get(_page(run)).text
    assert 'id="name-form"' in page  # asked again: the cookie names no one
    token = re.search(r'name="csrf" value="([0-9a-f]+)"', page)
    assert token is not None
    assert browser.post("/review/label", data=confirm_form(run, token.group(1))).status_code == 403
    sent = name.replace("\x00", "\x01").encode()  # the bytes the proxy sends
    proxied = TestClient(create_app(db, reviewer_header=HEADER), headers={HEADER: sent})
    assert proxied.get(_page(run)).status_code == 403
    with ReviewStore(db, read_only=True) as store:
        assert store.labels() == []


def _session_key_is(client: TestClient, page: str, key: bytes) -> bool:
    """Whether `page`'s CSRF token is made with `key`."""
    token = _token(client, page)
    session = client.cookies["memgauge_review"]
    made = hmac.new(key, f"{session}\nann".encode(), "sha256").hexdigest()
    return hmac.compare_digest(token, made)


def test_the_kept_key_is_no_one_elses(db: Path, viewer_store: ViewerStore, tmp_path: Path) -> None:
    """The key in MEMGAUGE_HOME/review-secret was taken as it was found: readable by everyone
    on the machine (anyone could then make any session's token), or through a symlink planted
    there to a key its planter knows."""
    from memgauge.view.review import SECRET_FILE

    kept = Path(os.environ["MEMGAUGE_HOME"]) / SECRET_FILE
    kept.parent.mkdir(parents=True, exist_ok=True)
    key = os.urandom(32)
    page = _page(viewer_store.judged[0])
    kept.write_bytes(key)
    kept.chmod(0o644)
    assert _session_key_is(_person(create_app(db, reviewer="ann"), None), page, key)
    assert stat.S_IMODE(kept.stat().st_mode) == 0o600
    kept.unlink()
    known = tmp_path / "known-key"
    known.write_bytes(key)
    kept.symlink_to(known)
    assert not _session_key_is(_person(create_app(db, reviewer="ann"), None), page, key)


def test_a_key_not_kept_is_said(db: Path, caplog: pytest.LogCaptureFixture) -> None:
    """A review-secret that is not a key (a file of another size, a symlink) was passed over
    without a word: the forms of the pages loaded before each restart were then refused, and
    nothing said why."""
    from memgauge.view.review import SECRET_FILE

    kept = Path(os.environ["MEMGAUGE_HOME"]) / SECRET_FILE
    kept.parent.mkdir(parents=True, exist_ok=True)
    kept.write_text("not a key\n")
    with caplog.at_level(logging.WARNING):
        create_app(db, reviewer="ann")
    assert f"{kept} is not a key this viewer can keep" in caplog.text
    assert kept.read_text() == "not a key\n"  # not overwritten: someone put it there


@pytest.mark.parametrize(
    "back",
    ["/mg/review/../../other-tool/", "/mg/review/%2e%2E/%2E./x", "/mg/reviewer", "/mg/review/."],
)
def test_the_name_form_sends_back_to_a_review_page_only(
    db: Path, viewer_store: ViewerStore, back: str
) -> None:
    """`next` had only to begin with the root's `/review`: `/mg/review/../../other-tool/`
    sent the browser, once it resolved the dots, to another tool on the proxy's host."""
    browser = _person(create_app(db, ask_reviewer=True, root="/mg"), None)
    page = browser.get("/mg" + _page(viewer_store.judged[0])).text
    token = re.search(r'name="csrf" value="([0-9a-f]+)"', page)
    assert token is not None
    r = browser.post("/mg/review/name", data={"csrf": token.group(1), "name": "ann", "next": back})
    assert (r.status_code, r.headers["location"]) == (303, "/mg/review")


def test_a_token_labels_for_the_reviewer_its_page_was_made_for_only(
    db: Path, viewer_store: ViewerStore
) -> None:
    """The token was bound to the session cookie alone: bob's cookie and token, planted in
    alice's browser (a script of another tool on the proxy's host can set a cookie for the
    viewer's path), labelled under alice's name, which her proxy adds to every request."""
    app = create_app(db, reviewer_header=HEADER)
    run = viewer_store.judged[0]
    bob = _person(app, "bob")
    token = _token(bob, _page(run))
    alice = _person(app, "alice")
    alice.cookies = bob.cookies
    r = alice.post("/review/label", data=confirm_form(run, token))
    assert r.status_code == 403
    assert "another reviewer name" in unescape(r.text)
    assert bob.post("/review/label", data=confirm_form(run, token)).status_code == 303
    with ReviewStore(db, read_only=True) as store:
        assert [lab.reviewer for lab in store.labels()] == ["bob"]
