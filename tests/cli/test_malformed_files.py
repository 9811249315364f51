"""Malformed files of every kind, through every command that reads that kind: exit 2, the file
named, no traceback, and no output directory, store row or pair left behind (issue 13, items
4, 6 and 7). The files are in tests/data/bad/ (see its README); the JSON nested 200,000 deep
is written by the test, like the 50 MB line of test_validate_cli.py."""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from memgauge.cli.main import main

DATA = Path(__file__).resolve().parents[1] / "data"
BAD = DATA / "bad"
GOOD = DATA / "good"


@dataclass
class Env:
    """A scratch place for one command: MEMGAUGE_HOME, an output directory, a store."""

    tmp: Path

    @property
    def out(self) -> Path:
        return self.tmp / "out"

    @property
    def db(self) -> Path:
        return self.tmp / "store.db"

    def rows(self, table: str, db: Path | None = None) -> int:
        """Rows in `table` of the store (0 when the store was never created)."""
        path = db or self.db
        if not path.exists():
            return 0
        with sqlite3.connect(path) as conn:
            found = conn.execute(
                "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = ?", (table,)
            ).fetchone()[0]
            return int(conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]) if found else 0


# command -> (argv for file f, what must not be left behind)
Command = tuple[Callable[[str, Env], list[str]], Callable[[Env], None]]


def _nothing(env: Env) -> None:
    pass


def _no_out(env: Env) -> None:
    assert not env.out.exists()


def _no_run(env: Env) -> None:
    assert not env.out.exists()
    assert env.rows("eval_results", env.tmp / "home" / "results.db") == 0
    assert env.rows("suite_runs") == 0


def _ab_add(f: str, env: Env) -> list[str]:
    assert main(["ab", "create", "t", "--delta", "0.1", "--store", str(env.db)]) == 0
    return ["ab", "add", "t", f, "--store", str(env.db)]


def _annotations(f: str, env: Env) -> list[str]:
    from memgauge.online.querylog import QueryLog

    log = QueryLog(env.db)
    log.query("a question", session_id="s", result_ids=["m1"], query_id="q1")
    log.close()
    return ["logs", "import-annotations", str(env.db), f]


def _suite_with_items(f: str, env: Env) -> list[str]:
    suite = env.tmp / "suite.yaml"
    suite.write_text(
        "name: items\nsubjects:\n  lexical: {reference: {mode: lexical}}\ntasks:\n"
        f"  - {{name: answers, kind: expected-output, dataset: {f}, evaluators: [exact]}}\n"
    )
    return ["run", str(suite), "--store", str(env.db), "--no-progress"]


def _no_pairs(env: Env) -> None:
    assert env.rows("eval_ab_test_pairs") == 0


def _no_store(env: Env) -> None:
    assert not env.db.exists()


def _no_store_nor_out(env: Env) -> None:
    _no_store(env)
    _no_out(env)


def _no_judgments(env: Env) -> None:
    assert env.rows("eval_judgments") == 0


