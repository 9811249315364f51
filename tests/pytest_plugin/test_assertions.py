"""The pytest plug-in, run the way a user runs it: pytest (pytester) on a generated test file
that uses `memgauge_subject` and the `assert_*` helpers; its runs land in the results store."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest
from tests.helpers import QUIET_PLUGINS

from memgauge import api
from memgauge.data.demo import demo_dataset
from memgauge.data.io import save_retrieval_dataset

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data"
SUBJECTS = DATA / "subjects"
MEMAUDIT = ROOT.parent / "shared" / "datasets" / "memaudit-sample.json"
PLUGIN = ("-p", "memgauge.pytest_plugin", *QUIET_PLUGINS)
# pytest runs the generated files in this process (pytester's in-process run): a pytest
# process costs a Python start and the plug-in's and engine's imports, about 2 CPU-s a run.
# Where the process is the point it is one: the entry point loaded by a fresh interpreter, and
# a run under -W error whose test scans every object of its process for open sessions.
pytestmark = pytest.mark.usefixtures("pytester_keeps_modules")


@pytest.fixture
def demo(tmp_path: Path) -> Path:
    where = tmp_path / "demo"
    save_retrieval_dataset(demo_dataset(), where)
    return where


def _runs(where: Path | None = None) -> list[api.RunRecord]:
    """The runs recorded in the store (MEMGAUGE_HOME's by default), oldest first."""
    with api.open_store(where) as store:
        found = [store.get_run(r["run_id"]) for r in reversed(store.list_runs())]
    return [r for r in found if r is not None]


def test_a_met_threshold_passes_and_the_run_is_recorded(
    pytester: pytest.Pytester, demo: Path
) -> None:
    pytester.makepyfile(
        f"""
        import pytest
        from memgauge.pytest_plugin import assert_retrieval

        @pytest.mark.memgauge_subject("lexical")
        def test_search(memgauge_subject):
            report = assert_retrieval({str(demo)!r}, memgauge_subject, {{"Recall@5": 0.5}})
            assert report.status == "completed"
        """
    )
    result = pytester.runpytest(*PLUGIN)
    result.assert_outcomes(passed=1)
    (run,) = _runs()  # in MEMGAUGE_HOME, like any command's run
    assert (run.kind, run.status) == ("evaluate", "completed")
    assert run.suite["subjects"] == {"lexical": {"reference": {"mode": "lexical"}}}


def test_a_missed_threshold_fails_with_a_table_of_value_ci_and_threshold(
    pytester: pytest.Pytester, demo: Path
) -> None:
    pytester.makepyfile(
        f"""
        from memgauge.pytest_plugin import assert_retrieval

        def test_search():
            assert_retrieval({str(demo)!r}, "lexical", {{"Recall@5": 0.99, "nDCG@10": 0.1}})
        """
    )
    result = pytester.runpytest(*PLUGIN)
    result.assert_outcomes(failed=1)
    out = result.stdout.str()
    result.stdout.fnmatch_lines(
        [
            "*assert_retrieval: run * (completed), recorded in *results.db",
            "*1 threshold(s) missed:*",
            "*measure*value*95% CI*threshold*compared*",
            "*lexical/retrieval/Recall@5*[[]0.*, *[]]*>= 0.99*(point)*MISSED*",
            "*lexical/retrieval/nDCG@10*>= 0.1*met*",
        ]
    )
    # the numbers are the stored run's, and memgauge's own frames are not shown
    (run,) = _runs()
    assert run.summary is not None
    (recall,) = [m for m in run.summary.measures() if m.name == "Recall@5"]
    assert f"{recall.value:.4f}" in out
    assert f"{recall.ci_high:.4f}" in out
    assert "memgauge/api" not in out
    assert "Traceback" not in out


def test_ci_upper_fails_only_when_the_whole_interval_is_below(
    pytester: pytest.Pytester, demo: Path
) -> None:
    report = api.evaluate(demo, ["lexical"], store=False)
    (m,) = [m for m in report.summary.measures() if m.name == "Recall@5"]
    assert m.value is not None
    assert m.ci_high is not None
    assert m.ci_high > m.value
    between = (m.value + m.ci_high) / 2  # above the point estimate, inside the CI
    pytester.makepyfile(
        f"""
        import pytest
        from memgauge.pytest_plugin import assert_retrieval

        @pytest.mark.parametrize("by", ["point", "ci-upper"])
        def test_search(by):
            assert_retrieval({str(demo)!r}, "lexical", {{"Recall@5": {between!r}}}, by=by)
        """
    )
    result = pytester.runpytest(*PLUGIN, "-v")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*test_search?point? FAILED*", "*test_search?ci-upper? PASSED*"])


def test_an_unknown_measure_is_an_error_naming_the_known_ones(
    pytester: pytest.Pytester, demo: Path
) -> None:
    pytester.makepyfile(
        f"""
        from memgauge.pytest_plugin import assert_retrieval

        def test_search():
            assert_retrieval({str(demo)!r}, "lexical", {{"Recal@5": 0.5}})
        """
    )
    result = pytester.runpytest(*PLUGIN)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        ["*UsageError*Recal@5: no such measure*lexical/retrieval/Recall@5*"]
    )


