"""`memgauge judge calibrate` and `judge rejudge` over real HTTP against the fake server."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path
from typing import Any

import pytest

from memgauge.cli.main import main
from memgauge.llm import FakeOpenAIServer

_QA = re.compile(r"CORRECT ANSWER:\n(.*?)\n\nMODEL'S RESPONSE:\n(.*?)\n\n", re.S)


@pytest.fixture
def server(llm_server: FakeOpenAIServer) -> FakeOpenAIServer:
    return llm_server


def _write(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_calibrate_against_human_labels(
    server: FakeOpenAIServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def rule(payload: dict[str, Any]) -> str:
        m = _QA.search(payload["messages"][-1]["content"])
        assert m is not None
        ok = m.group(1).strip() in m.group(2)
        return json.dumps({"reasoning": "-", "label": "yes" if ok else "no"})

    server.respond(rule)
    rows = []
    for i in range(20):
        right = i % 2 == 0
        human = right if i not in (3, 4) else not right  # the person disagrees twice
        rows.append(
            {
                "id": f"x{i}",
                "input": f"question {i}",
                "output": f"answer A{i}" if right else "no idea",
                "expected": f"A{i}",
                "label": "pass" if human else "fail",
            }
        )
    labels = _write(tmp_path / "labels.jsonl", rows)
    code = main(["judge", "calibrate", str(labels), "--judge", "{qa-judge: strict}", "--json"])
    report = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert code == 0
    assert report["n"] == 20
    assert report["accuracy"] == pytest.approx(0.9)
    assert report["confusion"] == [[9, 1], [1, 9]]  # labels fail, pass
    assert report["cohen_kappa"] == pytest.approx(0.8)
    assert report["n_failed"] == 0
    # human-readable form
    assert main(["judge", "calibrate", str(labels), "--judge", "{qa-judge: strict}"]) == 0
    out = capsys.readouterr().out
    assert "Cohen's kappa 0.800" in out
    assert "95% CI" in out


def test_rejudge_separates_judge_noise_from_item_differences(
    server: FakeOpenAIServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rng = random.Random(11)

    def noisy(payload: dict[str, Any]) -> str:
        good = "GOOD" in payload["messages"][-1]["content"]
        base = 80 if good else 20
        return json.dumps({"score": base + rng.uniform(-10, 10)})

    server.respond(noisy)
    rows = [
        {"id": f"o{i}", "input": f"q{i}", "output": "GOOD" if i % 2 else "BAD"} for i in range(40)
    ]
    outputs = _write(tmp_path / "outputs.jsonl", rows)
    args = ["judge", "rejudge", str(outputs), "--judge", "rubric", "-k", "5", "--json"]
    assert main(args) == 0
    report = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert len(server.requests) == 200
    # uniform +-0.1 noise: variance 0.2^2 / 12 = 0.00333; items differ by 0.6: variance ~0.09
    assert 0.0022 < report["judge_variance"] < 0.0045
    assert 0.07 < report["item_variance"] < 0.11
    assert report["judge_share"] < 0.06
    assert report["n_failed"] == 0
    # the k repeats are distinct cache entries: a cache-only replay reproduces the report
    assert main([*args, "--cache-only"]) == 0
    replay = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert replay == report
    assert len(server.requests) == 200


def test_bad_inputs_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    labels = _write(tmp_path / "labels.jsonl", [{"id": "a", "output": "x", "label": "pass"}])
    assert main(["judge", "calibrate", str(labels), "--judge", "exact"]) == 2
    assert "not an LLM judge" in capsys.readouterr().err
    assert main(["judge", "calibrate", str(labels), "--judge", "{nope: 1}"]) == 2
    assert "unknown evaluator" in capsys.readouterr().err
    unlabelled = _write(tmp_path / "u.jsonl", [{"id": "a", "output": "x"}])
    assert main(["judge", "calibrate", str(unlabelled), "--judge", "rubric"]) == 2
    err = capsys.readouterr().err
    assert "u.jsonl:1" in err
    assert "Traceback" not in err


@pytest.mark.parametrize("command", ["calibrate", "rejudge"])
@pytest.mark.parametrize("spec", ["", " ", "null"])
def test_an_empty_judge_spec_names_the_flag(
    command: str, spec: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--judge ''` said "a evaluator is 'name', {name: {args}} or {name: value}; got None":
    neither the flag nor the text given."""
    labels = _write(tmp_path / "labels.jsonl", [{"id": "a", "output": "x", "label": "pass"}])
    assert main(["judge", command, str(labels), "--judge", spec]) == 2
    err = capsys.readouterr().err
    assert f"--judge {spec!r}: give a judge, e.g. --judge '{{qa-judge: strict}}'" in err
    assert "got None" not in err


