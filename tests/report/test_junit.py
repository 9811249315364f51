"""`--junit FILE` on every command that evaluates or gates: a JUnit XML document of the common
schema shape, one test case per target or gated measure, failures carrying value vs threshold,
and never at odds with the exit code."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
import yaml
from tests.helpers import lazy_import

from memgauge import api
from memgauge.cli.main import main
from memgauge.data.demo import demo_dataset
from memgauge.data.io import save_retrieval_dataset
from memgauge.report.junit import Case, junit_xml, write_junit

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data"
EXTRACTION = DATA / "extraction" / "cases.json"
OPERATIONS = DATA / "operations" / "cases.json"
MEMAUDIT = ROOT.parent / "shared" / "datasets" / "memaudit-sample.json"
OUTCOMES = ("failure", "error", "skipped")
XSD = DATA / "junit" / "junit-10.xsd"
junitparser = lazy_import("junitparser")
xmlschema = lazy_import("xmlschema")


@pytest.fixture(autouse=True)
def _subjects_importable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(DATA / "subjects"))


@pytest.fixture
def demo(tmp_path: Path) -> Path:
    where = tmp_path / "demo"
    save_retrieval_dataset(demo_dataset(), where)
    return where


def _as_ci_reads_it(path: Path) -> None:
    """`path` is valid against Jenkins' junit-10.xsd (tests/data/junit), and junitparser (as a
    CI reporter reads it) counts in each suite the tests, failures, errors and skipped that
    the suite says."""
    schema = xmlschema.XMLSchema(str(XSD))
    errors = [f"{e.path}: {e.reason}" for e in schema.iter_errors(str(path))]
    assert not errors, errors
    read = junitparser.JUnitXml.fromfile(str(path))
    suites = [read] if isinstance(read, junitparser.TestSuite) else list(read)
    for suite in suites:
        results = [r for case in suite for r in case.result]
        counted = {
            "tests": sum(1 for _ in suite),
            "failures": sum(isinstance(r, junitparser.Failure) for r in results),
            "errors": sum(isinstance(r, junitparser.Error) for r in results),
            "skipped": sum(isinstance(r, junitparser.Skipped) for r in results),
        }
        assert {k: getattr(suite, k) for k in counted} == counted


def junit(path: Path) -> dict[tuple[str, str], ET.Element]:
    """Parse `path` and check it against the JUnit schema (Jenkins junit-10.xsd, as GitLab
    and GitHub reporters read it); its test cases by (classname, name)."""
    _as_ci_reads_it(path)
    root = ET.parse(path).getroot()
    assert root.tag == "testsuites"
    suites = list(root)
    assert suites
    assert all(s.tag == "testsuite" for s in suites)
    cases: dict[tuple[str, str], ET.Element] = {}
    for suite in suites:
        assert suite.get("name")
        assert suite.get("timestamp")
        float(suite.get("time", "x"))
        found = dict.fromkeys(OUTCOMES, 0)
        testcases = []
        for child in suite:
            assert child.tag in ("properties", "testcase", "system-out", "system-err"), child.tag
            if child.tag == "properties":
                assert all(p.tag == "property" and p.get("name") for p in child)
                assert all(p.get("value") is not None for p in child)
            if child.tag == "testcase":
                testcases.append(child)
        for case in testcases:
            assert case.get("classname")
            assert case.get("name")
            float(case.get("time", "x"))
            kinds = [c.tag for c in case]
            assert set(kinds) <= {*OUTCOMES, "system-out", "system-err"}, kinds
            verdicts = [k for k in kinds if k in OUTCOMES]
            assert len(verdicts) <= 1
            for verdict in verdicts:
                found[verdict] += 1
                element = case.find(verdict)
                assert element is not None
                assert element.get("message")
                if verdict != "skipped":
                    assert element.get("type")
            key = (case.get("classname", ""), case.get("name", ""))
            assert key not in cases, f"two test cases named {key}"
            cases[key] = case
        assert int(suite.get("tests", "-1")) == len(testcases)
        assert int(suite.get("failures", "-1")) == found["failure"]
        assert int(suite.get("errors", "-1")) == found["error"]
        assert int(suite.get("skipped", "-1")) == found["skipped"]
    for attr in ("tests", "failures", "errors"):  # junit-10.xsd has no testsuites@skipped
        assert int(root.get(attr, "-1")) == sum(int(s.get(attr, "0")) for s in suites)
    return cases


def _verdict(case: ET.Element) -> str:
    return next((c.tag for c in case if c.tag in OUTCOMES), "passed")


@pytest.mark.parametrize(
    "command",
    [
        ["run"],
        ["evaluate"],
        ["audit"],
        ["extraction"],
        ["operations"],
        ["demo"],
        ["gate"],
        ["optimize", "run"],
    ],
)
def test_every_evaluating_command_takes_junit(
    command: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([*command, "--help"]) == 0
    assert "--junit FILE" in capsys.readouterr().out


def test_evaluate_one_case_per_target_failures_say_value_and_threshold(
    tmp_path: Path, demo: Path
) -> None:
    out = tmp_path / "ci" / "evaluate.xml"
    code = main(
        [
            "evaluate",
            str(demo),
            "-s",
            "lexical",
            "--out",
            str(tmp_path / "o"),
            "--quiet",
            "--fail-under",
            "Recall@5=0.99",
            "--fail-under",
            "nDCG@10=0.1",
            "--junit",
            str(out),
        ]
    )
    assert code == 1
    cases = junit(out)
    missed = cases[("lexical.retrieval", "Recall@5 >= 0.99")]
    assert _verdict(missed) == "failure"
    failure = missed.find("failure")
    assert failure is not None
    message = failure.get("message", "")
    assert message.startswith("value 0.")
    assert "threshold >= 0.99 by point [--fail-under]" in message
    assert _verdict(cases[("lexical.retrieval", "nDCG@10 >= 0.1")]) == "passed"
    (run,) = [c for (cls, _), c in cases.items() if cls == "memgauge.run"]
    assert _verdict(run) == "passed"
    props = {p.get("name"): p.get("value") for p in ET.parse(out).iter("property")}
    assert props["status"] == "completed"
    assert props["kind"] == "evaluate"


def test_ci_upper_is_the_rule_the_cases_follow(tmp_path: Path, demo: Path) -> None:
    out = tmp_path / "e.xml"
    argv = ["evaluate", str(demo), "-s", "lexical", "--out", str(tmp_path / "o"), "--quiet"]
    assert main([*argv, "--fail-under", "Recall@5=0.8", "--junit", str(out)]) == 1
    assert _verdict(junit(out)[("lexical.retrieval", "Recall@5 >= 0.8")]) == "failure"
    by = ["--by", "ci-upper", "--fail-under", "Recall@5=0.8", "--junit", str(out)]
    assert main([*argv, *by]) == 0
    case = junit(out)[("lexical.retrieval", "Recall@5 >= 0.8")]
    assert _verdict(case) == "passed"
    assert "(CI bound 0.8" in (case.findtext("system-out") or "")


def test_enforced_seed_targets_fail_and_shown_ones_are_not_listed(tmp_path: Path) -> None:
    base = [
        "extraction",
        str(EXTRACTION),
        "--extractor",
        "{python: {target: 'extractors:NaiveExtractor'}}",
        "--match",
        "exact",
    ]
    enforced, shown = tmp_path / "enforced.xml", tmp_path / "shown.xml"
    assert main([*base, "--junit", str(enforced)]) == 1
    assert main([*base, "--no-targets", "--junit", str(shown)]) == 0
    failed = {k for k, c in junit(enforced).items() if _verdict(c) == "failure"}
    assert ("extractor.extraction", "precision > 0.95") in failed
    # with --no-targets the seed's targets decide nothing: they are not tests the user set
    assert [cls for cls, _ in junit(shown)] == ["memgauge.run"]


def test_only_the_targets_that_apply_are_cases(tmp_path: Path, demo: Path) -> None:
    out = tmp_path / "e.xml"
    argv = ["evaluate", str(demo), "-s", "lexical", "-s", "hybrid", "--quiet"]
    argv += ["--out", str(tmp_path / "o"), "--fail-under", "nDCG@10=0.5", "--junit", str(out)]
    assert main(argv) == 0
    cases = junit(out)
    # seed 002's agent-memory targets (shown, not enforced) are not listed, skipped or not
    assert sorted(cases) == [
        ("hybrid.retrieval", "nDCG@10 >= 0.5"),
        ("lexical.retrieval", "nDCG@10 >= 0.5"),
        ("memgauge.run", "evaluate:demo"),
    ]
    assert {_verdict(c) for c in cases.values()} == {"passed"}


def test_a_dead_subject_is_an_error_case(tmp_path: Path) -> None:
    out = tmp_path / "o.xml"
    argv = ["operations", str(OPERATIONS), "--decider", "{python: {target: 'broken:Broken'}}"]
    assert main([*argv, "--no-targets", "--junit", str(out)]) == 4
    run = next(c for (cls, _), c in junit(out).items() if cls == "memgauge.run")
    assert _verdict(run) == "error"
    error = run.find("error")
    assert error is not None
    assert error.get("message", "").startswith("run failed: ")


def test_run_audit_and_demo_write_documents(tmp_path: Path, recall_suite: Any) -> None:
    suite = recall_suite(
        [{"id": "q1", "input": "what colour is the sky", "expected": "blue"}],
        [{"id": "m1", "text": "sky: blue"}],
        ["contains"],
    )
    assert (
        main(["run", str(suite), "--fail-under", "contains=1", "--junit", str(tmp_path / "r.xml")])
        == 0
    )
    assert _verdict(junit(tmp_path / "r.xml")[("memory.recall", "contains >= 1")]) == "passed"
    audit = [
        "audit",
        str(MEMAUDIT),
        "--output",
        str(tmp_path / "a"),
        "--junit",
        str(tmp_path / "a.xml"),
    ]
    assert main([*audit, "--fail-under", "hallucinated_memory_rate= < 0.1"]) == 0
    assert ("agent.audit", "hallucinated_memory_rate < 0.1") in junit(tmp_path / "a.xml")
    demo = [
        "demo",
        "--out",
        str(tmp_path / "d"),
        "--no-progress",
        "--junit",
        str(tmp_path / "d.xml"),
    ]
    assert main(demo) == 0
    # the seed's targets are only shown: the run is the one case
    assert [(k, _verdict(c)) for k, c in junit(tmp_path / "d.xml").items()] == [
        (("memgauge.run", "demo"), "passed")
    ]


def test_gate_one_case_per_measure_regressions_fail(
    tmp_path: Path, demo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = str(tmp_path / "r.db")
    argv = ["evaluate", str(demo), "--out", str(tmp_path / "o"), "--quiet", "--store", db]
    assert main([*argv, "-s", "hybrid@sys"]) == 0
    # a naive keyword memory under the same name: nDCG falls by more than 15%
    assert main([*argv, "-s", "python:keyword_memory:KeywordMemory@sys"]) == 0
    with api.open_store(db) as store:
        newest = store.list_runs()[0]["run_id"]
    out = tmp_path / "gate.xml"
    code = main(["gate", newest, "--store", db, "--no-learn", "--junit", str(out)])
    assert code == 1
    markdown = capsys.readouterr().out
    cases = junit(out)
    regressed = {k for k, c in cases.items() if _verdict(c) == "failure"}
    assert ("sys.retrieval", "nDCG@10") in regressed
    assert ("sys.retrieval", "RR@5") not in regressed
    # exactly the rows the Markdown marks as regressions
    assert len(regressed) == markdown.count("| regression |")
    failure = cases[("sys.retrieval", "nDCG@10")].find("failure")
    assert failure is not None
    message = failure.get("message", "")
    assert "vs baseline 0." in message
    assert ", worse by " in message  # a direction in words, never a sign
    assert "threshold 15% worse (by point; decides)" in message
    # seed 002's agent-memory metrics are information: never a failure, skipped when they
    # dropped past their threshold (as a seed's target that is only shown)
    agent = {k: c for k, c in cases.items() if k[1].endswith("@5") and "[" in k[1]}
    assert agent
    assert all(_verdict(c) in ("passed", "skipped") for c in agent.values())


def test_optimize_one_case_per_candidate(tmp_path: Path) -> None:
    suite = {
        "name": "opt",
        "subjects": {
            "agent": {"python": {"target": "optsubjects:OffsetAgent", "kwargs": {"offset": 3}}}
        },
        "tasks": [
            {
                "name": "sums",
                "kind": "expected-output",
                "items": [
                    {"id": f"q{i}", "input": f"add {i} {i + 1}", "expected": str(2 * i + 1)}
                    for i in range(6)
                ],
                "evaluators": ["exact"],
            }
        ],
        "optimization": {"space": {"kwargs.offset": "int:-2..2"}, "seed": 1},
    }
    path = tmp_path / "suite.yaml"
    path.write_text(yaml.safe_dump(suite, sort_keys=False))
    out = tmp_path / "opt.xml"
    argv = ["optimize", str(path), "--max-iterations", "3", "--target-score", "1.01"]
    assert main([*argv, "--json", "--junit", str(out)]) == 0
    cases = junit(out)
    steps = [k for k in cases if k[1].startswith("step ")]
    assert len(steps) >= 3
    assert all(_verdict(cases[k]) == "passed" for k in steps)
    (goal,) = [c for k, c in cases.items() if k[1] == "target score"]
    assert _verdict(goal) == "failure"  # no score exceeds 1


def test_nothing_is_written_for_bad_input(tmp_path: Path, demo: Path) -> None:
    out = tmp_path / "e.xml"
    argv = ["evaluate", str(demo), "-s", "lexical", "--out", str(tmp_path / "o"), "--quiet"]
    assert main([*argv, "--fail-under", "Recal@5=0.5", "--junit", str(out)]) == 2
    assert not out.exists()


def test_the_run_case_shows_every_aggregate_shape_with_the_reports_values(
    tmp_path: Path, demo: Path
) -> None:
    """A CI page shows the numbers behind the verdicts: the run's case carries the results
    table and every aggregate's shapes, with the values summary.md prints (a CI server shows
    the case's text as it is, so nothing in it is escaped for HTML or Markdown)."""
    out = tmp_path / "e.xml"
    argv = ["evaluate", str(demo), "-s", "lexical", "--out", str(tmp_path / "o"), "--quiet"]
    assert main([*argv, "--junit", str(out)]) == 0
    (run,) = [c for (cls, _), c in junit(out).items() if cls == "memgauge.run"]
    text = run.findtext("system-out") or ""
    summary = (tmp_path / "o" / "summary.md").read_text()
    metrics = json.loads((tmp_path / "o" / "result.json").read_text())["systems"][0]["metrics"]
    ndcg = metrics["nDCG@10"]
    cell = f"{ndcg['value']:.3f} [{ndcg['ci_low']:.3f}, {ndcg['ci_high']:.3f}] (n=37)"
    assert f"| retrieval | nDCG@10 | {cell} |" in text
    assert cell in summary
    for heading in ("## Results", "### Retrieval measures", "### Coverage warnings"):
        assert heading in text
    assert "relevant: grade >= 2" in text
    assert "&gt;" not in text
    assert "\\_" not in text


