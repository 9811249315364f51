"""The MCP subject against the real reference server `@modelcontextprotocol/server-memory`,
installed from npm into a cache directory (skipped, with the reason, only when npm is absent)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from memgauge import api
from memgauge._util.imports import import_roots
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

    # it answers a line that is no JSON and stays up, until its stdin closes (the subject's
    # cue to exit): not a child that outlives the subject's 5 s wait for it to leave
    child = "print('hello', flush=True); import sys; sys.stdin.read()"
    with pytest.raises(SubjectError, match="not JSON"):
        McpSubject([sys.executable, "-c", child], timeout=3)


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


PAGING_PING = Path(__file__).parent / "data" / "paging_ping_server.py"


def test_stdio_client_pages_tools_and_answers_the_servers_requests() -> None:
    """The server lists one tool per page and, before each tool call's answer, pings memgauge
    and asks it for sampling, waiting for both: without paging `recall` would be missing, and
    without answers every call would time out."""
    s = McpSubject(
        [sys.executable, str(PAGING_PING)],
        profile="tools",
        ingest_tool="remember",
        search_tool="recall",
        timeout=10,
    )
    try:
        assert s.tools == {"remember", "recall"}
        s.ingest(MEMS)
        found = s.search("invoice", 5)
        assert [h.id for h in found.hits] == [m.id for m in MEMS if "invoice" in m.text]
        assert found.hits
    finally:
        s.close()


def test_a_suites_stdio_server_starts_in_the_suites_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`command: [python, server.py]` names the program beside the suite, as a subprocess:
    subject's does: run from another directory, the server is still found."""
    project = tmp_path / "project"
    project.mkdir()
    shutil.copy(PAGING_PING, project / "server.py")
    monkeypatch.chdir(tmp_path)
    with import_roots(project):
        s = McpSubject(
            [sys.executable, "server.py"],
            profile="tools",
            ingest_tool="remember",
            search_tool="recall",
            timeout=10,
        )
    try:
        assert s.tools == {"remember", "recall"}
    finally:
        s.close()


def test_a_relative_memory_file_is_the_suites(
    server: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A relative memory_file is read from the suite's directory, as its dataset is; it went
    to the reference server's own package directory (inside node_modules), which reads a
    relative MEMORY_FILE_PATH from there."""
    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.chdir(tmp_path)
    stray = server.resolve().parent / "graph-relative-test.jsonl"
    with import_roots(project):
        s = McpSubject([str(server)], memory_file="graph-relative-test.jsonl")
    try:
        s.reset()
        s.ingest(MEMS)
    finally:
        s.close()
    went_astray = stray.exists()
    stray.unlink(missing_ok=True)
    assert not went_astray
    assert (project / "graph-relative-test.jsonl").is_file()


@pytest.fixture(scope="module")
def http_server() -> Iterator[str]:
    """The SDK-built Streamable HTTP server of `data/mcp_http_server.py` on 127.0.0.1."""
    pytest.importorskip("mcp", reason="the MCP SDK: pip install 'memgauge[mcp]'")
    import socket
    import subprocess
    import time

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    proc = subprocess.Popen(
        [sys.executable, str(Path(__file__).parent / "data" / "mcp_http_server.py"), str(port)],
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 30
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            break
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                raise RuntimeError(proc.communicate()[1].decode()[-2000:]) from None
            time.sleep(0.1)
    yield f"http://127.0.0.1:{port}/mcp"
    proc.terminate()
    proc.communicate(timeout=10)


def test_streamable_http_server_through_the_sdk_pages_and_is_pinged(http_server: str) -> None:
    """An MCP SDK server over Streamable HTTP that lists one tool per page and pings memgauge
    before answering each call (the pongs it counted come back from `recall`)."""
    s = McpSubject(url=http_server, profile="tools", ingest_tool="remember", search_tool="recall")
    try:
        assert s.name == "mcp:paging-ping-http"
        assert s.tools == {"remember", "recall"}
        s.ingest(MEMS)
        found = s.search("Stripe", 5)
        assert [h.id for h in found.hits] == ["m2", "m3"]
        pongs = s.call_tool("recall", {"query": "x", "k": 1})["pongs"]
        assert pongs >= len(MEMS) + 2  # every call was pinged and answered
    finally:
        s.close()


def test_mcp_url_shorthand(http_server: str) -> None:
    """`-s mcp:http://...` is the HTTP server; `-s mcp:COMMAND` stays a stdio one."""
    from memgauge.subjects.parse import parse_system

    assert parse_system(f"mcp:{http_server}") == [("mcp", {"mcp": {"url": http_server}})]
    assert parse_system("mcp:npx x") == [("mcp", {"mcp": {"command": "npx x"}})]


def test_the_at_of_an_npm_scope_is_not_a_label() -> None:
    """The quick start's line ran `npx -y` alone (the rest taken as the label after @): npx
    then opened a shell that read the JSON-RPC requests as commands."""
    from memgauge.subjects.parse import parse_system

    quickstart = (Path(__file__).resolve().parents[2] / "docs" / "quickstart.md").read_text()
    (line,) = re.findall(r'-s "(mcp:npx [^"]+)"', quickstart)
    command = "npx -y @modelcontextprotocol/server-memory"
    assert parse_system(line) == [("mcp", {"mcp": {"command": command}})]
    assert parse_system(f"mcp:{command}@graph") == [("graph", {"mcp": {"command": command}})]
    assert parse_system("http://127.0.0.1:8000@service") == [
        ("service", {"http": {"base_url": "http://127.0.0.1:8000"}})
    ]
    assert parse_system("python:mymemory:make@mine") == [
        ("mine", {"python": {"target": "mymemory:make"}})
    ]
    with pytest.raises(UsageError, match="the label after @ is empty"):
        parse_system("lexical@")


def test_mcp_needs_a_command_or_a_url() -> None:
    with pytest.raises(UsageError, match=r"`command`.*or `url`"):
        McpSubject()
    with pytest.raises(UsageError, match="not both"):
        McpSubject("x", url="http://127.0.0.1:1/mcp")


def test_an_unreachable_http_server_is_a_subject_error() -> None:
    from memgauge.errors import SubjectError

    pytest.importorskip("mcp")
    with pytest.raises(SubjectError, match=re.escape("mcp:http://127.0.0.1:1/mcp")):
        McpSubject(url="http://127.0.0.1:1/mcp", timeout=5)
