"""`memgauge import locomo` says everything it changed (issue 28 item 5): every question whose
evidence the import normalises is in import_report.json's `changed`, once, with LoCoMo's list
before and the judged list after and each step between them, so that LoCoMo's own numbers
(task_eval/evaluation.py reads the evidence strings as they are) can be reconciled with
memgauge's. Checked on a hand-written file with one question per kind of normalisation, and on
locomo10.json: applying `changed` to LoCoMo's file gives exactly what memgauge judges."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from memgauge.cli.main import main

ROOT = Path(__file__).resolve().parents[2]
HAND = ROOT / "tests" / "data" / "locomo" / "normalisations.json"
LOCOMO = ROOT.parent / "shared" / "datasets" / "locomo10.json"


def _import(src: Path, out: Path) -> dict[str, Any]:
    assert main(["import", "locomo", str(src), "--out", str(out)]) == 0
    report: dict[str, Any] = json.loads((out / "import_report.json").read_text())
    return report


def _judged(out: Path) -> dict[str, list[str]]:
    """query id -> the dialog ids memgauge judges relevant, in the file's order."""
    judged: dict[str, list[str]] = {}
    for line in (out / "judgments.jsonl").read_text().splitlines():
        j = json.loads(line)
        judged.setdefault(j["query_id"], []).append(j["memory_id"].split(":", 1)[1])
    return judged


def _steps(report: dict[str, Any]) -> list[tuple[str, str, str, tuple[str, ...]]]:
    return [
        (entry["query"], step["kind"], step["before"], tuple(step["after"]))
        for entry in report["changed"]
        for step in entry["changes"]
    ]


