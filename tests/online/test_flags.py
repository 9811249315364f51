"""Feature flags (seed 002 section 4.3, issue 19): deterministic bucketing, the SDK's
`is_enabled` / `should_shadow`, `memgauge flags list/create/set`, and the one workflow: a flag's
shadow data feeds its A/B test, which graduates only with its guardrails measured (or an
explicit override), and graduating rolls the flag out to 100%."""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from memgauge.cli.main import main
from memgauge.online.flags import FeatureFlag, Flags


def _sha_bucket(text: str) -> float:
    # the documented formula, in the test's own words: SHA-256's first 8 bytes over 2^64
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big") / 2**64


def test_bucketing_is_sha256_of_salted_id_and_the_same_in_another_process() -> None:
    flag = FeatureFlag("F", rollout_percent=30, shadow_enabled=True, shadow_percent=50)
    ids = [f"user-{i}" for i in range(2000)]
    on = [flag.is_enabled(i) for i in ids]
    assert on == [_sha_bucket(f"F:rollout{i}") < 0.30 for i in ids]
    assert sum(on) / len(ids) == pytest.approx(0.30, abs=0.04)
    shadowed = [flag.should_shadow(i) for i in ids]
    assert sum(shadowed) / len(ids) == pytest.approx(0.50, abs=0.04)
    # rollout and shadow shares are independent (own salts), not the same users
    both = sum(a and b for a, b in zip(on, shadowed, strict=True)) / len(ids)
    assert both == pytest.approx(0.15, abs=0.03)
    code = (
        "from memgauge.online.flags import FeatureFlag;"
        "f = FeatureFlag('F', rollout_percent=30, shadow_enabled=True, shadow_percent=50);"
        "print(''.join('1' if f.is_enabled(f'user-{i}') else '0' for i in range(2000)))"
    )
    env = {**os.environ, "PYTHONHASHSEED": "12345"}  # hash() would change; ours must not
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
    ).stdout.strip()
    assert out == "".join("1" if x else "0" for x in on)
    assert not FeatureFlag("G").is_enabled("anyone")  # rollout 0
    assert FeatureFlag("G", rollout_percent=100).is_enabled("anyone")
    assert not FeatureFlag("G", shadow_percent=100).should_shadow("q")  # shadowing off


def _json(capsys: pytest.CaptureFixture[str], args: list[str]) -> Any:
    capsys.readouterr()
    assert main(args) == 0
    return json.loads(capsys.readouterr().out)


