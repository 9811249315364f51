"""One pass of validation (issue 29 item 5): a file with several independent problems has every
one of them listed by the first `validate`, and by `evaluate` and `run` on the same file, in
file and line order, with the checks that could not run said so; a long list is cut with how
many more there are. Before, fixing one problem revealed the next, round after round."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from memgauge import api
from memgauge.cli.main import MAX_LISTED, main
from memgauge.errors import DataError

BAD = Path(__file__).resolve().parents[1] / "data" / "bad"

# file -> every problem it has: (line or None, words of the message)
MANY: dict[str, list[tuple[int | None, str]]] = {
    "dataset_many_problems": [
        (2, "memories.jsonl:2: text: Input should be a valid string (got 42)"),
        (3, "memories.jsonl:3: id: duplicate id 'm1' (first at line 1)"),
        (2, "queries.jsonl:2: categry: unknown field"),
        (2, "judgments.jsonl:2: query_id: judgment for unknown query 'q9'"),
        (3, "judgments.jsonl:3: grade: Input should be less than or equal to 3 (got 7)"),
        (4, "judgments.jsonl:4: memory_id: judgment for unknown memory 'm404'"),
        (5, "judgments.jsonl:5: (q1, m1, manual) is judged twice (first at line 1)"),
    ],
    "dataset_memory_line_cut_off": [
        (2, "memories.jsonl:2: not valid JSON"),
        (None, "judgments.jsonl: not checked for memories that do not exist"),
        (3, "judgments.jsonl:3: query_id: judgment for unknown query 'q7'"),
    ],
    "suite_many_problems.yaml": [
        (3, ":3: subjects.memory.reference.mode: Input should be 'lexical', 'dense' or 'hybrid'"),
        (7, ":7: tasks.0.dataset: no/such/items.jsonl does not exist"),
        (10, ":10: tasks.0.evaluators.0.weight: Input should be greater than 0"),
        (15, ":15: tasks.1.subjects: no subject called 'memroy'"),
        (17, ":17: tasks.1.evaluators.0: unknown evaluator 'bleu'"),
        (18, ":18: tasks.1.evaluators.1.token_f1.varient: unknown key"),
    ],
    "items_many_problems.jsonl": [
        (2, ":2: input: Input should be a valid string (got 8080)"),
        (3, ":3: id: duplicate item id 'q1' (first at line 1)"),
        (4, ":4: expectd: unknown field"),
    ],
    "conversations_many_problems.json": [
        (None, "conversations[c1].turns[0].role: Input should be 'user'"),
        (None, "conversations[c2].turns[0].timestamp: 'last Tuesday' is not a date"),
        (None, "facts: duplicate fact id 'f1' (2 times)"),
        (None, "conversations[c1].facts[0].supersedes: fact 'f1' supersedes unknown fact 'f0'"),
        (None, "conversations[c2].facts[0].supersedes: fact 'f2' supersedes unknown fact 'f9'"),
    ],
}


def _errors(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.startswith("error: ")]


def _assert_all_listed(err: str, expected: list[tuple[int | None, str]]) -> None:
    errors = _errors(err)
    for _line, words in expected:
        assert any(words in e for e in errors), f"{words!r} not in:\n{err}"
    assert len(errors) == len(expected), err
    n = len(expected)
    assert f"{n} problem{'s' if n != 1 else ''} found; nothing was written." in err


def _in_file_and_line_order(err: str) -> None:
    """Each file's problems in line order, its whole-file problems first; files not mixed."""
    seen: list[str] = []
    last: dict[str, int] = {}
    for e in _errors(err):
        m = re.match(r"error: (\S+?)(?::(\d+))?: ", e)
        assert m, e
        file, line = m.group(1), int(m.group(2) or 0)
        if not seen or seen[-1] != file:
            assert file not in seen, f"{file} listed in two places:\n{err}"
            seen.append(file)
        assert line >= last.get(file, 0), f"{e} after line {last[file]}:\n{err}"
        last[file] = line


@pytest.mark.parametrize("name", list(MANY))
def test_validate_lists_every_problem_in_one_pass(
    name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["validate", str(BAD / name)]) == 2
    err = capsys.readouterr().err
    _assert_all_listed(err, MANY[name])
    _in_file_and_line_order(err)
    assert "Traceback" not in err


