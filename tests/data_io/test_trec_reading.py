"""TREC qrels and run files read as trec_eval 10 reads them (get_qrels.c, get_trec_results.c,
form_res_rels.c), and refused, line by line, where trec_eval refuses them too."""

from __future__ import annotations

import gzip
import json
import math
from pathlib import Path

import pytest

from memgauge.cli.main import main
from memgauge.data.trec import read_qrels, read_run, read_run_tagged
from memgauge.errors import DataError
from memgauge.metrics import MetricConfig, evaluate

pytrec_eval = pytest.importorskip("pytrec_eval")


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_bytes(text.encode())
    return path


def test_comment_lines_are_skipped_in_both_files(tmp_path: Path) -> None:
    qrels = _write(
        tmp_path,
        "qrels",
        "# judged by two assessors\nq1 0 d1 1\n# and a second comment right after\n"
        "# a third\nq1 0 d#2 0\n\nq2 0 d3 2\n",
    )
    run = _write(
        tmp_path,
        "run",
        "# a run\nq1 Q0 d1 1 2.0 tagA\n   # an indented comment\nq1 Q0 d#2 2 1.0 tagA\n\n"
        "q2 Q0 d3 1 1.0 tagB\n",
    )
    # `#` inside a document id is no comment (trec_eval's test qrels.test.with-comments)
    assert read_qrels(qrels) == {"q1": {"d1": 1, "d#2": 0}, "q2": {"d3": 2}}
    assert read_run_tagged(run) == ({"q1": {"d1": 2.0, "d#2": 1.0}, "q2": {"d3": 1.0}}, "tagB")


def test_text_after_the_tag_is_ignored_and_the_last_tag_is_the_runid(tmp_path: Path) -> None:
    """trec_eval's results.trunc: "more junk at / end of lines. / reserved for / future
    expansion"."""
    run = _write(
        tmp_path,
        "run",
        "q1\tQ0\td1\t1\t  2.5\tSTANDARD more junk at\nq1 Q0 d2 2 1.5 OTHER end of lines.\n",
    )
    assert read_run_tagged(run) == ({"q1": {"d1": 2.5, "d2": 1.5}}, "OTHER")


def test_lines_end_at_newline_only_as_in_trec_eval(tmp_path: Path) -> None:
    """A form feed is a column separator (C's isspace), U+2028 is part of a document id:
    `str.splitlines()` used to end a line at both."""
    run = _write(tmp_path, "run", "q1 Q0 d\u20281 1 2.0\x0ct\r\nq1 Q0 d2 2 1.0 t\r\n")
    assert read_run(run) == {"q1": {"d\u20281": 2.0, "d2": 1.0}}


def test_negative_grades_read_as_trec_eval_reads_them(tmp_path: Path) -> None:
    """A grade below 0: in the judging pool, not judged. Never relevant, not in R; bpref skips
    it, infAP counts it apart from documents outside the pool; equal to trec_eval."""
    qrels = {"q1": {"a": 1, "b": 0, "c": -1, "d": 2, "e": -5}}
    run = {"q1": {"x": 0.95, "a": 0.9, "c": 0.8, "e": 0.75, "b": 0.6, "d": 0.5}}
    path = _write(tmp_path, "qrels", "".join(f"q1 0 {d} {g}\n" for d, g in qrels["q1"].items()))
    assert read_qrels(path) == qrels
    names = {"bpref": "Bpref", "infAP": "infAP", "num_rel": "NumRel", "map": "AP"}
    ev = evaluate(qrels, run, list(names.values()), MetricConfig(1, "linear"))
    want = pytrec_eval.RelevanceEvaluator(qrels, set(names)).evaluate(run)["q1"]
    for trec, ours in names.items():
        assert math.isclose(ev.per_query[ours][0], want[trec], abs_tol=1e-12), trec
    assert ev.per_query["NumRel"][0] == 2
    # the same document outside the pool (unjudged) gives infAP another value
    outside = {"q1": {d: g for d, g in qrels["q1"].items() if g >= 0}}
    other = evaluate(outside, run, ["infAP"], MetricConfig(1, "linear")).per_query["infAP"][0]
    assert other != ev.per_query["infAP"][0]
    # ir_measures' Judged@k counts a pooled document as judged: a, c, e of the top 4
    judged = evaluate(qrels, run, ["Judged@4"], MetricConfig(1, "linear"))
    assert judged.per_query["Judged@4"][0] == 0.75


@pytest.mark.parametrize(
    ("qrels", "line", "words"),
    [
        ("q1 0 d1 1\nq1 0 d2\n", 2, "expected 4 columns"),
        ("q1 0 d1 1\nq1 0 d2 1 extra\n", 2, "expected 4 columns"),
        ("q1 0 d1 1\nq1 0 d1 2\n", 2, "judged twice"),
        ("q1 0 d1 1\nq1 0 d2 -2147483649\n", 2, "below -2147483648"),
    ],
)
def test_what_trec_eval_refuses_is_refused_on_its_line(
    tmp_path: Path, qrels: str, line: int, words: str
) -> None:
    with pytest.raises(DataError) as err:
        read_qrels(_write(tmp_path, "qrels", qrels))
    (problem,) = err.value.problems
    assert problem.line == line
    assert words in problem.message


