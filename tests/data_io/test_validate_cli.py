"""`memgauge validate` on every malformed file: exit 2, file and line named, no traceback."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from memgauge.cli.main import main
from memgauge.data.demo import demo_dataset
from memgauge.data.io import load_retrieval_dataset, save_retrieval_dataset
from memgauge.data.trec import read_qrels, read_run

MALFORMED = (Path(__file__).resolve().parents[1] / "cli" / "test_malformed_files.py").read_text()

DATA = Path(__file__).resolve().parents[1] / "data"
# files for commands other than `validate` (tested in tests/cli/test_bad_inputs.py), and files
# tested command by command, `validate` included, in tests/cli/test_malformed_files.py
OTHER_COMMANDS = {
    *(p.name for p in (DATA / "bad").iterdir() if f'"{p.name}"' in MALFORMED),
    "ab_pairs_missing_treatment.jsonl",
    "annotations_truncated.jsonl",
    "annotations_fractional_grade.jsonl",
    "annotations_boolean_grade.jsonl",
    "annotations_missing_query_id.jsonl",
    "annotations_mapping.yaml",
    "not_a_bundle.json",  # `runs import`: tests/cli/test_run_bundles.py
    "run_bundle_bad_item.json",  # `runs import`: tests/cli/test_run_bundles.py
    "run_bundle_duplicate_run.json",  # `runs import`: tests/cli/test_run_bundles.py
    "run_bundle_unknown_gate.json",  # `runs import`: tests/cli/test_run_bundles.py
    "spans_documents_malformed.jsonl",  # `logs import-spans`: tests/online/test_import_spans.py
    "traces_partial.jsonl",  # `logs import-traces`: tests/online/test_import_traces.py
    "traces_parent_cycle.jsonl",  # `logs import-traces`: tests/online/test_import_traces.py
    "traces_span_ends_before_start.json",  # `logs import-traces`: test_import_traces.py
    "traces_token_count_1e30.jsonl",  # `logs import-traces`: tests/online/test_import_traces.py
    "traces_langsmith_time_past_64_bits.json",  # `logs import-traces`: test_import_traces.py
    "watch_state_wrong_types.json",  # `watch --state`: tests/online/test_watch.py
    "watch_state_empty_alert.json",  # `watch --state`: tests/online/test_watch.py
}
BAD = sorted(
    p for p in (DATA / "bad").iterdir() if p.name != "README.md" and p.name not in OTHER_COMMANDS
)
GOOD = sorted((DATA / "good").iterdir())

# file -> (expected line or None, text that must appear in the message)
EXPECTED: dict[str, tuple[int | None, str]] = {
    "memories_truncated_line.jsonl": (2, "not valid JSON"),
    "judgments_truncated.json": (2, "not valid JSON"),
    "judgments_list_of_rows.json": (None, "[0]: expected an object with fields, got list"),
    "export_json_lines_list_line.json": (2, "[1]: expected an object with fields, got list"),
    "traces_otlp_array_value_a_string.jsonl": (
        None,
        "attributes.4.value.arrayValue: must be an object {values: [...]}, got a string",
    ),
    "memories_empty.jsonl": (None, "no records"),
    "queries_whitespace_only.jsonl": (None, "no records"),
    "memories_non_utf8.jsonl": (1, "not UTF-8"),
    "memories_wrong_types.jsonl": (1, "text"),
    "judgments_grade_out_of_range.jsonl": (1, "use 0 (not relevant)"),
    "memories_duplicate_ids.jsonl": (None, "duplicate id 'm1'"),
    "queries_unknown_field.jsonl": (1, "unknown field"),
    "memories_bad_tier.jsonl": (1, "constitutional, critical"),
    "queries_missing_required.jsonl": (1, "required field is missing"),
    "judgments_nan.jsonl": (1, "NaN is not valid JSON"),
    "judgments_source_channels_not_a_list.jsonl": (2, "valid list"),
    "bundle_top_level_scalar.json": (None, "expected a dataset object"),
    "bundle_yaml_syntax.yaml": (4, "not valid YAML"),
    "qrels_bad_columns.txt": (2, "expected 4 columns"),
    "run_bad_score.txt": (2, "is not a number"),
    "run_duplicate_doc.txt": (2, "appears twice"),
    "qrels_grade_too_large.txt": (2, "grade 2147483648 is above 2147483647"),
    "qrels_grade_5000_digits.txt": (2, "'999999999999...(5000 digits)' is out of range"),
    "qrels_pyterrier_keys.json": (2, "the first line has qid, docno, label. Rename those"),
    "dataset_unknown_ids": (1, "unknown memory 'm9'"),
    "dataset_missing_queries": (None, "needs queries.jsonl"),
    # the README once named a directory's chains file so: it was silently not read
    "dataset_chains_misnamed": (None, "causal_chains are in chains.jsonl; rename it"),
    "dataset_qrels_grade_above_3": (2, "grade 1024 is above 3, memgauge datasets grade 0-3"),
    "conversations_dangling_supersedes.json": (None, "supersedes unknown fact 'f0'"),
    "conversations_circular_supersedes.json": (None, "circular"),
    "conversations_bad_role.jsonl": (1, "role"),
    "chains_too_short.jsonl": (1, "at least 2"),
    "locomo_not_a_list.json": (None, "JSON list of samples"),
    "longmemeval_missing_fields.json": (None, "missing fields"),
    "longmemeval_truncated.json": (2, "not valid JSON"),
    "longmemeval_lines_missing_field.json": (2, "[1]: missing fields ['question_type']"),
    "suite_unknown_evaluator.yaml": (9, "unknown evaluator 'bleu'"),
    "suite_bad_weight.yaml": (9, "greater than 0"),
    # its row and the task's combined score shared one name in every view
    "suite_evaluator_labelled_combined.yaml": (10, "'combined' names the task's combined score"),
    "suite_missing_dataset.yaml": (8, "does not exist"),
    "suite_script_task_without_script.yaml": (8, "needs a script evaluator"),
    "suite_optimize_bad_constraint.yaml": (12, "write [TASK/]MEASURE OP NUMBER"),
    "suite_task_names_unknown_subject.yaml": (9, "no subject called 'agnet'"),
    "suite_items_and_dataset.yaml": (5, "either dataset: (an items file) or items:, not both"),
    "subject_unknown_kind.yaml": (None, "must be one of {reference"),
    "subject_kind_misspelt.yaml": (2, "'pyhton' is no subject kind (did you mean 'python'?)"),
    "subject_truncated.yaml": (2, "not valid YAML"),
    "conversations_bad_timestamp.json": (None, "fact 'f1': 'last Tuesday' is not a date"),
    "conversations_truncated.json": (3, "not valid JSON"),
    "conversations_forked_supersedes.json": (
        None,
        "fact 'f1' is superseded by 2 facts ('f2', 'f3')",
    ),
    "conversations_turn_without_role.json": (
        None,
        "conversations[c2].turns[1].role: required field is missing",
    ),
    "labels_bad_verdict.jsonl": (2, "is not a verdict: use pass or fail"),
    "labels_missing_label.jsonl": (2, "a human label is needed"),
    "extraction_replaces_unknown.json": (None, "which is not in existing_memory"),
    "extraction_duplicate_fact.json": (None, "expected fact 'drinks  tea' repeats 'Drinks tea'"),
    "extraction_blank_fact.json": (
        None,
        "[0].expected_facts.1.content: the expected fact is blank: give its text, or remove it",
    ),
    "extraction_zero_width_fact.json": (
        None,
        "[0].expected_facts.1.content: the expected fact is blank (only invisible characters:"
        " U+200B, U+2060, U+FEFF): give its text, or remove it",
    ),
    "extraction_blank_turn.json": (
        None,
        "[0].conversation: turn 2 (assistant) is blank (only invisible characters: U+200B):"
        " give what was said, or remove the turn",
    ),
    "operations_incoming_zero_width_content.json": (
        None,
        "[0].incoming: the incoming memory's content is blank (only invisible characters:"
        " U+200B, U+FEFF): give the text to decide on",
    ),
    "memory_single_object.json": (
        None,
        "one object with id and text: it looks like one memory or query, not a dataset; write"
        " memories.jsonl or queries.jsonl, one such object a line, or a bundle",
    ),
    "judgment_single_object.json": (
        None,
        "one object with query_id and memory_id: it looks like one judgment, not a dataset;"
        " write judgments.jsonl, one such object a line, or a bundle",
    ),
    "extraction_duplicate_fact_nfd.json": (
        None,
        "expected fact 'lives in Zu\u0308rich ' repeats 'Lives in Z\u00fcrich' (the same text "
        "in another Unicode form: one writes an accent as a combining mark)",
    ),
    "operations_missing_expected.json": (None, "[0].expected: required field is missing"),
    "suite_ingest_text.yaml": (8, "tasks.0.ingest: give true or false, not a text (got 'no')"),
    "suite_misspelt_kwargs.yaml": (
        6,
        "subjects.mine.python.kwarg: unknown key; did you mean 'kwargs'? (it takes kwargs, target)",
    ),
    "suite_misspelt_evaluator_arg.yaml": (
        10,
        "tasks.0.evaluators.1.token_f1.varient: unknown key; did you mean 'variant'?",
    ),
    "suite_fusion_normalization_with_rank_method.yaml": (
        7,
        "subjects.memory.reference.normalization: fusion isr reads ranks only",
    ),
    "suite_optimize_bad_range_syntax.yaml": (11, "optimization.space.k_rrf: 'int:10-120'"),
    "suite_optimize_choice_refused_by_subject.yaml": (
        12,
        "optimization.space.mode: subject 'memory' refuses mode='fuzzy'",
    ),
    "suite_optimize_misspelt_key.yaml": (10, "optimization.maxIteration: unknown field"),
    "suite_optimize_space_low_above_high.yaml": (11, "low 100 is above high 10"),
    "suite_optimize_negative_target.yaml": (
        10,
        "optimization.targetScore: Input should be greater",
    ),
    "suite_optimize_unknown_measure.yaml": (10, "task 'recall' has no measure 'Recall@10'"),
    "suite_optimize_unknown_space_field.yaml": (
        12,
        "optimization.space.k_rf: subject 'memory' (reference) has no field 'k_rf'",
    ),
    "suite_optimize_unknown_strategy.yaml": (10, "'greedy', 'best-of-n', 'annealing', 'tpe'"),
    "suite_optimize_k_below_every_cutoff.yaml": (
        12,
        "optimization.space.k: no value of int:1..5 is a k task 'recall' takes: k is a whole "
        "number of hits from 10 (the largest cutoff, of Recall@10)",
    ),
    "suite_optimize_unknown_subject.yaml": (11, "no subject called 'memroy'"),
    "subject_misspelt_key.yaml": (3, "1.reference.mdoe: unknown key; did you mean 'mode'?"),
    "operations_tags_not_a_list.json": (None, "[0].expected.tags: Input should be a valid list"),
    "suite_learnings_unknown_key.yaml": (
        5,
        "subjects.decider.llm-decider.learnings.topk: unknown key",
    ),
    "suite_learnings_budget_too_small.yaml": (
        11,
        "tasks.0.evaluators.0.rubric.learnings.budget: Input should be greater than or equal to 20",
    ),
    # issue 18 items 7 and 8 (their commands are tested in tests/runs/)
    "suite_judge_agent_unknown.yaml": (
        14,
        "tasks.0.evaluators.0.rubric.agent: no subject called 'qualty-judge'",
    ),
    "embedding_pairs_bad_label.jsonl": (2, "label: Input should be 'similar' or 'different'"),
    # issue 29 item 5: several problems each, every one listed (tests/cli/test_one_pass.py)
    "dataset_many_problems": (5, "(q1, m1, manual) is judged twice"),
    "dataset_memory_line_cut_off": (3, "judgment for unknown query 'q7'"),
    "suite_many_problems.yaml": (18, "token_f1.varient: unknown key"),
    # issue 32: repeats (`memgauge run` on them: tests/runs/test_repeats.py)
    "suite_repeat_zero.yaml": (8, "tasks.0.repeat: Input should be greater than or equal to 1"),
    "suite_repeat_too_many.yaml": (2, "repeat: Input should be less than or equal to 100"),
    "suite_task_without_evaluators.yaml": (
        5,
        "tasks.0.evaluators: required field is missing; list what scores each item, e.g. "
        "evaluators: [{retrieval: nDCG@10}]",
    ),
    "suite_operations_without_evaluators.yaml": (
        5,
        "[extraction] for extraction cases, [operation-checks] for merge decisions",
    ),
    "items_many_problems.jsonl": (3, "duplicate item id 'q1'"),
    "conversations_many_problems.json": (None, "fact 'f2' supersedes unknown fact 'f9'"),
    "stored_vectors_ragged.jsonl": (3, "vector: 2 numbers where the first line has 3"),
    "stored_vectors_one_number.jsonl": (2, "vector: 1 number where the first line has 3"),
    # issue 33 item 4: a watch's state file cut off (tests/online/test_watch.py)
    "watch_state_truncated.json": (1, "not valid JSON"),
}


def test_every_bad_file_has_an_expectation() -> None:
    assert {p.name for p in BAD} == set(EXPECTED)
    assert len(BAD) >= 15


@pytest.mark.parametrize("path", BAD, ids=lambda p: p.name)
def test_bad_file_exits_2_naming_file_and_line(
    path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["validate", str(path)])
    out, err = capsys.readouterr()
    assert code == 2
    assert "Traceback" not in out + err
    line, text = EXPECTED[path.name]
    assert text in err, err
    assert path.name in err
    if line is not None:
        assert f":{line}" in err, err
    assert "nothing was written" in err


@pytest.mark.parametrize("path", GOOD, ids=lambda p: p.name)
def test_good_file_validates(path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", str(path)]) == 0
    assert capsys.readouterr().out.startswith("ok  ")


@pytest.mark.parametrize(
    ("name", "account"),
    [
        ("locomo_no_questions.json", "2 memories, 0 queries, 0 judgments"),
        ("longmemeval_no_user_turns.json", "0 memories, 1 query, 0 judgments, 1 item dropped"),
    ],
)
def test_a_benchmark_file_with_nothing_to_evaluate_is_still_valid(
    name: str, account: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Valid files of their format (`audit` and `synth` read them), which `import` and
    `evaluate` refuse for having nothing judged (tests/cli/test_malformed_files.py)."""
    assert main(["validate", str(DATA / "bad" / name)]) == 0
    out = capsys.readouterr().out
    assert f"{account}; nothing to evaluate: `import` and `evaluate` refuse it" in out


