"""`memgauge optimize` end to end: every candidate a stored run, the --json last line, list and
show --diff, a split by corpus, bad specs and flags (exit 2), no Optuna (exit 3), the tools and
code targets, and kill -9 then --resume (issue 15)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from memgauge import api
from memgauge.cli.main import main
from memgauge.optimize.split import split_items

ROOT = Path(__file__).resolve().parents[2]
SUBJECTS = ROOT / "tests" / "data" / "subjects"
BAD = sorted((ROOT / "tests" / "data" / "bad").glob("suite_optimize_*.yaml"))


@pytest.fixture(autouse=True)
def _subjects_importable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(SUBJECTS))


def _items(n: int = 10) -> list[dict[str, Any]]:
    return [
        {"id": f"q{i}", "input": f"add {i} {i + 1}", "expected": str(2 * i + 1)} for i in range(n)
    ]


def _suite(tmp_path: Path, subject: dict[str, Any], block: dict[str, Any], **task: Any) -> Path:
    suite = {
        "name": "opt",
        "subjects": {"agent": subject},
        "tasks": [
            {
                "name": "sums",
                "kind": "expected-output",
                "items": _items(),
                "evaluators": ["exact"],
                **task,
            }
        ],
        "optimization": block,
    }
    path = tmp_path / "suite.yaml"
    path.write_text(yaml.safe_dump(suite, sort_keys=False))
    return path


def _json_run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, dict[str, Any]]:
    code = main(argv)
    out = capsys.readouterr().out.strip().splitlines()
    return code, json.loads(out[-1]) if out else {}


def test_every_iteration_is_a_stored_run_and_the_last_line_is_the_study(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    agent = {"python": {"target": "optsubjects:OffsetAgent", "kwargs": {"offset": 3}}}
    path = _suite(tmp_path, agent, {"space": {"kwargs.offset": "int:-4..4"}, "seed": 1})
    db = tmp_path / "r.db"
    code, data = _json_run(
        ["optimize", str(path), "--store", str(db), "--max-iterations", "6", "--json"], capsys
    )
    assert code == 0
    assert {
        "id",
        "strategy",
        "iterations",
        "best",
        "baseline",
        "holdout",
        "stopped_because",
    } <= set(data)
    assert data["strategy"] == "greedy"
    assert data["stopped_because"] in ("max-iterations", "target-score")
    for it in data["iterations"]:
        assert {"step", "params", "score", "accepted", "run_id"} <= set(it)
        run = api.read_run(it["run_id"], store=db)
        assert run.status == "completed"
        assert run.kind == "optimize"
        # the candidate's run held only the tuning side of the split, with its params
        spec = run.suite["subjects"]["agent"]["python"]["kwargs"]
        assert spec["offset"] == it["params"]["kwargs.offset"]
    assert data["baseline"]["params"] == {"kwargs.offset": 3}
    assert data["baseline"]["score"] == 0.0
    assert {"params", "score", "ci_low", "ci_high"} <= set(data["best"])
    assert set(data["holdout"]) >= {"best", "baseline", "delta", "ci_low", "ci_high"}
    # 10 items, 0.3 held out: the holdout runs scored 3 items
    assert data["holdout"]["n"] == 3
    assert data["split"] == "7 items tuned on, 3 held out"
    # the history reads back the same
    assert main(["optimize", "show", data["id"][:12], "--store", str(db), "--json"]) == 0
    shown = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert shown["iterations"] == data["iterations"]
    assert main(["optimize", "list", "--store", str(db), "--json"]) == 0
    (listed,) = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert listed["study_id"] == data["id"]
    assert listed["n_iterations"] == len({it["step"] for it in data["iterations"]}) - 1
    assert main(["optimize", "show", data["id"], "--store", str(db), "--diff", "0", "1"]) == 0
    out = capsys.readouterr().out
    assert "kwargs.offset" in out


def test_the_split_goes_by_corpus_when_items_have_corpora() -> None:
    items = [(f"q{i}", f"conv-{i % 5}") for i in range(50)]
    split = split_items(items, 0.3, seed=0)
    assert split.by == "corpus"
    assert split.holdout is not None
    held, tuned = set(split.holdout.corpora or []), set(split.tune.corpora or [])
    assert len(held) == 2
    assert held.isdisjoint(tuned)
    assert held | tuned == {f"conv-{i}" for i in range(5)}
    assert split_items(items, 0.3, seed=0) == split  # seeded


def test_tools_target_finds_the_subset_that_answers(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    agent = {
        "python": {
            "target": "optsubjects:ToolAgent",
            "kwargs": {"tools": ["calc", "noise", "shout"]},
        }
    }
    block = {
        "targets": ["tools"],
        "tools": "kwargs.tools",
        "strategy": "tpe",
        "holdout": 0,
        "seed": 3,
    }
    path = _suite(tmp_path, agent, block)
    code, data = _json_run(
        [
            "optimize",
            str(path),
            "--store",
            str(tmp_path / "r.db"),
            "--max-iterations",
            "15",
            "--json",
        ],
        capsys,
    )
    assert code == 0
    assert data["baseline"]["score"] == 0.0
    assert data["best"]["score"] == 1.0
    assert data["best"]["params"] == {
        "kwargs.tools[calc]": True,
        "kwargs.tools[noise]": False,
        "kwargs.tools[shout]": False,
    }
    run = api.read_run(data["best"]["run_id"], store=tmp_path / "r.db")
    assert run.suite["subjects"]["agent"]["python"]["kwargs"]["tools"] == ["calc"]
    assert data["holdout"] is None


def test_code_hook_script_proposes_the_next_candidate(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    hook = tmp_path / "next_candidate.py"
    seen = tmp_path / "seen.jsonl"
    hook.write_text(
        "import json, sys\n"
        "got = json.load(sys.stdin)\n"
        f"open({str(seen)!r}, 'a').write(json.dumps(got) + '\\n')\n"
        "offset = got['spec']['python']['kwargs']['offset']\n"
        "worst = got['failures'][0]\n"
        "error = int(worst['output']) - int(worst['expected'])\n"
        "print(json.dumps({'params': {'kwargs.offset': offset - error}}))\n"
    )
    agent = {"python": {"target": "optsubjects:OffsetAgent", "kwargs": {"offset": 2}}}
    block = {
        "targets": ["code"],
        "hook": [sys.executable, str(hook)],
        "holdout": 0,
        "maxIterations": 5,
        "targetScore": 1.0,
    }
    code, data = _json_run(
        [
            "optimize",
            str(_suite(tmp_path, agent, block)),
            "--store",
            str(tmp_path / "r.db"),
            "--json",
        ],
        capsys,
    )
    assert code == 0
    # it read the failures (answers off by 2) and proposed the offset that fixes them
    assert [it["params"].get("kwargs.offset") for it in data["iterations"]] == [None, 0]
    assert data["stopped_because"] == "target-score"
    assert data["best"]["score"] == 1.0
    calls = [json.loads(line) for line in seen.read_text().splitlines()]
    # the hook was shown the current candidate, its score and the failing items with reasons
    assert calls[0]["spec"]["python"]["kwargs"]["offset"] == 2
    assert calls[0]["score"] == 0.0
    assert calls[0]["failures"][0]["expected"] in {str(2 * i + 1) for i in range(10)}
    assert calls[0]["failures"][0]["reasons"]
    # the start has no params of its own (the hook gives them): it is the suite's configuration
    assert main(["optimize", "show", data["id"], "--store", str(tmp_path / "r.db")]) == 0
    assert "baseline: 0.000 with the suite's own configuration" in capsys.readouterr().out


@pytest.mark.parametrize("path", BAD, ids=lambda p: p.name)
def test_bad_optimization_specs_exit_2_naming_file_line_and_key(
    path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "nowhere.db"
    code = main(["optimize", str(path), "--store", str(db)])
    err = capsys.readouterr().err
    assert code == 2
    assert not db.exists()  # a bad spec is refused before a store is made
    assert "Traceback" not in err
    assert f"{path.name}:" in err
    assert "optimization" in err


@pytest.mark.parametrize(
    ("flag", "message"),
    [
        ("k_rrf=int:10-120", "give the range as LO..HI"),
        ("k_rrf", "write FIELD=int:LO..HI"),
        ("k_rrf=float:0..1:cubic", "the only scale is :log"),
        ("k_rf=int:1..5", "has no field 'k_rf'"),
        ("mode=choice:hybrid,fuzzy", "refuses mode='fuzzy'"),
    ],
)
def test_bad_space_flags_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], flag: str, message: str
) -> None:
    path = _suite(tmp_path, {"reference": {"mode": "lexical"}}, {})
    db = tmp_path / "r.db"
    assert main(["optimize", str(path), "--store", str(db), "--space", flag]) == 2
    assert message in capsys.readouterr().err
    assert not db.exists() or not api.optimizations(store=db)


def test_a_python_targets_argument_named_bare_says_to_write_it_under_kwargs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--space offset=...` for a python: target said only "its fields are kwargs, target":
    the argument is searched as `kwargs.offset`, which the message now says."""
    agent = {"python": {"target": "optsubjects:OffsetAgent", "kwargs": {"offset": 3}}}
    path = _suite(tmp_path, agent, {})
    flags = ["--space", "offset=int:-4..4"]
    assert main(["optimize", str(path), "--store", str(tmp_path / "r.db"), *flags]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "has no field 'offset'; its fields are kwargs, target" in err
    assert "(a key under kwargs is written `kwargs.offset`)" in err


@pytest.mark.parametrize("score", ["-3", "101"])
def test_a_target_score_out_of_range_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], score: str
) -> None:
    """--target-score -3 was taken: the study stopped at its baseline, "stopped because:
    target-score", exit 0; one above 100 (1.01 as points) could never be reached."""
    path = _suite(tmp_path, {"reference": {"mode": "lexical"}}, {})
    db = tmp_path / "r.db"
    flags = ["--space", "candidates=int:10..100", "--target-score", score]
    assert main(["optimize", str(path), "--store", str(db), *flags]) == 2
    assert "'--target-score'" in capsys.readouterr().err
    assert not db.exists()


