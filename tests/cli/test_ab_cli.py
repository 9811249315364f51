"""`memgauge ab`: a sequential test created, fed in two batches (state persisted between
processes' calls), decided, and graduated or rejected by the rules."""

from __future__ import annotations

import json
import math
import sqlite3
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from memgauge.cli.main import main
from memgauge.online.flags import Flags
from memgauge.stats.sequential import GraduationRules, SPRTState, graduation


def _pairs(path: Path, n: int, effect: float, seed: int, latency: float = 10.0) -> Path:
    rng = np.random.default_rng(seed)
    control = rng.uniform(0.3, 0.7, n)
    rows = [
        {
            "query_id": f"q{i}",
            "control": float(c),
            "treatment": float(c + effect + rng.normal(0, 0.1)),
            "control_latency_ms": 10.0,
            "treatment_latency_ms": latency,
            "constitutional_delta": 0.0,
        }
        for i, c in enumerate(control)
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _status(capsys: pytest.CaptureFixture[str], db: str, name: str) -> dict[str, Any]:
    assert main(["ab", "status", name, "--store", db, "--json"]) == 0
    (report,) = json.loads(capsys.readouterr().out)
    return dict(report)


def test_a_better_treatment_graduates_after_enough_pairs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = str(tmp_path / "r.db")
    assert main(["ab", "create", "graph", "--delta", "0.03", "--store", db]) == 0
    # run again: the test with these settings is kept, one of other settings refused
    assert main(["ab", "create", "graph", "--delta", "0.03", "--store", db]) == 0
    assert main(["ab", "create", "graph", "--delta", "0.05", "--store", db]) == 2
    assert (
        main(["ab", "add", "graph", str(_pairs(tmp_path / "a.jsonl", 60, 0.06, 1)), "--store", db])
        == 0
    )
    capsys.readouterr()
    first = _status(capsys, db, "graph")
    assert first["n_pairs"] == 60
    assert first["decision"] in ("keep_testing", "graduate")
    assert (
        main(["ab", "add", "graph", str(_pairs(tmp_path / "b.jsonl", 200, 0.06, 2)), "--store", db])
        == 0
    )
    capsys.readouterr()
    report = _status(capsys, db, "graph")
    assert report["sprt"]["decision"] == "treatment_better"
    assert report["decision"] == "graduate"
    assert report["delta_ci95"][0] > 0
    assert report["p_treatment_better"] is None  # not a binary metric
    # seed 002's eval_ab_tests row, read as another tool would
    with sqlite3.connect(db) as conn:
        row = conn.execute(
            "SELECT status, graduated_at, sample_count, log_likelihood_ratio, upper_bound,"
            " lower_bound, control_mrr_sum, treatment_mrr_sum, control_ndcg_sum, min_samples,"
            " graduation_threshold FROM eval_ab_tests WHERE feature_id = 'graph'"
        ).fetchone()
        sums = conn.execute(
            "SELECT SUM(control), SUM(treatment) FROM eval_ab_test_pairs WHERE feature_id = 'graph'"
        ).fetchone()
    status, graduated_at, n, llr, upper, lower, c_mrr, t_mrr, c_ndcg, min_n, threshold = row
    assert (status, n, min_n, threshold) == ("graduated", 260, 100, 0.03)
    assert graduated_at is not None
    assert llr == report["sprt"]["log_lr"] >= upper == pytest.approx(math.log(1 / 0.05))
    assert lower == pytest.approx(math.log(0.20))
    assert (c_mrr, t_mrr) == pytest.approx(sums)  # an MRR test keeps the MRR sums
    assert c_ndcg is None  # and no nDCG it never measured


def test_pause_and_resume(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = str(tmp_path / "r.db")
    main(["ab", "create", "p", "--delta", "0.03", "--store", db])
    pairs = str(_pairs(tmp_path / "a.jsonl", 20, 0.06, 1))
    assert main(["ab", "pause", "p", "--store", db]) == 0
    capsys.readouterr()
    assert _status(capsys, db, "p")["status"] == "paused"
    assert main(["ab", "add", "p", pairs, "--store", db]) == 2
    assert "memgauge ab resume p" in capsys.readouterr().err
    assert _status(capsys, db, "p")["n_pairs"] == 0  # nothing written
    assert main(["ab", "resume", "p", "--store", db]) == 0
    assert main(["ab", "add", "p", pairs, "--store", db]) == 0
    capsys.readouterr()
    assert _status(capsys, db, "p")["status"] == "running"  # 20 of 100 pairs
    assert main(["ab", "pause", "nope", "--store", db]) == 2


def test_latency_and_constitutional_guardrails_reject(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = str(tmp_path / "r.db")
    main(["ab", "create", "slow", "--delta", "0.03", "--store", db])
    main(
        [
            "ab",
            "add",
            "slow",
            str(_pairs(tmp_path / "a.jsonl", 150, 0.06, 3, latency=13.0)),
            "--store",
            db,
        ]
    )
    capsys.readouterr()
    report = _status(capsys, db, "slow")
    assert report["decision"] == "reject"
    assert "p95 latency up 30%" in report["reasons"][0]
    assert report["status"] == "rejected"
    decided = SPRTState(n=200, total=10.0, decision="treatment_better")
    assert graduation(decided, GraduationRules(), constitutional_delta=-0.01)[0] == "reject"
    decision, reasons = graduation(decided, GraduationRules())
    assert decision == "unmeasured"  # never graduated with a guardrail unmeasured
    assert reasons[0].startswith("not graduated: unmeasured (")
    decision, reasons = graduation(decided, GraduationRules(allow_unmeasured=True))
    assert decision == "graduate"  # the user's explicit override
    assert "latency not measured" in reasons  # said, not silently passed
    assert "constitutional surfacing not measured" in reasons
    early = SPRTState(n=10, total=1.0, decision="continue")
    slow = {"p95_control_ms": 10.0, "p95_treatment_ms": 20.0}
    assert graduation(early, GraduationRules(), **slow)[0] == "keep_testing"  # 10 of 100 pairs
    assert graduation(SPRTState(n=50, total=5.0), GraduationRules())[0] == "keep_testing"


def test_binary_success_metric_gets_the_beta_binomial_probability(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = str(tmp_path / "r.db")
    main(["ab", "create", "hits", "--delta", "0.1", "--metric", "hit@1", "--store", db])
    rows = [
        {"query_id": f"q{i}", "control": i % 2, "treatment": 1 if i % 4 else 0} for i in range(40)
    ]
    (tmp_path / "p.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    main(["ab", "add", "hits", str(tmp_path / "p.jsonl"), "--store", db])
    capsys.readouterr()
    report = _status(capsys, db, "hits")
    assert report["p_treatment_better"] > 0.9


def test_unknown_test_and_bad_pairs_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = str(tmp_path / "r.db")
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"control": 0.5}\n')
    assert main(["ab", "add", "nope", str(bad), "--store", db]) == 2
    err = capsys.readouterr().err
    assert "bad.jsonl:1" in err
    assert "treatment" in err
    assert main(["ab", "status", "nope", "--store", db]) == 2


def test_a_test_before_its_sprt_starts_says_so_in_every_medium(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Until 30 informative pairs (arms that differ) are in, the SPRT has no likelihood ratio:
    `ab status`, its JSON and the viewer say how far it is from starting, never log LR 0.00."""
    from starlette.testclient import TestClient

    from memgauge.view.app import create_app

    db = str(tmp_path / "r.db")
    assert main(["ab", "create", "rerank", "--delta", "0.05", "--store", db]) == 0
    # 40 pairs, 12 of them informative: MRR-like, the arms tie on most queries
    rows = [
        {"query_id": f"q{i}", "control": 0.5, "treatment": 1.0 if i % 10 < 3 else 0.5}
        for i in range(40)
    ]
    (tmp_path / "p.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert main(["ab", "add", "rerank", str(tmp_path / "p.jsonl"), "--store", db]) == 0
    capsys.readouterr()
    text = "not started: 12 of 30 informative pairs (pairs whose arms differ; 40 pairs in all)"
    sprt = _status(capsys, db, "rerank")["sprt"]
    assert (sprt["started"], sprt["log_lr"], sprt["text"]) == (False, None, text)
    assert main(["ab", "status", "--store", db]) == 0
    out = " ".join(capsys.readouterr().out.split("│"))
    assert " ".join(text.split()[:7]) in " ".join(out.split())
    assert "log LR" not in out
    with TestClient(create_app(db)) as client:
        page = client.get("/ab/test", params={"name": "rerank"}).text
    assert text in page
    assert "log LR" not in page
    # once started, the log LR is a number, and shown as one
    assert (
        main(["ab", "add", "rerank", str(_pairs(tmp_path / "b.jsonl", 40, 0.0, 3)), "--store", db])
        == 0
    )
    capsys.readouterr()
    sprt = _status(capsys, db, "rerank")["sprt"]
    assert sprt["started"] is True
    assert isinstance(sprt["log_lr"], float)
    assert sprt["text"].endswith(f"(log LR {sprt['log_lr']:.2f}; bounds -1.61 / 3.00)")


def test_the_seeds_wald_bounds_are_selectable_beside_ville_s(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Seed 002's SPRT bounds, ln((1-beta)/alpha) and ln(beta/(1-alpha)), chosen per test and
    kept in its config and seed 002's columns; the default stays Ville's."""
    db = str(tmp_path / "r.db")
    assert main(["ab", "create", "w", "--delta", "0.03", "--bounds", "wald", "--store", db]) == 0
    assert "wald bounds" in capsys.readouterr().out
    assert main(["ab", "create", "v", "--delta", "0.03", "--store", db]) == 0
    with sqlite3.connect(db) as conn:
        rows = {
            name: (upper, lower)
            for name, upper, lower in conn.execute(
                "SELECT feature_id, upper_bound, lower_bound FROM eval_ab_tests"
            )
        }
    assert rows["w"] == (pytest.approx(math.log(0.8 / 0.05)), pytest.approx(math.log(0.2 / 0.95)))
    assert rows["v"] == (pytest.approx(math.log(1 / 0.05)), pytest.approx(math.log(0.2)))
    pairs = str(_pairs(tmp_path / "a.jsonl", 200, 0.06, 1))
    assert main(["ab", "add", "w", pairs, "--store", db]) == 0
    capsys.readouterr()
    report = _status(capsys, db, "w")
    assert report["sprt"]["decision"] == "treatment_better"
    assert main(["ab", "create", "x", "--delta", "0.03", "--bounds", "pocock", "--store", db]) == 2


def test_ab_simulate_prints_each_bounds_error_rates(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["ab", "simulate", "--sims", "300"]) == 0
    out = capsys.readouterr().out
    rows = [line.split("|")[1:-1] for line in out.splitlines() if line.startswith("| ville")]
    rows += [line.split("|")[1:-1] for line in out.splitlines() if line.startswith("| wald")]
    assert len(rows) == 6  # three cells, each bounds
    assert {r[1].strip() for r in rows} == {"2.996 / -1.609", "2.773 / -1.558"}
    for r in rows:
        type_one, power = float(r[3]), float(r[4])
        assert 0 <= type_one <= 0.15
        assert 0.65 <= power <= 1


@pytest.mark.parametrize("delta", ["1e200", "1e308"])
def test_a_delta_whose_square_overflows_decides_no_difference_not_exit_70(
    delta: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`ab create --delta 1e200` was taken, and its first `ab add` was exit 70: the SPRT's log
    likelihood ratio squared delta (OverflowError past 1e154). An effect that large is never
    seen in differences of 0.06: the test decides no_difference, its log LR -inf."""
    db = str(tmp_path / "ab.db")
    assert main(["ab", "create", "huge", "--delta", delta, "--store", db]) == 0
    pairs = str(_pairs(tmp_path / "a.jsonl", 60, 0.06, 1))
    assert main(["ab", "add", "huge", pairs, "--store", db]) == 0
    capsys.readouterr()
    sprt = _status(capsys, db, "huge")["sprt"]
    assert sprt["decision"] == "no_difference"
    assert "log LR -inf" in sprt["text"]


def test_a_graduated_test_takes_no_more_pairs_so_its_flag_stays_on_its_verdict(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Graduating rolled the flag out to 100%; later pairs (a slower treatment) then turned the
    test to rejected and left the flag at 100% for everyone, on a verdict the store no longer
    held (found driving a flag's test with `--feed-ab` traffic). A graduated test is decided."""
    db = str(tmp_path / "r.db")
    assert main(["flags", "create", "F", "--min-samples", "40", "--store", db]) == 0
    good = str(_pairs(tmp_path / "good.jsonl", 60, 0.06, 1))
    assert main(["ab", "add", "F", good, "--store", db]) == 0
    capsys.readouterr()
    before = _status(capsys, db, "F")
    assert before["status"] == "graduated"
    slow = str(_pairs(tmp_path / "slow.jsonl", 200, 0.06, 2, latency=30.0))
    capsys.readouterr()
    assert main(["ab", "add", "F", slow, "--store", db]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert "A/B test 'F' graduated at " in err
    assert "takes no more pairs (200 new here, nothing written)" in err
    assert main(["ab", "add", "F", good, "--store", db]) == 0  # the same file again: all held
    assert "0 pairs added, 60 already added (skipped)" in capsys.readouterr().out
    after = _status(capsys, db, "F")
    assert (after["status"], after["n_pairs"]) == ("graduated", before["n_pairs"])
    # the flag's shadow runner, feeding its test by itself, feeds it nothing now, quietly
    shadowing = ["--shadow", "--shadow-percent", "100", "--feed-ab"]
    assert main(["flags", "set", "F", *shadowing, "--store", db]) == 0
    flags = Flags(db, refresh_s=0)
    try:
        with flags.shadow_runner("F", lambda q, k: ["x", "rel"], lambda q, k: ["rel"]) as runner:
            for i in range(3):
                runner.search(f"late{i}", "which one", {"rel": 3})
        assert (runner.stats()["recorded"], runner.stats()["record_errors"]) == (3, 0)
    finally:
        flags.close()
    capsys.readouterr()
    assert _status(capsys, db, "F")["n_pairs"] == before["n_pairs"]
    assert main(["flags", "list", "F", "--store", db, "--json"]) == 0
    (flag,) = json.loads(capsys.readouterr().out)
    assert (flag["rollout_percent"], flag["test"]["status"]) == (100, "graduated")


def test_pairs_added_while_another_process_graduates_the_test_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`ab add` read the test's status before the transaction that takes its pairs: another
    process graduating the test in between (its flag rolled out to 100%) let this one's pairs
    in, turning the decided test to rejected. The status is read under the test's lock."""
    from memgauge.store.ab_tests import ABTestStore

    db = str(tmp_path / "r.db")
    assert main(["flags", "create", "F", "--min-samples", "40", "--store", db]) == 0
    good = str(_pairs(tmp_path / "good.jsonl", 60, 0.06, 1))
    slow = str(_pairs(tmp_path / "slow.jsonl", 200, 0.06, 2, latency=30.0))
    real_add = ABTestStore.add
    other: list[int] = []

    def add(self: ABTestStore, *args: Any) -> Any:
        if not other:  # the other process graduates the test just before this one writes
            other.append(-1)
            other[0] = main(["ab", "add", "F", good, "--store", db])
        return real_add(self, *args)

    monkeypatch.setattr(ABTestStore, "add", add)
    assert main(["ab", "add", "F", slow, "--store", db]) == 2
    assert other == [0]
    assert "takes no more pairs (200 new here, nothing written)" in capsys.readouterr().err
    after = _status(capsys, db, "F")
    assert (after["status"], after["n_pairs"]) == ("graduated", 60)


def test_pausing_or_resuming_a_graduated_test_is_refused_and_keeps_its_history(
    store_where: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`ab pause` on a graduated test set it to paused and cleared its `graduated_at` (its
    flag stayed at 100%); resuming then graduated it again at a new time. A graduated test is
    decided: both are refused, and its status and graduation time stay."""
    db = store_where
    assert main(["flags", "create", "F", "--min-samples", "40", "--store", db]) == 0
    good = str(_pairs(tmp_path / "good.jsonl", 60, 0.06, 1))
    assert main(["ab", "add", "F", good, "--store", db]) == 0
    capsys.readouterr()
    before = _status(capsys, db, "F")
    assert before["status"] == "graduated"
    assert before["graduated_at"]
    for verb in ("pause", "resume"):
        assert main(["ab", verb, "F", "--store", db]) == 2
        err = capsys.readouterr().err
        assert "Traceback" not in err
        assert f"A/B test 'F' graduated at {before['graduated_at']}" in err
        after = _status(capsys, db, "F")
        assert (after["status"], after["graduated_at"]) == ("graduated", before["graduated_at"])


def test_ab_refusals_from_python_name_the_functions_not_the_commands(tmp_path: Path) -> None:
    """From Python, a missing test said to run `memgauge ab create`, a paused one `memgauge ab
    resume`, a binary rule's pair `--rule sprt`, and a graduated test that `ab pause` does not
    apply: commands and flags the program never wrote. They name the calls and keywords."""
    from memgauge import api
    from memgauge.errors import UsageError

    db = tmp_path / "r.db"
    pairs = _pairs(tmp_path / "pairs.jsonl", 3, 0.1, 1)
    api.create_ab_test("P", delta=0.03, store=db)
    api.pause_ab_test("P", store=db)
    api.create_ab_test("B", delta=0.03, rule="beta-binomial", store=db)
    said = []
    for call in (
        lambda: api.add_ab_pairs("nope", pairs, store=db),
        lambda: api.add_ab_pairs("P", pairs, store=db),
        lambda: api.add_ab_pairs("B", pairs, store=db),
    ):
        with pytest.raises(UsageError) as refused:
            call()
        said.append(str(refused.value))
    api.create_flag("G", {"min_samples": 40}, store=db)
    api.add_ab_pairs("G", _pairs(tmp_path / "good.jsonl", 60, 0.06, 1), store=db)
    with pytest.raises(UsageError) as refused:
        api.pause_ab_test("G", store=db)
    said.append(str(refused.value))
    missing, paused, binary, graduated = said
    assert "it is decided, and pausing or resuming does not apply" in graduated, graduated
    assert missing.endswith("create it with `create_ab_test('nope', delta=...)`"), missing
    assert paused.endswith("resume it with `pause_ab_test('P', paused=False)`"), paused
    assert binary.endswith("or use a test with rule='sprt'"), binary
    assert not [s for s in said if "--" in s or "memgauge ab" in s], said


def test_ab_create_over_a_flags_test_of_the_same_settings_keeps_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`flags create F` stores a test with no bounds (read as Ville's); `ab create F --delta
    0.05`, the same settings, was refused: "exists with --bounds None, not ville"."""
    db = str(tmp_path / "r.db")
    assert main(["flags", "create", "F", "--store", db]) == 0
    capsys.readouterr()
    assert main(["ab", "create", "F", "--delta", "0.05", "--store", db]) == 0, capsys.readouterr()
    assert capsys.readouterr().out.startswith("kept A/B test 'F'")
    assert main(["ab", "create", "F", "--delta", "0.05", "--bounds", "wald", "--store", db]) == 2
    assert "exists with --bounds ville, not wald" in capsys.readouterr().err
