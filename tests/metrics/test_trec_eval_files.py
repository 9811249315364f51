"""trec_eval 10's own test inputs through `memgauge metrics --conventions trec_eval`, against
trec_eval's own expected outputs (tests/data/trec_eval, its test/ directory; see the README
there).

Each case is a line of trec_eval's `make quicktest` with memgauge's flags for trec_eval's: `-q`
is `-q`, `-c` is `--missing zero`, `-M100` is `--depth 100`, `-l2` is `--rel-threshold 2`. The
official report (no measure named) must be trec_eval's output byte for byte; for `-m all_trec`
and `out.test.meas_params` every measure memgauge computes must print trec_eval's value to its
printed precision, on every query line and the `all` line.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from memgauge.cli.main import main
from memgauge.metrics.measures import AGGREGATION, parse_measure
from memgauge.metrics.trec_args import TREC_ALL_LEFT_OUT

DATA = Path(__file__).resolve().parents[1] / "data" / "trec_eval"

# trec_eval measures memgauge does not compute (their lines are not compared): rbp is compared,
# memgauge's RBP at p = 0.9 is trec_eval's on binary judgments
NOT_COMPUTED = ("runid", *(f for f in TREC_ALL_LEFT_OUT if f != "rbp"))


def _expected(name: str) -> dict[str, dict[str, str]]:
    """trec_eval's output file as {measure: {qid or 'all': printed value}}."""
    out: dict[str, dict[str, str]] = {}
    for line in (DATA / name).read_text().splitlines():
        measure, qid, value = (x.strip() for x in line.split("\t"))
        out.setdefault(measure, {})[qid] = value
    return out


def _computed(measure: str) -> bool:
    """Not one memgauge leaves to trec_eval, nor one with trec_eval-only parameters (ndcg's
    gain table, utility's weights, 11pt_avg's levels)."""
    return not (measure.startswith(NOT_COMPUTED) or "=" in measure or "," in measure)


def _printed(measure: str, value: float | None) -> str:
    assert value is not None
    if AGGREGATION.get(parse_measure(measure).name) == "sum":
        return str(round(value))
    return f"{value:6.4f}"


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    assert main(["metrics", "--conventions", "trec_eval", *args]) == 0
    return capsys.readouterr().out


@pytest.mark.parametrize(
    ("qrels", "run", "expected"),
    [
        ("qrels.test", "results.test", "out.test"),
        ("qrels.test.with-comments", "results.test", "out.test"),
        ("qrels.comment.test", "results.comment.test", "out.comment.test"),
    ],
)
def test_the_official_report_is_trec_evals_byte_for_byte(
    capsys: pytest.CaptureFixture[str], qrels: str, run: str, expected: str
) -> None:
    """`trec_eval QRELS RUN` and `memgauge metrics --conventions trec_eval QRELS RUN` diff
    clean: comment lines, `#` inside document ids (MS MARCO v2.1 ids), the run's tag as
    runid. (The negative grades are in qrels.rel_level, 304 judgments of -1: the per-query
    tests below.)
    """
    got = _run(capsys, str(DATA / qrels), str(DATA / run))
    assert got == (DATA / expected).read_text()


CASES = [
    # (trec_eval's output, qrels, run, memgauge's flags for trec_eval's, trec_eval names to skip)
    ("out.test.a", "qrels.test", "results.test", [], ()),
    ("out.test.aq", "qrels.test", "results.test", ["-q"], ()),
    ("out.test.aqc", "qrels.test", "results.trunc", ["-q", "--missing", "zero"], ()),
    (
        "out.test.aqcM",
        "qrels.test",
        "results.trunc",
        ["-q", "--missing", "zero", "--depth", "100"],
        (),
    ),
    # graded judgments 0-4 at -l2: trec_eval's rbp weighs graded gains, memgauge's RBP is binary
    ("out.test.aql", "qrels.rel_level", "results.test", ["-q", "--rel-threshold", "2"], ("rbp",)),
    ("out.test.meas_params", "qrels.test", "results.test", ["-q"], ()),
]


@pytest.mark.parametrize(("expected", "qrels", "run", "flags", "skip"), CASES)
def test_every_measure_memgauge_computes_equals_trec_eval(
    capsys: pytest.CaptureFixture[str],
    expected: str,
    qrels: str,
    run: str,
    flags: list[str],
    skip: tuple[str, ...],
) -> None:
    want = _expected(expected)
    names = [m for m in want if _computed(m) and m not in skip]
    assert len(names) >= 20 or expected == "out.test.meas_params"
    args = [str(DATA / qrels), str(DATA / run), *flags, "--json"]
    args += [x for m in names for x in ("-m", m)]
    got = json.loads(_run(capsys, *args))
    canonical = {m: str(parse_measure(m)) for m in names}
    compared = 0
    for m in names:
        key = canonical[m]
        for qid, value in want[m].items():
            mine = got["aggregate"][key] if qid == "all" else got["per_query"][qid][key]
            assert _printed(key, mine) == value, f"{expected}: {m} {qid}"
            compared += 1
    assert compared >= len(names)
    # queries trec_eval printed are the queries memgauge scored
    if "-q" in flags:
        scored = {q for q, v in got["per_query"].items() if v[canonical[names[0]]] is not None}
        printed = {q for m in names for q in want[m] if q != "all"}
        assert scored == printed