COMMANDS: dict[str, Command] = {
    "validate": (lambda f, e: ["validate", f], _nothing),
    "validate-subject": (lambda f, e: ["validate", "--kind", "subject", f], _nothing),
    "validate-labels": (lambda f, e: ["validate", "--kind", "labels", f], _nothing),
    "evaluate": (
        lambda f, e: ["evaluate", f, "-s", "lexical", "--quiet", "--out", str(e.out)],
        _no_run,
    ),
    "evaluate-s": (
        lambda f, e: [
            "evaluate",
            str(GOOD / "bundle.yaml"),
            "-s",
            f,
            "--quiet",
            "--out",
            str(e.out),
        ],
        _no_run,
    ),
    "run": (lambda f, e: ["run", f, "--store", str(e.db), "--no-progress"], _no_run),
    "run-items": (_suite_with_items, _no_run),
    "metrics-qrels": (lambda f, e: ["metrics", f, str(GOOD / "run.txt")], _nothing),
    "metrics-run": (lambda f, e: ["metrics", str(GOOD / "qrels.txt"), f], _nothing),
    "ab-add": (_ab_add, _no_pairs),
    "judge-calibrate": (
        lambda f, e: ["judge", "calibrate", f, "--judge", "{qa-judge: strict}", "--cache-only"],
        _nothing,
    ),
    "import-annotations": (_annotations, _no_judgments),
    "extraction-trace": (
        lambda f, e: [
            "extraction",
            "--outputs",
            f,
            "--tag",
            "memory_extraction",
            "--output",
            str(e.out),
        ],
        _no_run,
    ),
    "extraction-outputs": (
        lambda f, e: [
            "extraction",
            str(DATA / "extraction" / "cases.json"),
            "--outputs",
            f,
            "--match",
            "exact",
            "--output",
            str(e.out),
        ],
        _no_out,
    ),
    "operations": (
        lambda f, e: ["operations", f, "--decider", "{heuristic: {}}", "--output", str(e.out)],
        _no_out,
    ),
    "operations-outputs": (
        lambda f, e: [
            "operations",
            str(DATA / "operations" / "cases.json"),
            "--outputs",
            f,
            "--output",
            str(e.out),
        ],
        _no_out,
    ),
    "audit": (
        lambda f, e: [
            "audit",
            f,
            "--agent",
            "extractive",
            "--scoring",
            "offline",
            "--store",
            str(e.db),
            "--output",
            str(e.out),
            "--no-progress",
        ],
        _no_run,
    ),
    "import-memaudit": (lambda f, e: ["import", "memaudit", f, "--out", str(e.out)], _no_out),
    "import-locomo": (lambda f, e: ["import", "locomo", f, "--out", str(e.out)], _no_out),
    # LoCoMo's sessions as extraction cases, its observations as the expected facts
    "extraction-locomo": (
        lambda f, e: [
            *("extraction", f, "--extractor", "{memory: {reference: {mode: lexical}}}"),
            *("--match", "exact", "--store", str(e.db), "--output", str(e.out)),
        ],
        _no_run,
    ),
    "import-longmemeval": (
        lambda f, e: ["import", "longmemeval", f, "--out", str(e.out)],
        _no_out,
    ),
    "import-beir": (lambda f, e: ["import", "beir", f, "--out", str(e.out)], _no_out),
    "import-csv-items": (lambda f, e: ["import", "csv-items", f, "--out", str(e.out)], _no_out),
    "import-spans": (
        lambda f, e: ["logs", "import-spans", f, "--store", str(e.db)],
        _no_store,
    ),
    "import-traces": (
        lambda f, e: [
            *("logs", "import-traces", f, "--log", "--store", str(e.db)),
            *("--out", str(e.out)),
        ],
        _no_store_nor_out,
    ),
}

RETRIEVAL = ["validate", "evaluate"]
SUITE = ["validate", "run"]