def test_a_run_line_without_its_tag_or_a_repeated_document_is_refused(tmp_path: Path) -> None:
    with pytest.raises(DataError) as err:
        read_run(_write(tmp_path, "run", "q1 Q0 d1 1 2.0 t\nq1 Q0 d2 2 1.0\nq1 Q0 d1 3 0.5 t\n"))
    first, second = err.value.problems
    assert (first.line, second.line) == (2, 3)
    assert "expected 6 columns" in first.message
    assert "appears twice" in second.message


def test_a_file_of_comments_only_is_refused(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="no judgment line"):
        read_qrels(_write(tmp_path, "qrels", "# nothing judged yet\n"))


def test_a_memgauge_dataset_keeps_its_grades_0_to_3(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="negative; use 0-3"):
        read_qrels(_write(tmp_path, "qrels", "q1 0 d1 -1\n"), max_grade=3, min_grade=0)


def test_metrics_reads_trec_evals_truncated_results_file(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """results.trunc (text after the tag) was refused with exit 2."""
    data = Path(__file__).resolve().parents[1] / "data" / "trec_eval"
    args = [str(data / "qrels.test"), str(data / "results.trunc"), "-m", "NumRet", "--json"]
    assert main(["metrics", "--conventions", "trec_eval", *args]) == 0
    assert json.loads(capsys.readouterr().out)["aggregate"]["NumRet"] == 584


def test_gzipped_qrels_and_run_read_as_ir_measures_reads_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """ir_measures reads `qrels.gz` / `run.gz` (TREC publishes its runs so); metrics refused
    them as 'not UTF-8' with exit 2 and validate could not tell their kind. The .gz files are
    trec_eval's qrels.test and results.test, compressed here."""
    ir_measures = pytest.importorskip("ir_measures")
    data = Path(__file__).resolve().parents[1] / "data" / "trec_eval"
    qrels = tmp_path / "qrels.test.gz"
    run = tmp_path / "results.test.gz"
    qrels.write_bytes(gzip.compress((data / "qrels.test").read_bytes()))
    run.write_bytes(gzip.compress((data / "results.test").read_bytes()))
    names = ["AP", "nDCG@10", "P@5", "RR"]
    flags = [arg for name in names for arg in ("-m", name)]
    assert (
        main(["metrics", "--conventions", "trec_eval", str(qrels), str(run), *flags, "--json"]) == 0
    )
    got = json.loads(capsys.readouterr().out)["aggregate"]
    want = ir_measures.calc_aggregate(
        [ir_measures.parse_measure(name) for name in names],
        list(ir_measures.read_trec_qrels(str(qrels))),
        list(ir_measures.read_trec_run(str(run))),
    )
    assert {name: pytest.approx(want[ir_measures.parse_measure(name)]) for name in names} == got
    assert read_run(run) == read_run(data / "results.test")
    assert main(["validate", str(qrels), str(run)]) == 0
    out = capsys.readouterr().out
    assert "(qrels: 3 queries" in out
    assert "(run: 3 queries" in out


def test_ir_datasets_tsv_qrels_are_refused_and_the_same_in_trec_order_read(
    tmp_path: Path,
) -> None:
    """ir_datasets' `export DATASET qrels --format tsv` writes `query_id doc_id relevance
    iteration`; read as TREC columns, each query's one judgment was a document '1' graded 0.
    The same judgments in TREC's order (its `--format trec`, numeric MS MARCO ids) read."""
    rows = [(str(100 + q), str(7_000_000 + 13 * q), 1) for q in range(12)]
    tsv = _write(tmp_path, "qrels.tsv", "".join(f"{q}\t{d}\t{g}\t0\n" for q, d, g in rows))
    with pytest.raises(DataError, match="export with --format trec"):
        read_qrels(tsv)
    trec = _write(tmp_path, "qrels.trec", "".join(f"{q} 0 {d} {g}\n" for q, d, g in rows))
    assert read_qrels(trec) == {q: {d: g} for q, d, g in rows}


def test_a_document_twice_in_a_query_names_its_first_line_and_what_to_keep(
    tmp_path: Path,
) -> None:
    """trec_eval (form_res_rels.c: 'duplicate docs') and pytrec_eval (parse_run's assert)
    refuse a run that ranks a document twice for one query, as memgauge does; the message
    did not say where the first one was nor what to do (passage runs give one line per
    passage)."""
    text = "q1 Q0 d1 1 2.0 t\nq1 Q0 d2 2 1.0 t\nq1 Q0 d1 3 0.5 t\n"
    path = _write(tmp_path, "run", text)
    with pytest.raises(AssertionError), open(path) as f:
        pytrec_eval.parse_run(f)
    with pytest.raises(DataError) as err:
        read_run(path)
    (problem,) = err.value.problems
    assert problem.line == 3
    assert "document d1 appears twice for query q1 (first on line 1)" in problem.message
    assert "keep one line per document" in problem.message