OFFICIAL = (
    [
        "runid",
        "num_q",
        "num_ret",
        "num_rel",
        "num_rel_ret",
        "map",
        "gm_map",
        "Rprec",
        "bpref",
        "recip_rank",
    ]
    + [f"iprec_at_recall_{i / 10:.2f}" for i in range(11)]
    + [f"P_{k}" for k in (5, 10, 15, 20, 30, 100, 200, 500, 1000)]
)


@pytest.mark.parametrize(
    ("expected", "qrels", "run", "flags"),
    [
        ("out.test.aq", "qrels.test", "results.test", ["-q"]),
        ("out.test.aqc", "qrels.test", "results.trunc", ["-q", "--missing", "zero"]),
        (
            "out.test.aqcM",
            "qrels.test",
            "results.trunc",
            ["-q", "--missing", "zero", "--depth", "100"],
        ),
        ("out.test.aql", "qrels.rel_level", "results.test", ["-q", "--rel-threshold", "2"]),
    ],
)
def test_the_official_report_per_query_is_trec_evals_byte_for_byte(
    capsys: pytest.CaptureFixture[str], expected: str, qrels: str, run: str, flags: list[str]
) -> None:
    """`-q`, `-c` (--missing zero), `-M100` (--depth 100), `-l2` (--rel-threshold 2): trec_eval
    prints measures in one fixed order, so its `-m all_trec` output cut to the official
    measures is what `trec_eval -q` prints for them."""
    lines = (DATA / expected).read_text().splitlines(keepends=True)
    want = "".join(x for x in lines if x.split()[0] in OFFICIAL)
    assert _run(capsys, str(DATA / qrels), str(DATA / run), *flags) == want


def _computed_lines(expected: str) -> str:
    """trec_eval's output file without the lines of the measures memgauge leaves out."""
    left_out = re.compile(rf"({'|'.join(TREC_ALL_LEFT_OUT)})(_[-0-9.,]+)?")
    lines = (DATA / expected).read_text().splitlines(keepends=True)
    return "".join(x for x in lines if not left_out.fullmatch(x.split()[0]))


@pytest.mark.parametrize(
    ("expected", "qrels", "run", "trec_eval_args"),
    [
        # the commands of trec_eval's `make quicktest`, with its own flags as its Makefile
        # writes them (-c, -M100, -l2, -mNAME.PARAMS)
        ("out.test", "qrels.test", "results.test", ["-m", "official"]),
        ("out.test.a", "qrels.test", "results.test", ["-m", "all_trec"]),
        ("out.test.aq", "qrels.test", "results.test", ["-m", "all_trec", "-q"]),
        ("out.test.aqc", "qrels.test", "results.trunc", ["-m", "all_trec", "-q", "-c"]),
        ("out.test.aqcM", "qrels.test", "results.trunc", ["-m", "all_trec", "-q", "-c", "-M100"]),
        # its -mrelstring.20 left out (memgauge refuses it)
        ("out.test.aql", "qrels.rel_level", "results.test", ["-m", "all_trec", "-q", "-l2"]),
        (
            "out.test.meas_params",
            "qrels.test",
            "results.test",
            # its utility, 11pt_avg and Rprec_mult left out (memgauge refuses them)
            ["-q", "-miprec_at_recall..10,.20,.25,.75,.50", "-m", "P.5,7,3", "-m", "recall.20,2000",
             "-mndcg.1=3,2=9,4=4.5", "-mndcg_cut.10,20,23.4", "-msuccess.2,5,20"],
        ),
    ],
)  # fmt: skip
def test_trec_evals_own_m_arguments_print_trec_evals_lines(
    capsys: pytest.CaptureFixture[str],
    expected: str,
    qrels: str,
    run: str,
    trec_eval_args: list[str],
) -> None:
    """`-m all_trec`, `-m official` and `-m P.5,7,3`-style lists, read as trec_eval reads them
    (parameters sorted, `23.4` read as 23, defaults for a family named alone), with its `-c`,
    `-M` and `-l`, printed in trec_eval's order: its output byte for byte, but for the measures
    memgauge does not compute (named on stderr for all_trec)."""
    args = [*trec_eval_args, str(DATA / qrels), str(DATA / run)]
    assert main(["metrics", "--conventions", "trec_eval", *args]) == 0
    out, err = capsys.readouterr()
    assert out == _computed_lines(expected)
    if "all_trec" in trec_eval_args:
        assert "memgauge does not compute trec_eval's gm_bpref, Rprec_mult, utility" in err