# file -> (commands that read it, (line or None, words the message must hold))
CASES: dict[str, tuple[list[str], tuple[int | None, str]]] = {
    # item 4: numbers are finite or refused
    "ab_pairs_infinite.jsonl": (["ab-add"], (2, "1e999 overflows to infinity")),
    "ab_pairs_overflowing.jsonl": (["ab-add"], (1, "is beyond +-1e100")),
    "run_underscore_score.txt": (["validate", "metrics-run"], (2, "underscores")),
    "qrels_arabic_indic_grade.txt": (["validate", "metrics-qrels"], (2, "ASCII digits")),
    "dataset_infinite_metadata": (RETRIEVAL, (2, "1e999 overflows to infinity")),
    "labels_infinite_output.jsonl": (
        ["validate", "judge-calibrate"],
        (1, "-1e999 overflows to infinity"),
    ),
    "annotations_infinite_grade.jsonl": (["import-annotations"], (1, "overflows to infinity")),
    "extraction_trace_infinite.jsonl": (["extraction-outputs"], (1, "overflows to infinity")),
    # issue 18 item 5: a trace line is a case's output or carries its own conversation
    "extraction_trace_no_conversation.jsonl": (
        ["extraction-outputs", "extraction-trace"],
        (2, "needs case_id"),
    ),
    "operations_trace_infinite.jsonl": (["operations-outputs"], (1, "overflows to infinity")),
    "conversations_infinite_timestamp.json": (
        ["validate", "audit", "import-memaudit"],
        (1, "overflows to infinity"),
    ),
    # issue 18 item 6: memaudit's file name (data/sample-dataset.json) is read as conversations
    "audit-sample-dataset.json": (
        ["validate", "audit", "import-memaudit"],
        (None, "conversations[c1].facts[f1].category"),
    ),
    "suite_timeout_nan.yaml": (SUITE, (7, "not a finite number")),
    "items_infinite_expected.jsonl": (["run-items"], (1, "1e999 overflows to infinity")),
    # item 6: YAML is bounded
    "dataset_alias_bomb": (RETRIEVAL, (7, "expands to more than 10 MB")),
    "bundle_alias_bomb_metadata.yaml": (RETRIEVAL, (12, "expands to more than 10 MB")),
    "suite_alias_bomb_kwargs.yaml": (SUITE, (13, "expands to more than 10 MB")),
    "subject_alias_bomb.yaml": (["validate-subject", "evaluate-s"], (7, "expands to more")),
    "suite_duplicate_key.yaml": (SUITE, (4, "duplicate key 'name'")),
    "bundle_duplicate_key.json": (RETRIEVAL, (6, "duplicate key 'grade'")),
    "suite_nested_too_deep.yaml": (SUITE, (7, "nested deeper than 100 levels")),
    # item 7: every malformed file gets exit 2
    "locomo_wrong_types.json": (
        ["validate", "import-locomo"],
        (None, "[0].qa[0].category"),
    ),
    "longmemeval_wrong_types.json": (
        ["validate", "import-longmemeval"],
        (None, "[0].haystack_sessions[1][0].has_answer"),
    ),
    # issue 27 item 7: a wrong type that was a TypeError (exit 70) in the importer
    "locomo_category_list.json": (
        ["validate", "import-locomo", "audit", "extraction-locomo"],
        (None, "[0].qa[0].category: must be an integer 1-5, got a list"),
    ),
    "locomo_observation_not_a_list.json": (
        ["validate", "import-locomo", "audit", "extraction-locomo"],
        (None, "[0].observation.session_1_observation.Ann: must be a list, got a string"),
    ),
    "longmemeval_empty_question_id.json": (
        ["validate", "import-longmemeval", "audit"],
        (None, "[0].question_id: must not be empty"),
    ),
    # a NUL, which PostgreSQL refuses in any text (ab add was exit 70 on a server store)
    "ab_pairs_nul_query_id.jsonl": (["ab-add"], (2, "a string holds a NUL character")),
    "suite_nul_escape.yaml": (SUITE, (5, "a string holds a NUL character")),
    "items_csv_nul_cell.csv": (["import-csv-items"], (3, "a NUL byte at offset")),
    "dataset_latin1_yaml": (RETRIEVAL, (1, "not UTF-8")),
    "suite_duplicate_item_ids.yaml": (SUITE, (9, "duplicate item id 'a'")),
    "suite_rubric_criteria_list.yaml": (SUITE, (9, "criteria: Input should be a valid dict")),
    "operations_merge_action.json": (["operations"], (None, "'MERGE' is not an action")),
    "operations_incoming_without_content.json": (["operations"], (None, "needs its text")),
    "extraction_empty_conversation.json": (
        ["extraction-locomo"],  # the same command, on a cases file
        (
            None,
            "[0].conversation: List should have at least 1 item after validation, not 0; "
            "give the turns to extract from",
        ),
    ),
    "operations_incoming_empty_content.json": (["operations"], (None, "content is blank")),
    "annotations_graded_twice.jsonl": (["import-annotations"], (None, "graded again")),
    # issue 19 item 4: the pool as `logs annotate` wrote it, never graded
    "annotations_no_grades.jsonl": (["import-annotations"], (None, "has a grade: nothing")),
    "run_nbsp_separator.txt": (["validate", "metrics-run"], (2, "expected 6 columns")),
    # issue 28 item 1: what trec_eval 10 refuses too
    "run_missing_tag.txt": (["metrics-run"], (2, "expected 6 columns")),
    "qrels_only_comments.txt": (["metrics-qrels"], (None, "no judgment line")),
    # 3 columns: BEIR's qrels TSV and an MS MARCO run, which trec_eval and ir_measures refuse
    # too; the message says how to convert them
    "qrels_beir_tsv.txt": (["validate", "metrics-qrels"], (1, "'memgauge import beir DIR")),
    "run_msmarco.txt": (["validate", "metrics-run"], (1, "convert_msmarco_run_to_trec_run")),
    # ir_datasets' `export DATASET scoreddocs --format tsv`: query_id doc_id score
    "run_ir_datasets_scoreddocs.tsv": (["metrics-run"], (1, "scoreddocs exported --format tsv")),
    # ir_datasets' `export DATASET qrels --format tsv` (query_id doc_id relevance iteration):
    # read as TREC columns, every judgment was of a document named '1', graded 0
    "qrels_ir_datasets_tsv.tsv": (["validate", "metrics-qrels"], (None, "--format trec")),
    "suite_nul_byte.yaml": (SUITE, (4, "a NUL byte at offset")),
    "subject_empty_list.yaml": (["validate-subject", "evaluate-s"], (None, "lists no subject")),
    "operations_no_cases.json": (["operations"], (None, "no records")),
    # issue 20 item 3: the importers of other tools' formats
    "beir_corpus_missing_id": (["import-beir"], (2, "_id: needs a non-empty string id")),
    "beir_qrels_bad_score": (["import-beir"], (3, "score: 'high' is not an integer")),
    "items_csv_ragged_row.csv": (["import-csv-items"], (3, "4 cells, but the header has 3")),
    "items_csv_one_cell_row.csv": (["import-csv-items"], (3, "1 cell, but the header has 3")),
    "items_csv_unknown_column.csv": (["import-csv-items"], (1, "answer: unknown column")),
    "spans_bad_score.jsonl": (
        ["import-spans"],
        (2, "attributes.retrieval.documents.0.document.score: a score must be a finite number"),
    ),
    "spans_attribute_without_key.json": (
        ["import-spans"],
        (None, "spans.0.attributes.1: an attribute needs a string `key`"),
    ),
    # issue 27 item 6: refused when read, not after every query was searched (a run left
    # `running`)
    "suite_k_below_cutoff.yaml": (
        SUITE,
        (8, "tasks.0.k: search depth k=4 is below the largest cutoff @10 (Recall@10); use k: 10"),
    ),
    # fuzzC-6: MetricConfig's ValueError ended `validate` and `run` in exit 70
    "suite_evaluator_rel_threshold_negative.yaml": (
        SUITE,
        (8, "tasks.0.evaluators.0: rel_threshold -1: give a grade of 0 or more"),
    ),
    # fuzzC-6: the run scored every item, then MetricConfig's ValueError ended it in exit 70
    # (the run left failed); `validate` said ok, as it did to any aggregate its own checks refuse
    "suite_ir_rel_threshold_negative.yaml": (
        SUITE,
        (9, "tasks.0.aggregates.0: rel_threshold -1: give a grade of 0 or more"),
    ),
    # issue 27 item 8: every retriever span dropped, none logged as a search that found nothing
    "spans_documents_a_string.json": (
        ["import-spans"],
        (
            None,
            "spans.0.attributes.retrieval.documents: is a string, not a list of documents (2 "
            "retriever spans dropped for this); no retriever span of the file can be logged",
        ),
    ),
    # issue 33 item 2: whole traces; a file that cannot be read is refused, never read as empty
    "traces_otlp_cut_off.json": (
        ["import-traces"],
        (1, "not valid JSON: Expecting value at column 284"),
    ),
    "traces_langsmith_not_a_run.json": (
        ["import-traces", "extraction-trace"],
        (None, "1: a run must be an object, got a string"),
    ),
    "traces_langsmith_bad_time.json": (
        ["import-traces", "extraction-trace"],
        (None, "0.child_runs.0.start_time: 'yesterday' is not a time"),
    ),
    # an import that leaves nothing to evaluate was written, then refused by `evaluate` (and
    # an `evaluate` of the file itself scored nothing and exited 0); `validate` accepts them,
    # as `audit` and `synth` do (tests/data_io/test_validate_cli.py)
    "longmemeval_no_user_turns.json": (
        ["import-longmemeval", "evaluate"],
        (
            None,
            "nothing to evaluate: the longmemeval-turn import holds 0 memories, 1 query, 0 "
            "judgments; 1 dropped (query q-1: no user turn in the haystack)",
        ),
    ),
    "beir_qrels_unknown_query": (
        ["import-beir"],
        (
            None,
            "nothing to evaluate: the beir import holds 6 memories, 0 queries, 0 judgments; 1 "
            "dropped (line 2, query q9, document d1: query not in queries.jsonl)",
        ),
    ),
    "locomo_no_questions.json": (
        ["import-locomo", "evaluate"],
        (None, "nothing to evaluate: the locomo import holds 2 memories, 0 queries, 0 judgments"),
    ),
}