def test_a_judge_that_judges_nothing_is_a_failure_not_a_calibration(
    server: FakeOpenAIServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Every reply unreadable (a model endpoint answering prose): the report says n 0 and
    n/a, and the command exits 4 naming why, for calibrate and rejudge alike."""
    server.respond(lambda payload: "I would rather not grade this.")
    rows = [
        {"id": f"x{i}", "input": f"q{i}", "output": f"A{i}", "expected": f"A{i}", "label": "pass"}
        for i in range(4)
    ]
    labels = _write(tmp_path / "labels.jsonl", rows)
    judge = ["--judge", "{qa-judge: strict}"]
    assert main(["judge", "calibrate", str(labels), *judge, "--json"]) == 4
    captured = capsys.readouterr()
    report = json.loads(captured.out.strip().splitlines()[-1])
    assert (report["n"], report["n_failed"], report["accuracy"]) == (0, 4, None)
    assert "the judge judged none of the 4 items (the first: " in captured.err
    assert main(["judge", "calibrate", str(labels), *judge]) == 4
    assert "the judge could not judge 4" in capsys.readouterr().out
    assert main(["judge", "rejudge", str(labels), *judge, "-k", "2"]) == 4
    assert "the judge judged none of the 8 verdicts" in capsys.readouterr().err


def test_rejudge_says_over_how_many_items_its_variances_are(
    server: FakeOpenAIServer,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An item with a failed verdict is left out of the variances (they need all k): with the
    judge failing every verdict of one item of 4, 'judge variance' and 'item variance' were
    over 3 items and nothing said so; `n_complete` and the text say it."""
    monkeypatch.setenv("MEMGAUGE_LLM_RETRIES", "0")

    def rule(payload: dict[str, Any]) -> str:
        text = "\n".join(str(m["content"]) for m in payload["messages"])
        if "FLAKY" in text:
            return "no verdict today"
        return json.dumps({"score": 80 if "GOOD" in text else 20})

    server.respond(rule)
    rows = [
        {"id": f"o{i}", "input": f"q{i}", "output": "GOOD" if i % 2 else "BAD"} for i in range(3)
    ]
    rows.append({"id": "o3", "input": "q3", "output": "FLAKY"})
    outputs = _write(tmp_path / "outputs.jsonl", rows)
    args = ["judge", "rejudge", str(outputs), "--judge", "rubric", "-k", "2"]
    assert main([*args, "--json"]) == 0
    report = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert (report["n_items"], report["n_complete"], report["n_failed"]) == (4, 3, 2)
    assert main(args) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "(the variances over the 3 of 4 items whose 2 verdicts all came back)" in out


def test_a_judge_that_never_varies_has_no_share_of_no_variance(
    server: FakeOpenAIServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Every verdict 0.8, on every item and repeat: there is no variance at all, so no share
    of it is the judge's. numpy's variance of [0.8, 0.8, 0.8] is 1.2e-32, not 0, and that
    rounding noise made 'judge share 1.000': the whole spread blamed on the judge."""
    server.respond(lambda payload: json.dumps({"score": 80}))
    rows = [{"id": f"o{i}", "input": f"q{i}", "output": "an answer"} for i in range(3)]
    outputs = _write(tmp_path / "outputs.jsonl", rows)
    args = ["judge", "rejudge", str(outputs), "--judge", "rubric", "-k", "3"]
    assert main([*args, "--json"]) == 0
    report = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert (report["judge_variance"], report["item_variance"]) == (0.0, 0.0)
    assert report["judge_share"] is None
    assert report["sd_of_mean_from_judge"] == 0.0
    assert main(args) == 0
    assert "judge share n/a" in capsys.readouterr().out