@pytest.mark.parametrize(
    ("flag", "message"),
    [
        ("--objective", "objective (--objective): an empty one names no measure"),
        ("--constraint", "constraint (--constraint): an empty one names no bound"),
    ],
)
def test_an_empty_objective_or_constraint_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], flag: str, message: str
) -> None:
    """--objective '' optimized the task's first evaluator and --constraint '' bound nothing,
    each exit 0: '' was read as not given."""
    path = _suite(tmp_path, {"reference": {"mode": "lexical"}}, {})
    db = tmp_path / "r.db"
    flags = ["--space", "candidates=int:10..100", flag, ""]
    assert main(["optimize", str(path), "--store", str(db), *flags]) == 2
    assert message in capsys.readouterr().err
    assert not db.exists()


def test_without_optuna_exit_3_with_the_pip_command(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "optuna", None)  # import optuna raises ImportError
    path = _suite(tmp_path, {"reference": {"mode": "lexical"}}, {"space": {"k": "int:1..5"}})
    assert main(["optimize", str(path), "--store", str(tmp_path / "r.db")]) == 3
    err = capsys.readouterr().err
    # a base dependency missing (installed with --no-deps): the line that installs it
    assert "needs Optuna, a dependency of memgauge that is not installed here" in err
    assert "pip install 'optuna>=4.0'" in err


