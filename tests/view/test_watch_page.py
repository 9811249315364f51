"""Issue 33 "Done when": the watch (`memgauge watch`) reachable from the viewer. `/watch` lists
the viewed store's watches from their real state files (written by `memgauge watch --once`
against a real local webhook receiver), each measure's windows with their CIs, the alerts
fired and not delivered, the webhook failures by host only; every text escaped; a state file
that cannot be read is an error row, not a 500."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from starlette.testclient import TestClient
from tests.online.test_watch import Receiver, _log

from memgauge.cli.main import main
from memgauge.data.environment import memgauge_home
from memgauge.view.app import create_app

BAD = Path(__file__).parents[1] / "data" / "bad"
SECRET = "/hooks/T0123/s3cr3t-token"
XSS = "<script>alert(1)</script>"
NUL = quote("x\x00y")


def _watch(db: Path, *args: str) -> int:
    return main(
        [
            "watch",
            str(db),
            "--once",
            "--json",
            *("--measure", "quality_proxy", "--min-samples", "5", "--retry-delay", "0"),
            *args,
        ]
    )


def _states() -> list[Path]:
    return sorted((memgauge_home() / "watch").glob("*.json"))


def _text(html: str) -> str:
    """The page's text, tags dropped and whitespace collapsed."""
    return " ".join(re.sub(r"<[^>]+>", " ", html).split())


