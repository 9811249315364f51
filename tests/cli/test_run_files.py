"""`evaluate --run-out / --run-json`: each system's ranking as a TREC run and as ranx's dict,
re-evaluated by trec_eval (pytrec_eval) to the same numbers memgauge reported."""

from __future__ import annotations

import json
import math
import subprocess
from pathlib import Path

import pytest
from tests.helpers import run_memgauge

from memgauge import api
from memgauge.data.records import ItemRecord
from memgauge.data.trec import read_run, write_qrels
from memgauge.errors import DataError

pytrec_eval = pytest.importorskip("pytrec_eval")

#: memgauge measure -> trec_eval's name, on trec_eval's conventions (relevant: grade >= 1,
#: linear gain), which the evaluation below is asked to use
TREC_NAMES = {
    "nDCG@10": "ndcg_cut_10",
    "P@5": "P_5",
    "Recall@10": "recall_10",
    "AP": "map",
    "R-prec": "Rprec",
}


def _memgauge(*args: str, home: Path) -> subprocess.CompletedProcess[str]:
    return run_memgauge(*args, env={"MEMGAUGE_HOME": str(home), "COLUMNS": "200"})


def test_exported_runs_re_evaluate_to_memgauge_s_own_values(tmp_path: Path) -> None:
    dataset = tmp_path / "demo" / "dataset"
    api.save_dataset(api.demo_dataset(), dataset)  # as `memgauge demo` writes it
    measures = [a for m in TREC_NAMES for a in ("-m", m)]
    proc = _memgauge(
        "evaluate",
        str(dataset),
        "-s",
        "lexical",
        "-s",
        "reference:mode=lexical,candidates=5@narrow",
        *measures,
        "--rel-threshold",
        "1",
        "--gain",
        "linear",
        "--run-out",
        str(tmp_path / "runs.trec"),
        "--run-json",
        str(tmp_path / "runs.json"),
        "--out",
        str(tmp_path / "rep"),
        "--no-store",
        home=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    assert f"wrote {tmp_path / 'runs.lexical.trec'} (lexical: " in proc.stdout
    qrels = api.load_dataset(dataset).qrels()
    result = json.loads((tmp_path / "rep" / "result.json").read_text())
    compared = 0
    for system in result["systems"]:
        label = system["name"]
        with open(tmp_path / f"runs.{label}.trec") as f:
            trec_run = pytrec_eval.parse_run(f)
        dict_run = json.loads((tmp_path / f"runs.{label}.json").read_text())
        assert trec_run == dict_run
        assert read_run(tmp_path / f"runs.{label}.json") == dict_run  # metrics reads it back
        # one tag per file: the system's label
        tags = {
            line.split()[5] for line in (tmp_path / f"runs.{label}.trec").read_text().splitlines()
        }
        assert tags == {label}
        oracle = pytrec_eval.RelevanceEvaluator(qrels, set(TREC_NAMES.values())).evaluate(dict_run)
        for row in system["per_query"]:
            qid = row["query_id"]
            if qid not in oracle:
                continue
            assert [h for h, _ in sorted(dict_run[qid].items(), key=lambda kv: -kv[1])] == row[
                "hits"
            ]
            for ours, theirs in TREC_NAMES.items():
                assert math.isclose(row["metrics"][ours], oracle[qid][theirs], abs_tol=1e-9), (
                    label,
                    qid,
                    ours,
                )
                compared += 1
    assert compared >= 2 * 30 * len(TREC_NAMES)


def _item(subject: str, qid: str, status: str, output: object) -> ItemRecord:
    return ItemRecord(
        subject=subject,
        task="t",
        item_id=qid,
        status=status,
        output=output,  # type: ignore[arg-type]
    )


def test_what_a_run_file_cannot_hold_is_left_out_and_counted(tmp_path: Path) -> None:
    items = [
        _item(
            "a b",
            "q1",
            "completed",
            {"hits": [{"id": "x", "score": 0.5}, {"id": "y"}, {"id": "x"}]},
        ),
        _item("a b", "q2", "failed", None),
        _item("a b", "q3", "completed", {"hits": []}),
        _item("a b", "q4", "queued", None),
        _item("a/b", "q1", "completed", ["z"]),
    ]
    written = api.write_run_files(items, tmp_path / "out" / "run.txt", "trec")
    assert [(w.subject, w.path.name, w.queries, w.results) for w in written] == [
        ("a b", "run.a_b.txt", 1, 2),
        ("a/b", "run.a_b.2.txt", 1, 1),  # two labels that look alike get files of their own
    ]
    assert dict(written[0].left_out) == {
        "failed_searches": 1,
        "empty_rankings": 1,
        "repeated_documents": 1,
    }
    assert (
        tmp_path / "out" / "run.a_b.txt"
    ).read_text() == "q1 Q0 x 1 2.0 a_b\nq1 Q0 y 2 1.0 a_b\n"
    one = api.write_run_files(items[:1], tmp_path / "single.json", "json")
    assert one[0].path == tmp_path / "single.json"
    assert json.loads(one[0].path.read_text()) == {"q1": {"x": 2.0, "y": 1.0}}


def test_an_id_a_trec_file_cannot_hold_is_refused_before_any_file_is_written(
    tmp_path: Path,
) -> None:
    """A memory id `doc one` was written as `q1 Q0 doc one 1 1.0 t`: seven columns, which
    trec_eval, pytrec_eval and ir_measures read as document `doc`, or refuse; a query id `#2`
    made its lines comments. The JSON run holds both."""
    items = [
        _item("a", "q1", "completed", ["doc one", "d2"]),
        _item("a", "#2", "completed", ["d2"]),
        _item("b", "q1", "completed", ["d2"]),
    ]
    with pytest.raises(DataError) as err:
        api.write_run_files(items, tmp_path / "run.trec", "trec")
    assert [p.message.split(" cannot")[0] for p in err.value.problems] == [
        "document id 'doc one'",
        "query id '#2'",
    ]
    assert list(tmp_path.iterdir()) == []  # not even system b's file
    (written,) = api.write_run_files(items[:2], tmp_path / "run.json", "json")
    assert json.loads(written.path.read_text()) == {
        "#2": {"d2": 1.0},
        "q1": {"doc one": 2.0, "d2": 1.0},
    }
    with pytest.raises(DataError, match="document id 'd 1'"):
        write_qrels(tmp_path / "qrels.txt", {"q1": {"d 1": 1}})
    assert not (tmp_path / "qrels.txt").exists()


@pytest.mark.parametrize(
    "options",
    [
        [],
        ["--rel-threshold", "1", "--gain", "linear"],
        ["--rel-threshold", "3", "--no-relevant", "skip"],
        ["--no-relevant", "one"],
    ],
)
def test_metrics_on_the_exported_run_gives_evaluate_s_values_and_n(
    tmp_path: Path, options: list[str]
) -> None:
    """The same measure on the same data through `evaluate` and through `memgauge metrics`
    on the run evaluate wrote and the dataset's qrels, with the same conventions: one value
    (to 1e-12: the two sum the queries in another order) and one n per measure."""
    dataset = tmp_path / "demo" / "dataset"
    api.save_dataset(api.demo_dataset(), dataset)
    measures = ["nDCG@10", "RR@10", "Recall@5", "P@5", "AP@20", "R-prec", "Bpref"]
    flags = [a for m in measures for a in ("-m", m)]
    run, out = tmp_path / "lexical.run", tmp_path / "rep"
    argv = ["evaluate", str(dataset), "-s", "lexical", *flags, *options, "--run-out", str(run)]
    proc = _memgauge(*argv, "--out", str(out), "--no-store", "--quiet", home=tmp_path)
    assert proc.returncode == 0, proc.stderr
    qrels = tmp_path / "qrels.txt"
    write_qrels(qrels, api.load_dataset(dataset).qrels())
    proc = _memgauge("metrics", str(qrels), str(run), *flags, *options, "--json", home=tmp_path)
    assert proc.returncode == 0, proc.stderr
    scored = json.loads(proc.stdout)
    (system,) = json.loads((out / "result.json").read_text())["systems"]
    reported = system["metrics"]
    assert scored["config"]["conventions"].startswith(
        json.loads((out / "result.json").read_text())["settings"]["conventions"]
    )
    assert {m: reported[m]["n_scored"] for m in measures} == dict.fromkeys(
        measures, scored["counts"]["n_scored"]
    )
    differ = {
        m: (reported[m]["value"], scored["aggregate"][m])
        for m in measures
        if not math.isclose(reported[m]["value"], scored["aggregate"][m], rel_tol=1e-12)
    }
    assert differ == {}


def test_evaluate_refuses_an_id_its_trec_run_cannot_hold_before_writing_its_reports(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The run file's ids were checked only after evaluate had written its reports: exit 2
    said "nothing was written" beside a full --out directory."""
    from memgauge.cli.main import main
    from memgauge.data.demo import demo_dataset
    from memgauge.data.io import save_retrieval_dataset

    data = demo_dataset()
    old = data.memories[0].id
    data = data.model_copy(
        update={
            "memories": [data.memories[0].model_copy(update={"id": "doc one"}), *data.memories[1:]],
            "judgments": [
                j.model_copy(update={"memory_id": "doc one"}) if j.memory_id == old else j
                for j in data.judgments
            ],
        }
    )
    save_retrieval_dataset(data, tmp_path / "ds")
    out, run = tmp_path / "out", tmp_path / "run.trec"
    args = ["evaluate", str(tmp_path / "ds"), "-s", "lexical", "--no-store", "--quiet"]
    assert main([*args, "--out", str(out), "--run-out", str(run)]) == 2
    assert "document id 'doc one' cannot" in capsys.readouterr().err
    assert not out.exists()
    assert not run.exists()