PARAMS = [(name, cmd) for name, (cmds, _) in CASES.items() for cmd in cmds]


@pytest.fixture(autouse=True)
def _home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMGAUGE_HOME", str(tmp_path / "home"))


def _refused(path: Path, command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> str:
    """Run `command` on `path`: exit 2, no traceback, nothing left behind; the error text."""
    env = Env(tmp_path)
    argv, left_behind = COMMANDS[command]
    args = argv(str(path), env)
    capsys.readouterr()
    assert main(args) == 2
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    assert path.name in err, err
    left_behind(env)
    return err


@pytest.mark.parametrize(("name", "command"), PARAMS, ids=[f"{c}:{n}" for n, c in PARAMS])
def test_malformed_file_exits_2_names_it_and_leaves_nothing(
    name: str,
    command: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    err = _refused(BAD / name, command, tmp_path, capsys)
    line, text = CASES[name][1]
    assert text in err, err
    if line is not None:  # a dataset directory's problem is in one of its files
        assert re.search(rf"{re.escape(name)}[^:\s]*:{line}:", err), err


def test_every_file_here_exists() -> None:
    missing = [n for n in CASES if not (BAD / n).exists()]
    assert not missing


DEEP = "[" * 200_000 + "]" * 200_000


@pytest.mark.parametrize(
    ("filename", "command"),
    [
        ("memories.json", "validate"),
        ("bundle.json", "evaluate"),
        ("conversations.json", "audit"),
        ("locomo.json", "import-locomo"),
        ("longmemeval.json", "import-longmemeval"),
        ("labels.jsonl", "judge-calibrate"),
        ("pairs.jsonl", "ab-add"),
        ("cases.json", "operations"),
    ],
)
def test_json_nested_200000_deep_is_refused_without_recursion_error(
    filename: str,
    command: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    deep = tmp_path / filename
    deep.write_text(DEEP + "\n")
    err = _refused(deep, command, tmp_path, capsys)
    assert f"{filename}:1: not valid JSON: nested deeper than 100 levels" in err


def test_deeply_nested_output_text_is_a_wrong_decision_not_a_crash(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # a decider's output is text that may hold JSON; nested 5,000 deep it was a RecursionError
    trace = tmp_path / "trace.jsonl"
    cases = DATA / "operations" / "cases.json"
    trace.write_text('{"case_id": "dup-1", "output": "' + "[" * 5000 + "]" * 5000 + '"}\n')
    code = main(["operations", str(cases), "--outputs", str(trace), "--json"])
    out, err = capsys.readouterr()
    assert code == 4  # the 8 cases with no recorded decision fail the run: exit 4, not a crash
    assert "Traceback" not in out + err
    assert json.loads(out)["n_cases"] == 9