def test_every_problem_is_reported_not_only_the_first(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(
        [
            "validate",
            str(DATA / "bad" / "run_bad_score.txt"),
            str(DATA / "bad" / "judgments_grade_out_of_range.jsonl"),
        ]
    )
    err = capsys.readouterr().err
    assert code == 2
    assert "run_bad_score.txt:2" in err
    assert "run_bad_score.txt:3" in err
    assert "judgments_grade_out_of_range.jsonl:1" in err
    assert "judgments_grade_out_of_range.jsonl:2" in err


def test_fifty_megabyte_line_is_reported_without_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    big = tmp_path / "memories.jsonl"
    with open(big, "wb") as fh:
        fh.write(b'{"id": "m1", "text": "ok"}\n')
        fh.write(b'{"id": "m2", "text": "' + b"x" * (50 * 1024 * 1024) + b'"}\n')
        fh.write(b'{"id": "m3", "text": "ok"}\n')
    code = main(["validate", str(big)])
    err = capsys.readouterr().err
    assert code == 2
    assert "memories.jsonl:2" in err
    assert "longer than 16,777,216 bytes" in err
    # the one way out a user has: no setting raises the limit, so none is named
    assert "split the record" in err
    assert "max_line_bytes" not in err
    assert "Traceback" not in err


def test_undetectable_kind_asks_for_kind(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    odd = tmp_path / "notes.md"
    odd.write_text("# hello\n")
    assert main(["validate", str(odd)]) == 2
    assert "--kind" in capsys.readouterr().err


def test_trec_round_trip(tmp_path: Path) -> None:
    from memgauge.data.trec import write_qrels, write_run

    qrels = read_qrels(DATA / "good" / "qrels.txt")
    assert qrels == {"q1": {"m1": 2, "m2": 0}, "q2": {"m1": 3}}
    run = read_run(DATA / "good" / "run.txt")
    write_qrels(tmp_path / "q.txt", qrels)
    write_run(tmp_path / "r.txt", run)
    assert read_qrels(tmp_path / "q.txt") == qrels
    assert read_run(tmp_path / "r.txt") == run
    # ranks follow trec_eval order: equal scores -> doc id descending (m2 before m1)
    first = (tmp_path / "r.txt").read_text().splitlines()[0]
    assert first.split()[2] == "m2"
    assert first.split()[3] == "1"


def test_bundle_loads() -> None:
    ds = load_retrieval_dataset(DATA / "good" / "bundle.yaml")
    assert ds.name == "tiny"
    assert ds.qrels() == {"q1": {"m1": 3, "m2": 0}}


def test_a_fifo_is_named_not_a_regular_file_not_missing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Before: "no such file" for a FIFO that exists, which sends the user looking for a typo.
    fifo = tmp_path / "memories.jsonl"
    os.mkfifo(fifo)
    assert main(["validate", "--kind", "memories", str(fifo)]) == 2
    err = capsys.readouterr().err
    assert f"{fifo}: not a regular file" in err
    assert "Traceback" not in err


@pytest.mark.parametrize("part", ["memories.jsonl", "equivalence.jsonl"])
@pytest.mark.parametrize("what", ["a FIFO or device", "a directory"])
def test_a_dataset_directorys_part_that_is_no_file_is_named_not_missing(
    part: str, what: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A dataset directory's memories.jsonl that was a FIFO or a directory was "missing: a
    dataset directory needs memories.jsonl" (the report's reason for a hit's text, too), and
    an optional part's (equivalence.jsonl) left out without a word: each is named for what
    it is, exit 2."""
    ds = tmp_path / "ds"
    save_retrieval_dataset(demo_dataset(), ds)
    (ds / part).unlink(missing_ok=True)
    os.mkfifo(ds / part) if what.startswith("a FIFO") else (ds / part).mkdir()
    assert main(["validate", str(ds)]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert f"{ds / part}: not a regular file ({what}): make it JSON lines" in err, err
    assert "missing" not in err, err


@pytest.mark.parametrize("kind", ["qrels", "run"])
def test_a_device_as_a_trec_file_is_named_not_a_regular_file(
    kind: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # Before: the TREC reader said "no such file" for /dev/null (or a FIFO), which exists.
    assert main(["validate", "--kind", kind, "/dev/null"]) == 2
    err = capsys.readouterr().err
    assert "/dev/null: not a regular file" in err
    assert "Traceback" not in err


@pytest.mark.parametrize("command", ["validate", "evaluate"])
def test_a_beir_directory_is_named_and_sent_to_import(
    command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Before: read as a memgauge dataset directory, nine problems ("_id: unknown field" on
    # every query, judgments.jsonl missing) and no word of BEIR or of `memgauge import beir`.
    beir = DATA / "beir" / "mini"
    args = [command, str(beir)]
    if command == "evaluate":
        args += ["-s", "lexical", "--no-store", "--out", str(tmp_path / "out")]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert f"{beir}: a BEIR directory (corpus.jsonl, queries.jsonl, qrels/)" in err
    assert f"`memgauge import beir {beir} --out DIR`" in err
    assert "1 problem found" in err
    assert not (tmp_path / "out").exists()


def test_json_lines_under_a_json_name_are_read_a_record_a_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`review export --out labels.json` writes JSON lines under a .json name, as many tools'
    exports do; `metrics` read it, `validate` said "not valid JSON: Extra data" at line 2. It is
    now read a record a line, and a bad line is named with its own error."""
    rows = [
        '{"query_id": "q1", "memory_id": "m1", "grade": 2}',
        '{"query_id": "q1", "memory_id": "m2", "grade": 0}',
        '{"query_id": "q2", "memory_id": "m1", "grade": 1}',
    ]
    good = tmp_path / "labels.json"
    good.write_text("\n".join(rows) + "\n", encoding="utf-8")
    assert main(["validate", str(good)]) == 0, capsys.readouterr().err
    assert capsys.readouterr().out.startswith(f"ok  {good}  (judgments: 3 records")
    bad = tmp_path / "cut.json"
    bad.write_text(rows[0] + "\n" + rows[1][:-1] + "\n", encoding="utf-8")
    assert main(["validate", str(bad)]) == 2
    err = capsys.readouterr().err
    assert f"{bad}:2: not valid JSON: Expecting ',' delimiter" in err, err
    assert "Extra data" not in err
    assert "Traceback" not in err


@pytest.mark.parametrize("form", ["lines", "list"])
def test_conversations_under_a_json_name_read_as_the_jsonl_reads_them(
    form: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Conversations as JSON lines under a `.json` name, or as one JSON list, are detected as
    conversations (by their records), but the reader took the file for one dataset object:
    "Input should be a valid dictionary" (exit 2), no line. Each is read a conversation a
    record, as the `.jsonl` file is, a bad one named by its line (JSON lines) or place."""
    lines = (DATA / "good" / "conversations.jsonl").read_text().splitlines()
    path = tmp_path / "conversations.json"
    path.write_text("\n".join(lines) + "\n" if form == "lines" else f"[{', '.join(lines)}]\n")
    assert main(["validate", str(path)]) == 0
    assert "(conversations: 2 conversations, 2 facts)" in capsys.readouterr().out
    bad = lines[1].replace('"turns"', '"turn"')
    path.write_text(f"{lines[0]}\n{bad}\n" if form == "lines" else f"[{lines[0]},\n{bad}]\n")
    assert main(["validate", str(path)]) == 2
    err = capsys.readouterr().err
    assert (f"{path}:2: turns: " if form == "lines" else f"{path}: [1].turns: ") in err, err


def test_one_record_is_counted_in_the_singular(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """validate said '(judgments: 1 records)': a records file is counted as traces and
    sessions are, through counted()."""
    path = tmp_path / "judged.json"
    path.write_text('[{"query_id": "q1", "memory_id": "m1", "grade": 2}]\n')
    assert main(["validate", str(path)]) == 0
    assert "(judgments: 1 record)" in capsys.readouterr().out


def test_write_path_files_of_one_say_their_counts_in_the_singular(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """validate said '1 extraction cases, 1 expected facts' and '1 memory-operation cases',
    and `memgauge extraction` 'extractor: 1 cases', where every other count of one is said in
    the singular."""
    conversation = [{"role": "user", "content": "I drink tea."}]
    one = {"id": "c1", "conversation": conversation, "expected_facts": [{"content": "Drinks tea"}]}
    cases = tmp_path / "cases.json"
    cases.write_text(json.dumps({"cases": [one]}))
    merge = {
        "id": "m1",
        "existing": [{"id": "a", "content": "Drinks tea"}],
        "incoming": {"content": "Drinks tea"},
        "expected": {"action": "NOOP"},
    }
    ops = tmp_path / "ops.json"
    ops.write_text(json.dumps({"cases": [merge]}))
    assert main(["validate", str(cases), "--kind", "extraction"]) == 0
    assert "(extraction: 1 extraction case, 1 expected fact)" in capsys.readouterr().out
    assert main(["validate", str(ops), "--kind", "operations"]) == 0
    assert "(operations: 1 memory-operation case)" in capsys.readouterr().out
    trace = tmp_path / "trace.jsonl"
    trace.write_text(json.dumps({"case_id": "c1", "output": ["Drinks tea"]}) + "\n")
    argv = ["extraction", str(cases), "--outputs", str(trace), "--match", "exact", "--no-store"]
    assert main(argv) == 0
    assert "extractor: 1 case, 1 scored, 0 failed" in " ".join(capsys.readouterr().out.split())