def test_the_fixture_takes_strings_specs_and_objects_and_checks_specs(
    pytester: pytest.Pytester, demo: Path
) -> None:
    pytester.makeconftest(f"import sys\nsys.path.insert(0, {str(SUBJECTS)!r})\n")
    pytester.makeini("[pytest]\nmemgauge_subject = lexical@from-ini\n")
    pytester.makepyfile(
        f"""
        import pytest
        from keyword_memory import KeywordMemory
        from memgauge.pytest_plugin import assert_retrieval

        @pytest.mark.parametrize(
            "memgauge_subject",
            ["hybrid:k_rrf=10@tuned", {{"reference": {{"mode": "lexical"}}}}, KeywordMemory()],
            indirect=True,
        )
        def test_given(memgauge_subject):
            report = assert_retrieval({str(demo)!r}, memgauge_subject, {{"Recall@5": 0.01}})
            assert list(report.run.suite["subjects"]) == [memgauge_subject.name]

        def test_from_ini(memgauge_subject):
            assert (memgauge_subject.name, memgauge_subject.spec) == (
                "from-ini", {{"reference": {{"mode": "lexical"}}}}
            )

        @pytest.mark.memgauge_subject({{"reference": {{"mood": "lexical"}}}})
        def test_typo(memgauge_subject):
            pass
        """
    )
    result = pytester.runpytest(*PLUGIN, "-v")
    result.assert_outcomes(passed=4, errors=1)
    result.stdout.fnmatch_lines(["*test_typo*", "*UsageError*mood*"])
    subjects = [run.suite["subjects"] for run in _runs()]
    assert {"tuned": {"reference": {"mode": "hybrid", "k_rrf": 10}}} in subjects
    # the spec mapping is recorded as given; the object by its class name, as a live subject
    assert {"reference": {"reference": {"mode": "lexical"}}} in subjects
    assert {"KeywordMemory": {"live": {"name": "KeywordMemory"}}} in subjects
    assert len(subjects) == 3