def test_a_family_named_alone_is_trec_evals_defaults_in_its_order(
    capsys: pytest.CaptureFixture[str],
) -> None:
    args = [
        "-m",
        "success",
        "-m",
        "P",
        "-m",
        "map",
        str(DATA / "qrels.test"),
        str(DATA / "results.test"),
    ]
    assert main(["metrics", "--conventions", "trec_eval", "--json", *args]) == 0
    got = list(json.loads(capsys.readouterr().out)["aggregate"])
    assert got == [
        "AP",
        *(f"P@{k}" for k in (5, 10, 15, 20, 30, 100, 200, 500, 1000)),
        "Hit@1",
        "Hit@5",
        "Hit@10",
    ]


@pytest.mark.parametrize(
    ("measure", "says"),
    [
        ("utility.2,-1,0,0", "memgauge does not compute trec_eval's utility"),
        ("ndcg.1", "ndcg takes a gain per relevance level, e.g. ndcg.1=3,2=9"),
        ("ndcg.1=3,1=9", "the gain table names grade 1 twice"),
        ("ndcg.1=-3", "a grade or gain must be from 0"),
        ("Rprec_mult.0.2", "memgauge does not compute trec_eval's Rprec_mult"),
        ("map.5", "map takes no parameters; write -m map"),
        ("P.0", "'0' is not a cutoff; write whole numbers from 1"),
        ("P.", "no parameters after the dot"),
        ("iprec_at_recall..5,1.5", "'1.5' is not a recall level"),
        ("runid", "-m runid names no measure: add one"),
    ],
)  # fmt: skip
def test_trec_eval_arguments_memgauge_cannot_honour_are_refused(
    capsys: pytest.CaptureFixture[str], measure: str, says: str
) -> None:
    args = ["-m", measure, str(DATA / "qrels.test"), str(DATA / "results.test")]
    assert main(["metrics", "--conventions", "trec_eval", *args]) == 2
    out, err = capsys.readouterr()
    assert says in err
    assert out == ""
    assert "Traceback" not in err


@pytest.mark.parametrize(
    ("measure", "says"),
    [
        ("P@99999999999999999999", "the cutoff must be at most 2^31-1"),
        ("ndcg_cut_2147483648", "the cutoff must be at most 2^31-1"),
        ("P.99999999999999999999", "is not a cutoff; write whole numbers from 1 to 2^31-1"),
    ],
)
def test_a_cutoff_past_int32_is_refused_by_name(
    capsys: pytest.CaptureFixture[str], measure: str, says: str
) -> None:
    """A cutoff NumPy cannot hold as an int64 was an OverflowError deep in the scoring (exit
    70, a traceback); any past --depth's 2^31-1 now exits 2 naming the measure."""
    args = ["-m", measure, str(DATA / "qrels.test"), str(DATA / "results.test")]
    assert main(["metrics", *args]) == 2
    out, err = capsys.readouterr()
    assert says in err
    assert out == ""
    assert "Traceback" not in err


def test_c_and_missing_skip_contradict(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["-c", "--missing", "skip", str(DATA / "qrels.test"), str(DATA / "results.trunc")]
    assert main(["metrics", "--conventions", "trec_eval", *args]) == 2
    assert "-c scores a query absent from the run 0" in capsys.readouterr().err


def test_infinite_scores_are_read_and_ordered_as_trec_eval_orders_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """trec_eval's atof, pytrec_eval and ir_measures take `inf`, `-Infinity` and `1e999`
    (an infinity once read): memgauge refused the file. Ties among infinities go by doc id
    descending, as every tie does; NaN, which has no place in an order, is still refused."""
    qrels = tmp_path / "qrels"
    qrels.write_text("q1 0 d1 1\nq1 0 d2 1\nq1 0 d3 0\nq1 0 d4 1\n")
    run = tmp_path / "run"
    # ranked: d1 (1e999 = inf), d4 (2.5), d3 (-inf, tie with d2, larger id), d2 (-Infinity)
    run.write_text(
        "q1 Q0 d1 1 1e999 t\nq1 Q0 d2 2 -Infinity t\nq1 Q0 d3 3 -inf t\nq1 Q0 d4 4 2.5 t\n"
    )
    args = ["--conventions", "trec_eval", "-m", "P.1,2,3", "-m", "map", str(qrels), str(run)]
    assert main(["metrics", *args]) == 0
    lines = capsys.readouterr().out.splitlines()
    # relevant at ranks 1, 2 and 4: AP = (1 + 1 + 3/4) / 3
    assert sorted(line.split() for line in lines) == [
        ["P_1", "all", "1.0000"],
        ["P_2", "all", "1.0000"],
        ["P_3", "all", "0.6667"],
        ["map", "all", "0.9167"],
    ]
    run.write_text("q1 Q0 d1 1 nan t\n")
    assert main(["metrics", str(qrels), str(run)]) == 2
    assert "run:1: score: 'nan' is not a number: NaN has no place in a ranking" in (
        capsys.readouterr().err
    )
