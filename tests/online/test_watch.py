"""Issue 33 section 4: `memgauge watch` evaluates new query-log searches by filter and sample
rate and alerts through a webhook when the gate's rule fires, against a real local receiver."""

from __future__ import annotations

import json
import os
import sqlite3
import threading
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient
from tests.ci.conftest import FakeREST

from memgauge.cli.main import main
from memgauge.online.querylog import QueryLog
from memgauge.online.watch import in_sample
from memgauge.view.app import create_app


class Receiver(FakeREST):
    """A webhook receiver answering `status` (200 unless told) to every POST."""

    status = 200

    def route(self, method: str, path: str, query: Any, body: Any, headers: Any) -> Any:
        return self.status, {"ok": self.status == 200}


def _log(db: Path, proxies: list[float], *, intent: str = "lookup", prefix: str = "q") -> list[str]:
    """Log one search per quality proxy; returns their query ids."""
    log = QueryLog(db)
    start = len(_ids(db)) if db.exists() else 0
    ids = [
        log.query(
            f"question {i}",
            session_id="s",
            result_ids=["m1", "m2"],
            quality_proxy=p,
            intent=intent,
            query_id=f"{prefix}{start + i}",
        )
        for i, p in enumerate(proxies)
    ]
    log.close()
    return ids


def _ids(db: Path) -> list[str]:
    con = sqlite3.connect(db)
    try:
        return [r[0] for r in con.execute("SELECT query_id FROM eval_queries ORDER BY id")]
    finally:
        con.close()


def _watch(
    capsys: pytest.CaptureFixture[str], db: Path, state: Path, *args: str
) -> tuple[int, Any]:
    capsys.readouterr()
    code = main(
        [
            "watch",
            str(db),
            "--once",
            "--json",
            "--state",
            str(state),
            "--measure",
            "quality_proxy",
            "--min-samples",
            "5",
            "--retry-delay",
            "0",
            *args,
        ]
    )
    out = capsys.readouterr().out.strip()
    return code, json.loads(out) if out else None


