"""Several systems compared from the command line, in-process: `memgauge metrics QRELS RUN RUN
...` on TREC files whose per-query values are known by construction, and `memgauge runs
compare` on suite runs of agents of known quality; the terminal, Markdown, LaTeX and JSON
outputs; the option rules."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from tests.helpers import lazy_import

from memgauge.cli import _compare
from memgauge.cli.main import main
from memgauge.stats import CORRECTIONS, FAMILIES, PAIRINGS, TESTS, tukey_hsd_blocked

N = 12
stats = lazy_import("scipy.stats")
SUBJECTS = Path(__file__).resolve().parents[1] / "data" / "subjects"


def _cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def _trec(tmp_path: Path, first_ranks: dict[str, list[int]]) -> tuple[Path, list[Path]]:
    """Qrels with one relevant document (grade 2) per query, and per run file the rank of that
    document in each query: RR@10 = 1 / rank. Run files list their queries in reverse order,
    so pairing by position instead of id would show."""
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("".join(f"q{i:02d} 0 rel{i} 2\n" for i in range(N)))
    runs = []
    for name, ranks in first_ranks.items():
        lines = []
        for i in reversed(range(N)):
            if ranks[i] == 0:  # the query is absent from this run
                continue
            docs = [f"x{i}_{j}" for j in range(4)]
            docs.insert(ranks[i] - 1, f"rel{i}")
            lines += [f"q{i:02d} Q0 {d} {r} {10 - r} {name}\n" for r, d in enumerate(docs, 1)]
        path = tmp_path / name
        path.write_text("".join(lines))
        runs.append(path)
    return qrels, runs


RANKS = {
    "base.run": [2] * N,  # RR 0.5 everywhere
    "half.run": [1] * 6 + [2] * 6,  # 1.0 on half the queries
    "best.run": [1] * N,  # 1.0 everywhere
}


def _exact_fisher(d: np.ndarray) -> float:
    """Fisher's randomization test with all 2^n sign assignments (n small)."""
    nonzero = d[d != 0]  # a zero difference flips to itself
    signs = np.array(np.meshgrid(*[[-1.0, 1.0]] * nonzero.size)).reshape(nonzero.size, -1).T
    return float(np.mean(np.abs(signs @ nonzero) >= abs(nonzero.sum()) - 1e-12))