def _study_process(argv: list[str], env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "memgauge", *argv],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_kill_9_then_resume_redoes_no_finished_candidate(tmp_path: Path) -> None:
    calls, hang, hung = tmp_path / "calls.txt", tmp_path / "hang", tmp_path / "hung"
    agent = {
        "python": {
            "target": "optsubjects:OffsetAgent",
            "kwargs": {
                "offset": 4,
                "calls_file": str(calls),
                "hang_file": str(hang),
                "hung_file": str(hung),
                # 7 tuning items a candidate: the 4th candidate (step 3) hangs on its 3rd item
                "hang_at": 3 * 7 + 3,
            },
        }
    }
    block = {"space": {"kwargs.offset": "int:-4..4"}, "maxIterations": 5, "seed": 5}
    path = _suite(tmp_path, agent, block)
    db = tmp_path / "r.db"
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(SUBJECTS)]),
        "MEMGAUGE_HOME": str(tmp_path / "home"),
    }
    hang.write_text("")
    first = _study_process(["optimize", str(path), "--store", str(db), "--json"], env)
    while not hung.exists():  # a candidate's run is under way (no time is asserted)
        assert first.poll() is None, first.communicate()
        time.sleep(0.05)
    os.kill(first.pid, signal.SIGKILL)
    first.communicate()  # reaped, its pipes closed
    hang.unlink()
    (study,) = api.optimizations(store=db)
    before = {
        (it["step"], it["candidate"]): it
        for it in api.optimization(study["study_id"], store=db)["iterations"]
    }
    finished = {k: it["run_id"] for k, it in before.items() if it["status"] == "completed"}
    assert len(finished) == 3  # the baseline and steps 1, 2
    assert before[(3, 0)]["status"] == "running"
    assert before[(3, 0)]["run_id"] is not None
    lines_before = calls.read_text().splitlines()

    second = _study_process(
        ["optimize", "--resume", study["study_id"], "--store", str(db), "--json"], env
    )
    out, err = second.communicate(timeout=600)
    assert second.returncode == 0, err
    data = json.loads(out.strip().splitlines()[-1])
    assert data["id"] == study["study_id"]
    assert data["status"] == "completed"
    after = {(it["step"], it["candidate"]): it for it in data["iterations"]}
    # finished candidates kept their runs; the interrupted one finished its own run
    for key, run_id in finished.items():
        assert after[key]["run_id"] == run_id
    assert after[(3, 0)]["run_id"] == before[(3, 0)]["run_id"]
    assert api.read_run(after[(3, 0)]["run_id"], store=db).status == "completed"
    # no item of a finished candidate was asked again: the resumed process asked only the
    # interrupted run's unfinished items, the later steps' and the holdout's
    asked_again = calls.read_text().splitlines()[len(lines_before) :]
    offsets_done = {str(before[k]["params"]["kwargs.offset"]) for k in finished}
    later = {str(it["params"]["kwargs.offset"]) for k, it in after.items() if k[0] >= 3}
    stray = [line for line in asked_again if line.split()[0] in offsets_done - later]
    held = api.read_run(data["holdout"]["baseline_run_id"], store=db).suite["tasks"][0]["only"]
    holdout_items = {f"add {i[1:]} {int(i[1:]) + 1}" for i in held["items"]}
    assert len(holdout_items) == 3
    assert all(" ".join(line.split()[1:]) in holdout_items for line in stray)


