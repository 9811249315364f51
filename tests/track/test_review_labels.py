"""What review labels feed: `memgauge judge calibrate --from-store` (Cohen's kappa of the stored
verdicts against each reviewer, and between reviewers; values worked by hand below) and
`memgauge review export` (graded hits as judgments.jsonl, TREC qrels, and the query log's
golden set)."""

from __future__ import annotations

import contextlib
import io
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from tests.helpers import gated_suite

from memgauge.cli.main import main
from memgauge.data.review import ReviewLabel
from memgauge.store.review import ReviewStore
from memgauge.store.suite_runs import SuiteRunStore


def _add(
    db: Path | str, reviewer: str, item: str, kind: str, value: str, machine: str | None
) -> None:
    fields: dict[str, Any] = (
        {"grade": int(value), "target": "m" + machine} if kind == "hit" else {"label": value}
    )
    if kind == "verdict":
        fields["target"] = "qa-judge"
    with ReviewStore(db) as store:
        store.add(
            ReviewLabel(
                run_id="r1",
                subject="s",
                task="t",
                item_id=item,
                kind=kind,  # type: ignore[arg-type]
                reviewer=reviewer,
                machine=None if kind == "hit" else machine,
                **fields,
            )
        )


def _out(argv: list[str], code: int = 0) -> str:
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        assert main(argv) == code
    return buf.getvalue()


def _codes_evaluate(tmp_path: Path) -> list[str]:
    """`memgauge evaluate` of one query whose first hit is graded 3 (a1) beside one not graded,
    with lexical at k 2: the run the hit-label tests grade."""
    data = tmp_path / "codes.yaml"
    data.write_text(
        "name: codes\n"
        "memories:\n"
        "  - {id: a1, text: the code for item 1 is K1}\n"
        "  - {id: b1, text: item 1 also has a backup code B1}\n"
        "queries:\n"
        "  - {id: q1, text: what code does item 1 have}\n"
        "judgments:\n"
        "  - {query_id: q1, memory_id: a1, grade: 3}\n"
    )
    return ["evaluate", str(data), "-s", "lexical", "--k", "2", "-m", "Recall@2"]


@pytest.fixture
def verdicts(tmp_path: Path) -> Path:
    """The judge said pass, fail, fail, fail on i1-i4.

    alice (her first label on i3, pass, superseded by fail): pass, pass, fail, fail.
      p_o = 3/4; her marginals pass 1/2, fail 1/2; the judge's 1/4, 3/4;
      p_e = 1/2 * 1/4 + 1/2 * 3/4 = 1/2; kappa = (3/4 - 1/2) / (1 - 1/2) = 0.5.
    bob, on i1-i3: pass, fail, fail, as the judge: kappa 1 (p_o 1, p_e 5/9).
    alice vs bob on i1-i3: (pass, pass), (pass, fail), (fail, fail): p_o = 2/3;
      alice pass 2/3, fail 1/3; bob pass 1/3, fail 2/3; p_e = 2/9 + 2/9 = 4/9;
      kappa = (2/3 - 4/9) / (5/9) = 0.4.
    """
    db = tmp_path / "labels.db"
    judge = {"i1": "pass", "i2": "fail", "i3": "fail", "i4": "fail"}
    _add(db, "alice", "i3", "verdict", "pass", judge["i3"])
    for item, value in zip(judge, ("pass", "pass", "fail", "fail"), strict=True):
        _add(db, "alice", item, "verdict", value, judge[item])
    for item, value in zip(("i1", "i2", "i3"), ("pass", "fail", "fail"), strict=True):
        _add(db, "bob", item, "verdict", value, judge[item])
    return db