def test_a_spec_whose_arguments_are_no_mapping_is_a_usage_error(pytester: pytest.Pytester) -> None:
    """`{"reference": "lexical"}` failed the fixture with `ValueError: dictionary update
    sequence element ...`, naming neither the spec nor its form."""
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.memgauge_subject({"reference": "lexical"})
        def test_args_as_text(memgauge_subject):
            pass
        """
    )
    result = pytester.runpytest(*PLUGIN)
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(
        [
            "*UsageError: memgauge_subject {'reference': 'lexical'}: a spec is {kind: {args}};"
            " give reference's arguments as a mapping, not str*"
        ]
    )


def test_a_rule_that_is_none_is_a_usage_error_before_the_run(
    pytester: pytest.Pytester, demo: Path
) -> None:
    """`by="upper"` ran the whole evaluation, recorded it, then failed with a pydantic
    ValidationError of `TargetCheck`."""
    pytester.makepyfile(
        f"""
        from memgauge.pytest_plugin import assert_retrieval

        def test_by():
            assert_retrieval({str(demo)!r}, "lexical", {{"Recall@5": 0.5}}, by="upper")
        """
    )
    result = pytester.runpytest(*PLUGIN)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*UsageError: by 'upper': give 'point' or 'ci-upper'*"])
    assert not _runs()


def test_thresholds_of_none_are_none_as_in_assert_suite(
    pytester: pytest.Pytester, demo: Path
) -> None:
    """`assert_retrieval(..., None)` failed with "'NoneType' object is not iterable", from the
    loop that adds the thresholds' measures, where `assert_suite` and the other helpers read
    None as no threshold (fuzzC-6); a string is named. A threshold is read apart from its
    measure: `"=0.5"` is refused naming the forms, not a measure called "Recall@5="."""
    pytester.makepyfile(
        f"""
        import pytest
        from memgauge.errors import UsageError
        from memgauge.pytest_plugin import assert_retrieval

        def test_none():
            assert assert_retrieval({str(demo)!r}, "lexical", None).status == "completed"

        def test_text():
            with pytest.raises(UsageError, match="thresholds: give a mapping of measure to"):
                assert_retrieval({str(demo)!r}, "lexical", "Recall@5")

        def test_a_threshold_of_one_equals_sign():
            # was a measure called "Recall@5=", the run's measures listed
            with pytest.raises(UsageError) as raised:
                assert_retrieval({str(demo)!r}, "lexical", {{"Recall@5": "=0.5"}})
            assert str(raised.value) == (
                "threshold {{'Recall@5': '=0.5'}}: '=0.5' is not a target;"
                " write 0.6, '>= 0.6' or '< 0.2'"
            )

        def test_a_threshold_of_two():
            report = assert_retrieval({str(demo)!r}, "lexical", {{"Recall@5": ">=0.5"}})
            found = [(t.measure, t.op, t.target) for t in report.summary.targets]
            assert ("Recall@5", ">=", 0.5) in found
        """
    )
    result = pytester.runpytest(*PLUGIN)
    result.assert_outcomes(passed=4)
    assert len(_runs()) == 2  # none of a threshold refused


def test_write_path_and_audit_helpers_name_an_argument_of_none(pytester: pytest.Pytester) -> None:
    """An extractor or decider of None was a live object named 'NoneType' ("python subject
    'NoneType': write it as package.module:factory"), and cases or a dataset of None was
    pathlib's TypeError naming no argument (fuzzC-6)."""
    cases = DATA / "operations" / "cases.json"
    pytester.makepyfile(
        f"""
        import pytest
        from memgauge.errors import UsageError
        from memgauge.pytest_plugin import assert_audit, assert_extraction, assert_operations

        def test_none():
            with pytest.raises(UsageError, match="^extractor: give a spec string or mapping"):
                assert_extraction({str(cases)!r}, None, {{"f1": 0.5}})
            with pytest.raises(UsageError, match="^decider: give a spec string or mapping"):
                assert_operations({str(cases)!r}, None, {{"accuracy": 0.5}})
            with pytest.raises(TypeError, match="^assert_extraction: cases takes a path, got No"):
                assert_extraction(None, "{{llm: {{model: m}}}}", {{"f1": 0.5}})
            with pytest.raises(TypeError, match="^assert_audit: dataset takes a path, got None"):
                assert_audit(None, None, {{"recall_accuracy": 0.5}})
        """
    )
    pytester.runpytest(*PLUGIN).assert_outcomes(passed=1)
    assert not _runs()


def test_write_path_helpers_name_their_argument_not_the_commands_flags(
    pytester: pytest.Pytester, tmp_path: Path
) -> None:
    """Recorded outputs that are not there, or a spec of an unknown kind, were "--outputs
    PATH: no such file" and "--extractor: unknown kind": flags of a command the test never
    ran. They name the helper's argument."""
    cases = DATA / "operations" / "cases.json"
    missing = tmp_path / "none.jsonl"
    pytester.makepyfile(
        f"""
        from pathlib import Path
        import pytest
        from memgauge.errors import UsageError
        from memgauge.pytest_plugin import assert_extraction, assert_operations

        def test_named():
            with pytest.raises(UsageError, match=r"^extractor={missing}: no such file$"):
                assert_extraction({str(cases)!r}, Path({str(missing)!r}), {{"f1": 0.5}})
            with pytest.raises(UsageError, match="^decider: unknown kind 'nope'"):
                assert_operations({str(cases)!r}, {{"nope": {{}}}}, {{"accuracy": 0.5}})
            with pytest.raises(UsageError, match="^extractor: not a spec"):
                assert_extraction({str(cases)!r}, "{{llm: [", {{"f1": 0.5}})
        """
    )
    pytester.runpytest(*PLUGIN).assert_outcomes(passed=1)
    assert not _runs()


def test_the_store_option_sends_runs_elsewhere(
    pytester: pytest.Pytester, demo: Path, tmp_path: Path
) -> None:
    store = tmp_path / "elsewhere.db"
    pytester.makepyfile(
        f"""
        from memgauge.pytest_plugin import assert_retrieval

        def test_search():
            assert_retrieval({str(demo)!r}, "lexical", {{"Recall@5": 0.5}})
        """
    )
    pytester.runpytest(*PLUGIN, "--memgauge-store", str(store)).assert_outcomes(passed=1)
    assert not _runs()
    assert len(_runs(store)) == 1


def test_a_store_option_that_cannot_be_a_store_is_a_usage_error(
    pytester: pytest.Pytester, tmp_path: Path
) -> None:
    """`--memgauge-store DIR` failed every test that called an assert_* helper, each with a
    traceback into memgauge naming `--store`, an option pytest does not have (fuzzC-6)."""
    from memgauge.pytest_plugin import _STORES

    outer = list(_STORES)
    pytester.makepyfile("def test_nothing():\n    pass\n")
    result = pytester.runpytest(*PLUGIN, "--memgauge-store", str(tmp_path))
    assert outer == _STORES  # the refused session's entry went with it, the enclosing one's kept
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [f"*--memgauge-store {tmp_path}: is a directory; give the store's*"]
    )
    pytester.makeini("[pytest]\nmemgauge_store = bogus://x\n")
    result = pytester.runpytest(*PLUGIN)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*memgauge_store=bogus://x: unknown scheme 'bogus'*"])
    assert "Traceback" not in result.stdout.str() + result.stderr.str()


