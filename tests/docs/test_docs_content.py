"""What the docs say, beyond their blocks running (tests/docs/test_docs_run.py): the quick
start's JSON-lines program speaks the protocol the contracts page documents, the contracts page
quotes the search contract the adapters enforce word for word, the README's Python example
stays short, and the README's prose names what the code reads."""

from __future__ import annotations

import dataclasses
import json
import re
import subprocess
import sys
from pathlib import Path

import yaml
from tests.docs.blocks import ROOT, Block, read_blocks
from tests.helpers import cli_output

from memgauge.api import CONVENTIONS
from memgauge.data.io import FILES
from memgauge.data.models import EvalQuery, Judgment, Memory, SessionContext
from memgauge.metrics import MetricConfig
from memgauge.metrics.agent import DEFAULT_AGENT_K
from memgauge.runs.distribute import SHARD_ATTEMPTS
from memgauge.runs.engine import RUN_KINDS
from memgauge.runs.shards import Shard
from memgauge.subjects.python_import import SEARCH_CONTRACT


def _file(page: str, name: str) -> Block:
    (block,) = [b for b in read_blocks(page) if b.file == name]
    return block


def test_the_quickstart_program_answers_one_line_per_request(tmp_path: Path) -> None:
    script = tmp_path / "my_memory.py"
    script.write_text(_file("docs/quickstart.md", "my_memory.py").text)
    out = subprocess.run(
        [sys.executable, str(script)],
        input='{"id": 7, "method": "reset", "params": {}}\n'
        '{"id": 8, "method": "ingest", "params": {"memories": [{"id": "m1", "text": "tax"}]}}\n'
        '{"id": 9, "method": "search", "params": {"query": "Tax rules", "k": 3}}\n',
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    assert out.stdout.splitlines() == [
        '{"id": 7, "result": null}',
        '{"id": 8, "result": null}',
        '{"id": 9, "result": [{"id": "m1", "text": "tax"}]}',
    ]


def test_the_contracts_page_quotes_the_search_contract() -> None:
    page = " ".join((ROOT / "docs" / "contracts.md").read_text(encoding="utf-8").split())
    quoted = " ".join(SEARCH_CONTRACT.split())
    assert quoted in page.replace("> ", "")


def test_the_readmes_python_example_is_short() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section_line = text[: text.index("## Python API")].count("\n") + 1
    example = next(
        b for b in read_blocks("README.md") if b.lang == "python" and b.line > section_line
    )
    assert example.kind == "python"
    assert len([line for line in example.text.splitlines() if line.strip()]) <= 15


def _section(page: str, heading: str) -> str:
    """The text of `page` under `heading` (a `## ` line), up to the next `## ` heading."""
    text = (ROOT / page).read_text(encoding="utf-8")
    start = text.index(f"\n{heading}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end >= 0 else None]


def test_the_readme_names_the_files_a_dataset_directory_is_read_from() -> None:
    # a file named as the README once said (causal_chains.jsonl) was silently not read
    first = _section("README.md", "## Datasets").split("\n\n")[1]
    named = set(re.findall(r"`([a-z_]+\.jsonl)`", first))
    assert named == set(FILES.values())
    assert set(re.findall(r"`([a-z_]+)`", first)) >= set(FILES)  # the bundle's keys


def test_the_readme_names_the_revisions_that_add_the_query_logs_columns() -> None:
    section = _section("README.md", "## Logging production searches")
    versions = ROOT / "src" / "memgauge" / "store" / "revisions" / "versions"
    said = {
        r"since revision (\d{4})": ["token_usage_ratio", "pressure_level"],
        r"Revision (\d{4}) adds the columns": [
            "avg_relevance_score",
            "top_result_score",
            "boost_impact_delta",
            "dedup_tokens_saved",
        ],
        r"Revision (\d{4}) adds these tables": [
            "eval_sessions",
            "eval_outcomes",
            "eval_agent_outputs",
        ],
    }
    for pattern, names in said.items():
        found = re.search(pattern, section)
        assert found, pattern
        (revision,) = versions.glob(f"r{found[1]}_*.py")
        text = revision.read_text(encoding="utf-8")
        assert [n for n in names if n not in text] == [], revision.name


def test_the_readme_states_the_agent_metrics_default_cutoff() -> None:
    section = _section("README.md", "## Agent-memory metrics (seed 002 section 3)")
    found = re.search(r"At K = (\d+) by default \(`--agent-k`\)", section)
    assert found, "the README no longer states the default K"
    assert int(found[1]) == DEFAULT_AGENT_K


def test_the_readme_does_not_call_tier_precision_a_mean_over_queries() -> None:
    """README listed tier precision among "the metrics that are means over queries"; its run
    value pools every search's top-K hits of the tier (`tier_stratified_precision`)."""
    section = " ".join(
        _section("README.md", "## Agent-memory metrics (seed 002 section 3)").split()
    )
    found = re.search(r"metrics that are means over queries \(([^)]*)\)", section)
    assert found, "the README no longer lists the agent metrics that are means over queries"
    assert "tier precision" not in found[1]
    assert "tier precision's run value pools every search's hits" in section


def test_the_readme_lists_every_field_of_a_datasets_records() -> None:
    items = _section("README.md", "## Datasets").split("\n\n")[2]
    listed = {
        kind: set(re.findall(r"`([a-z_]+)`", text))
        for kind, text in re.findall(r"^- ([a-z]+)[^:]*: (.*?)(?=^- |\Z)", items, re.M | re.S)
    }
    fields = {
        "memory": set(Memory.model_fields),
        "query": set(EvalQuery.model_fields) | set(SessionContext.model_fields),
        "judgment": set(Judgment.model_fields),
    }
    for kind, names in fields.items():
        assert names - listed[kind] == set(), kind


def test_the_sample_size_the_readme_and_help_state_is_the_one_computed() -> None:
    """The README's row and `sample-size --help` said "about 72" (seed 002's figure) for the
    defaults, and the help called it the normal approximation; the command prints 73 (paired
    t) and 71 (normal approximation)."""
    printed = cli_output(["sample-size"])
    found = re.search(r": (\d+) queries \(paired t; normal approximation (\d+)\)", printed)
    assert found, printed
    paired, normal = found[1], found[2]
    row = next(
        line
        for line in (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
        if line.startswith("| `memgauge sample-size")
    )
    assert f"{paired} for the defaults (paired t; its normal approximation {normal};" in row
    helped = " ".join(cli_output(["sample-size", "--help"]).split())
    assert f"the paired t gives {paired} and its normal approximation {normal}" in helped


def test_the_readme_gates_the_demos_run_by_its_id() -> None:
    """The README said the demo's run is where "`memgauge runs list`, `gate` and `history demo`
    find it", which reads as `gate demo`: exit 2, "no run 'demo'" (gate takes a run id or a
    suite file; only history takes a suite's name)."""
    section = " ".join(_section("README.md", "## What the demo does").split())
    assert "`gate` and `history demo` find it" not in section
    assert "`gate RUN_ID` gates it" in section
    helped = " ".join(cli_output(["gate", "--help"]).split())
    assert "Gate a run (an id, or a suite file:" in helped


def test_the_readme_counts_a_shards_tries_as_the_driver_does() -> None:
    """README said a shard whose worker died "is run again, up to 3 times": the driver tries a
    shard SHARD_ATTEMPTS (3) times in all, the first included (its attempt starts at 1)."""
    section = " ".join(_section("README.md", "## Suites and runs").split())
    assert f"({SHARD_ATTEMPTS} tries in all)" in section
    assert {1: "once", 2: "twice"}[SHARD_ATTEMPTS - 1] + " at most" in section
    (attempt,) = [f for f in dataclasses.fields(Shard) if f.name == "attempt"]
    assert attempt.default == 1


def test_every_docs_page_is_in_the_sites_navigation() -> None:
    """docs/review.md (linked from the README and commands.md) was left out of mkdocs.yml's
    nav: the site built, with the page reachable from no menu."""
    nav = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))["nav"]
    listed = {page for entry in nav for page in entry.values()}
    pages = {p.name for p in (ROOT / "docs").glob("*.md")}
    assert pages - listed == set()


def test_runs_list_and_the_readme_name_every_kind_of_run() -> None:
    """`runs list --help` and the README named six kinds; `runs list` also shows
    `bench-systems` (memgauge bench systems) and `optimize` (an optimization's candidates)."""
    kinds = [*RUN_KINDS, "optimize"]
    helped = " ".join(cli_output(["runs", "list", "--help"]).split())
    said = helped[helped.index("(kind: ") : helped.index(")", helped.index("(kind: "))]
    assert [k for k in kinds if not re.search(rf"\b{k}\b", said)] == []
    row = next(
        line
        for line in (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
        if line.startswith("| `memgauge runs list")
    )
    said = row[row.index("`list` gives each run's kind") :].split(");", 1)[0]
    assert [k for k in kinds if f"`{k}`" not in said] == []


def test_the_readme_gives_the_keys_of_metrics_json() -> None:
    """The README's row said `--json` prints `{"aggregate", "per_query", "counts", "config"}`;
    `per_query` is there only with `-q`."""
    data = ROOT / "tests" / "data" / "trec_eval"
    argv = ["metrics", str(data / "qrels.test"), str(data / "results.test"), "-m", "P@5", "--json"]
    row = next(
        line
        for line in (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
        if line.startswith("| `memgauge metrics QRELS RUN -m")
    )
    found = re.search(r"`--json` prints `\{([^}]*)\}`, and `\"(\w+)\"` with `-q`", row)
    assert found, "the README no longer says what metrics --json prints"
    always = set(re.findall(r'"(\w+)"', found[1]))
    assert set(json.loads(cli_output(argv))) == always
    assert set(json.loads(cli_output([*argv, "-q"]))) == always | {found[2]}


def test_the_readmes_trec_eval_config_is_the_presets() -> None:
    """The README gave `MetricConfig(rel_threshold=1, gain="linear")` as trec_eval's
    conventions: it scores a judged query absent from the run 0, where trec_eval (and
    `--conventions trec_eval`) leaves it out of the mean."""
    section = " ".join(_section("README.md", "## Python API").split())
    found = re.search(r"`(MetricConfig\([^`]*\))`, gives trec_eval's conventions", section)
    assert found, "the README no longer gives trec_eval's MetricConfig"
    assert eval(found[1], {"MetricConfig": MetricConfig}) == CONVENTIONS["trec_eval"]


def test_the_commands_page_does_not_say_the_readme_lists_every_option() -> None:
    """commands.md said `--help` gives every option and "the README's table lists them too";
    the table gives each command's main options (evaluate's --pool-depth, --agent-k, health's
    --logs and many more are only in --help)."""
    text = " ".join((ROOT / "docs" / "commands.md").read_text(encoding="utf-8").split())
    assert "the README's table lists them too" not in text
    assert "the README's table lists each command with its main ones" in text
    row = next(
        line
        for line in (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
        if line.startswith("| `memgauge evaluate DATASET -s")
    )
    assert "--pool-depth" in cli_output(["evaluate", "--help"])
    assert "--pool-depth" not in row
