"""The MCP subject against the real reference server `@modelcontextprotocol/server-memory`,
installed from npm into a cache directory (skipped, with the reason, only when npm is absent)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from memgauge import api
from memgauge.data.models import EvalQuery, Judgment, Memory, RetrievalDataset
from memgauge.errors import UsageError
from memgauge.report import retrieval_result
from memgauge.subjects.mcp import McpSubject

PACKAGE = "@modelcontextprotocol/server-memory@2026.8.31"
_OFFLINE = ("ENOTFOUND", "EAI_AGAIN", "ETIMEDOUT", "ECONNREFUSED", "ECONNRESET", "ENETUNREACH")
CACHE = Path(os.environ.get("MEMGAUGE_TEST_CACHE", Path.home() / ".cache" / "memgauge-tests"))

MEMS = [
    Memory(id="m1", text="Tax is rounded per invoice line"),
    Memory(id="m2", text="Payments go through Stripe"),
    Memory(id="m3", text="Stripe webhooks are verified"),
]


@pytest.fixture(scope="module")
def server() -> Path:
    npm = shutil.which("npm")
    if npm is None:
        pytest.skip("npm is not installed: cannot install @modelcontextprotocol/server-memory")
    prefix = CACHE / ("npm-" + PACKAGE.replace("/", "_").replace("@", ""))
    binary = prefix / "node_modules" / ".bin" / "mcp-server-memory"
    if not binary.exists():
        prefix.mkdir(parents=True, exist_ok=True)
        proc = subprocess.run(
            [npm, "install", "--prefix", str(prefix), "--no-audit", "--no-fund", PACKAGE],
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        if proc.returncode != 0:
            offline = any(code in proc.stderr for code in _OFFLINE)
            if offline:  # a machine without the registry cannot run this test; say so
                pytest.skip(f"npm registry unreachable: {proc.stderr.strip().splitlines()[-1]}")
            pytest.fail(f"npm install {PACKAGE} failed:\n{proc.stderr[-2000:]}")
    return binary


@pytest.fixture
def subject(server: Path, tmp_path: Path) -> Iterator[McpSubject]:
    s = McpSubject([str(server)], memory_file=str(tmp_path / "memory.jsonl"))
    yield s
    s.close()


def test_ingest_search_dump_reset_against_the_reference_server(
    subject: McpSubject, tmp_path: Path
) -> None:
    assert subject.name == "mcp:memory-server"
    subject.reset()
    subject.ingest(MEMS)
    hits = subject.search("stripe", 5).hits
    assert sorted(h.id for h in hits) == ["m2", "m3"]  # case-insensitive substring match
    assert hits[0].text in {"Payments go through Stripe", "Stripe webhooks are verified"}
    assert subject.search("how do payments work", 5).hits == []  # not a semantic search
    assert {m.id for m in subject.dump()} == {"m1", "m2", "m3"}
    assert (tmp_path / "memory.jsonl").is_file()  # state went where we said, nowhere else
    subject.reset()
    assert subject.dump() == []


def test_write_events_are_traced_from_the_tool_calls(subject: McpSubject) -> None:
    subject.reset()
    subject.events.clear()
    subject.ingest(MEMS[:2])
    subject.ingest([MEMS[0]])  # the server keeps the entity it has and says nothing was created
    assert [(e.kind, e.memory_id, e.source) for e in subject.events] == [
        ("ADD", "m1", "traced"),
        ("ADD", "m2", "traced"),
        ("NOOP", "m1", "traced"),
    ]
    subject.reset()
    assert sorted((e.kind, e.memory_id) for e in subject.events[3:]) == [
        ("DELETE", "m1"),
        ("DELETE", "m2"),
    ]
    assert subject.capabilities.write_events


def test_default_memory_file_is_temporary_and_removed(server: Path) -> None:
    s = McpSubject([str(server)])
    s.ingest(MEMS[:1])
    path = s._tmp
    assert path is not None
    assert path.exists()
    s.close()
    assert not path.exists()


def test_tools_profile_needs_the_named_tools(server: Path) -> None:
    with pytest.raises(UsageError, match="needs ingest_tool and search_tool"):
        McpSubject([str(server)], profile="tools")
    with pytest.raises(UsageError, match="has no tool remember"):
        McpSubject([str(server)], profile="tools", ingest_tool="remember", search_tool="recall")


def test_not_an_mcp_server_fails_clearly(tmp_path: Path) -> None:
    from memgauge.errors import SubjectError

    with pytest.raises(SubjectError, match="not JSON"):
        McpSubject([sys.executable, "-c", "print('hello'); import time; time.sleep(5)"], timeout=3)


def test_in_a_retrieval_evaluation(server: Path, tmp_path: Path) -> None:
    ds = RetrievalDataset(
        memories=MEMS,
        queries=[EvalQuery(id="q1", text="webhooks"), EvalQuery(id="q2", text="invoice")],
        judgments=[
            Judgment(query_id="q1", memory_id="m3", grade=3),
            Judgment(query_id="q2", memory_id="m1", grade=3),
        ],
    )
    report = api.evaluate(
        ds,
        {"mcp-memory": McpSubject([str(server)])},
        measures=("RR@10",),
        resamples=100,
        store=False,
    )
    result = retrieval_result(report.run)
    assert result.systems[0].status == "ok"
    assert result.systems[0].metrics["RR@10"].value == 1.0