def test_calibrate_from_store_gives_kappa_per_reviewer_and_between_them(verdicts: Path) -> None:
    report = json.loads(
        _out(["judge", "calibrate", "--from-store", "--store", str(verdicts), "--json"])
    )
    alice, bob = report["per_reviewer"]["alice"], report["per_reviewer"]["bob"]
    assert (alice["n"], alice["accuracy"], alice["cohen_kappa"]) == (4, 0.75, pytest.approx(0.5))
    assert alice["confusion"] == [[2, 0], [1, 1]]  # rows: reviewer fail, pass; columns: judge
    assert (bob["n"], bob["accuracy"], bob["cohen_kappa"]) == (3, 1.0, pytest.approx(1.0))
    [pair] = report["between"]
    assert (pair["a"], pair["b"], pair["n"]) == ("alice", "bob", 3)
    assert pair["kappa"] == pytest.approx(0.4)
    text = _out(["judge", "calibrate", "--from-store", "--store", str(verdicts)])
    assert "alice vs bob: Cohen's kappa 0.400 on 3 labelled by both" in text
    # no labels of a kind: n/a with its count, not 0
    empty = json.loads(
        _out(
            [
                "judge",
                "calibrate",
                "--from-store",
                "--store",
                str(verdicts),
                "--kind",
                "fact",
                "--json",
            ]
        )
    )
    assert empty == {"between": [], "kind": "fact", "n_without_machine": 0, "per_reviewer": {}}
    assert "n/a (0 labelled)" in _out(
        ["judge", "calibrate", "--from-store", "--store", str(verdicts), "--kind", "fact"]
    )


def test_calibrate_from_store_prints_each_reviewers_confusion_matrix(verdicts: Path) -> None:
    """docs/review.md promises Cohen's kappa "with the confusion matrix"; --json had it, the
    terminal only kappa and accuracy. Each reviewer's matrix is printed as --json gives it
    (rows the reviewer's labels, columns the machine's), as `judge calibrate LABELS` does."""
    report = json.loads(
        _out(["judge", "calibrate", "--from-store", "--store", str(verdicts), "--json"])
    )
    text = _out(["judge", "calibrate", "--from-store", "--store", str(verdicts)])
    rows = [line.strip("│ ").split(" │ ") for line in text.splitlines() if line.startswith("│")]
    for who in ("alice", "bob"):
        assert f"{who} vs the machine (rows: {who}, columns: machine)" in text
        cal = report["per_reviewer"][who]
        for label, counts in zip(cal["labels"], cal["confusion"], strict=True):
            assert [label, *map(str, counts)] in [[c.strip() for c in r] for r in rows]
    assert cal["confusion"] == [[2, 0], [0, 1]]  # bob: fail, fail and pass, as the judge