def test_extraction_operations_audit_and_suites(
    pytester: pytest.Pytester, recall_suite: Any
) -> None:
    pytester.makeconftest(f"import sys\nsys.path.insert(0, {str(SUBJECTS)!r})\n")
    suite = recall_suite(  # its task sets a target of its own, beside the test's thresholds
        [{"id": "q1", "input": "what colour is the sky", "expected": "blue"}],
        [{"id": "m1", "text": "sky: blue"}],
        ["contains"],
        task={"targets": {"contains": 0.5}},
    )
    pytester.makepyfile(
        f"""
        from pathlib import Path
        from extractors import NaiveExtractor
        from memgauge.pytest_plugin import (
            assert_audit, assert_extraction, assert_operations, assert_suite,
        )

        EXTRACTION = {str(DATA / "extraction" / "cases.json")!r}
        OPERATIONS = {str(DATA / "operations" / "cases.json")!r}

        def test_extraction_live_object():
            assert_extraction(EXTRACTION, NaiveExtractor(), {{"recall_macro": 0.1}}, match="exact")

        def test_extraction_missed():
            assert_extraction(
                EXTRACTION, "{{python: {{target: 'extractors:NaiveExtractor'}}}}",
                {{"precision": 0.5}}, match="exact",
            )

        def test_operations():
            assert_operations(OPERATIONS, {{"heuristic": {{}}}}, {{"tier.heuristic": 0.9}})

        def test_operations_missed():
            assert_operations(OPERATIONS, "{{heuristic: {{}}}}", {{"tier.operation": 0.99}})

        def test_audit():
            assert_audit({str(MEMAUDIT)!r}, None, {{
                "recall_accuracy": 0.5, "hallucinated_memory_rate": "< 0.1",
            }})

        def test_suite_targets_and_thresholds():
            assert_suite({str(suite)!r}, {{"contains": 0.5}})

        def test_suite_missed():
            assert_suite({str(suite)!r}, {{"contains": "> 1.0"}})
        """
    )
    result = pytester.runpytest(*PLUGIN, "-v")
    result.assert_outcomes(passed=4, failed=3)
    result.stdout.fnmatch_lines_random(
        [
            "*extractor/extraction/precision*>= 0.5*MISSED*",
            "*decider/operations/tier.operation*>= 0.99*MISSED*",
            "*memory/recall/contains*>= 0.5*met*",  # the suite's own target, beside
            "*memory/recall/contains*> 1*MISSED*",
        ]
    )
    kinds = sorted(run.kind for run in _runs())
    assert kinds == sorted(
        ["extraction", "extraction", "operations", "operations", "audit", "suite", "suite"]
    )


def test_an_llm_judged_suite_leaves_no_session_open(
    pytester: pytest.Pytester, recall_suite: Any
) -> None:
    suite = recall_suite(
        [{"id": "q1", "input": "what colour is the sky", "expected": "blue"}],
        [{"id": "m1", "text": "sky: blue"}],
        [{"qa-judge": "longmemeval"}],
    )
    pytester.makepyfile(
        f"""
        import gc, json
        import aiohttp
        from memgauge.llm import FakeOpenAIServer
        from memgauge.pytest_plugin import assert_suite

        def test_judged(monkeypatch):
            with FakeOpenAIServer() as srv:
                srv.respond(lambda _: json.dumps({{"reasoning": "r", "label": "yes"}}))
                monkeypatch.setenv("OPENAI_BASE_URL", srv.base_url)
                monkeypatch.setenv("OPENAI_API_KEY", "k")
                monkeypatch.setenv("MEMGAUGE_MODEL", "fake")
                report = assert_suite({str(suite)!r}, {{"qa-judge": 1.0}})
            assert len(srv.requests) == 1
            assert report.items[0].verdict("qa-judge").value == 1.0
            gc.collect()
            sessions = [o for o in gc.get_objects() if isinstance(o, aiohttp.ClientSession)]
            assert [s for s in sessions if not s.closed] == []
        """
    )
    result = pytester.runpytest_subprocess(*PLUGIN, "-W", "error")
    result.assert_outcomes(passed=1)


def test_the_entry_point_names_the_module_and_loading_it_is_cheap() -> None:
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert meta["project"]["entry-points"]["pytest11"] == {
        "memgauge.pytest_plugin": "memgauge.pytest_plugin"
    }
    # every other project's pytest loads the plug-in: it must not pull in the engine
    code = (
        "import sys, memgauge.pytest_plugin; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in "
        "('numpy', 'scipy', 'sqlalchemy', 'pydantic') or m.startswith('memgauge.runs')))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"