def test_each_normalisation_is_reported_once_with_before_and_after(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = _import(HAND, tmp_path / "out")
    assert "9 records changed (each with its value before and after)" in capsys.readouterr().out
    changed = {entry["query"]: entry for entry in report["changed"]}
    # one entry per question and field, naming the conversation and the question's index
    assert len(changed) == len(report["changed"]) == 9
    for qid, entry in changed.items():
        assert (entry["conversation"], entry["field"]) == ("conv-t", "evidence")
        assert qid == f"conv-t:q{entry['question']}"
    before_after = {qid: (e["before"], e["after"]) for qid, e in changed.items()}
    assert before_after == {
        "conv-t:q1": (["D1:2; D2:1"], ["D1:2", "D2:1"]),
        "conv-t:q2": (["D1:3 D1:4 D2:2"], ["D1:3", "D1:4", "D2:2"]),
        "conv-t:q3": (["D:2:3"], ["D2:3"]),
        "conv-t:q4": (["D2:01"], ["D2:1"]),
        "conv-t:q5": (["D1:1", "D1:1", "D2:2"], ["D1:1", "D2:2"]),
        "conv-t:q6": (["D1:2", "D"], ["D1:2"]),
        "conv-t:q7": (["D1:4", "D9:9"], ["D1:4"]),
        "conv-t:q8": (["D"], []),
        "conv-t:q10": (["D1:3; D1:3", "D:1:4"], ["D1:3", "D1:4"]),
    }
    steps = _steps(report)
    assert Counter(steps) == Counter(set(steps))  # no step twice
    assert steps == [
        ("conv-t:q1", "split", "D1:2; D2:1", ("D1:2", "D2:1")),
        ("conv-t:q2", "split", "D1:3 D1:4 D2:2", ("D1:3", "D1:4", "D2:2")),
        ("conv-t:q3", "reformatted", "D:2:3", ("D2:3",)),
        ("conv-t:q4", "reformatted", "D2:01", ("D2:1",)),
        ("conv-t:q5", "duplicate", "D1:1", ()),
        ("conv-t:q6", "malformed", "D", ()),
        ("conv-t:q7", "dangling", "D9:9", ()),
        ("conv-t:q8", "malformed", "D", ()),
        ("conv-t:q10", "split", "D1:3; D1:3", ("D1:3", "D1:3")),
        ("conv-t:q10", "duplicate", "D1:3", ()),
        ("conv-t:q10", "reformatted", "D:1:4", ("D1:4",)),
    ]
    assert all(step["why"] for entry in report["changed"] for step in entry["changes"])
    counts = report["counts"]
    assert counts["questions_evidence_normalised"] == 9
    assert (counts["evidence_split"], counts["evidence_reformatted"]) == (4, 3)
    assert (counts["evidence_duplicates_removed"], counts["evidence_malformed_dropped"]) == (2, 2)
    assert counts["evidence_dangling_dropped"] == 1
    # unchanged questions are not listed: a clean one (q0), an integer answer kept as it is (q9),
    # adversarial ones (not judged at all, whatever their evidence), one with no evidence (q13)
    assert not {"conv-t:q0", "conv-t:q9", "conv-t:q11", "conv-t:q12", "conv-t:q13"} & set(changed)
    # what is left out altogether is in `dropped`, not in `changed`
    assert report["dropped"] == [
        {"sample": "conv-t", "turn": "D1:4", "reason": "bad id"},
        {"query": "conv-t:q8", "reason": "answerable but no valid evidence: not judged"},
        {"query": "conv-t:q13", "reason": "answerable but no valid evidence: not judged"},
    ]


def test_answers_and_categories_keep_locomos_values_and_names(tmp_path: Path) -> None:
    _import(HAND, tmp_path / "out")
    queries = {
        q["id"]: q
        for q in map(json.loads, (tmp_path / "out" / "queries.jsonl").read_text().split("\n")[:-1])
    }
    assert queries["conv-t:q9"]["metadata"] == {"answer": 2022, "locomo_category": 2}
    assert queries["conv-t:q9"]["category"] == "temporal"
    # a category-5 question's adversarial answer is the trap, never filed as its answer
    assert queries["conv-t:q11"]["metadata"] == {
        "adversarial_answer": "Pepper",
        "locomo_category": 5,
    }
    assert queries["conv-t:q12"]["metadata"] == {
        "answer": "No",
        "adversarial_answer": "Yes",
        "locomo_category": 5,
    }


def _reconciles(src: Path, out: Path) -> tuple[dict[str, Any], int]:
    """Apply the report's `changed` to LoCoMo's own evidence: it must give exactly what memgauge
    judges, question by question; the number of questions the report names."""
    report = _import(src, out)
    judged = _judged(out)
    changed = {(e["conversation"], e["question"]): e for e in report["changed"]}
    not_judged = {d["query"] for d in report["dropped"] if "query" in d}
    for sample in json.loads(src.read_text()):
        sid = sample["sample_id"]
        for qi, qa in enumerate(sample["qa"]):
            qid = f"{sid}:q{qi}"
            if qa["category"] == 5:
                assert qid not in judged
                assert (sid, qi) not in changed
                continue
            entry = changed.get((sid, qi))
            if entry is not None:
                assert entry["before"] == qa["evidence"]
            evidence = entry["after"] if entry is not None else qa["evidence"]
            assert judged.get(qid, []) == evidence, qid
            assert (qid in not_judged) == (not evidence), qid
    return report, len(changed)


def test_the_report_reconciles_the_hand_written_file(tmp_path: Path) -> None:
    _, n = _reconciles(HAND, tmp_path / "out")
    assert n == 9


@pytest.mark.locomo
@pytest.mark.skipif(not LOCOMO.is_file(), reason="../shared/datasets/locomo10.json not present")
def test_every_changed_locomo10_question_is_named(tmp_path: Path) -> None:
    report, n = _reconciles(LOCOMO, tmp_path / "out")
    assert n == 10
    kinds = {entry["query"]: [s["kind"] for s in entry["changes"]] for entry in report["changed"]}
    assert kinds == {
        "conv-26:q37": ["split"],  # 'D8:6; D9:17'
        "conv-42:q58": ["dangling"],  # D10:19: conversation 42 has no such turn
        "conv-42:q88": ["malformed"],  # 'D'
        "conv-43:q18": ["reformatted"],  # 'D:11:26'
        "conv-47:q38": ["dangling"],  # D4:36
        "conv-49:q31": ["split"],  # 'D9:1 D4:4 D4:6'
        "conv-49:q38": ["split"],
        "conv-49:q46": ["split"],
        "conv-50:q5": ["duplicate"],  # D4:5 twice
        "conv-50:q69": ["reformatted"],  # 'D30:05'
    }