def test_a_subjects_error_with_control_characters_leaves_the_xml_readable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A decider whose error holds a colour escape and a NUL: ElementTree wrote both raw, and
    no XML reader (CI servers, ElementTree itself) parsed the document. They are written
    `#x1B` and `#x00`, as pytest's own JUnit XML writes them (`bin_xml_escape`)."""
    (tmp_path / "colourful.py").write_text(
        "class Colourful:\n"
        "    def decide(self, existing, incoming):\n"
        "        raise RuntimeError('\\x1b[31mdecider down\\x1b[0m \\x00')\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    out = tmp_path / "o.xml"
    argv = ["operations", str(OPERATIONS), "--decider", "{python: {target: 'colourful:Colourful'}}"]
    assert main([*argv, "--no-targets", "--junit", str(out)]) == 4
    text = out.read_text()
    assert "\x1b" not in text
    assert "#x1B[31mdecider down#x1B[0m #x00" in text
    run = next(c for (cls, _), c in junit(out).items() if cls == "memgauge.run")
    assert _verdict(run) == "error"


def test_names_with_markup_quotes_non_ascii_and_control_characters_read_back(
    tmp_path: Path,
) -> None:
    odd = "a<b & \"c\" 'd' é 東京"
    cases = [
        Case(f"{odd}.task", f"{odd} >= 0.5", "failure", f"{odd}\x1b", f"{odd}\x00 detail"),
        Case("memgauge.run", odd, "error", "run failed: \x07", "tb"),
        Case("s", "optional", "skipped", "not run"),
        Case("s", "passed", detail=odd),
    ]
    out = tmp_path / "odd.xml"
    write_junit(out, junit_xml(odd, cases, timestamp="2026-01-01T00:00:00+00:00"))
    read = junit(out)  # valid against the XSD, counted as memgauge counts
    assert sorted(read) == sorted((c.classname, c.name) for c in cases)
    (suite,) = junitparser.JUnitXml.fromfile(str(out))
    assert suite.name == odd
    by_name = {case.name: case for case in suite}
    (failure,) = by_name[f"{odd} >= 0.5"].result
    assert failure.message.startswith(odd)
    assert "\x1b" not in failure.message  # no control character reaches the XML


def test_a_run_with_failed_items_and_na_measures_is_counted_as_its_exit_code_says(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "half.py").write_text(
        "class Half:\n"
        "    n = 0\n"
        "    def decide(self, existing, incoming):\n"
        "        Half.n += 1\n"
        "        if Half.n % 2:\n"
        "            raise RuntimeError('down <&> \"é\"')\n"
        "        return {'op': 'ADD'}\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    out = tmp_path / "o.xml"
    argv = ["operations", str(OPERATIONS), "--decider", "{python: {target: 'half:Half'}}"]
    targets = ["--fail-under", "tier.judge=0.5", "--fail-under", "tier.operation=0.5"]
    common = ["--max-failure-rate", "1", "--no-targets", *targets]
    assert main([*argv, *common, "--junit", str(out)]) == 1  # a target missed
    cases = junit(out)  # valid, and junitparser counts what the suite says
    missed = [key for key, case in cases.items() if _verdict(case) == "failure"]
    assert sorted(name for _, name in missed) == ["tier.judge >= 0.5", "tier.operation >= 0.5"]
    for key in missed:
        failure = cases[key].find("failure")
        assert failure is not None
        # no data: n/a with its count, never 0
        assert failure.get("message", "").startswith("value n/a (0 scored")
    (suite,) = junitparser.JUnitXml.fromfile(str(out))
    assert (suite.tests, suite.failures, suite.errors, suite.skipped) == (3, 2, 0, 0)


def test_the_gate_s_warnings_are_in_its_junit_as_in_its_json(
    tmp_path: Path, demo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The gate's warnings (here: the suite's earlier run did not complete, so nothing is
    compared) were in the terminal, `--markdown`, `--json` and the viewer, never in the JUnit
    XML a CI page shows: the suite's `system-out` lists each, in the same words."""
    from memgauge.store.suite_runs import SuiteRunStore

    db = str(tmp_path / "r.db")
    argv = ["evaluate", str(demo), "-s", "lexical@sys", "--quiet", "--store", db]
    for _ in range(2):
        assert main([*argv, "--out", str(tmp_path / "o")]) == 0
    with api.open_store(db) as store:
        earlier, newest = (r["run_id"] for r in reversed(store.list_runs()))
    with SuiteRunStore(db) as opened:
        opened.set_status(earlier, "failed")
    out = tmp_path / "gate.xml"
    capsys.readouterr()
    assert main(["gate", newest, "--store", db, "--no-learn", "--junit", str(out), "--json"]) == 0
    warnings = json.loads(capsys.readouterr().out)["warnings"]
    assert any(earlier in w for w in warnings), warnings
    junit(out)  # valid, as CI reads it
    (suite,) = ET.parse(out).getroot()
    said = suite.find("system-out")
    assert said is not None
    assert (said.text or "").splitlines() == ["Warnings:", *(f"- {w}" for w in warnings)]