def test_a_reference_check_that_cannot_run_says_so(capsys: pytest.CaptureFixture[str]) -> None:
    """memories.jsonl's line 2 is cut off: whether m2 (judged on judgments.jsonl's line 2)
    exists cannot be told, so no judgment is called dangling for it; the queries part is whole,
    and q7 is."""
    assert main(["validate", str(BAD / "dataset_memory_line_cut_off")]) == 2
    err = capsys.readouterr().err
    assert "'m2'" not in err
    assert "has records whose id could not be read (above); fix them and run again" in err


def test_a_reference_check_against_a_missing_file_does_not_blame_its_records(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """With queries.jsonl missing, the judgments' check said queries.jsonl "has records whose
    id could not be read ... fix them": there is no record to fix, the file is to be written."""
    assert main(["validate", str(BAD / "dataset_missing_queries")]) == 2
    err = capsys.readouterr().err
    assert "not checked for queries that do not exist: queries.jsonl could not be read" in err
    assert "has records" not in err


def test_evaluate_lists_every_problem_of_the_dataset(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "report"
    data, db = str(BAD / "dataset_many_problems"), str(tmp_path / "r.db")
    code = main(["evaluate", data, "-s", "lexical", "--out", str(out), "--store", db])
    assert code == 2
    _assert_all_listed(capsys.readouterr().err, MANY["dataset_many_problems"])
    assert not out.exists()


def test_run_lists_every_problem_of_every_task(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Two tasks, each with a bad file: both files' problems, not the first task's alone."""
    suite = tmp_path / "suite.yaml"
    suite.write_text(
        yaml.safe_dump(
            {
                "name": "two-bad-files",
                "subjects": {"memory": {"reference": {"mode": "lexical"}}},
                "tasks": [
                    {
                        "name": "recall",
                        "kind": "retrieval",
                        "dataset": str(BAD / "dataset_many_problems"),
                        "evaluators": [{"retrieval": "nDCG@10"}],
                    },
                    {
                        "name": "answers",
                        "kind": "expected-output",
                        "dataset": str(BAD / "items_many_problems.jsonl"),
                        "evaluators": ["exact"],
                    },
                ],
            }
        )
    )
    db = tmp_path / "r.db"
    assert main(["run", str(suite), "--store", str(db)]) == 2
    err = capsys.readouterr().err
    _assert_all_listed(err, MANY["dataset_many_problems"] + MANY["items_many_problems.jsonl"])
    _in_file_and_line_order(err)
    if db.exists():
        with api.open_store(str(db)) as store:
            assert store.list_runs(10, None) == []


def test_run_lists_every_problem_of_the_suite(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite = str(BAD / "suite_many_problems.yaml")
    assert main(["run", suite, "--store", str(tmp_path / "r.db")]) == 2
    _assert_all_listed(capsys.readouterr().err, MANY["suite_many_problems.yaml"])


def test_a_long_list_is_cut_with_how_many_more(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "memories.jsonl"
    bad.write_text("".join(f'{{"id": "m{i}", "text": {i}}}\n' for i in range(1, 121)))
    assert main(["validate", str(bad)]) == 2
    err = capsys.readouterr().err
    assert len(_errors(err)) == MAX_LISTED == 50
    assert f"memories.jsonl:{MAX_LISTED}: text" in err
    assert f"memories.jsonl:{MAX_LISTED + 1}: text" not in err
    assert "... and 70 more problems, not listed" in err
    assert "120 problems found; nothing was written." in err


def test_a_reader_that_keeps_some_problems_still_counts_them_all(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The TREC readers keep the first 200 problems of a file; the count is of all of them."""
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("".join(f"q{i} 0 d{i} high\n" for i in range(250)))
    with pytest.raises(DataError) as caught:
        api.validate_file(qrels)
    assert (len(caught.value.problems), caught.value.unlisted, caught.value.count) == (200, 50, 250)
    assert main(["validate", str(qrels)]) == 2
    err = capsys.readouterr().err
    assert "... and 200 more problems, not listed" in err
    assert "250 problems found; nothing was written." in err


def test_the_api_gives_the_problems_in_file_and_line_order() -> None:
    with pytest.raises(DataError) as caught:
        api.load_dataset(BAD / "dataset_many_problems")
    where = [(Path(p.file).name, p.line) for p in caught.value.problems]
    assert where == [
        ("memories.jsonl", 2),
        ("memories.jsonl", 3),
        ("queries.jsonl", 2),
        ("judgments.jsonl", 2),
        ("judgments.jsonl", 3),
        ("judgments.jsonl", 4),
        ("judgments.jsonl", 5),
    ]
