"""ir_measures' parametrised measure names (`P(rel=2)@5`, `AP(judged_only=True)`,
`nDCG(gains={0:0,1:1,2:3})@10`, ...) through `memgauge metrics --conventions trec_eval`: each
measure keeps its own relevance threshold, judged-only ranking or gain table, and its value on
every query and over the run equals ir_measures' (pytrec_eval, cwl_eval for RBP; a judged
query absent from the run scores 0 there, `--missing zero`) on the same
files: hand-written graded judgments with unjudged and pooled (-1) documents and a tie
(tests/data/ir_measures_params, see its README), and trec_eval's graded `qrels.rel_level`.
A parameter a measure does not take, or a value it cannot have, exits 2 naming the measure and
what it takes."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from memgauge.aggregates.targets import parse_fail_under
from memgauge.cli.main import main
from memgauge.data.records import MeasureValue
from memgauge.errors import UsageError
from memgauge.metrics import MetricConfig, evaluate, evaluate_ranked, parse_measure
from memgauge.scorers import EvalContext, evaluator_from_spec

ir_measures = pytest.importorskip("ir_measures")
pytest.importorskip("pytrec_eval")

DATA = Path(__file__).resolve().parents[1] / "data"
HAND = (DATA / "ir_measures_params" / "qrels.txt", DATA / "ir_measures_params" / "run.txt")
GRADED = (DATA / "trec_eval" / "qrels.rel_level", DATA / "trec_eval" / "results.test")

#: ir_measures' names, as its documentation writes them
NAMES = [
    "P(rel=2)@2",
    "P(rel=3)@5",
    "P(judged_only=True)@2",
    "P(judged_only=True,rel=2)@3",
    "AP(rel=2)",
    "AP(rel=2)@3",
    "AP(judged_only=True)",
    "R(rel=2)@100",
    "R(judged_only=True)@2",
    "RR(rel=2)",
    "RR(judged_only=True)",
    "Rprec(rel=2)",
    "Rprec(judged_only=True)",
    "nDCG(judged_only=True)@10",
    "nDCG(judged_only=True)",
    "nDCG(gains={0:0,1:1,2:3})@10",
    "nDCG(gains={0:1,1:5,3:0})@3",
    "nDCG(gains={0:1,1:5,3:0},judged_only=True)",
    "nDCG(dcg='log2')@10",
    "nDCG(dcg='log2',judged_only=True)@5",
    "Success(rel=2)@2",
    "Success(judged_only=True)@1",
    "IPrec(rel=2)@0.5",
    "IPrec(judged_only=True)@0.2",
    "Bpref(rel=2)",
    "infAP(rel=2)",
    "SetP(rel=2)",
    "SetP(judged_only=True)",
    "SetP(relative=True)",
    "SetP(relative=True,rel=2)",
    "SetR(rel=2)",
    "SetF(rel=2)",
    "SetF(judged_only=True)",
    "SetF(beta=2.0)",
    "SetF(beta=0.5,rel=2)",
    "SetF(beta=3.0,judged_only=True)",
    "NumRet(rel=2)",
    "NumRelRet(rel=2)",
    "RBP(rel=2)",
    "RBP(rel=3,p=0.5)",
    "Judged@10",
]


def _theirs(name: str, files: tuple[Path, Path]) -> tuple[dict[str, float], float]:
    measure = ir_measures.parse_measure(name)
    qrels = list(ir_measures.read_trec_qrels(str(files[0])))
    run = list(ir_measures.read_trec_run(str(files[1])))
    per_query = {m.query_id: float(m.value) for m in ir_measures.iter_calc([measure], qrels, run)}
    return per_query, float(ir_measures.calc_aggregate([measure], qrels, run)[measure])


def _mine(capsys: pytest.CaptureFixture[str], name: str, files: tuple[Path, Path]) -> dict:
    # ir_measures scores a judged query absent from the run 0 (trec_eval's -c)
    args = ["metrics", "--conventions", "trec_eval", "--missing", "zero", *map(str, files)]
    args += ["-m", name, "-q", "--json"]
    assert main(args) == 0
    out: dict = json.loads(capsys.readouterr().out)
    return out


@pytest.mark.parametrize("files", [HAND, GRADED], ids=["hand", "rel_level"])
@pytest.mark.parametrize("name", NAMES)
def test_parametrised_measures_equal_ir_measures(
    capsys: pytest.CaptureFixture[str], name: str, files: tuple[Path, Path]
) -> None:
    theirs, their_mean = _theirs(name, files)
    mine = _mine(capsys, name, files)
    key = str(parse_measure(name))
    per_query = {q: v[key] for q, v in mine["per_query"].items() if v[key] is not None}
    assert per_query.keys() == theirs.keys()
    for q, v in theirs.items():
        assert math.isclose(per_query[q], v, rel_tol=1e-12, abs_tol=1e-12), (q, per_query[q], v)
    assert math.isclose(mine["aggregate"][key], their_mean, rel_tol=1e-12, abs_tol=1e-12)


def test_each_measure_keeps_its_own_threshold_beside_the_runs(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """P@10 at the run's threshold (memgauge's 2) and P(rel=1)@10 at its own, in one report:
    the second is ir_measures' P@10 (rel=1 by default), the first its P(rel=2)@10."""
    args = ["metrics", *map(str, GRADED), "-m", "P@10", "-m", "P(rel=1)@10", "--json"]
    assert main(args) == 0
    got = json.loads(capsys.readouterr().out)["aggregate"]
    assert math.isclose(got["P@10"], _theirs("P(rel=2)@10", GRADED)[1], rel_tol=1e-12)
    assert math.isclose(got["P(rel=1)@10"], _theirs("P@10", GRADED)[1], rel_tol=1e-12)
    assert got["P@10"] != got["P(rel=1)@10"]