def test_an_evaluator_with_another_kind_of_label_is_a_usage_error(
    verdicts: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--evaluator filtered a hit's labels by memory id: `--kind hit --evaluator contains`
    printed 'no hit labels in the store' (exit 0) over a store that has them."""
    _add(verdicts, "alice", "i1", "hit", "2", "1")
    argv = ["judge", "calibrate", "--from-store", "--store", str(verdicts), "--kind", "hit"]
    assert main([*argv, "--evaluator", "qa-judge"]) == 2
    err = capsys.readouterr().err
    assert "--evaluator keeps one evaluator's verdicts" in err
    assert "--kind verdict" in err
    assert "Traceback" not in err
    assert main([*argv, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["per_reviewer"]["alice"]["n"] == 0


def test_calibrate_needs_labels_and_a_judge_or_the_store(
    verdicts: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["judge", "calibrate"]) == 2
    assert "--from-store" in capsys.readouterr().err
    labels = tmp_path / "l.jsonl"
    labels.write_text("")
    argv = ["judge", "calibrate", str(labels), "--from-store", "--store", str(verdicts)]
    assert main(argv) == 2
    assert "drop LABELS" in capsys.readouterr().err


@pytest.fixture
def grades(tmp_path: Path) -> Path:
    """q1: alice grades m1 3, m2 1; bob m1 3, m2 3 (then, first, 0: superseded); q2: bob m9 2."""
    db = tmp_path / "grades.db"
    _add(db, "alice", "q1", "hit", "3", "1")
    _add(db, "alice", "q1", "hit", "1", "2")
    _add(db, "bob", "q1", "hit", "0", "2")
    _add(db, "bob", "q1", "hit", "3", "2")
    _add(db, "bob", "q1", "hit", "3", "1")
    _add(db, "bob", "q2", "hit", "2", "9")
    return db


@pytest.mark.parametrize("n", [1, 2])
def test_export_to_a_json_name_is_read_back_whatever_its_count(n: int, tmp_path: Path) -> None:
    """`review export --out x.json` wrote JSON lines under a .json name: two read back as
    judgments, but one was a single object, which validate took for a dataset bundle of
    unknown fields (exit 2). A .json name holds the JSON list a records file reads back."""
    db = tmp_path / "grades.db"
    for memory in range(1, n + 1):
        _add(db, "alice", "q1", "hit", "3", str(memory))
    out = tmp_path / "reviewed.json"
    _out(["review", "export", "--store", str(db), "--out", str(out)])
    assert json.loads(out.read_text()) == [
        {"grade": 3, "memory_id": f"m{m}", "query_id": "q1"} for m in range(1, n + 1)
    ]
    said = _out(["validate", str(out)])
    assert f"(judgments: {n} record" in said


def test_export_writes_judgments_and_qrels_with_the_conservative_grade(
    grades: Path, tmp_path: Path
) -> None:
    out = tmp_path / "j.jsonl"
    summary = json.loads(_out(["review", "export", "--store", str(grades), "--out", str(out)]))
    assert summary == {"judgments": 3, "reviewers_differ": 1}
    assert [json.loads(line) for line in out.read_text().splitlines()] == [
        {"grade": 3, "memory_id": "m1", "query_id": "q1"},
        {"grade": 1, "memory_id": "m2", "query_id": "q1"},  # alice 1, bob 3: the lower
        {"grade": 2, "memory_id": "m9", "query_id": "q2"},
    ]
    qrels = tmp_path / "r.qrels"
    argv = ["review", "export", "--store", str(grades), "--format", "qrels", "--out", str(qrels)]
    _out([*argv, "--reviewer", "bob"])
    assert qrels.read_text() == "q1 0 m1 3\nq1 0 m2 3\nq2 0 m9 2\n"


@pytest.mark.parametrize("who", [[], ["--reviewer", "carol"]])
def test_export_with_no_graded_hits_says_so_and_writes_nothing(
    verdicts: Path, grades: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], who: list[str]
) -> None:
    """Verdicts but no grades (or none by carol): an empty judgments file would be one
    `memgauge validate` refuses as holding no records, so it is bad input, nothing written."""
    store = str(verdicts if not who else grades)
    out = tmp_path / "j.jsonl"
    argv = ["review", "export", "--store", store, "--out", str(out), "--to-golden", store, *who]
    _out(argv, code=2)
    err = capsys.readouterr().err
    assert "no graded hits to export" in err
    # it read "no graded hits to export reviewer 'carol': ..."
    assert ("no graded hits to export (of reviewer 'carol'): " in err) == bool(who)
    assert not out.exists()
    assert "Traceback" not in err


def test_export_to_golden_stores_manual_judgments_of_logged_queries(grades: Path) -> None:
    """Only a logged query's judgments join the golden set (`logs import-annotations`' rule):
    q2 was never logged, so bob's grade of it is counted apart, not stored."""
    from memgauge.online.querylog import QueryLog

    log = QueryLog(grades)
    log.query("what code does item 1 have", query_id="q1", result_ids=["m1", "m2"])
    log.close()
    summary = json.loads(
        _out(["review", "export", "--store", str(grades), "--to-golden", str(grades)])
    )
    assert summary == {"golden": 2, "judgments": 3, "not_logged": 1, "reviewers_differ": 1}
    summary = json.loads(
        _out(
            [
                "review",
                "export",
                "--store",
                str(grades),
                "--to-golden",
                str(grades),
                "--reviewer",
                "alice",
            ]
        )
    )
    assert summary == {"golden": 2, "judgments": 2, "not_logged": 0, "reviewers_differ": 0}
    conn = sqlite3.connect(grades)
    rows = conn.execute(
        "SELECT query_id, memory_id, relevance, source, annotator FROM eval_judgments"
        " ORDER BY memory_id"
    ).fetchall()
    conn.close()
    assert rows == [("q1", "m1", 3, "manual", "alice"), ("q1", "m2", 1, "manual", "alice")]


