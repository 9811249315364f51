"""A `python:` subject whose methods cannot be called as memgauge calls them (an `async def
search`, a `search` that yields, a `search` without `k`) is refused before the run with what to write instead (exit
2), not failed query by query with the object it returned (and a 'coroutine was never awaited'
warning on stderr)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from tests.helpers import run_memgauge

from memgauge import api
from memgauge.data.demo import demo_dataset
from memgauge.errors import UsageError

SUBJECTS = Path(__file__).resolve().parents[1] / "data" / "subjects"


@pytest.fixture(scope="session")
def dataset(demo_dir: Path) -> Path:
    return demo_dir


@pytest.mark.parametrize(
    ("target", "says"),
    [
        (
            "AsyncYieldingMemory",
            "python subject 'mistakes:AsyncYieldingMemory': AsyncYieldingMemory.search is an "
            "asynchronous generator (async def with yield): return the result instead (an async "
            "def that returns is awaited)",
        ),
        (
            "YieldingMemory",
            "python subject 'mistakes:YieldingMemory': YieldingMemory.search is a generator "
            "function (it yields): return the hits as a list",
        ),
        (
            "make_class",
            "python subject 'mistakes:make_class' returned the class TextlessMemory, where an "
            "object of it is needed: return TextlessMemory(), not TextlessMemory",
        ),
        (
            "NoKMemory",
            "python subject 'mistakes:NoKMemory': NoKMemory.search(query) cannot be called as "
            "search(query, k) (too many positional arguments): memgauge passes the query and "
            "how many hits to return, by position",
        ),
    ],
)
def test_a_search_memgauge_cannot_call_is_refused_before_the_run(
    target: str, says: str, dataset: Path, tmp_path: Path
) -> None:
    args = ["evaluate", str(dataset), "-s", "lexical", "-s", f"python:mistakes:{target}@mine"]
    done = run_memgauge(
        *args, "--no-store", "--out", str(tmp_path / "o"), env={"PYTHONPATH": str(SUBJECTS)}
    )
    assert done.returncode == 2, done.stdout[-2000:] + done.stderr[-2000:]
    assert says in " ".join(done.stderr.split())
    assert "Traceback" not in done.stderr
    assert "never awaited" not in done.stderr
    assert not (tmp_path / "o").exists()  # nothing half-written


@pytest.mark.parametrize("given", ["flag", "spec-with-kwargs"])
def test_a_module_whose_dependency_is_missing_says_which_and_the_others_still_run(
    given: str, dataset: Path, tmp_path: Path
) -> None:
    """The module was found: the message names the package its import misses (not where the
    module was looked for), and the subject is unavailable (exit 3) beside a working one, also
    when its kwargs (checked against the factory before the run) cannot be checked."""
    spec = "python:needs_missing_dep:Memory"
    if given == "spec-with-kwargs":
        spec = str(tmp_path / "mine.yaml")
        Path(spec).write_text("python:\n  target: needs_missing_dep:Memory\n  kwargs: {n: 1}\n")
    args = ["evaluate", str(dataset), "-s", "lexical", "-s", f"{spec}@mine"]
    out = tmp_path / "o"
    done = run_memgauge(*args, "--no-store", "--out", str(out), env={"PYTHONPATH": str(SUBJECTS)})
    assert done.returncode == 3, done.stdout[-2000:] + done.stderr[-2000:]
    said = " ".join((done.stdout + done.stderr).split())
    assert (
        "python subject 'needs_missing_dep:Memory': importing needs_missing_dep "
        f"({SUBJECTS / 'needs_missing_dep.py'}, line 6) failed: it imports memgauge_test_absent_dep, "
        "which is not installed in this Python"
    ) in said, said[-3000:]
    assert "looked for in" not in said
    assert "Traceback" not in done.stderr
    assert "lexical" in (out / "summary.md").read_text()  # the working subject is reported


def test_a_class_that_needs_arguments_is_told_where_to_give_them(
    dataset: Path, tmp_path: Path
) -> None:
    args = ["evaluate", str(dataset), "-s", "lexical", "-s", "python:mistakes:PathMemory@mine"]
    done = run_memgauge(
        *args, "--no-store", "--out", str(tmp_path / "o"), env={"PYTHONPATH": str(SUBJECTS)}
    )
    assert done.returncode == 2, done.stdout[-2000:] + done.stderr[-2000:]
    assert (
        "python subject 'mistakes:PathMemory': PathMemory(path) cannot be called with no "
        "argument (missing a required argument: 'path'): give its arguments under the spec's "
        "kwargs, {python: {target: mistakes:PathMemory, kwargs: {path: ...}}} (in a spec file "
        "given to -s, or a suite's subjects)"
    ) in " ".join(done.stderr.split())


def test_a_type_error_inside_a_factory_is_the_subjects_own_failure(
    dataset: Path, tmp_path: Path
) -> None:
    """Called as its signature allows, a factory that raises a TypeError failed in its own code:
    the subject cannot be built (exit 4, the others still run), not bad input (exit 2)."""
    spec = "python:mistakes:TypeErrorInInit@mine"
    out = tmp_path / "o"
    args = ["evaluate", str(dataset), "-s", "lexical", "-s", spec, "--no-store", "--out", str(out)]
    done = run_memgauge(*args, env={"PYTHONPATH": str(SUBJECTS)})
    assert done.returncode == 4, done.stdout[-2000:] + done.stderr[-2000:]
    said = " ".join(done.stdout.split())
    assert "TypeError: subject mine could not be built: object of type 'int' has no len()" in said
    assert "lexical" in (out / "summary.md").read_text()


def test_a_misspelled_factory_is_answered_with_the_nearest_name(
    dataset: Path, tmp_path: Path
) -> None:
    args = ["evaluate", str(dataset), "-s", "python:mistakes:PathMemroy@mine", "--no-store"]
    done = run_memgauge(*args, "--out", str(tmp_path / "o"), env={"PYTHONPATH": str(SUBJECTS)})
    assert done.returncode == 2, done.stdout[-2000:] + done.stderr[-2000:]
    assert (
        "python subject 'mistakes:PathMemroy': mistakes has no attribute 'PathMemroy'; did you "
        "mean 'PathMemory'?"
    ) in done.stderr


def test_a_class_handed_to_the_api_where_an_object_goes_is_told_so() -> None:
    sys.path.insert(0, str(SUBJECTS))
    try:
        from mistakes import TextlessMemory  # type: ignore[import-not-found]
    finally:
        sys.path.remove(str(SUBJECTS))
    with pytest.raises(UsageError) as info:
        api.evaluate(demo_dataset(), {"mine": TextlessMemory}, store=False)
    assert str(info.value) == (
        "python subject 'mine' is the class TextlessMemory, where an object of it is needed: "
        "give TextlessMemory(), not TextlessMemory"
    )