def test_a_gain_table_reads_grades_past_exp_gains_bound(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """nDCG(gains=...) gains what its table says, never 2^grade - 1: under memgauge's exp gain
    its qrels may hold a grade past MAX_EXP_GRADE (1023), as `check_grades` allows; the file
    reader refused it ('use --gain linear', exit 2) though linear gain changes nothing here."""
    qrels, run = tmp_path / "qrels.txt", tmp_path / "run.txt"
    qrels.write_text("q1 0 d1 2000\nq1 0 d2 1\nq1 0 d3 0\n")
    run.write_text("q1 Q0 d2 1 3 t\nq1 Q0 d1 2 2 t\nq1 Q0 d3 3 1 t\n")
    name = "nDCG(gains={1:1,2000:5})@10"
    assert main(["metrics", str(qrels), str(run), "-m", name, "--json"]) == 0
    got = json.loads(capsys.readouterr().out)["aggregate"][name]
    assert main(["metrics", str(qrels), str(run), "-m", name, "--json", "--gain", "linear"]) == 0
    assert got == json.loads(capsys.readouterr().out)["aggregate"][name]
    assert got == pytest.approx((1 + 5 / math.log2(3)) / (5 + 1 / math.log2(3)), abs=1e-12)
    # nDCG under exp gain itself still refuses the grade on its line
    assert main(["metrics", str(qrels), str(run), "-m", "nDCG@10", "-m", name]) == 2
    assert "grade 2000 is above 1023" in capsys.readouterr().err


def test_no_relevant_skip_reads_each_measures_own_threshold() -> None:
    """--no-relevant skip leaves out a query with nothing relevant at the measure's threshold:
    q2 (grades 1, 2) has nothing at 3, something at 1."""
    qrels = {"q1": {"a": 3}, "q2": {"b": 1, "c": 2}}
    run = {"q1": {"a": 1.0}, "q2": {"b": 2.0, "c": 1.0}}
    ev = evaluate(qrels, run, ["P@1", "P(rel=1)@1"], MetricConfig(3, no_relevant="skip"))
    assert ev.aggregate() == {"P@1": 1.0, "P(rel=1)@1": 1.0}
    assert [math.isnan(v) for v in ev.per_query["P@1"]] == [False, True]
    assert not any(math.isnan(v) for v in ev.per_query["P(rel=1)@1"])


@pytest.mark.parametrize(
    ("name", "canonical"),
    [
        ("R(rel=2)@100", "Recall(rel=2)@100"),
        ("RBP(rel=2,p=0.5)@10", "RBP(p=0.5,rel=2)@10"),
        ("P(rel=2,judged_only=True)@5", "P(judged_only=True,rel=2)@5"),
        ("P(judged_only=False)@5", "P@5"),
        ("nDCG(gains={2:3,0:0})@10", "nDCG(gains={0:0,2:3})@10"),
        ("IPrec(recall=0.25,rel=2)", "IPrec(rel=2)@0.25"),
        ("map(rel=2)", "AP(rel=2)"),
        ("rbp(rel=2)", "RBP(p=0.9,rel=2)"),
        ("nDCG(dcg=exp-log2, judged_only=True)@10", "nDCG(dcg='exp-log2',judged_only=True)@10"),
        ("SetF(rel=2,beta=2.0)", "SetF(beta=2,rel=2)"),
        ("SetF(beta=1)", "SetF"),
        ("set_relative_P", "SetP(relative=True)"),
    ],
)
def test_one_canonical_name_that_reads_back(name: str, canonical: str) -> None:
    assert str(parse_measure(name)) == canonical
    assert parse_measure(canonical) == parse_measure(name)


@pytest.mark.parametrize(
    ("name", "says"),
    [
        ("SetP(beta=2)", "SetP takes judged_only=True"),
        ("SetP(relative=maybe)", "relative is True or False, not 'maybe'"),
        ("SetF(beta=-1)", "beta is a number from 0, not '-1'"),
        ("nDCG(rel=2)@10", "nDCG takes dcg='log2' (linear gain) or dcg='exp-log2'"),
        ("nDCG(dcg=exp)@10", "dcg is 'log2' (linear gain) or 'exp-log2' (2^grade - 1), not 'exp'"),
        ("nDCG(dcg=log2,gains={1:2})@10", "gains= gives each grade's gain and dcg= a gain"),
        ("Judged(rel=2)@10", "Judged takes no parameters in parentheses"),
        ("Bpref(judged_only=True)", "Bpref takes rel=N"),
        ("P(rel=x)@5", "rel='x' is not a relevance threshold"),
        ("P(rel=-1)@5", "rel='-1' is not a relevance threshold"),
        ("P(rel=2,rel=3)@5", "rel= is given twice"),
        ("P(judged_only=yes)@5", "judged_only is True or False, not 'yes'"),
        ("nDCG(gains={0:-1})@5", "is not a gain table"),
        ("nDCG(gains={1:2,1:3})@5", "the gain table names grade 1 twice"),
        ("nDCG(gains={})@5", "names no grade"),
        ("IPrec(recall=0.2)@0.5", "give the recall level once"),
        ("session_recall_any(rel=1)@5", "takes no parameters in parentheses"),
    ],
)
def test_a_parameter_a_measure_does_not_take_exits_2(
    capsys: pytest.CaptureFixture[str], name: str, says: str
) -> None:
    with pytest.raises(UsageError) as caught:
        parse_measure(name)
    assert says in str(caught.value)
    assert main(["metrics", *map(str, HAND), "-m", name]) == 2
    err = capsys.readouterr().err
    assert says in " ".join(err.split())
    assert repr(name) in err


@pytest.mark.parametrize(
    "evaluators",
    [
        [
            {"retrieval": {"measure": "nDCG@10", "gain": "linear"}},
            {"retrieval": "nDCG(gains={1:1,3:5})@10"},
        ],
        [{"retrieval": {"measure": "P@5", "rel_threshold": 1}}, {"retrieval": "P(rel=3)@5"}],
    ],
    ids=["gain_table_beside_linear", "own_threshold_beside_1"],
)
def test_a_suite_takes_a_measures_own_gains_or_threshold_beside_other_settings(
    run_suite_json: Any, evaluators: list[Any]
) -> None:
    """A task's ir aggregate takes its retrieval evaluators' settings; the gain of
    nDCG(gains=...) and the threshold of P(rel=3)@5 change nothing, so they cannot disagree
    with another evaluator's (the suite was refused: 'the retrieval evaluators ... differ')."""
    suite = {
        "name": "own",
        "subjects": {"lex": {"reference": {"mode": "lexical"}}},
        "tasks": [
            {
                "name": "recall",
                "kind": "retrieval",
                "dataset": str(DATA / "good" / "bundle.yaml"),
                "evaluators": evaluators,
            }
        ],
    }
    code, doc = run_suite_json(suite)
    assert code == 0
    means = {r["evaluator"]: r["mean"] for r in doc["results"]}
    # q1's one relevant memory (grade 3) among the two returned
    assert means == (
        {"nDCG@10": 1.0, "nDCG(gains={1:1,3:5})@10": 1.0}
        if "nDCG@10" in means
        else {"P@5": 0.2, "P(rel=3)@5": 0.2}
    )


def _item(measure: object, output: list[str], expected: dict[str, int]) -> float | None:
    score = evaluator_from_spec({"retrieval": measure}).evaluate(
        EvalContext(output=output, expected=expected)
    )
    return score.value


def test_a_suites_retrieval_evaluator_keeps_the_measures_parameters() -> None:
    """`evaluate -m` and a suite's retrieval evaluator score each item through the quick
    one-query path: a measure's own threshold, judged-only ranking and gain table hold there
    too (the item's value is metrics.ir's), and "nothing relevant" is read at its threshold."""
    ranked, grades = ["x", "m2", "m1"], {"m1": 3, "m2": 1}
    for name in ("RR(rel=1)@10", "P(judged_only=True)@1", "nDCG(gains={1:4,3:1})@3", "RR@10"):
        want = evaluate_ranked({"q": grades}, {"q": ranked}, [name]).per_query
        assert _item(name, ranked, grades) == pytest.approx(float(want[name][0]), abs=1e-12)
    assert _item("RR(rel=1)@10", ranked, grades) == 0.5  # m2 is relevant at 1
    assert _item("P(judged_only=True)@1", ranked, grades) == 0.0  # m2 first once x is out
    assert _item({"measure": "P(rel=1)@2", "no_relevant": "skip"}, ["m2"], {"m2": 1}) == 0.5


@pytest.mark.parametrize(
    ("fail_under", "run_has"),
    [
        ("R(rel=2)@10=0.5", "Recall(rel=2)@10"),
        ("R(rel=2,judged_only=False)@10=0.5", "Recall(rel=2)@10"),
        ("recall/nDCG(gains={2:3,0:0})@10=0.5", "nDCG(gains={0:0,2:3})@10"),
        ("MRR@5=0.5", "RR@5"),
    ],
)
def test_fail_under_names_a_measure_however_it_is_spelled(fail_under: str, run_has: str) -> None:
    """`--fail-under` with the name as `-m` was given (ir_measures' `R(rel=2)@10`, `MRR@5`)
    finds the measure the run recorded under its canonical name; it matched none before."""
    requirement = parse_fail_under(fail_under)
    value = MeasureValue(subject="s", task="recall", name=run_has, value=0.6)
    assert requirement.matches(value)
    assert not requirement.matches(value.model_copy(update={"name": "P@10"}))


def test_dcg_names_the_gain_of_one_measure(capsys: pytest.CaptureFixture[str]) -> None:
    """ir_measures' `nDCG(dcg='log2')` is linear gain (its pytrec_eval's, whatever --gain says)
    and `nDCG(dcg='exp-log2')` is 2^grade - 1 (memgauge's default, ranx's ndcg_burges): each
    measure keeps its own beside the run's --gain."""
    args = ["metrics", *map(str, GRADED), "--json", "-m", "nDCG(dcg='log2')@10"]
    assert main([*args, "-m", 'nDCG(dcg="exp-log2")@10', "-m", "nDCG@10"]) == 0
    got = json.loads(capsys.readouterr().out)["aggregate"]
    assert math.isclose(got["nDCG(dcg='log2')@10"], _theirs("nDCG@10", GRADED)[1], rel_tol=1e-12)
    assert got["nDCG(dcg='exp-log2')@10"] == got["nDCG@10"]  # the run's gain is exp
    assert main([*args, "--gain", "linear", "-m", "nDCG(dcg=exp-log2)@10"]) == 0
    linear = json.loads(capsys.readouterr().out)["aggregate"]
    assert linear["nDCG(dcg='exp-log2')@10"] == got["nDCG@10"]
    assert linear["nDCG(dcg='log2')@10"] == got["nDCG(dcg='log2')@10"] != got["nDCG@10"]


def test_the_conventions_line_says_which_measures_keep_their_own(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # 'relevant: grade >= 2, gain: exp' was the whole account beside P(rel=3)@2, whose
    # relevant documents are those of grade 3
    names = ["P(rel=3)@2", "nDCG(gains={1:1,3:9})@10", "AP(judged_only=True)", "RR"]
    assert main(["metrics", *(x for n in names for x in ("-m", n)), *map(str, HAND)]) == 0
    lines = capsys.readouterr().out.splitlines()
    (line,) = [line for line in lines if line.startswith("conventions:")]
    own = (
        "; their own conventions: P(rel=3)@2 (relevant: grade >= 3); nDCG(gains={1:1,3:9})@10 "
        "(gain: its table); AP(judged_only=True) (judged documents only)"
    )
    assert line.endswith(own)
    # --json's config says it in the same words (it said the run's threshold only)
    assert main(["metrics", "--json", *(x for n in names for x in ("-m", n)), *map(str, HAND)]) == 0
    config = json.loads(capsys.readouterr().out)["config"]
    assert f"conventions: {config['conventions']}" == line
    assert main(["metrics", "-m", "RR", *map(str, HAND)]) == 0
    assert "their own conventions" not in capsys.readouterr().out


def test_a_measures_own_exp_gain_past_its_bound_says_how_to_gain_linearly(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # under --gain linear, nDCG(dcg='exp-log2') still gains 2^grade - 1: the refusal said only
    # 'use --gain linear', which was given
    qrels, run = tmp_path / "qrels", tmp_path / "run"
    qrels.write_text("q1 0 d1 2000\n")
    run.write_text("q1 Q0 d1 1 1 t\n")
    args = ["metrics", "--gain", "linear", "-m", "nDCG(dcg='exp-log2')@10", str(qrels), str(run)]
    assert main(args) == 2
    assert "or nDCG(dcg='log2') for one measure) or a gain table" in capsys.readouterr().err