def test_flags_create_list_set_and_the_sdk(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = str(tmp_path / "r.db")
    (made,) = _json(
        capsys,
        ["flags", "create", "MULTI", "--shadow", "--min-samples", "50", "--store", db, "--json"],
    )
    assert made["rollout_percent"] == 0
    assert (made["shadow_enabled"], made["shadow_percent"], made["min_samples"]) == (True, 10, 50)
    assert made["graduation_threshold"] == 0.03  # seed 002's default
    assert made["test"]["status"] == "running"  # its A/B test, same name
    (changed,) = _json(
        capsys, ["flags", "set", "MULTI", "--rollout", "25", "--store", db, "--json"]
    )
    assert (changed["rollout_percent"], changed["min_samples"]) == (25, 50)
    _json(
        capsys,
        ["flags", "set", "MULTI", "--graduation-threshold", "0.05", "--store", db, "--json"],
    )
    # the test takes the flag's threshold: one workflow, not two configurations
    (report,) = _json(capsys, ["ab", "status", "MULTI", "--store", db, "--json"])
    assert (report["config"]["improvement"], report["config"]["min_samples"]) == (0.05, 50)
    assert [f["name"] for f in _json(capsys, ["flags", "list", "--store", db, "--json"])] == [
        "MULTI"
    ]
    assert main(["flags", "list", "--store", db]) == 0
    assert "MULTI" in capsys.readouterr().out
    flags = Flags(db, refresh_s=0)
    try:
        assert flags.is_enabled("MULTI", "u1") == FeatureFlag("MULTI", 25).is_enabled("u1")
        assert sum(flags.is_enabled("MULTI", f"u{i}") for i in range(1000)) in range(200, 300)
        assert not flags.is_enabled("NOPE", "u1")  # an unknown flag is off
        assert flags.should_shadow("MULTI", "q1") == FeatureFlag(
            "MULTI", shadow_enabled=True, shadow_percent=10
        ).should_shadow("q1")
        _json(capsys, ["flags", "set", "MULTI", "--rollout", "100", "--store", db, "--json"])
        flags.refresh()
        assert flags.is_enabled("MULTI", "u1")
    finally:
        flags.close()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["flags", "set", "NOPE", "--rollout", "5"], "no feature flag 'NOPE'"),
        (["flags", "list", "NOPE"], "no feature flag 'NOPE'"),
        (["flags", "create", "F", "--rollout", "150"], "150"),
        (["flags", "create", "F", "--rollout", "-1"], "-1"),
        (["flags", "create", "F", "--shadow-percent", "101"], "101"),
        (["flags", "create", "EXISTS", "--rollout", "5"], "exists with rollout_percent 0.0"),
        (["ab", "add", "EXISTS"], "PAIRS_FILE or --from-shadow"),
        (["ab", "add", "NOTEST", "--from-shadow"], "no A/B test 'NOTEST'"),
        # options that contradict each other: neither is silently dropped
        (
            ["flags", "create", "F", "--no-shadow", "--shadow-percent", "50"],
            "--no-shadow and --shadow-percent cannot go together",
        ),
        (
            ["flags", "set", "EXISTS", "--shadow-percent", "5", "--no-shadow"],
            "--no-shadow and --shadow-percent cannot go together",
        ),
        (
            ["ab", "create", "T", "--delta", "0.1", "--rule", "beta-binomial", "--bounds", "wald"],
            "--rule beta-binomial and --bounds cannot go together",
        ),
        (
            ["ab", "create", "T", "--delta", "0.1", "--prob-threshold", "0.9"],
            "--rule sprt and --prob-threshold cannot go together",
        ),
    ],
)
def test_bad_flag_input_exits_2_with_a_clear_message(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    db = str(tmp_path / "r.db")
    assert main(["flags", "create", "EXISTS", "--store", db]) == 0
    capsys.readouterr()
    assert main([*args, "--store", db]) == 2
    err = capsys.readouterr().err
    assert message in err
    assert "Traceback" not in err


def _feed_shadow_traffic(db: str, flag: str, n: int) -> dict[str, int]:
    """`n` judged queries through the flag's shadow runner: the treatment ranks the relevant
    memory first, the control second or third (and takes longer, so latency is no issue)."""
    rng = np.random.default_rng(0)
    depth = {f"q{i}": int(rng.integers(1, 3)) for i in range(n)}

    def control(q: str, k: int) -> list[str]:
        time.sleep(0.01)  # slower than the treatment, by far: latency is no issue
        return [*(f"x{j}" for j in range(depth[q])), "rel"]

    def treatment(q: str, k: int) -> list[str]:
        return ["rel", "x0"]

    flags = Flags(db, refresh_s=0)
    runner = flags.shadow_runner(flag, control, treatment, feed_every=10)
    try:
        for q in depth:
            assert runner.search(q, q, {"rel": 3}, intent="find", session_id="s")[-1] == "rel"
        runner.close()
        # the worker fed the test by itself, every 10 comparisons: nothing left to feed
        assert flags.feed(flag) == 0
    finally:
        flags.close()
    return runner.stats()


def test_shadow_data_drives_the_flag_s_test_and_graduation_rolls_it_out(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = str(tmp_path / "r.db")
    common = ["--shadow", "--shadow-percent", "100", "--min-samples", "40", "--feed-ab"]
    assert main(["flags", "create", "STRICT", *common, "--store", db]) == 0
    assert main(["flags", "create", "OK", *common, "--allow-unmeasured", "--store", db]) == 0
    for flag in ("STRICT", "OK"):
        stats = _feed_shadow_traffic(db, flag, 80)
        assert (stats["recorded"], stats["dropped"], stats["record_errors"]) == (80, 0, 0)
    strict, ok = _json(capsys, ["flags", "list", "--store", db, "--json"])[::-1]
    assert (strict["name"], ok["name"]) == ("STRICT", "OK")
    # a shadow run measures no constitutional surfacing: not graduated without the override
    (report,) = _json(capsys, ["ab", "status", "STRICT", "--store", db, "--json"])
    assert report["n_pairs"] == 80  # every judged comparison, each fed once
    assert report["sprt"]["decision"] == "treatment_better"
    assert report["decision"] == "unmeasured"
    assert report["reasons"][0] == (
        "not graduated: unmeasured (constitutional surfacing not measured)"
    )
    assert (strict["test"]["status"], strict["rollout_percent"]) == ("running", 0)
    assert main(["ab", "status", "STRICT", "--store", db]) == 0
    assert "not graduated: unmeasured" in capsys.readouterr().out
    # with the override it graduates, and the flag rolls out to everyone
    assert (ok["test"]["status"], ok["rollout_percent"]) == ("graduated", 100)
    with sqlite3.connect(db) as conn:
        fed = conn.execute(
            "SELECT COUNT(*), COUNT(DISTINCT shadow_run_id) FROM eval_ab_test_pairs"
            " WHERE feature_id = 'OK'"
        ).fetchone()
        ctx = conn.execute(
            "SELECT DISTINCT intent, session_id FROM eval_shadow_runs WHERE feature_id = 'OK'"
        ).fetchall()
    # each comparison fed once, until the test graduated: a graduated test takes no more
    assert fed[0] == fed[1] == ok["test"]["pairs"]
    assert 40 <= fed[0] < 80
    assert ctx == [("find", "s")]
    capsys.readouterr()
    assert main(["ab", "add", "OK", "--from-shadow", "--store", db]) == 2
    assert "A/B test 'OK' graduated at " in capsys.readouterr().err


def test_closing_a_flag_s_runner_feeds_the_comparisons_left_over(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A flag that feeds its A/B test fed it every `feed_every` comparisons and never the
    rest: 25 comparisons at feed_every=10 left 5 unfed when the process ended (a quiet
    service's every comparison, under 50, the default), while `flags list` said it feeds the
    test. Closing the runner feeds them."""
    db = str(tmp_path / "r.db")
    shadowed = ["--shadow", "--shadow-percent", "100", "--feed-ab"]
    assert main(["flags", "create", "F", *shadowed, "--store", db]) == 0
    flags = Flags(db, refresh_s=0)
    runner = flags.shadow_runner(
        "F", lambda q, k: ["x", "rel"], lambda q, k: ["rel"], feed_every=10
    )
    try:
        for i in range(25):
            runner.search(f"q{i}", "which one", {"rel": 3})
        runner.close()
        assert runner.stats()["record_errors"] == 0
        assert flags.feed("F") == 0  # nothing left to feed
    finally:
        flags.close()
    capsys.readouterr()
    (report,) = _json(capsys, ["ab", "status", "F", "--store", db, "--json"])
    assert report["n_pairs"] == 25


def test_from_shadow_feeds_only_judged_rows_and_needs_an_ir_metric(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from memgauge.online.shadow import ShadowRunner
    from memgauge.store.shadow import ShadowStore

    db = str(tmp_path / "r.db")
    assert main(["ab", "create", "E", "--delta", "0.05", "--store", db]) == 0
    assert main(["ab", "create", "H", "--delta", "0.05", "--metric", "hit@1", "--store", db]) == 0
    with ShadowStore(Path(db)) as store:
        runner = ShadowRunner(
            "E", lambda q, k: ["a", "b"], lambda q, k: ["b", "a"], store, percent=100
        )
        runner.search("q1", "t", {"b": 3})
        runner.search("q2", "t")  # no judgments: no pair
        runner.close()
    capsys.readouterr()
    assert main(["ab", "add", "E", "--from-shadow", "--store", db]) == 0
    out = capsys.readouterr().out
    assert "1 pair added from shadow runs (1 without judgments left out)" in out
    (report,) = _json(capsys, ["ab", "status", "E", "--store", db, "--json"])
    assert report["mean_delta"] == pytest.approx(0.5)  # RR 1 - RR 1/2
    assert main(["ab", "add", "H", "--from-shadow", "--store", db]) == 2
    assert "shadow runs measure MRR" in capsys.readouterr().err


def test_a_paused_test_is_fed_nothing_by_its_flag_s_runner_and_no_error_counted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Pausing a flag's A/B test made its shadow runner count a record error at every feed
    (`ab add` refuses a paused test), though each comparison was recorded: the count an
    operator watches for a failing shadow side. Its comparisons wait for `ab resume`."""
    db = str(tmp_path / "r.db")
    shadowed = ["--shadow", "--shadow-percent", "100", "--feed-ab"]
    assert main(["flags", "create", "P", *shadowed, "--store", db]) == 0
    assert main(["ab", "pause", "P", "--store", db]) == 0
    flags = Flags(db, refresh_s=0)
    try:
        runner = flags.shadow_runner(
            "P", lambda q, k: ["x", "rel"], lambda q, k: ["rel"], feed_every=2
        )
        for i in range(6):
            runner.search(f"q{i}", "which one", {"rel": 3})
        runner.close()
        assert (runner.stats()["recorded"], runner.stats()["record_errors"]) == (6, 0)
        assert main(["ab", "resume", "P", "--store", db]) == 0
        assert flags.feed("P") == 6  # what waited
    finally:
        flags.close()


def test_a_test_paused_while_its_flag_s_runner_feeds_it_is_fed_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`ab pause` from another process between the feed's read of the test and the
    transaction that takes its pairs: the pairs went into the paused test (or, read under
    the test's lock, the feed raised into the runner). They wait for `ab resume`, as when the
    test was paused before the feed began."""
    from memgauge.store.ab_tests import ABTestStore

    db = str(tmp_path / "r.db")
    assert main(["flags", "create", "P", "--shadow", "--shadow-percent", "100", "--store", db]) == 0
    flags = Flags(db, refresh_s=0)
    try:
        runner = flags.shadow_runner("P", lambda q, k: ["x", "rel"], lambda q, k: ["rel"])
        for i in range(6):
            runner.search(f"q{i}", "which one", {"rel": 3})
        runner.close()
        real_add = ABTestStore.add
        paused: list[int] = []

        def add(self: ABTestStore, *args: Any) -> Any:
            if not paused:
                paused.append(main(["ab", "pause", "P", "--store", db]))
            return real_add(self, *args)

        monkeypatch.setattr(ABTestStore, "add", add)
        assert flags.feed("P") == 0
        assert paused == [0]
        assert main(["ab", "resume", "P", "--store", db]) == 0
        assert flags.feed("P") == 6  # what waited
    finally:
        flags.close()


def test_two_flags_sets_at_once_keep_both_settings_in_the_test(
    store_where: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`flags set F --min-samples 50` and, from another process at the same moment, `flags set
    F --graduation-threshold 0.2`: the second one's change landed between the first's read of
    the A/B test's configuration and its write of the whole of it, and was lost (the flag said
    0.2, its test graduated at 0.03). Each change is now made under the test's row lock."""
    from memgauge.store.ab_tests import ABTestStore
    from memgauge.store.flags import FlagStore

    db = store_where
    assert main(["flags", "create", "F", "--store", db]) == 0
    real_write = FlagStore._write_tx
    other: list[int] = []

    def write(self: FlagStore, *args: Any) -> Any:
        if not other:  # the other process, just before this one's transaction begins
            other.append(-1)
            other[0] = main(["flags", "set", "F", "--graduation-threshold", "0.2", "--store", db])
        return real_write(self, *args)

    monkeypatch.setattr(FlagStore, "_write_tx", write)
    assert main(["flags", "set", "F", "--min-samples", "50", "--store", db]) == 0
    assert other == [0]
    with ABTestStore(db) as tests:
        test = tests.get("F")
    assert test is not None
    assert (test["config"]["min_samples"], test["config"]["improvement"]) == (50, 0.2)
    assert (test["min_samples"], test["graduation_threshold"]) == (50, 0.2)


def test_an_ab_create_while_the_flag_is_created_leaves_both_and_no_error(
    store_where: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`ab create F` from another process after `flags create F` stored the flag and found no
    test of that name: the flag's creation ended with "an A/B test called 'F' exists" (exit 2)
    with the flag stored, half done. That test is the flag's test, as when it came first."""
    from memgauge.store.ab_tests import ABTestStore

    db = store_where
    real_get = ABTestStore.get
    other: list[int] = []

    def get(self: ABTestStore, name: str) -> Any:
        found = real_get(self, name)
        if not other:
            other.append(-1)
            other[0] = main(["ab", "create", name, "--delta", "0.2", "--store", db])
        return found

    monkeypatch.setattr(ABTestStore, "get", get)
    assert main(["flags", "create", "F", "--store", db]) == 0
    assert other == [0]
    assert "Traceback" not in capsys.readouterr().err
    [flag] = _json(capsys, ["flags", "list", "F", "--store", db, "--json"])
    assert flag["test"]["status"] == "running"
    with ABTestStore(db) as tests:
        test = tests.get("F")
    assert test is not None
    assert test["config"]["delta"] == 0.2  # the one `ab create` made


@pytest.mark.parametrize(
    ("settings", "named"),
    [
        ({"rollout_percent": 150}, "rollout_percent=150"),
        ({"shadow_percent": -1}, "shadow_percent=-1"),
        ({"min_samples": 1}, "min_samples=1"),
        ({"graduation_threshold": float("nan")}, "graduation_threshold=nan"),
    ],
)
def test_a_setting_out_of_range_from_python_is_named_as_python_gives_it(
    tmp_path: Path, settings: dict[str, Any], named: str
) -> None:
    # `create_flag` and `set_flag` take a settings mapping: the message said `--rollout 150`,
    # a flag of a command the caller never ran
    from memgauge import api
    from memgauge.errors import UsageError

    with pytest.raises(UsageError) as caught:
        api.create_flag("F", settings, store=tmp_path / "r.db")
    assert str(caught.value).startswith(named + ":"), caught.value
    assert "--" not in str(caught.value)


def test_refusals_from_python_name_its_settings_and_functions_not_the_commands(
    tmp_path: Path,
) -> None:
    """`create_flag("F", {"min_samples": 80})` over a test deciding at 50 said to create it
    without `--min-samples`, then run `memgauge flags set F --min-samples 80`; a flag taken,
    or one missing, named `flags set` and `memgauge flags create`: commands the caller never
    ran. From Python they name the settings and the functions."""
    from memgauge import api
    from memgauge.errors import UsageError

    db = tmp_path / "r.db"
    api.create_ab_test("F", delta=0.03, min_samples=50, store=db)
    said = []
    for call in (
        lambda: api.create_flag("F", {"min_samples": 80}, store=db),
        lambda: (
            api.create_flag("F", store=db) and api.create_flag("F", {"feed_ab": True}, store=db)
        ),
        lambda: api.set_flag("G", {"rollout_percent": 5}, store=db),
    ):
        with pytest.raises(UsageError) as caught:
            call()
        said.append(str(caught.value))
    differs, taken, missing = said
    assert "without min_samples (it takes the test's)" in differs, differs
    assert "then `set_flag('F', {'min_samples': 80})` to change both" in differs, differs
    assert taken.endswith("exists with feed_ab False, not True; change it with `set_flag`"), taken
    assert missing.endswith("create it with `create_flag('G')`"), missing
    assert not [s for s in said if "--" in s or "memgauge flags" in s], said


def test_a_flags_set_failing_half_way_changes_neither_the_flag_nor_its_test(
    store_where: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`flags set F --min-samples 50` changed the flag in one transaction and its A/B test in
    another: a failure (or a kill) between left the flag at 50 and its test at 100. One
    transaction: a failure in the test's part leaves both as they were."""
    from memgauge.api import set_flag
    from memgauge.store import ab_tests
    from memgauge.store.ab_tests import ABTestStore

    db = store_where
    assert main(["flags", "create", "F", "--store", db]) == 0

    def fail(*args: Any) -> Any:
        raise RuntimeError("killed between the flag and its test")

    monkeypatch.setattr(ab_tests, "ab_test_eval_row", fail)
    with pytest.raises(RuntimeError, match="killed between"):
        set_flag("F", {"min_samples": 50}, store=db)
    monkeypatch.undo()
    assert main(["flags", "list", "F", "--store", db, "--json"]) == 0
    with ABTestStore(db) as tests:
        test = tests.get("F")
    assert test is not None
    assert (test["min_samples"], test["config"]["min_samples"]) == (100, 100)
    from memgauge.online.flags import list_flags

    assert list_flags(db, "F")[0]["min_samples"] == 100


def test_flags_create_over_an_existing_test_takes_its_settings_and_refuses_others(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`ab create F --min-samples 50`, then `flags create F --min-samples 80`: the flag said
    80, its test kept deciding at 50, silently. Settings the test has are refused when they
    differ (exit 2, nothing written, saying how to change both), and taken when not given."""
    from memgauge.online.flags import list_flags

    db = str(tmp_path / "r.db")
    assert main(["ab", "create", "F", "--delta", "0.03", "--min-samples", "50", "--store", db]) == 0
    capsys.readouterr()
    assert main(["flags", "create", "F", "--min-samples", "80", "--store", db]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert "A/B test 'F' exists with --min-samples 50, not 80" in err  # a flag, as ab create
    assert "memgauge flags set F --min-samples 80" in err
    assert main(["flags", "list", "--store", db, "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == []  # no flag written
    assert main(["flags", "create", "F", "--store", db]) == 0
    (flag,) = list_flags(db, "F")
    assert flag["min_samples"] == 50  # the test's, not the default 100


def test_flags_create_run_again_keeps_the_flag_and_refuses_other_settings(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`flags create F` run again with the same settings was refused ("exists"): a setup
    script (docs/commands.md) could not run twice. It is kept (exit 0, "kept"); a rollout
    changed since by `flags set` is another setting, refused naming `flags set`."""
    db = str(tmp_path / "r.db")
    create = ["flags", "create", "F", "--rollout", "10", "--shadow", "--store", db]
    assert main(create) == 0
    capsys.readouterr()
    assert main(create) == 0
    assert "kept feature flag 'F'" in capsys.readouterr().err
    assert main(["flags", "set", "F", "--rollout", "20", "--store", db]) == 0
    capsys.readouterr()
    assert main(create) == 2
    err = capsys.readouterr().err
    assert "exists with rollout_percent 20.0, not 10.0; change it with `memgauge flags set`" in err


@pytest.mark.parametrize(
    ("option", "named"),
    [
        (["--metric", "Recall@5"], "metric MRR, not Recall@5"),
        (["--delta", "0.1"], "delta 0.03, not 0.1"),
        (["--allow-unmeasured"], "allow_unmeasured False, not True"),
    ],
)
def test_flags_create_over_a_test_refuses_test_settings_it_would_ignore(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], option: list[str], named: str
) -> None:
    """`flags create F --delta 0.1` over a test of delta 0.03 exited 0, the test deciding at
    0.03, silently: refused like `--min-samples`, nothing written."""
    db = str(tmp_path / "r.db")
    assert main(["ab", "create", "F", "--delta", "0.03", "--store", db]) == 0
    assert main(["flags", "create", "F", *option, "--store", db]) == 2
    err = capsys.readouterr().err
    assert f"A/B test 'F' exists with {named}: create the flag without {option[0]}" in err, err
    assert main(["flags", "create", "F", "--store", db]) == 0  # none was written


def test_flags_create_from_python_refuses_a_test_setting_by_its_keyword(tmp_path: Path) -> None:
    from memgauge import api
    from memgauge.errors import UsageError

    db = tmp_path / "r.db"
    api.create_ab_test("F", delta=0.03, store=db)
    with pytest.raises(
        UsageError,
        match=r"exists with delta 0.03, not 0.1: create the flag"
        r" without delta \(it takes",
    ):
        api.create_flag("F", delta=0.1, store=db)
    assert api.create_flag("F", store=db) == api.create_flag("F", store=db)  # kept
