"""Every numeric option of every command is bounded (integers on both sides) and finite
(decimals), so a number the rest of memgauge cannot take is exit 2 naming the option, never an
OverflowError or a stored NaN (issue 27 item 7). The walk finds options added later too; the
values at the bounds are run through the commands where they reach the store, NumPy or Optuna."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import click
import pytest
import yaml

from memgauge.cli._numbers import COUNT_MAX, Integer, Number
from memgauge.cli.main import cli, main

DATA = Path(__file__).resolve().parents[1] / "data"


def _commands() -> Iterator[tuple[list[str], click.Command]]:
    ctx = click.Context(cli)

    def walk(cmd: click.Command, path: list[str]) -> Iterator[tuple[list[str], click.Command]]:
        if isinstance(cmd, click.Group):
            for name in cmd.list_commands(ctx):
                sub = cmd.get_command(ctx, name)
                assert sub is not None
                yield from walk(sub, [*path, name])
        else:
            yield path, cmd

    yield from walk(cli, [])


def _numeric(kind: type[click.ParamType]) -> list[tuple[list[str], click.Parameter]]:
    return [
        (path, p)
        for path, cmd in _commands()
        for p in cmd.params
        if isinstance(p.type, kind) and not getattr(p, "is_flag", False)
    ]


INTEGERS = _numeric(click.types.IntParamType)
DECIMALS = _numeric(click.types.FloatParamType)


def _id(case: tuple[list[str], click.Parameter]) -> str:
    path, param = case
    return " ".join([*path, param.opts[0] if param.opts else str(param.name)])


def test_the_walk_sees_the_options_it_checks() -> None:
    assert "flags set --min-samples" in {_id(c) for c in INTEGERS}
    assert "evaluate --seed" in {_id(c) for c in INTEGERS}
    assert "ab create --improvement" in {_id(c) for c in DECIMALS}
    assert len(INTEGERS) > 40
    assert len(DECIMALS) > 30


@pytest.mark.parametrize("case", INTEGERS, ids=[_id(c) for c in INTEGERS])
def test_every_integer_option_is_bounded_on_both_sides(
    case: tuple[list[str], click.Parameter], capsys: pytest.CaptureFixture[str]
) -> None:
    path, param = case
    assert isinstance(param.type, Integer), f"{_id(case)}: {param.type!r}"
    assert param.type.min is not None
    assert param.type.max is not None
    assert param.type.max <= 2**32 - 1  # a seed's bound; every count's is 2^31 - 1 or less
    if param.name != "seed":
        assert param.type.max <= COUNT_MAX
    name = param.opts[0]
    for beyond in (param.type.max + 1, 10**20, param.type.min - 1):
        assert main([*path, name, str(beyond)]) == 2
        err = capsys.readouterr().err
        assert f"Invalid value for '{name}'" in err, err
        assert "Traceback" not in err


@pytest.mark.parametrize("case", DECIMALS, ids=[_id(c) for c in DECIMALS])
def test_every_decimal_option_is_finite(
    case: tuple[list[str], click.Parameter], capsys: pytest.CaptureFixture[str]
) -> None:
    path, param = case
    assert isinstance(param.type, Number), f"{_id(case)}: {param.type!r}"
    name = param.opts[0]
    for value in ("nan", "inf", "-inf", "1e999"):
        assert main([*path, name, value]) == 2
        err = capsys.readouterr().err
        assert f"Invalid value for '{name}'" in err, err


def test_every_decimal_range_reads_the_same_way_in_help() -> None:
    """A share's bounds read `0<=x<=1` in every command's --help (synth's two read
    `0.0<=x<=1.0` before `fraction_option`): a bound that is a whole number is written as one."""
    ranges = {
        _id(c): c[1].type._describe_range() for c in DECIMALS if isinstance(c[1].type, Number)
    }
    assert ranges["gate --exact-threshold"] == "0<=x<=1"
    # the range synth itself checks (a cosine in (0, 1]): --help said 0<=x<=1, and 0 passed
    # the option only to be refused later in other words
    assert ranges["synth --dedupe-threshold"] == ranges["watch --sample"] == "0<x<=1"
    assert ranges["synth --max-failure-rate"] == ranges["evaluate --max-failure-rate"]
    assert not [name for name, text in ranges.items() if ".0" in text], ranges


# --- the bounds themselves are values the commands take ----------------------------------------


@pytest.fixture
def db(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("MEMGAUGE_HOME", str(tmp_path / "home"))
    return str(tmp_path / "r.db")


def test_the_largest_counts_reach_the_store(db: str, capsys: pytest.CaptureFixture[str]) -> None:
    """`flags set --min-samples 99999999999999999999` was an OverflowError in SQLite; 2^31 - 1
    is the largest an INTEGER column holds on PostgreSQL (see test_flags_postgres)."""
    top = str(COUNT_MAX)
    assert main(["flags", "create", "f", "--store", db, "--min-samples", top]) == 0
    assert main(["flags", "set", "f", "--store", db, "--min-samples", "5"]) == 0
    assert main(["flags", "set", "f", "--store", db, "--min-samples", top, "--json"]) == 0
    (flag,) = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert flag["min_samples"] == COUNT_MAX
    assert main(["flags", "set", "f", "--store", db, "--min-samples", "99999999999999999999"]) == 2
    assert "2<=x<=2^31-1" in capsys.readouterr().err
    assert main(["ab", "create", "t", "--delta", "0.1", "--min-samples", top, "--store", db]) == 0
    assert main(["ab", "status", "t", "--store", db, "--json"]) == 0
    assert json.loads(capsys.readouterr().out.strip().splitlines()[-1])[0]["n_pairs"] == 0
    for args in (
        ["runs", "list", "--limit", top],
        ["optimize", "list", "--limit", top],
        ["history", "x", "--last", "1000"],
    ):
        assert main([*args, "--store", db]) in (0, 2)
        assert "Traceback" not in capsys.readouterr().err
    assert main(["runs", "list", "--limit", top, "--store", db, "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == []
    assert main(["sample-size", "--per-group", top]) == 0
    assert f"{COUNT_MAX} queries per group detect" in capsys.readouterr().out


def test_the_largest_seed_runs_an_evaluation_and_an_optimization(
    db: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A seed above 2^32 - 1 (or below 0) was Optuna's ValueError, exit 70, with the study left
    `running`; 2^32 - 1 itself is taken everywhere."""
    top = str(2**32 - 1)
    bundle = str(DATA / "good" / "bundle.yaml")
    args = ["evaluate", bundle, "-s", "lexical", "--quiet", "--out", str(tmp_path / "o")]
    assert main([*args, "--store", db, "--seed", top, "--resamples", "100"]) == 0
    suite = tmp_path / "tune.yaml"
    spec = {
        "name": "tune",
        "subjects": {"memory": {"reference": {"mode": "lexical"}}},
        "tasks": [
            {
                "name": "recall",
                "kind": "expected-output",
                "items": [{"id": "a", "input": "where", "expected": "here"}],
                "evaluators": ["contains"],
            }
        ],
        "optimization": {"strategy": "random", "space": {"k_rrf": "int:10..120"}},
    }
    suite.write_text(yaml.safe_dump(spec))
    opt = ["optimize", "run", str(suite), "--store", db, "--max-iterations", "2"]
    assert main([*opt, "--seed", top]) == 0
    capsys.readouterr()
    for bad in ("4294967296", "-1"):
        assert main([*opt, "--seed", bad]) == 2
        assert "Invalid value for '--seed'" in capsys.readouterr().err
    spec["optimization"]["seed"] = 2**32  # type: ignore[index]
    suite.write_text(yaml.safe_dump(spec))
    assert main(opt) == 2
    assert "optimization.seed" in capsys.readouterr().err
    assert main(["optimize", "list", "--store", db, "--json"]) == 0
    studies = json.loads(capsys.readouterr().out)
    assert [s["status"] for s in studies] == ["completed"]  # none left running