def test_metrics_over_several_runs_compares_them_with_fisher_and_holm(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    qrels, runs = _trec(tmp_path, RANKS)
    code, out, _ = _cli(capsys, "metrics", str(qrels), *map(str, runs), "-m", "RR@10", "--json")
    assert code == 0
    doc = json.loads(out)
    assert doc["systems"] == ["base.run", "half.run", "best.run"]
    assert doc["means"]["RR@10"] == {"base.run": 0.5, "half.run": 0.75, "best.run": 1.0}
    assert (doc["test"], doc["correction"], doc["family"]) == ("fisher", "holm", "table")
    rr = {name: 1 / np.array(r, dtype=float) for name, r in RANKS.items()}
    rows = {(c["a"], c["b"]): c for c in doc["comparisons"]}
    exact = {pair: _exact_fisher(rr[pair[1]] - rr[pair[0]]) for pair in rows}
    assert exact[("base.run", "half.run")] == pytest.approx(2 / 2**6)
    for pair, row in rows.items():
        # Monte Carlo with 10,000 flips against the exact test: within 5 standard errors
        se = np.sqrt(exact[pair] * (1 - exact[pair]) / 10_000)
        assert abs(row["p_value"] - exact[pair]) <= 5 * se + 1e-4
        assert row["n"] == N
    ps = [rows[p]["p_value"] for p in rows]
    holm = sorted(ps)
    assert rows[("half.run", "best.run")]["p_adjusted"] == pytest.approx(
        max(3 * holm[0], 2 * holm[1], holm[2])
    )
    # Holm over the 3 pairs: half vs base (exact p 1/32) needs 2p < 0.05 and misses it
    assert rows[("base.run", "half.run")]["p_adjusted"] == pytest.approx(0.0625, abs=0.015)
    assert doc["beats"]["RR@10"] == {"base.run": [], "half.run": [], "best.run": ["base.run"]}
    assert doc["counts"]["half.run"]["n_scored"] == N


def test_metrics_tukey_pairs_queries_by_id_and_drops_incomplete_ones(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ranks = {**RANKS, "best.run": [1] * (N - 2) + [0, 0]}  # two queries absent
    qrels, runs = _trec(tmp_path, ranks)
    args = ["metrics", str(qrels), *map(str, runs), "-m", "RR@10", "--test", "tukey"]
    code, out, _ = _cli(capsys, *args, "--conventions", "trec_eval", "--json")
    assert code == 0
    doc = json.loads(out)
    matrix = np.array([1 / np.array(ranks[n][: N - 2], dtype=float) for n in ranks])
    hsd = tukey_hsd_blocked(matrix).pvalue
    rows = {(c["a"], c["b"]): c for c in doc["comparisons"]}
    assert rows[("base.run", "half.run")]["p_value"] == pytest.approx(hsd[0, 1])
    assert rows[("base.run", "half.run")]["n"] == N  # the pair itself has all its queries
    assert rows[("half.run", "best.run")]["n"] == N - 2
    assert doc["correction"] == "bonferroni"  # across measures: one measure, so p as is
    assert rows[("base.run", "half.run")]["p_adjusted"] == pytest.approx(hsd[0, 1])
    assert doc["notes"] == {
        "RR@10": "Tukey's HSD on the 10 queries every system scored (2 left out)"
    }


def test_metrics_student_baseline_per_measure_against_scipy(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ranks = {**RANKS, "half.run": [1, 3, 1, 2, 1, 4, 1, 2, 2, 1, 3, 1]}
    qrels, runs = _trec(tmp_path, ranks)
    args = ["metrics", str(qrels), *map(str, runs), "-m", "RR@10", "-m", "P@1"]
    code, out, _ = _cli(
        capsys, *args, "--test", "student", "--pairs", "baseline", "--family", "measure", "--json"
    )
    assert code == 0
    doc = json.loads(out)
    assert [(c["measure"], c["a"], c["b"]) for c in doc["comparisons"]] == [
        ("RR@10", "base.run", "half.run"),
        ("RR@10", "base.run", "best.run"),
        ("P@1", "base.run", "half.run"),
        ("P@1", "base.run", "best.run"),
    ]
    rr = {name: 1 / np.array(r, dtype=float) for name, r in ranks.items()}
    half = doc["comparisons"][0]
    p = stats.ttest_rel(rr["half.run"], rr["base.run"]).pvalue
    assert half["p_value"] == pytest.approx(p, rel=1e-12)
    # Holm over RR@10's 2 comparisons: best's constant +0.5 has p 0, so half's p stays
    assert doc["comparisons"][1]["p_value"] == 0.0
    assert half["p_adjusted"] == pytest.approx(p, rel=1e-12)
    assert half["delta"] == pytest.approx(float((rr["half.run"] - rr["base.run"]).mean()))


def test_metrics_markdown_and_latex_tables_for_a_paper(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    hostile = {"a_b&c%d.run": RANKS["base.run"], "x|y<b>$#{}~^\\z.run": RANKS["best.run"]}
    qrels, runs = _trec(tmp_path, hostile)
    args = ["metrics", str(qrels), *map(str, runs), "-m", "RR@10", "-m", "P@1", "--test"]
    code, md, _ = _cli(capsys, *args, "student", "--format", "markdown", "--digits", "3")
    assert code == 0
    lines = md.splitlines()
    assert lines[0] == "| | System | RR@10 | P@1 |"
    assert lines[1] == "|---|---|---:|---:|"
    assert lines[2] == "| a | a_b&amp;c%d.run | 0.500 | 0.000 |"  # `_` inside a word is text
    assert lines[3] == (
        "| b | x\\|y&lt;b&gt;\\$#{}\\~^\\\\z.run | **1.000**<sup>a</sup> | **1.000**<sup>a</sup> |"
    )
    assert "paired Student's t-test between every pair; Holm-corrected over the 2" in md
    code, tex, _ = _cli(capsys, *args, "student", "--format", "latex", "--digits", "3")
    assert code == 0
    assert "\\toprule" in tex
    assert "\\midrule" in tex
    assert "\\bottomrule" in tex
    assert "\\begin{tabular}{llrr}" in tex
    assert " & System & RR@10 & P@1 \\\\" in tex
    assert "a & a\\_b\\&c\\%d.run & 0.500\\hphantom{$^{b}$} & 0.000\\hphantom{$^{b}$} \\\\" in tex
    assert (
        "b & x\\textbar{}y\\textless{}b\\textgreater{}\\$\\#\\{\\}\\textasciitilde{}"
        "\\textasciicircum{}\\textbackslash{}z.run & \\textbf{1.000}$^{a}$ & "
        "\\textbf{1.000}$^{a}$ \\\\"
    ) in tex
    assert "$p < 0.05$" in tex
    _assert_balanced_latex(tex)


def _assert_balanced_latex(tex: str) -> None:
    """What a TeX run would refuse first: unbalanced groups or math, an environment not
    closed, a row with the wrong number of cells."""
    body = re.sub(r"\\[{}$&%#_]", "", tex)  # escaped characters are text
    body = "\n".join(line for line in body.splitlines() if not line.startswith("%"))
    assert body.count("{") == body.count("}")
    assert body.count("$") % 2 == 0
    assert re.findall(r"\\begin\{(\w+)\}", body) == ["table", "tabular"]
    assert re.findall(r"\\end\{(\w+)\}", body) == ["tabular", "table"]
    columns = len(re.search(r"\\begin\{tabular\}\{(\w+)\}", body).group(1))  # type: ignore[union-attr]
    rows = [line for line in body.splitlines() if line.endswith("\\\\")]
    assert rows
    assert all(line.count("&") == columns - 1 for line in rows)


def test_one_run_as_a_markdown_row_and_the_option_rules(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    qrels, runs = _trec(tmp_path, RANKS)
    code, md, _ = _cli(
        capsys, "metrics", str(qrels), str(runs[0]), "-m", "RR@10", "--format", "markdown"
    )
    assert code == 0
    assert md == "| | System | RR@10 |\n|---|---|---:|\n| a | base.run | 0.5000 |\n"
    many = ["metrics", str(qrels), *map(str, runs), "-m", "RR@10"]
    for bad, message in [
        (["--test", "tukey", "--correction", "holm"], "Holm's step-down"),
        (["--test", "tukey", "--family", "measure", "--correction", "bonferroni"], "its own"),
        (["--format", "latex", "--json"], "--json and --format latex"),
        (["--per-query"], "--per-query gives one run's values"),
        ([str(runs[0])], "a run file is given twice"),
    ]:
        code, _, err = _cli(capsys, *many, *bad)
        assert code == 2, bad
        assert message in err
        assert "Traceback" not in err


def test_the_cli_choices_are_the_statistics_own() -> None:
    assert _compare.TESTS == TESTS
    assert _compare.CORRECTIONS == CORRECTIONS
    assert _compare.FAMILIES == FAMILIES
    assert _compare.PAIRINGS == PAIRINGS


def _agent_suite(tmp_path: Path, subjects: dict[str, list[str]], name: str = "s") -> Path:
    """An expected-output suite of 30 questions on three topics; each subject answers the
    topics it is given (and "I don't know" to the others)."""
    import yaml

    topics = ["port", "harbour", "dock"]
    items = [
        {"id": f"q{i:02d}", "input": f"question {i} about {topics[i % 3]}", "expected": "8080"}
        for i in range(30)
    ]
    (tmp_path / "items.jsonl").write_text("".join(json.dumps(it) + "\n" for it in items))
    suite = {
        "name": name,
        "subjects": {
            s: {
                "python": {
                    "target": "lookup_agents:LookupAgent",
                    "kwargs": {"answers": dict.fromkeys(known, "8080")},
                }
            }
            for s, known in subjects.items()
        },
        "tasks": [
            {
                "name": "t",
                "kind": "expected-output",
                "dataset": "items.jsonl",
                "evaluators": ["contains"],
            }
        ],
    }
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(suite, sort_keys=False))
    return path


QUALITY = {"weak": ["port"], "mid": ["port", "harbour"], "strong": ["port", "harbour", "dock"]}


def _run(capsys: pytest.CaptureFixture[str], suite: Path, db: Path) -> str:
    code, out, err = _cli(capsys, "run", str(suite), "--store", str(db), "--json")
    assert code == 0, err
    run_id: str = json.loads(out.strip().splitlines()[-1])["run_id"]
    return run_id


def test_runs_compare_one_run_compares_its_subjects(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.syspath_prepend(str(SUBJECTS))
    db = tmp_path / "r.db"
    run = _run(capsys, _agent_suite(tmp_path, QUALITY), db)
    args = ["runs", "compare", run, "--store", str(db), "--baseline", "weak", "--json"]
    code, out, _ = _cli(capsys, *args)
    assert code == 0
    doc: dict[str, Any] = json.loads(out)
    assert doc["runs"] == [run]
    assert doc["systems"] == ["weak", "mid", "strong"]  # the baseline, then by name
    assert doc["measures"] == ["t / contains"]
    assert doc["means"]["t / contains"] == pytest.approx(
        {"weak": 1 / 3, "mid": 2 / 3, "strong": 1.0}
    )
    # mid - weak: +1 on the 10 harbour questions, 0 elsewhere: exact p = 2 / 2^10
    rows = {(c["a"], c["b"]): c for c in doc["comparisons"]}
    assert rows[("weak", "mid")]["p_value"] == pytest.approx(2 / 2**10, abs=0.0015)
    assert doc["beats"]["t / contains"] == {"weak": [], "mid": ["weak"], "strong": ["weak", "mid"]}
    code, tex, _ = _cli(capsys, *args[:-1], "--format", "latex")
    assert code == 0
    assert "c & strong & \\textbf{1.0000}$^{ab}$ \\\\" in tex
    _assert_balanced_latex(tex)
    code, table, _ = _cli(capsys, *args[:-1])
    assert code == 0
    assert re.search(r"│ c │ strong │ +1\.0000ᵃᵇ │", table)
    assert "Holm-corrected over the 3 comparisons of the table; p < 0.05" in table


def test_runs_compare_several_runs_names_them_by_their_subject(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.syspath_prepend(str(SUBJECTS))
    db = tmp_path / "r.db"
    ids = [_run(capsys, _agent_suite(tmp_path, {s: k}, name=s), db) for s, k in QUALITY.items()]
    args = ["runs", "compare", *ids, "--store", str(db)]
    code, out, _ = _cli(capsys, *args, "--test", "tukey", "--json")
    assert code == 0
    doc = json.loads(out)
    assert doc["systems"] == ["weak", "mid", "strong"]
    assert doc["measures"] == ["t / contains"]
    topic = np.arange(30) % 3
    matrix = np.array([topic < 1, topic < 2, topic < 3], dtype=float)
    hsd = tukey_hsd_blocked(matrix).pvalue
    assert [c["p_value"] for c in doc["comparisons"]] == pytest.approx(
        [hsd[0, 1], hsd[0, 2], hsd[1, 2]]
    )
    code, md, _ = _cli(capsys, *args, "--format", "markdown", "--pairs", "baseline")
    assert code == 0
    assert "| c | strong | **1.0000**<sup>a</sup> |" in md
    assert "against the first system" in md
    # two runs: the delta table, with the chosen test and correction
    two = ["runs", "compare", ids[0], ids[2], "--store", str(db), "--test", "student"]
    code, out, _ = _cli(capsys, *two, "--correction", "bonferroni", "--json")
    doc = json.loads(out)
    (row,) = doc["rows"]
    assert (doc["test"], doc["correction"]) == ("student", "bonferroni")
    assert row["delta"] == pytest.approx(2 / 3)
    p = stats.ttest_rel(matrix[2], matrix[0]).pvalue
    assert row["p_value"] == pytest.approx(p, rel=1e-12)
    assert row["p_adjusted"] == row["p_value"]  # one row: Bonferroni over 1
    assert row["p_holm"] is None
    code, table, _ = _cli(capsys, *two, "--correction", "bonferroni")
    assert "paired Student's t-test, Bonferroni-corrected" in table
    assert "p (Bonferroni)" in table
    code, _, err = _cli(capsys, "runs", "compare", ids[0], "--store", str(db))
    assert code == 2
    assert "at least 2 systems" in err
    code, _, err = _cli(capsys, *two, "--baseline", "weak")
    assert code == 2
    assert "give the baseline run first" in err


def test_the_docs_comparison_commands_name_real_options(
    capsys: pytest.CaptureFixture[str],
) -> None:
    doc = (Path(__file__).resolve().parents[2] / "docs" / "metrics.md").read_text()
    section = doc.split("## Comparing systems", 1)[1].split("\n## ", 1)[0]
    (block,) = re.findall(r"```bash\n(.*?)```", section, flags=re.DOTALL)
    lines = block.strip().splitlines()
    assert len(lines) == 4
    for line in lines:
        command = "runs compare" if line.startswith("memgauge runs compare") else "metrics"
        assert main([*command.split(), "--help"]) == 0
        text = capsys.readouterr().out
        for option in re.findall(r"(--[a-z-]+)", line):
            assert option in text, f"memgauge {command} {option}"


def test_runs_compare_two_runs_names_the_baseline(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.syspath_prepend(str(SUBJECTS))
    db = tmp_path / "r.db"
    weak = _run(capsys, _agent_suite(tmp_path, {"s": QUALITY["weak"]}, name="w"), db)
    strong = _run(capsys, _agent_suite(tmp_path, {"s": QUALITY["strong"]}, name="x"), db)
    monkeypatch.setenv("COLUMNS", "200")
    code, out, _ = _cli(capsys, "runs", "compare", weak, strong, "--store", str(db))
    assert code == 0
    lines = [line.strip() for line in out.splitlines()]
    assert lines[:3] == [f"A (baseline): run {weak}", f"B: run {strong}", lines[2]]
    assert lines[2].startswith("delta = B - A, paired by item (")
    assert re.search(r"A \(baseline\) +┃ +B +┃ +delta B - A", out)
    # the strong run answers every question, the weak one a third: B - A = +2/3
    assert re.search(r"│ +0\.333 │ +1\.000 │ +\+0\.667\*+ │", out)
    code, out, _ = _cli(capsys, "runs", "compare", weak, strong, "--store", str(db), "--json")
    assert json.loads(out)["baseline"] == weak


def _failing(suite: Path, subject: str) -> Path:
    """`suite` with `subject` failing every item (its agent raises on each question)."""
    import yaml

    spec = yaml.safe_load(suite.read_text())
    spec["subjects"][subject]["python"]["kwargs"]["fail_on"] = ["question"]
    suite.write_text(yaml.safe_dump(spec))
    return suite


def _recorded(capsys: pytest.CaptureFixture[str], suite: Path, db: Path) -> str:
    """A run of `suite` that may fail (exit 4: a subject failed every item), as recorded."""
    code, out, err = _cli(capsys, "run", str(suite), "--store", str(db), "--json")
    assert code in (0, 4), err
    return str(json.loads(out.strip().splitlines()[-1])["run_id"])


def test_a_subject_that_failed_every_item_stays_in_two_runs_comparison(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A subject whose every item failed in B (it broke), or in both runs, vanished from
    `runs compare A B`: the rows were the measures both runs had values of. It is a row with
    nothing paired: A's own mean beside B's n/a, n 0, and a note that says why."""
    monkeypatch.syspath_prepend(str(SUBJECTS))
    db = tmp_path / "r.db"
    subjects = {"ok": QUALITY["strong"], "broke": QUALITY["strong"], "down": QUALITY["weak"]}
    a = _recorded(capsys, _failing(_agent_suite(tmp_path, subjects), "down"), db)
    b = _recorded(capsys, _failing(_failing(_agent_suite(tmp_path, subjects), "down"), "broke"), db)
    code, out, _ = _cli(capsys, "runs", "compare", a, b, "--store", str(db), "--json")
    assert code == 0
    rows = {r["subject"]: r for r in json.loads(out)["rows"]}
    assert sorted(rows) == ["broke", "down", "ok"]
    assert (rows["ok"]["mean_a"], rows["ok"]["mean_b"], rows["ok"]["n"]) == (1.0, 1.0, 30)
    broke = rows["broke"]
    assert (broke["mean_a"], broke["mean_b"], broke["delta"], broke["n"]) == (1.0, None, None, 0)
    assert broke["note"].startswith("B scored no item")
    down = rows["down"]
    assert (down["mean_a"], down["mean_b"], down["n"]) == (None, None, 0)
    assert down["note"] == "neither run scored an item"
    monkeypatch.setenv("COLUMNS", "200")
    code, out, _ = _cli(capsys, "runs", "compare", a, b, "--store", str(db))
    assert code == 0
    assert re.search(r"│ broke +│ t +│ contains +│ +1\.000 │ +n/a │ +n/a │ +n/a │ +n/a │ +0 │", out)
    assert re.search(r"│ down +│ t +│ contains +│ +n/a │ +n/a │", out)
    # one run's subjects: the one that failed every item is a system with n/a, not left out
    code, out, _ = _cli(capsys, "runs", "compare", a, "--store", str(db), "--json")
    assert code == 0
    doc = json.loads(out)
    assert doc["systems"] == ["broke", "down", "ok"]
    assert doc["n_scored"]["t / contains"] == {"broke": 30, "down": 0, "ok": 30}
    assert doc["means"]["t / contains"] == {"broke": 1.0, "down": None, "ok": 1.0}


@pytest.mark.parametrize("fmt", ["markdown", "table"])
def test_a_subject_that_failed_every_item_in_every_run_stays_in_several_runs_table(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, fmt: str
) -> None:
    """`runs compare A B C` left out a subject whose every item failed in every run: the
    measures were those some system had values of. It is a column of n/a (0 scored), as two
    runs' comparison has it a row."""
    monkeypatch.syspath_prepend(str(SUBJECTS))
    monkeypatch.setenv("COLUMNS", "250")
    db = tmp_path / "r.db"
    subjects = {"ok": QUALITY["strong"], "down": QUALITY["weak"]}
    ids = [_recorded(capsys, _failing(_agent_suite(tmp_path, subjects), "down"), db) for _ in "abc"]
    code, out, _ = _cli(capsys, "runs", "compare", *ids, "--store", str(db), "--json")
    assert code == 0
    doc = json.loads(out)
    assert doc["means"]["down / t / contains"] == dict.fromkeys(ids)
    assert doc["n_scored"]["down / t / contains"] == dict.fromkeys(ids, 0)
    assert doc["n_scored"]["ok / t / contains"] == dict.fromkeys(ids, 30)
    code, out, _ = _cli(capsys, "runs", "compare", *ids, "--store", str(db), "--format", fmt)
    assert code == 0
    assert "down / t / contains" in out
    assert out.count("n/a (0 scored)") == 3
    assert "over the 3 comparisons of the table" in " ".join(out.split())  # none of nothing


def test_a_runs_only_subject_that_failed_every_item_keeps_the_other_runs_mean(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A suite of one subject that broke in B: B has no value of any measure, and the rows were
    only those of the measures both runs share, so A's mean was lost too (n/a, "neither run
    scored an item") though A scored every item."""
    monkeypatch.syspath_prepend(str(SUBJECTS))
    db = tmp_path / "r.db"
    a = _recorded(capsys, _agent_suite(tmp_path, {"only": QUALITY["strong"]}), db)
    b = _recorded(capsys, _failing(_agent_suite(tmp_path, {"only": QUALITY["strong"]}), "only"), db)
    code, out, _ = _cli(capsys, "runs", "compare", a, b, "--store", str(db), "--json")
    assert code == 0
    [row] = json.loads(out)["rows"]
    assert (row["mean_a"], row["mean_b"], row["delta"], row["n"]) == (1.0, None, None, 0)
    assert row["note"].startswith("B scored no item")


def test_two_single_subject_runs_pair_up_when_one_scored_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Run A of subject mem0 and run B of subject zep pair up as "mem0 / zep", as the systems
    table (`--format markdown`) pairs them; with zep failing every item, B had no values to
    pair under A's name, and the rows were mem0's and a zep row saying "neither run scored an
    item", which A never ran."""
    monkeypatch.syspath_prepend(str(SUBJECTS))
    db = tmp_path / "r.db"
    a = _recorded(capsys, _agent_suite(tmp_path, {"mem0": QUALITY["strong"]}), db)
    b = _recorded(capsys, _failing(_agent_suite(tmp_path, {"zep": QUALITY["strong"]}), "zep"), db)
    code, out, _ = _cli(capsys, "runs", "compare", a, b, "--store", str(db), "--json")
    assert code == 0
    [row] = json.loads(out)["rows"]
    assert row["subject"] == "mem0 / zep"
    assert (row["mean_a"], row["mean_b"], row["n"]) == (1.0, None, 0)
    assert row["note"].startswith("B scored no item")


@pytest.mark.parametrize("status", ["running", "cancelled"])
@pytest.mark.parametrize("fmt", ["table", "json", "markdown"])
def test_runs_compare_says_a_run_has_not_completed(
    status: str,
    fmt: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`runs compare A B` with B still running (or cancelled) showed B's numbers as if it
    were whole, without a word: a note on stderr says it has not completed and on how many
    of its items it is compared (stdout stays the table, JSON or Markdown)."""
    from memgauge.store.suite_runs import SuiteRunStore

    monkeypatch.syspath_prepend(str(SUBJECTS))
    db = tmp_path / "r.db"
    suite = _agent_suite(tmp_path, {"ok": QUALITY["strong"]})
    a, b = _run(capsys, suite, db), _run(capsys, suite, db)
    with SuiteRunStore(db) as store:
        store.set_status(b, status)
    args = ["runs", "compare", a, b, "--store", str(db)]
    args += {"json": ["--json"], "markdown": ["--format", "markdown"]}.get(fmt, [])
    code, out, err = _cli(capsys, *args)
    assert code == 0, err
    said = "is still running" if status == "running" else status
    assert f"note: run {b} {said}: compared on the 30 items it recorded of 30" in err, err
    assert f"note: run {a}" not in err, err
    if fmt == "json":
        json.loads(out)


def test_the_viewer_s_compare_page_says_why_a_row_has_no_delta(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A subject that failed every item in B: the JSON row said why it has no delta, the
    table (and the viewer's compare page) showed n/a and n 0 without a word. A line under the
    table says it, once per subject, task and reason; the compare page says the same line."""
    from html import unescape

    from starlette.testclient import TestClient

    from memgauge.view.app import create_app

    monkeypatch.syspath_prepend(str(SUBJECTS))
    monkeypatch.setenv("COLUMNS", "200")
    db = tmp_path / "r.db"
    subjects = {"ok": QUALITY["strong"], "broke": QUALITY["strong"]}
    a = _recorded(capsys, _agent_suite(tmp_path, subjects), db)
    b = _recorded(capsys, _failing(_agent_suite(tmp_path, subjects), "broke"), db)
    code, out, _ = _cli(capsys, "runs", "compare", a, b, "--store", str(db))
    assert code == 0
    assert "n/a: broke/t (1 evaluator): B scored no item" in out, out
    assert "n/a: ok/" not in out, out
    said = [line for line in out.splitlines() if line.startswith("n/a: ")]
    assert said, out
    html = unescape(TestClient(create_app(db)).get(f"/compare?a={a}&b={b}").text)
    shown = re.findall(r'<li class="unpaired">(.*?)</li>', html)
    assert shown == said, html[html.find('id="deltas"') :][:2000]


def test_the_viewer_s_compare_page_says_a_run_has_not_completed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`runs compare A B` with B cancelled says on stderr that B has not completed and on how
    many of its items it is compared; the viewer's compare page showed B's numbers as if it
    were whole. It says the same words."""
    from html import unescape

    from starlette.testclient import TestClient

    from memgauge.store.suite_runs import SuiteRunStore
    from memgauge.view.app import create_app

    monkeypatch.syspath_prepend(str(SUBJECTS))
    db = tmp_path / "r.db"
    suite = _agent_suite(tmp_path, {"ok": QUALITY["strong"]})
    a, b = _run(capsys, suite, db), _run(capsys, suite, db)
    with SuiteRunStore(db) as store:
        store.set_status(b, "cancelled")
    code, _, err = _cli(capsys, "runs", "compare", a, b, "--store", str(db))
    assert code == 0, err
    said = [line.removeprefix("note: ") for line in err.splitlines() if line.startswith("note: ")]
    assert len(said) == 1, err
    assert b in said[0], err
    html = unescape(TestClient(create_app(db)).get(f"/compare?a={a}&b={b}").text)
    shown = re.findall(r'<li class="unended">(.*?)</li>', html)
    assert shown == said, html[html.find("<h1>") :][:1500]