def test_labels_and_calibration_on_either_dialect(store_where: str) -> None:
    """The same labels give the same kappa on SQLite and PostgreSQL, and stay in the order
    given (a serial id on both)."""
    from memgauge import api

    judge = {"i1": "pass", "i2": "fail"}
    for reviewer, labels in (("alice", ("pass", "pass")), ("bob", ("pass", "fail"))):
        for item, value in zip(judge, labels, strict=True):
            _add(store_where, reviewer, item, "verdict", value, judge[item])
    report = api.calibrate_review(store_where)
    assert report.per_reviewer["bob"].kappa == pytest.approx(1.0)
    assert report.per_reviewer["alice"].accuracy == 0.5
    assert report.between == [{"a": "alice", "b": "bob", "n": 2, "kappa": 0.0}]
    history = api.review_labels(store_where, history=True)
    assert [(x.reviewer, x.item_id) for x in history] == [
        ("alice", "i1"),
        ("alice", "i2"),
        ("bob", "i1"),
        ("bob", "i2"),
    ]


def test_fill_pool_grades_an_annotation_pool_from_the_review(grades: Path, tmp_path: Path) -> None:
    """A pool as `logs annotate` writes it: m1 already graded by hand (kept), m2 reviewed
    (alice 1, bob 3: 1), m7 reviewed by nobody (left for a person); then imported."""
    pool = tmp_path / "pool.jsonl"
    pool.write_text(
        json.dumps(
            {
                "query_id": "q1",
                "query": "what code",
                "candidates": [
                    {"memory_id": "m1", "grade": 2, "text": "a"},
                    {"memory_id": "m2", "grade": None, "text": "b"},
                    {"memory_id": "m7", "grade": None, "text": "c"},
                ],
            }
        )
        + "\n"
    )
    out = tmp_path / "filled.jsonl"
    summary = json.loads(
        _out(["review", "fill-pool", str(pool), "--store", str(grades), "--out", str(out)])
    )
    assert summary == {"filled": 1, "reviewers_differ": 1, "ungraded": 1}
    [record] = [json.loads(line) for line in out.read_text().splitlines()]
    assert record["query"] == "what code"  # the pool's other fields kept
    assert [(c["memory_id"], c["grade"], c["text"]) for c in record["candidates"]] == [
        ("m1", 2, "a"),
        ("m2", 1, "b"),
        ("m7", None, "c"),
    ]
    # the pool's query is a logged one, as `logs annotate` pooled it
    from memgauge.online.querylog import QueryLog

    log = QueryLog(grades)
    log.query("what code", query_id="q1", result_ids=["m1", "m2", "m7"])
    log.close()
    assert json.loads(_out(["logs", "import-annotations", str(grades), str(out)])) == {
        "judgments": 2
    }