@pytest.mark.parametrize("args", [["--delta", "1e-300"], ["--sigma", "1e300"]])
def test_a_sample_size_beyond_counting_is_exit_2(
    args: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    """Finite, in range, and still more queries than 2^31 - 1 (an OverflowError before)."""
    assert main(["sample-size", *args]) == 2
    assert "needs more than 2,147,483,647 queries" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (
            ["--delta", "0.1", "--sigma", "1e-320"],
            "--delta 0.1 is inf times --sigma 1e-320: past 1e+150",
        ),
        (["--delta", "1e300", "--sigma", "1e-300"], "is inf times --sigma 1e-300"),
        (["--delta", "0.1", "--sigma", "1e-200"], "--delta 0.1 is 1e+199 times --sigma 1e-200"),
        (
            ["--delta", "1e-320", "--sigma", "1e-320", "--per-group", "10"],
            "--sigma 1e-320 is below 2.23e-308, the smallest normal double",
        ),
    ],
)
def test_an_effect_of_astronomical_sigmas_is_exit_2(
    args: list[str], says: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """A subnormal sigma, or delta / sigma past 1e150, overflowed the noncentral t's tail (an
    OverflowError or ZeroDivisionError, exit 70); the sample size was printed before
    --per-group's figure failed. Exit 2, naming delta and sigma, and nothing on stdout."""
    assert main(["sample-size", *args]) == 2
    out, err = capsys.readouterr()
    assert says in err
    assert out == ""
    assert "Traceback" not in err


def test_a_tiny_alpha_needs_a_finite_number_of_queries(capsys: pytest.CaptureFixture[str]) -> None:
    """alpha 1e-300 puts the quantile about 37 standard errors out, not at infinity: SciPy's
    `norm.ppf(1 - alpha)` rounded 1 - 1e-300 to 1 and said "needs more than 2^31 - 1 queries".
    The normal figure is ((37.09 + 0.84) * 3)^2 = 12933; the t test's, 13609 (SciPy's own
    `t.isf` and `nct.sf` put the power at 0.79982 for 13608 and 0.80023 for 13609)."""
    assert main(["sample-size", "--alpha", "1e-300"]) == 0
    assert "13609 queries (paired t; normal approximation 12933)" in capsys.readouterr().out