def test_one_alert_when_the_rule_fires_none_when_it_does_not(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db, state = tmp_path / "log.db", tmp_path / "watch.json"
    with Receiver() as hook:
        _log(db, [0.8] * 10)
        code, first = _watch(capsys, db, state, "--webhook", hook.url)
        assert code == 0
        assert first["status"] == "pass"  # no baseline yet: nothing to drop from
        assert first["checks"][0]["value"] == pytest.approx(0.8)
        _log(db, [0.78] * 10)  # 2.5% down: under the 15% threshold
        code, second = _watch(capsys, db, state, "--webhook", hook.url)
        assert (code, second["status"], hook.requests) == (0, "pass", [])
        low = _log(db, [0.5] * 8 + [0.4, 0.3])  # 0.47 against 0.79: 41% down
        code, third = _watch(capsys, db, state, "--webhook", hook.url)
    assert code == 1  # the gate's rule fired: the README's 1
    assert third["status"] == "fired"
    assert third["delivered"] == 1
    [request] = hook.requests
    assert request["method"] == "POST"
    alert = request["body"]
    assert alert["measure"] == "quality_proxy"
    assert alert["value"] == pytest.approx(0.47)
    assert alert["baseline"] == pytest.approx(0.79)
    assert alert["drop"] == pytest.approx((0.79 - 0.47) / 0.79)
    assert alert["threshold"] == 0.15
    assert alert["sample_count"] == 10
    assert alert["ci"][0] < 0.47 < alert["ci"][1]
    assert alert["window"]["rows"] == [21, 30]
    assert alert["examples"][:2] == [low[9], low[8]]  # the worst searches first
    assert "15%" in alert["rule"]
    assert "2 window" in alert["rule"]


def test_a_proxy_that_is_not_finite_is_left_out_of_the_window(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A host that logs quality_proxy=inf (a division by zero) made the window's mean inf (with
    NumPy's warning on stderr) and the state's baseline Infinity, which no later window could
    be compared with; it is left out, as a search without a proxy is."""
    db, state = tmp_path / "log.db", tmp_path / "watch.json"
    _log(db, [0.8] * 9 + [float("inf")])
    code, first = _watch(capsys, db, state)
    check = first["checks"][0]
    assert (code, check["value"], check["n"]) == (0, pytest.approx(0.8), 9)
    json.loads(state.read_text(), parse_constant=lambda c: pytest.fail(f"{c} in the state"))


def test_the_cursor_is_kept_across_passes_and_a_restart(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db, state = tmp_path / "log.db", tmp_path / "watch.json"
    _log(db, [0.8] * 6)
    code, first = _watch(capsys, db, state)
    assert (code, first["read"], first["cursor"]) == (0, 6, [0, 6])
    code, again = _watch(capsys, db, state)  # nothing new: nothing evaluated again
    assert (again["read"], again["evaluated"], again["cursor"], again["status"]) == (
        0,
        0,
        [6, 6],
        "idle",
    )
    _log(db, [0.7] * 7)
    code, third = _watch(capsys, db, state)
    assert (third["read"], third["cursor"], third["window"]["rows"]) == (7, [6, 13], [7, 13])
    saved = json.loads(state.read_text())
    assert saved["cursor"] == 13
    assert saved["history"]["quality_proxy"] == [pytest.approx(0.8), pytest.approx(0.7)]


def test_the_sample_rate_is_applied_by_query_id_hash(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db, state = tmp_path / "log.db", tmp_path / "watch.json"
    ids = _log(db, [0.5] * 200)
    _code, out = _watch(capsys, db, state, "--sample", "0.25")
    expected = [q for q in ids if in_sample(q, 0.25)]
    assert out["read"] == 200
    assert out["evaluated"] == len(expected)
    assert 30 < len(expected) < 70  # about a quarter, and the same set on every pass
    assert out["checks"][0]["n"] == len(expected)


def test_filters_by_intent_and_feature(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "log.db"
    _log(db, [0.9] * 6, intent="lookup", prefix="a")
    _log(db, [0.1] * 6, intent="plan", prefix="b")
    _code, out = _watch(capsys, db, tmp_path / "w1.json", "--intent", "plan")
    assert (out["matched"], out["checks"][0]["value"]) == (6, pytest.approx(0.1))
    con = sqlite3.connect(db)
    con.executemany(
        "INSERT INTO eval_shadow_runs (query_id, feature_id, control_result_ids,"
        " treatment_result_ids, created_at) VALUES (?, 'new-ranker', '[]', '[]', 'now')",
        [(f"a{i}",) for i in range(3)],
    )
    con.commit()
    con.close()
    _code, out = _watch(capsys, db, tmp_path / "w2.json", "--feature", "new-ranker")
    assert out["matched"] == 3


def test_a_dead_webhook_is_recorded_exits_3_and_is_sent_again(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db, state = tmp_path / "log.db", tmp_path / "watch.json"
    with Receiver() as hook:
        hook.status = 503
        _log(db, [0.8] * 10)
        _watch(capsys, db, state, "--webhook", hook.url)
        _log(db, [0.2] * 10)
        code, out = _watch(capsys, db, state, "--webhook", hook.url, "--retries", "2")
        assert code == 3  # an alert that could not be delivered: something unavailable
        assert (out["status"], out["delivered"], out["undelivered"]) == ("fired", 0, 1)
        assert len(hook.requests) == 3  # the first try and two retries
        saved = json.loads(state.read_text())
        [failure] = saved["failures"]
        assert failure["error"] == "status 503 after 3 attempts"
        assert failure["webhook"] == hook.url  # the origin only: a path can hold a secret
        assert failure["measure"] == "quality_proxy"
        assert len(saved["pending"]) == 1
        hook.status = 200
        code, out = _watch(capsys, db, state, "--webhook", hook.url)  # nothing new: resent
    assert (code, out["delivered"], out["undelivered"]) == (0, 1, 0)
    assert hook.requests[-1]["body"]["measure"] == "quality_proxy"
    assert json.loads(state.read_text())["pending"] == []


def test_an_unreachable_webhook_does_not_stop_the_loop(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db, state = tmp_path / "log.db", tmp_path / "watch.json"
    _log(db, [0.8] * 10)
    _watch(capsys, db, state)
    _log(db, [0.2] * 10)
    dead = "http://127.0.0.1:9/hook"  # the discard port: nothing listens
    capsys.readouterr()
    code = main(
        [
            "watch",
            str(db),
            *("--state", str(state), "--measure", "quality_proxy", "--min-samples", "5"),
            *("--webhook", dead, "--retries", "0", "--passes", "2", "--interval", "0"),
        ]
    )
    out = capsys.readouterr().out
    assert code == 3
    assert out.count("webhook failed: http://127.0.0.1:9 quality_proxy") == 2  # both passes
    assert len(json.loads(state.read_text())["failures"]) == 2


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--sample", "0"], "--sample"),
        (["--webhook", "ftp://x"], "--webhook"),
        (["--since", "yesterday"], "--since"),
        (["--measure", "nDCG@10"], "--measure"),
        # past what time.sleep and timedelta hold: exit 70 before (fuzzC-5)
        (["--settle", "1e20"], "'--settle': 1e+20 is not in the range 0<=x<=1000000000"),
        (["--interval", "1e308", "--passes", "2"], "'--interval': 1e+308 is not in the range"),
        # urlsplit's ValueError: exit 70 at once, or when the first alert's failure was
        # recorded (fuzzC-5)
        (["--webhook", "http://[::1"], "--webhook 'http://[::1': not a URL (Invalid IPv6 URL)"),
        (["--webhook", "http://127.0.0.1:99999/x"], "not a URL (Port out of range 0-65535)"),
    ],
)
def test_bad_options_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], said: str
) -> None:
    db = tmp_path / "log.db"
    _log(db, [0.5])
    assert main(["watch", str(db), "--once", "--state", str(tmp_path / "w.json"), *args]) == 2
    assert said in capsys.readouterr().err
    assert not (tmp_path / "w.json").exists()


def test_an_unreadable_store_or_state_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = Path(__file__).parents[1] / "data" / "bad" / "watch_state_truncated.json"
    assert main(["watch", str(bad), "--once"]) == 2
    assert "not a SQLite database" in capsys.readouterr().err
    assert main(["watch", str(tmp_path / "none.db"), "--once"]) == 2
    db = tmp_path / "log.db"
    _log(db, [0.5])
    assert main(["watch", str(db), "--once", "--state", str(bad)]) == 2
    assert "not a memgauge watch state file" in capsys.readouterr().err
    state = tmp_path / "w.json"
    assert main(["watch", str(db), "--once", "--state", str(state)]) == 0
    # the same state under other filters would compare other searches: refused
    assert main(["watch", str(db), "--once", "--state", str(state), "--intent", "x"]) == 2
    assert "other filters" in capsys.readouterr().err


def test_judged_searches_and_selections_are_measured(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "log.db"
    log = QueryLog(db)
    ids = [log.query(f"q{i}", session_id="s", result_ids=["m1", "m2", "m3"]) for i in range(4)]
    log.feedback("read_after_search", session_id="s", query_id=ids[0], memory_id="m2", rank=2)
    log.close()
    con = sqlite3.connect(db)
    con.executemany(
        "INSERT INTO eval_judgments (query_id, memory_id, relevance, source, created_at)"
        " VALUES (?, ?, ?, 'manual', 'now')",
        [(ids[0], "m1", 3), (ids[1], "m3", 2), (ids[2], "m9", 3)],  # RR 1, 1/3, 0
    )
    con.commit()
    con.close()
    capsys.readouterr()
    assert main(["watch", str(db), "--once", "--json", "--state", str(tmp_path / "w.json")]) == 0
    checks = {c["measure"]: c for c in json.loads(capsys.readouterr().out)["checks"]}
    assert checks["MRR@10"]["value"] == pytest.approx((1 + 1 / 3 + 0) / 3)
    assert checks["MRR@10"]["n"] == 3  # the unjudged search is not a 0
    assert checks["selection_rate"]["value"] == pytest.approx(1 / 4)
    assert checks["quality_proxy"]["value"] is None  # no search logged one: n/a, not 0
    assert checks["quality_proxy"]["decided"] is False


def test_interrupting_the_loop_exits_130_with_the_state_whole(tmp_path: Path) -> None:
    import os
    import signal
    import subprocess
    import sys

    db, state = tmp_path / "log.db", tmp_path / "watch.json"
    _log(db, [0.8] * 6)
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "memgauge",
            "watch",
            str(db),
            "--state",
            str(state),
            "--interval",
            "30",
            "--min-samples",
            "5",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ},
    )
    assert proc.stdout is not None
    first = proc.stdout.readline()  # the first pass is done and its state written
    assert first.startswith("rows 1-6: 6 read")
    proc.send_signal(signal.SIGINT)
    _out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130
    assert "Traceback" not in err
    assert json.loads(state.read_text())["cursor"] == 6


def test_settle_leaves_recent_searches_for_the_next_pass_and_since_filters(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db, state = tmp_path / "log.db", tmp_path / "watch.json"
    _log(db, [0.8] * 6)
    con = sqlite3.connect(db)
    con.execute("UPDATE eval_queries SET created_at = '2026-01-01T00:00:00+00:00' WHERE id <= 2")
    con.commit()
    con.close()
    # rows 3-6 were logged just now: an hour's settling keeps them (and nothing after row 2)
    _code, out = _watch(capsys, db, state, "--settle", "3600")
    assert (out["read"], out["cursor"]) == (2, [0, 2])
    _code, out = _watch(capsys, db, state, "--settle", "0")
    assert (out["read"], out["cursor"]) == (4, [2, 6])
    _code, out = _watch(capsys, db, tmp_path / "w2.json", "--since", "2026-06-01")
    assert (out["read"], out["matched"]) == (6, 4)  # the two January searches left out


def test_a_failed_pass_does_not_end_the_loop(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from memgauge import api
    from memgauge.cli.watch import _one_pass

    db = tmp_path / "log.db"
    _log(db, [0.5])
    cfg = api.WatchConfig(store=api.require_store(str(db)), state=tmp_path / "w.json")
    db.write_bytes(b"not a database any more")  # the store broke after the watch started
    assert _one_pass(cfg, looping=True) is None
    assert "pass failed (the next pass tries again): " in capsys.readouterr().err
    with pytest.raises(Exception, match="not a SQLite database"):
        _one_pass(cfg, looping=False)  # --once: the pass's error is the command's


@pytest.mark.parametrize(
    ("field", "value", "said"),
    [
        ("passes", "x", "passes: not a whole number"),
        ("cursor", "abc", "cursor: not a whole number"),
        ("cursor", True, "cursor: not a whole number"),
        ("alerts_sent", None, "alerts_sent: not a whole number"),
        ("failures", {"a": 1}, "failures: not a list of objects"),
        ("pending", [1], "pending: not a list of objects"),
        ("history", {"quality_proxy": "b"}, "history: not an object of lists of numbers"),
        ("history", {"quality_proxy": [float("nan")]}, "history: not an object of lists"),
        ("rule", [], "rule: not an object"),
        ("last_pass", 5, "last_pass: not a time"),
        ("bogus", 1, "unknown field 'bogus'"),
    ],
)
def test_a_state_file_with_a_field_of_the_wrong_type_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], field: str, value: Any, said: str
) -> None:
    """A hand-edited state whose `passes` was no number or whose `failures` was no list was
    an internal error (exit 70) at the pass's end; a `cursor` that was no number read nothing,
    pass after pass, exit 0. Each is bad input named by its field, and the file is kept."""
    db, state = tmp_path / "log.db", tmp_path / "w.json"
    _log(db, [0.5] * 6)
    assert (
        main(["watch", str(db), "--once", "--state", str(state), "--measure", "quality_proxy"]) == 0
    )
    raw = json.loads(state.read_text())
    raw[field] = value
    state.write_text(json.dumps(raw))
    before = state.read_text()
    capsys.readouterr()
    code = main(["watch", str(db), "--once", "--state", str(state), "--measure", "quality_proxy"])
    err = capsys.readouterr().err
    assert code == 2, err
    assert f"{state}: not a memgauge watch state file ({said}" in err
    assert "Traceback" not in err
    assert state.read_text() == before


@pytest.mark.parametrize(
    ("pending", "said"),
    [
        ([{}], "pending[0]: not an alert a watch wrote (its event is not 'memgauge.watch.alert')"),
        (
            [{"event": "memgauge.watch.alert", "measure": 5}],
            "pending[0]: measure: not a measure's name",
        ),
        (
            [{"event": "memgauge.watch.alert", "measure": "quality_proxy"}, {"measure": "x"}],
            "pending[1]: not an alert a watch wrote",
        ),
    ],
)
def test_a_pending_alert_a_watch_did_not_write_exits_2_and_is_not_sent(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], pending: list[Any], said: str
) -> None:
    """A hand-edited `pending: [{}]` passed as a list of objects: the next pass POSTed `{}` to
    the webhook as an alert, and counted it delivered. Each entry must be an alert a watch
    wrote; one that is not is bad input named by its place, nothing is sent, the file kept."""
    db, state = tmp_path / "log.db", tmp_path / "w.json"
    _log(db, [0.5] * 6)
    args = ["watch", str(db), "--once", "--state", str(state), "--measure", "quality_proxy"]
    assert main(args) == 0
    raw = json.loads(state.read_text())
    state.write_text(json.dumps(raw | {"pending": pending}))
    before = state.read_text()
    capsys.readouterr()
    with Receiver() as hook:
        code = main([*args, "--webhook", hook.url])
        err = capsys.readouterr().err
    assert code == 2, err
    assert f"{state}: not a memgauge watch state file ({said}" in err
    assert ": remove it from pending); give another --state" in err
    assert "Traceback" not in err
    assert (hook.requests, state.read_text()) == ([], before)


def test_the_bad_state_file_of_the_wrong_types_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = Path(__file__).parents[1] / "data" / "bad" / "watch_state_wrong_types.json"
    db = tmp_path / "log.db"
    _log(db, [0.5])
    assert main(["watch", str(db), "--once", "--state", str(bad)]) == 2
    said = "(passes: not a whole number; failures: not a list of objects)"
    assert said in capsys.readouterr().err
    bad = bad.with_name("watch_state_empty_alert.json")
    assert main(["watch", str(db), "--once", "--state", str(bad)]) == 2
    assert "(pending[0]: not an alert a watch wrote" in capsys.readouterr().err


def test_a_fifo_as_the_state_is_refused_not_waited_on(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`watch --state FIFO` blocked reading it before the first pass, as did every /watch
    page of `view --watch-state FIFO` (fuzzC-5)."""
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    db = tmp_path / "log.db"
    _log(db, [0.5])
    assert main(["watch", str(db), "--once", "--state", str(fifo)]) == 2
    said = f"{fifo}: not a memgauge watch state file (not a regular file"
    assert said in capsys.readouterr().err
    with TestClient(create_app(db, watch_states=[fifo])) as client:
        r = client.get("/watch")
    assert r.status_code == 200
    assert "not a regular file" in r.text


def test_an_alert_speaks_of_the_window_not_of_a_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The alert POSTed to the on-call webhook said "outside this run's 95% CI" and the first
    pass "no earlier run has it": the gate's words, for a window of the query log."""
    db, state = tmp_path / "log.db", tmp_path / "watch.json"
    _log(db, [0.8] * 10)
    code, first = _watch(capsys, db, state)
    assert first["checks"][0]["note"] == "no earlier window has it: no baseline yet"
    _log(db, [0.5] * 8 + [0.4, 0.3])
    code, fired = _watch(capsys, db, state)
    assert code == 1
    note = fired["checks"][0]["note"]
    assert note.endswith("threshold, outside this window's 95% CI"), note
    assert "run" not in note


class _HeldReceiver(Receiver):
    """A receiver that holds the first alert's answer until `release` is set (a slow hook)."""

    def __init__(self) -> None:
        super().__init__()
        self.first = threading.Event()
        self.release = threading.Event()

    def route(self, method: str, path: str, query: Any, body: Any, headers: Any) -> Any:
        if not self.first.is_set():
            self.first.set()
            self.release.wait(10)
        return super().route(method, path, query, body, headers)


def test_two_passes_on_one_state_at_once_alert_once(tmp_path: Path) -> None:
    """Cron started the next `watch --once` while the last one still waited on a slow
    webhook: both read the same cursor, evaluated the same searches and sent the same alert
    twice. A pass now holds its state (`STATE.lock`); the second waits, then finds nothing
    new."""
    from memgauge import api
    from memgauge.store.url import store_url

    db, state = tmp_path / "log.db", tmp_path / "watch.json"
    with _HeldReceiver() as hook:
        cfg = api.WatchConfig(
            store=store_url(db),
            state=state,
            measures=("quality_proxy",),
            min_samples=5,
            webhook=hook.url,
            retry_delay=0,
        )
        _log(db, [0.8] * 10)
        assert api.watch_pass(cfg).status == "pass"
        _log(db, [0.3] * 10)
        passes: dict[str, api.WatchPass] = {}
        first = threading.Thread(target=lambda: passes.setdefault("first", api.watch_pass(cfg)))
        second = threading.Thread(target=lambda: passes.setdefault("second", api.watch_pass(cfg)))
        first.start()
        assert hook.first.wait(10)  # the first pass is delivering its alert, its state unsaved
        second.start()
        second.join(1)  # it waits for the first (before, it ran to its end meanwhile)
        hook.release.set()
        first.join(10)
        second.join(10)
    assert (passes["first"].status, passes["second"].status) == ("fired", "idle")
    assert len(hook.requests) == 1


def test_a_state_is_bound_to_the_store_not_to_its_relative_path(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The state recorded the store as typed (`watched.db`): the `watched.db` of another
    directory counted as the same configuration, its cursor and baseline applied to other
    searches. It records the resolved path; a state written with a relative one still reads
    (from where it was run)."""
    state = tmp_path / "w.json"
    here, there = tmp_path / "a", tmp_path / "b"
    for d in (here, there):
        d.mkdir()
        _log(d / "watched.db", [0.5])
    monkeypatch.chdir(here)
    args = ["watch", "watched.db", "--once", "--state", str(state)]
    assert main(args) == 0
    written = json.loads(state.read_text())
    assert written["config"]["store"] == str(here / "watched.db")
    monkeypatch.chdir(there)
    capsys.readouterr()
    assert main(args) == 2
    assert "written by a watch of another store" in capsys.readouterr().err
    # a state file of before: the store relative, as typed in directory a
    state.write_text(
        json.dumps({**written, "config": {**written["config"], "store": "watched.db"}})
    )
    monkeypatch.chdir(here)
    assert main(args) == 0
    assert json.loads(state.read_text())["config"]["store"] == str(here / "watched.db")
    monkeypatch.chdir(there)  # rewritten resolved: b's is another store from now on
    assert main(args) == 2


def test_a_default_state_of_before_is_kept_by_its_store_only(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The default state is named by the configuration, store included: one written when it
    held the store as typed keeps its cursor for that store, and another directory's
    `watched.db` starts its own (not refused, not sharing it)."""
    import hashlib

    from memgauge.api import memgauge_home

    here, there = tmp_path / "a", tmp_path / "b"
    for d in (here, there):
        d.mkdir()
        _log(d / "watched.db", [0.5])
    monkeypatch.chdir(here)
    args = ["watch", "watched.db", "--once", "--json"]
    assert main(args) == 0
    (state,) = (memgauge_home() / "watch").glob("*.json")
    old = json.loads(state.read_text())
    old["config"]["store"] = "watched.db"  # as a watch of before wrote it
    name = hashlib.sha256(json.dumps(old["config"], sort_keys=True).encode()).hexdigest()[:16]
    state.rename(state.with_name(f"{name}.json"))
    state.with_name(f"{name}.json").write_text(json.dumps(old))
    _log(here / "watched.db", [0.5])
    capsys.readouterr()
    assert main(args) == 0
    assert json.loads(capsys.readouterr().out)["read"] == 1  # its cursor kept: the new one
    monkeypatch.chdir(there)
    assert main(args) == 0
    assert json.loads(capsys.readouterr().out)["read"] == 1  # b's own, from its start
    assert len(list((memgauge_home() / "watch").glob("*.json"))) == 2