def test_overrides_become_learnings_once(
    verdicts: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """alice's current labels override the judge on i2 (pass where it failed) only (her
    override of i3 she took back); bob agrees throughout: one learning, stored once."""
    monkeypatch.setenv("MEMGAUGE_HOME", str(tmp_path / "home"))
    argv = ["review", "learn", "--store", str(verdicts)]
    assert json.loads(_out(argv)) == {"already": 0, "stored": 1}
    assert json.loads(_out(argv)) == {"already": 1, "stored": 0}
    found = _out(["learnings", "query", "reviewer override qa-judge verdict"])
    assert 'Reviewer override of a verdict ("t/qa-judge", subject s, item i2, run r1)' in found
    assert "- The machine said: fail" in found
    assert "- Reviewer alice says: pass" in found
    assert "item i3" not in found


def _grade_a1(db: Path, reviewer: str, item: str, grade: int) -> None:
    """`reviewer` grades hit a1 of the lexical subject's retrieval `item`."""
    from memgauge import api

    api.add_review_label(
        db, "lexical", "retrieval", item, reviewer=reviewer, kind="hit", target="a1", grade=grade
    )


def test_grades_of_one_hit_on_two_repeats_are_one_judgment_of_the_query(tmp_path: Path) -> None:
    """A run with repeats stores each repeat as an item of its own (`q1#r1`); a hit graded on
    any repeat is a grade of the dataset's query: one judgment row under `q1`, and two
    reviewers' different grades on different repeats are counted as reviewers differing."""
    from memgauge import api

    db = tmp_path / "r.db"
    argv = _codes_evaluate(tmp_path)
    _out([*argv, "--repeat", "2", "--store", str(db), "--quiet"])
    for reviewer, item, grade in (("ann", "q1", 3), ("bob", "q1#r1", 2)):
        _grade_a1(db, reviewer, item, grade)
    labels = api.review_labels(db, kind="hit")
    assert sorted((lab.item_id, lab.repeat, lab.source_id) for lab in labels) == [
        ("q1", 0, "q1"),
        ("q1#r1", 1, "q1"),
    ]
    rows, differ = api.review_judgments(db)
    assert rows == [{"query_id": "q1", "memory_id": "a1", "grade": 2}]
    assert differ == 1


def test_a_hit_graded_again_on_a_rerun_or_a_repeat_is_calibrated_once(tmp_path: Path) -> None:
    """Calibration counts the graded hits the export writes: ann grades a1 of q1 on a run and
    again, the same, on its re-run; bob grades it on the re-run's second repeat. That is one
    judgment each (the export's one row, reviewers differing on it), so ann's n is 1, not 2,
    and the two reviewers both labelled it."""
    from memgauge import api

    db = tmp_path / "r.db"
    argv = _codes_evaluate(tmp_path)
    for reviewer, item, grade in (("ann", "q1", 3), ("ann", "q1", 3), ("bob", "q1#r1", 2)):
        if item == "q1":  # each of ann's grades on a run of its own: the re-run
            _out([*argv, "--repeat", "2", "--store", str(db), "--quiet"])
        _grade_a1(db, reviewer, item, grade)
    rows, differ = api.review_judgments(db)
    assert (len(rows), differ) == (1, 1)
    store = ["--from-store", "--store", str(db), "--kind", "hit", "--json"]
    report = json.loads(_out(["judge", "calibrate", *store]))
    assert {r: c["n"] for r, c in report["per_reviewer"].items()} == {"ann": 1, "bob": 1}
    assert report["per_reviewer"]["ann"]["accuracy"] == 1.0
    assert [(b["a"], b["b"], b["n"]) for b in report["between"]] == [("ann", "bob", 1)]


def test_no_labels_of_the_run_asked_for_names_that_run(
    verdicts: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With --run, 'no verdict labels in the store' was said over a store that holds labels,
    of other runs: the line now names the run it looked in."""
    monkeypatch.syspath_prepend(str(Path(__file__).parents[1] / "data" / "subjects"))
    _out(["run", str(gated_suite(tmp_path, right=6)), "--store", str(verdicts)])
    with SuiteRunStore(verdicts) as store:
        (run,) = [r["run_id"] for r in store.list_runs()]
    argv = ["judge", "calibrate", "--from-store", "--store", str(verdicts)]
    assert "no verdict labels" not in _out(argv)
    text = _out([*argv, "--run", run])
    assert f"no verdict labels of run {run} in the store: n/a (0 labelled)" in text
    # the first characters of its id name the run as `runs show` names it: its whole id
    text = _out([*argv, "--run", run[:-3]])
    assert f"no verdict labels of run {run} in the store: n/a (0 labelled)" in text