def test_ctrl_c_in_a_candidates_run_says_how_to_resume_the_optimization_only(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ctrl-C while a candidate's run went: the optimization's line ('continue it with
    `memgauge optimize --resume OPT`') was followed by the candidate run's ('finish it with the
    same command and `--resume RUN`'), which `optimize` refuses; only the first is said."""
    from memgauge.runs import engine

    execute = engine._execute
    calls = []

    def pressed(*args: Any, **kwargs: Any) -> None:
        calls.append(1)
        if len(calls) == 2:  # the first candidate after the baseline
            raise KeyboardInterrupt
        execute(*args, **kwargs)

    monkeypatch.setattr(engine, "_execute", pressed)
    agent = {"python": {"target": "optsubjects:OffsetAgent", "kwargs": {"offset": 3}}}
    path = _suite(tmp_path, agent, {"space": {"kwargs.offset": "int:-4..4"}, "seed": 1})
    db = tmp_path / "r.db"
    assert main(["optimize", str(path), "--store", str(db), "--max-iterations", "3"]) == 130
    err = capsys.readouterr().err
    (study,) = api.optimizations(store=db)
    assert study["status"] == "cancelled"
    assert f"continue it with `memgauge optimize --resume {study['study_id']}`" in err
    assert "same command" not in err
    monkeypatch.setattr(engine, "_execute", execute)
    assert main(["optimize", "--resume", study["study_id"], "--store", str(db)]) == 0


def _stopped_in_its_first_candidate(monkeypatch: pytest.MonkeyPatch, argv: list[str]) -> str:
    """The id of the study `argv` starts, stopped by Ctrl-C in its first candidate's run
    (after the baseline's), as `memgauge optimize` leaves it: cancelled, exit 130."""
    from memgauge.runs import engine

    execute = engine._execute
    calls = []

    def pressed(*args: Any, **kwargs: Any) -> None:
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt
        execute(*args, **kwargs)

    with monkeypatch.context() as m:
        m.setattr(engine, "_execute", pressed)
        assert main(argv) == 130
    store = argv[argv.index("--store") + 1]
    (study,) = [s for s in api.optimizations(store=store) if s["status"] == "cancelled"]
    return str(study["study_id"])


def _an_interrupted_study(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, str]:
    """The store and id of a study of OffsetAgent's offset (3 iterations at most) stopped by
    Ctrl-C in its first candidate (`_stopped_in_its_first_candidate`)."""
    agent = {"python": {"target": "optsubjects:OffsetAgent", "kwargs": {"offset": 3}}}
    path = _suite(tmp_path, agent, {"space": {"kwargs.offset": "int:-4..4"}, "seed": 1})
    db = tmp_path / "r.db"
    argv = ["optimize", str(path), "--store", str(db), "--max-iterations", "3"]
    return db, _stopped_in_its_first_candidate(monkeypatch, argv)


@pytest.mark.parametrize("strategy", ["greedy", "annealing"])
def test_a_study_resumed_after_ctrl_c_proposes_what_it_would_have(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, strategy: str
) -> None:
    """The space's order in the block (offset, then hang_at) was lost in the store (its JSON
    keys are sorted), so a resumed study's neighbour sampler drew in another order and proposed
    other candidates than the study left alone would have (space.py promises the same ones)."""
    agent = {"python": {"target": "optsubjects:OffsetAgent", "kwargs": {"offset": 3}}}
    space = {"kwargs.offset": "int:-4..4", "kwargs.hang_at": "int:0..50"}
    path = _suite(tmp_path, agent, {"space": space, "seed": 3, "strategy": strategy})
    argv = ["optimize", str(path), "--max-iterations", "5"]

    def proposed(db: Path) -> list[dict[str, Any]]:
        (study,) = api.optimizations(store=db)
        return [it["params"] for it in api.optimization(study["study_id"], store=db)["iterations"]]

    alone, stopped = tmp_path / "alone.db", tmp_path / "stopped.db"
    assert main([*argv, "--store", str(alone)]) == 0
    sid = _stopped_in_its_first_candidate(monkeypatch, [*argv, "--store", str(stopped)])
    assert main(["optimize", "--resume", sid, "--store", str(stopped)]) == 0
    assert proposed(stopped) == proposed(alone)


def test_an_interrupted_study_says_its_holdout_is_not_scored_yet(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A study stopped by Ctrl-C with 3 items held out said `holdout: none (nothing held
    out)` in `optimize show` and the viewer: it is not scored yet, and --resume scores it."""
    from starlette.testclient import TestClient

    from memgauge.view.app import create_app

    db, sid = _an_interrupted_study(tmp_path, monkeypatch)
    capsys.readouterr()
    code, data = _json_run(["optimize", "show", sid, "--store", str(db), "--json"], capsys)
    assert code == 0
    assert data["split"] == "7 items tuned on, 3 held out"
    assert data["holdout"] is None
    said = f"not scored: the study was interrupted before its end; `memgauge optimize --resume {sid}` finishes it"
    assert data["holdout_note"] == said
    assert main(["optimize", "show", sid, "--store", str(db)]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert f"holdout: none ({said})" in out
    assert "nothing held out" not in out
    with TestClient(create_app(db)) as client:
        html = client.get(f"/optimizations/{sid}").text
    assert "nothing held out" not in html
    assert "not scored: the study was interrupted before its end" in html
    code, data = _json_run(["optimize", "--resume", sid, "--store", str(db), "--json"], capsys)
    assert code == 0
    assert data["holdout"]["n"] == 3
    assert data["holdout_note"] is None


def test_an_interrupted_candidate_shows_as_cancelled_not_running(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """After Ctrl-C the candidate whose run was stopped showed `running` in `optimize show`,
    its --json and the viewer, beside a cancelled study and a cancelled run."""
    from starlette.testclient import TestClient

    from memgauge.view.app import create_app

    db, sid = _an_interrupted_study(tmp_path, monkeypatch)
    capsys.readouterr()
    code, data = _json_run(["optimize", "show", sid, "--store", str(db), "--json"], capsys)
    assert code == 0
    stopped = data["iterations"][1]
    assert stopped["status"] == "cancelled"
    assert api.read_run(stopped["run_id"], store=db).status == "cancelled"
    with TestClient(create_app(db)) as client:
        html = client.get(f"/optimizations/{sid}").text
    table = html[html.index('id="iterations"') :].split("</table>")[0]
    assert "running" not in table
    assert main(["optimize", "--resume", sid, "--store", str(db)]) == 0  # it still resumes
    assert api.optimization(sid, store=db)["iterations"][1]["status"] == "completed"


def test_the_best_written_as_a_suite_runs_to_the_studys_number_with_its_n(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Nothing wrote the best configuration anywhere: a user re-ran it by hand-editing the
    suite and got another number (every item, where the study scores the tuning split).
    `optimize show ID --write-best FILE` writes it; `memgauge run FILE` gives the best's
    score, CI and n."""
    monkeypatch.chdir(tmp_path)
    agent = {"python": {"target": "optsubjects:OffsetAgent", "kwargs": {"offset": 3}}}
    path = _suite(tmp_path, agent, {"space": {"kwargs.offset": "int:-4..4"}, "seed": 1})
    db = tmp_path / "r.db"
    argv = ["optimize", str(path), "--store", str(db), "--max-iterations", "6", "--json"]
    code, study = _json_run(argv, capsys)
    assert code == 0
    best = study["best"]
    assert best["step"] > 0  # a candidate beat the start
    written = tmp_path / "best.yaml"
    flags = ["--write-best", str(written), "--store", str(db)]
    assert main(["optimize", "show", study["id"], *flags]) == 0
    said = " ".join(capsys.readouterr().out.split())
    assert f"wrote {written}: the best configuration (step {best['step']}" in said
    assert "on the 7 items of its tuning split" in said
    code, run = _json_run(["run", str(written), "--store", str(db), "--json"], capsys)
    assert code == 0
    (exact,) = [m for m in run["measures"] if m["name"] == "exact"]
    assert (exact["value"], exact["ci_low"], exact["ci_high"]) == (
        best["score"],
        best["ci_low"],
        best["ci_high"],
    )
    assert exact["n_scored"] == 7


def test_a_study_without_a_scored_best_writes_no_suite(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A study stopped before anything was scored has no best to write: exit 2, no file."""
    from memgauge.runs import engine

    def pressed(*args: Any, **kwargs: Any) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(engine, "_execute", pressed)
    agent = {"python": {"target": "optsubjects:OffsetAgent", "kwargs": {"offset": 3}}}
    path = _suite(tmp_path, agent, {"space": {"kwargs.offset": "int:-4..4"}, "seed": 1})
    db = tmp_path / "r.db"
    assert main(["optimize", str(path), "--store", str(db)]) == 130
    (study,) = api.optimizations(store=db)
    written = tmp_path / "best.yaml"
    flags = ["--write-best", str(written), "--store", str(db)]
    assert main(["optimize", "show", study["study_id"], *flags]) == 2
    assert "has no scored best to write" in capsys.readouterr().err
    assert not written.exists()


@pytest.mark.parametrize("other", [["--diff", "0", "1"], ["--json"]])
def test_write_best_with_another_output_is_refused_not_one_of_them_dropped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], other: list[str]
) -> None:
    """`--write-best FILE --diff A B` wrote the file and never showed the diff; with `--json`
    it printed a sentence where a script read JSON."""
    written = tmp_path / "best.yaml"
    argv = ["optimize", "show", "s1", "--write-best", str(written), *other]
    assert main([*argv, "--store", str(tmp_path / "r.db")]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert f"--write-best and {other[0]} cannot go together" in err
    assert not written.exists()


def test_a_study_whose_suite_moved_resumes_from_where_it_is_now(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`--resume ID` read the suite only from where the study started: once the project
    folder moved it said "no such suite file", and `optimize SUITE --resume ID` was refused
    ("give no SUITE"), so the study could never finish. The new path is taken (the same suite:
    checked), and the message says to give it."""
    db, sid = _an_interrupted_study(tmp_path, monkeypatch)
    path = tmp_path / "suite.yaml"  # the study's suite
    moved = tmp_path / "moved"
    moved.mkdir()
    path.rename(moved / path.name)
    capsys.readouterr()
    assert main(["optimize", "--resume", sid, "--store", str(db)]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert f"optimization {sid} was started from {path}, which is not there" in err
    assert f"`memgauge optimize SUITE --resume {sid}`" in err
    changed = tmp_path / "changed.yaml"
    changed.write_text((moved / path.name).read_text().replace("seed: 1", "seed: 2"))
    assert main(["optimize", str(changed), "--resume", sid, "--store", str(db)]) == 2
    assert "the suite changed since the optimization started" in capsys.readouterr().err
    again = ["optimize", str(moved / path.name), "--resume", sid, "--store", str(db), "--json"]
    code, data = _json_run(again, capsys)
    assert code == 0
    assert data["status"] == "completed"
    assert api.optimizations(store=db)[0]["suite_path"] == str(moved / path.name)


def test_a_candidates_run_page_links_its_optimization_and_split(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A candidate's run page ("optimize:opt", 7 of 10 items) said nothing of the study it
    belongs to, nor whether it was scored on the tuning or the held-out split; and it gated
    the run against "earlier runs of this suite", the other candidates on other items."""
    from starlette.testclient import TestClient

    from memgauge.view.app import create_app

    agent = {"python": {"target": "optsubjects:OffsetAgent", "kwargs": {"offset": 3}}}
    path = _suite(tmp_path, agent, {"space": {"kwargs.offset": "int:-4..4"}, "seed": 1})
    db = tmp_path / "r.db"
    argv = ["optimize", str(path), "--store", str(db), "--max-iterations", "2", "--json"]
    code, study = _json_run(argv, capsys)
    assert code == 0
    sid = study["id"]
    with TestClient(create_app(db)) as client:
        tuned = client.get(f"/runs/{study['iterations'][1]['run_id']}").text
        held = client.get(f"/runs/{study['holdout']['baseline_run_id']}").text
        alone = client.get(f"/runs/{study['iterations'][0]['run_id']}").text
    link = f'<a href="/optimizations/{sid}">{sid}</a>'
    assert f"A candidate of optimization {link}: iteration 1, scored on its tuning split." in tuned
    assert "scored on its held-out split (the starting configuration)" in held
    assert "iteration 0, scored on its tuning split" in alone
    # no gate against "earlier runs of this suite": the other candidates, on other items
    assert 'id="gate"' not in held


def test_a_flag_read_as_points_is_named_as_the_flag(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--target-score 80` was said as "targetScore: 80 is read as points", a key the user
    never wrote; the block's own key is still named by its key."""
    agent = {"python": {"target": "optsubjects:OffsetAgent", "kwargs": {"offset": 3}}}
    block = {"space": {"kwargs.offset": "int:-4..4"}, "improvementThreshold": 2}
    path = _suite(tmp_path, agent, block)
    flags = ["--target-score", "80", "--max-iterations", "1", "--json"]
    code, data = _json_run(
        ["optimize", str(path), "--store", str(tmp_path / "r.db"), *flags], capsys
    )
    assert code == 0
    assert data["notices"] == [
        "--target-score: 80 is read as points out of 100, 0.8 on the objective's 0-1 scale",
        "improvementThreshold: 2 is read as points out of 100, 0.02 on the objective's 0-1 scale",
    ]


def test_a_kwarg_the_suite_leaves_out_starts_from_the_factorys_default(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """OffsetAgent's `offset` defaults to 0; the suite does not set it, so the baseline is 0
    (it was None, and that run failed validation with exit 2)."""
    agent = {"python": {"target": "optsubjects:OffsetAgent"}}
    path = _suite(tmp_path, agent, {"space": {"kwargs.offset": "int:-4..4"}, "seed": 1})
    code, data = _json_run(
        [
            "optimize",
            str(path),
            "--store",
            str(tmp_path / "r.db"),
            "--max-iterations",
            "2",
            "--json",
        ],
        capsys,
    )
    assert code == 0
    assert data["baseline"]["params"] == {"kwargs.offset": 0}
    assert data["baseline"]["score"] == 1.0


def test_a_suite_with_repeats_is_scored_as_its_runs_number(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """With `repeat: 3` the split is of the dataset's items (not item-repeats, which no task's
    `only:` knows), and each candidate's score and CI are its run's number for the objective:
    the repeats aggregate's mean of item means with its interval over items, not the mean of
    item-repeats (which `add 0 1`'s failed repeat would make another number)."""
    agent = {"python": {"target": "optsubjects:WobblyAgent", "kwargs": {"offset": 1}}}
    block = {"space": {"kwargs.offset": "int:-1..1"}, "seed": 1, "strategy": "random"}
    path = _suite(tmp_path, agent, block)
    suite = yaml.safe_load(path.read_text())
    path.write_text(yaml.safe_dump({**suite, "repeat": 3}, sort_keys=False))
    db = tmp_path / "r.db"
    code, data = _json_run(
        ["optimize", str(path), "--store", str(db), "--max-iterations", "3", "--json"], capsys
    )
    assert code == 0
    assert data["split"] == "7 items tuned on, 3 held out"
    assert data["holdout"]["n"] == 3
    scored = 0
    for it in data["iterations"]:
        run = api.read_run(it["run_id"], store=db)
        [mine] = [
            m
            for m in run.summary.measures()
            if (m.subject, m.task, m.name) == ("agent", "sums", "exact")
        ]
        assert mine.source == "repeats"
        assert (it["score"], it["ci_low"], it["ci_high"]) == (mine.value, mine.ci_low, mine.ci_high)
        scored += it["score"] is not None and it["score"] > 0
    assert scored  # offset 0 was among the candidates, and answers right some of the time


def test_a_second_ctrl_c_while_the_study_is_recorded_as_cancelled_is_ignored(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A second Ctrl-C (or `kill`) landing in the write that records the study as cancelled
    left it 'running'; it is ignored there, as a suite run's cancellation ignores it."""
    from memgauge.runs import engine
    from memgauge.store.optimization import OptimizationHistory

    execute, update = engine._execute, OptimizationHistory.update_study
    calls = []

    def pressed(*args: Any, **kwargs: Any) -> None:
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt
        execute(*args, **kwargs)

    def pressed_again(self: Any, study_id: str, **fields: Any) -> None:
        if fields.get("status") == "cancelled":
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(0.01)  # the handler runs on the main thread's next instruction
        update(self, study_id, **fields)

    monkeypatch.setattr(engine, "_execute", pressed)
    monkeypatch.setattr(OptimizationHistory, "update_study", pressed_again)
    agent = {"python": {"target": "optsubjects:OffsetAgent", "kwargs": {"offset": 3}}}
    path = _suite(tmp_path, agent, {"space": {"kwargs.offset": "int:-4..4"}, "seed": 1})
    db = tmp_path / "r.db"
    assert main(["optimize", str(path), "--store", str(db), "--max-iterations", "3"]) == 130
    (study,) = api.optimizations(store=db)
    assert study["status"] == "cancelled"
    assert "continue it with `memgauge optimize --resume" in capsys.readouterr().err


@pytest.mark.parametrize("flag", ["idf=choice:true,false", "mode=choice:yes,no"])
def test_an_error_about_a_space_flag_quotes_it_as_typed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], flag: str
) -> None:
    """`idf=choice:true,false` was quoted back as `idf=choice:True,False`: the flag as
    Python printed the values it read, not as the user wrote it."""
    path = _suite(tmp_path, {"reference": {"mode": "lexical"}}, {})
    assert main(["optimize", str(path), "--store", str(tmp_path / "r.db"), "--space", flag]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert f"--space '{flag}':" in err


def test_a_study_cancelled_before_any_candidate_finished_does_not_say_none_cleared(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Stopped in its first candidate, a study's current best (the start) said "nothing
    cleared the threshold against it" in the viewer: nothing else was scored to clear it."""
    from starlette.testclient import TestClient

    from memgauge.view.app import create_app

    db, sid = _an_interrupted_study(tmp_path, monkeypatch)
    said = "the starting configuration: the study was cancelled before another candidate finished"
    assert api.optimization(sid, store=db)["best_note"] == said
    capsys.readouterr()
    assert main(["optimize", "show", sid, "--store", str(db)]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert said in out
    with TestClient(create_app(db)) as client:
        html = " ".join(client.get(f"/optimizations/{sid}").text.split())
    assert "nothing cleared" not in html
    assert said in html
    assert main(["optimize", "--resume", sid, "--store", str(db)]) == 0
    finished = api.optimization(sid, store=db)  # its candidates scored, none better
    assert finished["best"]["step"] == 0
    assert finished["best_note"] == (
        "the starting configuration: nothing cleared the threshold against it"
    )


def test_a_holdout_of_one_item_reads_1_item(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`optimize show` and the viewer's study page count a one-item holdout as `1 item`, not
    `1 items` (the split line beside them already said `1 held out`)."""
    from starlette.testclient import TestClient

    from memgauge.view.app import create_app

    agent = {"python": {"target": "optsubjects:OffsetAgent", "kwargs": {"offset": 3}}}
    path = _suite(
        tmp_path, agent, {"space": {"kwargs.offset": "int:-4..4"}, "seed": 1, "holdout": 0.1}
    )
    db = tmp_path / "r.db"
    code, data = _json_run(
        ["optimize", str(path), "--store", str(db), "--max-iterations", "2", "--json"], capsys
    )
    assert code == 0
    assert data["holdout"]["n"] == 1
    assert main(["optimize", "show", data["id"], "--store", str(db)]) == 0
    out = capsys.readouterr().out
    assert "holdout (1 item):" in out
    page = TestClient(create_app(db)).get(f"/optimizations/{data['id']}").text
    assert "1 items" not in page
    assert "held-out split (1 item)" in page
    assert "paired Δ (best - baseline), 1 item<" in page


def test_the_best_is_not_written_over_the_suite_or_the_store(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`--write-best` over the optimized suite replaced it (a resume then said "the suite
    changed"), and over the store's own file replaced every run and study with a YAML
    file. Both are refused (exit 2, naming what the path is), and both files are kept."""
    monkeypatch.chdir(tmp_path)
    agent = {"python": {"target": "optsubjects:OffsetAgent", "kwargs": {"offset": 3}}}
    path = _suite(tmp_path, agent, {"space": {"kwargs.offset": "int:-4..4"}, "seed": 1})
    db = tmp_path / "r.db"
    argv = ["optimize", str(path), "--store", str(db), "--max-iterations", "2", "--json"]
    code, study = _json_run(argv, capsys)
    assert code == 0
    suite_text, db_bytes = path.read_text(), db.read_bytes()
    for into, what in (("suite.yaml", "the suite it optimized"), (str(db), "the results store")):
        flags = ["--write-best", into, "--store", f"sqlite:///{db}"]
        assert main(["optimize", "show", study["id"], *flags]) == 2
        err = " ".join(capsys.readouterr().err.split())
        assert f"--write-best {into}: is {what}" in err, err
    assert path.read_text() == suite_text
    assert db.read_bytes() == db_bytes


def test_a_resume_from_a_suite_not_there_names_the_path_given(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`optimize SUITE --resume ID` with a SUITE not there (or a directory) said the study
    "was started from SUITE", a path it never read: the path given is named as given."""
    db, sid = _an_interrupted_study(tmp_path, monkeypatch)
    path = tmp_path / "suite.yaml"  # the study's suite
    capsys.readouterr()
    for given, said in (
        (tmp_path / "typo.yaml", "no such suite file"),
        (tmp_path, "not a regular file"),
    ):
        assert main(["optimize", str(given), "--resume", sid, "--store", str(db)]) == 2
        err = " ".join(capsys.readouterr().err.split())
        assert f"{given}: {said}" in err, err
        assert "was started from" not in err
    (study,) = api.optimizations(store=db)
    assert study["suite_path"] == str(path)


def test_the_best_is_written_beside_the_suite_whose_paths_it_keeps(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`--write-best elsewhere/best.yaml` wrote a suite whose `dataset: items.jsonl` is the
    optimized suite's, relative to it, and said "`memgauge run elsewhere/best.yaml` gives that
    score": that run was exit 2, "items.jsonl does not exist". A file in another directory
    than the suite's is refused, naming where to write it; nothing is written."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "items.jsonl").write_text("".join(json.dumps(i) + "\n" for i in _items()))
    agent = {"python": {"target": "optsubjects:OffsetAgent", "kwargs": {"offset": 3}}}
    block = {"space": {"kwargs.offset": "int:-4..4"}, "seed": 1}
    path = _suite(tmp_path, agent, block, items=None, dataset="items.jsonl")
    db = tmp_path / "r.db"
    argv = ["optimize", str(path), "--store", str(db), "--max-iterations", "2", "--json"]
    code, study = _json_run(argv, capsys)
    assert code == 0
    elsewhere = tmp_path / "elsewhere" / "best.yaml"
    flags = ["--write-best", str(elsewhere), "--store", str(db)]
    assert main(["optimize", "show", study["id"], *flags]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert f"--write-best {elsewhere}: write it beside the suite it optimized, in {tmp_path}" in err
    assert not elsewhere.parent.exists()
    flags = ["--write-best", "best.yaml", "--store", str(db)]
    assert main(["optimize", "show", study["id"], *flags]) == 0
    capsys.readouterr()
    assert main(["run", "best.yaml", "--store", str(db)]) == 0
    # the suite moved with its data since: where it is now is not known, so not checked
    moved = tmp_path / "moved"
    moved.mkdir()
    for name in ("suite.yaml", "items.jsonl"):
        (tmp_path / name).rename(moved / name)
    flags = ["--write-best", str(moved / "best.yaml"), "--store", str(db)]
    assert main(["optimize", "show", study["id"], *flags]) == 0


def test_the_best_of_an_unfinished_study_is_written_as_its_best_so_far(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`--write-best` of a cancelled study wrote its best as "the best configuration", not
    saying the study had not finished: it is the best so far, on stderr and in the file."""
    db, sid = _an_interrupted_study(tmp_path, monkeypatch)
    capsys.readouterr()
    written = tmp_path / "best.yaml"
    assert main(["optimize", "show", sid, "--write-best", str(written), "--store", str(db)]) == 0
    said = " ".join(capsys.readouterr().err.split())
    assert f"optimization {sid} is cancelled: {written} holds its best so far" in said
    assert f"`memgauge optimize --resume {sid}` finishes it" in said
    head = written.read_text().split("\n", 1)[0]
    assert head.startswith(f"# the best so far of optimization {sid}, which is cancelled (step 0)")