@pytest.fixture
def fired(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[Path, Path]:
    """A store with a watch (default state under MEMGAUGE_HOME/watch) that passed twice and
    fired on the third pass, its alert not delivered (the webhook answers 503)."""
    db = tmp_path / "log.db"
    with Receiver() as hook:
        hook.status = 503
        url = hook.url + SECRET
        _log(db, [0.8] * 10)
        assert _watch(db, "--webhook", url) == 0
        _log(db, [0.78] * 10)
        assert _watch(db, "--webhook", url) == 0
        _log(db, [0.5] * 8 + [0.4, 0.3])
        assert _watch(db, "--webhook", url, "--retries", "0") == 3
    capsys.readouterr()
    [state] = _states()
    return db, state


def test_the_page_shows_the_stores_watch(fired: tuple[Path, Path]) -> None:
    db, state = fired
    saved = json.loads(state.read_text())
    with TestClient(create_app(db)) as client:
        r = client.get("/watch")
    assert r.status_code == 200
    assert "script-src 'self'" in r.headers["content-security-policy"]
    html, text = r.text, _text(r.text)
    assert str(state) in text
    assert "cursor at row 30 · 3 pass(es), the last " + saved["last_pass"] in text
    assert "a drop of 15.0% or more against the mean of the last 5 window(s)" in text
    # one row per window, oldest first: value, CI, count; the third fired
    rows = re.findall(r"<tr><td>[^<]*</td><td>(\d+-\d+)</td><td>([\d.]+)</td>", html)
    assert rows == [("1-10", "0.800"), ("11-20", "0.780"), ("21-30", "0.470")]
    third = saved["windows"][2]["measures"]["quality_proxy"]
    assert third["ci_low"] < 0.47 < third["ci_high"]
    assert f"[{third['ci_low']:.3f}, {third['ci_high']:.3f}]" in text
    assert text.count("fired") >= 1
    assert html.count("<svg") == 1  # the one measure's trend
    assert "quality_proxy per window" in html
    # the alert fired (value, baseline, drop), not delivered, and the webhook's failure
    assert "quality_proxy 0.470 0.790 40.5%" in text
    assert len(saved["pending"]) == 1
    assert "status 503 after 1 attempts" in text
    host = saved["failures"][0]["webhook"]
    assert host.startswith("http://127.0.0.1:")
    assert host in text
    assert "s3cr3t" not in html
    assert "/hooks/" not in html


def test_every_text_is_escaped(
    fired: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db, state = fired
    # a filter value from the command line, and a note in a window (a hand-edited state)
    _log(db, [0.7] * 6, intent=XSS, prefix="x")
    assert _watch(db, "--intent", XSS) == 0
    capsys.readouterr()
    [other] = [p for p in _states() if p != state]
    raw = json.loads(other.read_text())
    assert raw["config"]["filters"]["intents"] == [XSS]
    raw["windows"][0]["measures"]["quality_proxy"]["note"] = XSS
    raw["failures"] = [
        {"at": XSS, "webhook": "https://hooks.example/x/secret", "measure": XSS, "error": XSS}
    ]
    other.write_text(json.dumps(raw))
    with TestClient(create_app(db)) as client:
        html = client.get("/watch").text
    assert "<script>alert" not in html
    assert html.count("&lt;script&gt;alert(1)&lt;/script&gt;") >= 4
    assert "https://hooks.example" in html
    assert "secret" not in html


def test_an_unreadable_state_is_an_error_row(fired: tuple[Path, Path], tmp_path: Path) -> None:
    db, state = fired
    wrong = tmp_path / "wrong.json"
    raw = json.loads(state.read_text())
    wrong.write_text(json.dumps({**raw, "windows": "not a list"}))
    missing = tmp_path / "deleted.json"
    missing.write_text("{}")
    # a file under MEMGAUGE_HOME/watch that is not JSON names no store: not this one's
    (memgauge_home() / "watch" / "junk.json").write_text("{")
    app = create_app(db, watch_states=[BAD / "watch_state_truncated.json", wrong, missing])
    missing.unlink()  # gone between the start and the request
    with TestClient(app, raise_server_exceptions=False) as client:
        r = client.get("/watch")
    assert r.status_code == 200
    errors = re.findall(r'<tr class="watch-error"><td>([^<]*)</td>', r.text)
    assert errors == [str(BAD / "watch_state_truncated.json"), str(wrong), str(missing)]
    assert "windows: not a list of objects" in r.text
    assert "junk.json" not in r.text
    assert "cursor at row 30" in _text(r.text)  # the readable one still shown


def test_only_this_stores_watches_and_given_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    a, b = tmp_path / "a.db", tmp_path / "b.db"
    _log(a, [0.8] * 6)
    _log(b, [0.6] * 6)
    assert _watch(a) == 0
    assert _watch(b) == 0
    elsewhere = tmp_path / "elsewhere.json"
    assert _watch(b, "--state", str(elsewhere), "--sample", "0.5") == 0
    capsys.readouterr()
    with TestClient(create_app(a)) as client:
        html = client.get("/watch").text
    [a_state] = [p for p in _states() if json.loads(p.read_text())["config"]["store"] == str(a)]
    assert str(a_state) in html
    assert str(b) not in html  # b's watch is not this store's
    calls: list[dict[str, Any]] = []
    monkeypatch.setattr("memgauge.cli.view.serve", lambda store, **kw: calls.append(kw))
    assert main(["view", "--store", str(a), "--watch-state", str(elsewhere)]) == 0
    assert calls[-1]["watch_states"] == (elsewhere,)
    assert main(["view", "--store", str(a), "--watch-state", str(tmp_path / "none.json")]) == 2
    assert "none.json" in capsys.readouterr().err
    with TestClient(create_app(a, watch_states=[elsewhere])) as client:
        text = _text(client.get("/watch").text)
    assert str(elsewhere) in text
    assert "sample rate 0.5" in text


def test_no_watch_and_hostile_params(tmp_path: Path) -> None:
    db = tmp_path / "log.db"
    _log(db, [0.8])
    with TestClient(create_app(db), raise_server_exceptions=False) as client:
        r = client.get("/watch")
        assert r.status_code == 200
        assert "No watch of this store" in r.text
        assert '<a href="/watch">Watches</a>' in r.text  # in the top bar
        for url in (f"/watch?{NUL}=1", f"/watch?state={NUL}"):
            r = client.get(url)
            assert r.status_code == 400, url
            assert "holds a NUL byte" in r.text
        r = client.get("/watch?state=" + "x" * 20_000)
        assert r.status_code == 200  # the page takes no parameter: a long one changes nothing


def test_a_home_that_is_a_file_is_named_on_the_page(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The viewer of a store given by --store needs MEMGAUGE_HOME only for /watch (its state
    files); a home that is a file made the page an "internal error" 500, naming nothing. The
    page says which variable and what to do, as a command would."""
    db = tmp_path / "log.db"
    _log(db, [0.8])
    home = tmp_path / "home-file"
    home.write_text("")
    monkeypatch.setenv("MEMGAUGE_HOME", str(home))
    with TestClient(create_app(db), raise_server_exceptions=False) as client:
        r = client.get("/watch")
        assert r.status_code == 500
        assert f"MEMGAUGE_HOME={home}: is a regular file; point it at a directory" in r.text
        assert client.get("/").status_code == 200  # the rest of the viewer needs no home


def test_a_state_written_before_the_page_is_shown_and_kept(
    fired: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    """A state of an earlier memgauge (no rule, last pass, windows or alerts fired): shown
    with what it has, and the next pass adds them."""
    db, state = fired
    raw = json.loads(state.read_text())
    for key in ("rule", "last_pass", "windows", "fired"):
        del raw[key]
    state.write_text(json.dumps(raw))
    with TestClient(create_app(db)) as client:
        text = _text(client.get("/watch").text)
    assert "rule: not recorded" in text
    assert "No window recorded yet." in text
    assert "cursor at row 30 · 3 pass(es), the last n/a" in text
    _log(db, [0.8] * 6)
    assert _watch(db, "--webhook", "http://127.0.0.1:9/x", "--retries", "0") == 3
    capsys.readouterr()
    saved = json.loads(state.read_text())
    assert [w["rows"] for w in saved["windows"]] == [[31, 36]]
    assert saved["rule"] == {"by": "point", "min_samples": 5, "threshold": 0.15, "window": 5}
