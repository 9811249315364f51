"""Any MCP memory server, over stdio or Streamable HTTP, driven through a mapping of its tools.

`{mcp: {command: ...}}` (or `mcp:COMMAND`) starts a stdio server; `{mcp: {url: ...}}` (or
`mcp:https://HOST/mcp`) connects to a remote Streamable HTTP server through the official MCP
Python SDK (`pip install 'memgauge[mcp]'`; see `memgauge.subjects.mcp_http`). Both read
`tools/list` page by page and answer the server's `ping`.

memgauge speaks MCP's JSON-RPC 2.0 on the server's stdin/stdout itself (initialize, the
`notifications/initialized` notification, `tools/list` page by page, `tools/call`), waits for
each reply by id (servers may answer out of order), answers the requests a server sends it
meanwhile (`ping`; anything else is "method not found"), and maps the memory-system operations
onto tools:

- profile `knowledge-graph` (the reference `@modelcontextprotocol/server-memory`): a memory is
  an entity named by its id, of type `memory`, with its text as the one observation; ingest =
  `create_entities`, search = `search_nodes` (the server matches the query as a substring of
  names, types and observations, best first = its order), dump = `read_graph`, reset =
  `read_graph` then `delete_entities`.
- profile `tools`: name the tools and their argument keys yourself: `ingest_tool`
  (called once per memory with `{text_arg: text, id_arg: id}`), `search_tool` (`{query_arg:
  query, k_arg: k}`), optional `reset_tool`. Results are read from `structuredContent` or the
  JSON in the first text content: a list of hits, or an object holding one under `results`,
  `memories`, `hits` or `entities`.

Write events are traced from the calls (knowledge-graph profile): an entity that
`create_entities` reports as created is an ADD, one it skips because the name exists is a NOOP,
and each entity `reset` deletes is a DELETE; they are kept in `events`, oldest first.

The server's file-based state must not leak into the user's files: for the knowledge-graph
profile `MEMORY_FILE_PATH` is always set, to a temporary file unless given.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from memgauge._util.imports import suite_dir
from memgauge._version import __version__
from memgauge.data.models import Memory, SessionContext
from memgauge.errors import SubjectError, UsageError
from memgauge.subjects._process import LineProcess
from memgauge.subjects.events import Capabilities, WriteEvent
from memgauge.subjects.protocol import Hit, SearchResult
from memgauge.subjects.python_import import normalise_hits

if TYPE_CHECKING:
    from memgauge.subjects.mcp_http import HttpLink

__all__ = ["McpSubject"]

PROTOCOL_VERSION = "2025-06-18"
_KG_TOOLS = ("create_entities", "search_nodes", "read_graph", "delete_entities")


class McpSubject:
    """An MCP memory server (stdio or Streamable HTTP) as a memory system.

    Args:
        command: the stdio server to start (a command line, or its argument list), e.g.
            `npx -y @modelcontextprotocol/server-memory`; give it or `url`.
        url: a remote Streamable HTTP server (`https://HOST/mcp`), through the official MCP
            SDK (`pip install 'memgauge[mcp]'`); give it or `command`.
        mode: the MCP SDK's protocol negotiation for `url`: `legacy` (the `initialize`
            handshake) or `auto`.
        profile: `knowledge-graph` (the reference server's tools: create_entities,
            search_nodes, read_graph, delete_entities) or `tools` (name them yourself with
            ingest_tool, search_tool, reset_tool and their argument keys).
        env: environment variables for the stdio server, on top of memgauge's own.
        timeout: seconds to wait for each reply of the server.
        memory_file: the knowledge-graph server's MEMORY_FILE_PATH; default: a temporary
            file, so the server never writes into your files. A relative one is read from the
            suite file's directory while a suite is run (as its dataset is), else from
            memgauge's; the stdio server starts in that directory too. A file given is emptied by
            every run that fills the subject with a dataset's memories (its reset deletes every
            entity): name a live graph only to search it as it stands (`--no-ingest`).
        ingest_tool: profile `tools`: the tool called once per memory.
        search_tool: profile `tools`: the tool called once per query.
        reset_tool: profile `tools`: the tool that empties the memory (optional).
        text_arg: profile `tools`: the ingest tool's argument that takes the memory's text.
        id_arg: profile `tools`: the ingest tool's argument that takes the memory's id (none:
            not passed).
        query_arg: profile `tools`: the search tool's argument that takes the query.
        k_arg: profile `tools`: the search tool's argument that takes the number of hits
            (none: not passed).
    """

    def __init__(
        self,
        command: str | Sequence[str] | None = None,
        *,
        url: str | None = None,
        mode: str = "legacy",
        profile: Literal["knowledge-graph", "tools"] = "knowledge-graph",
        env: Mapping[str, str] | None = None,
        timeout: float = 30.0,
        memory_file: str | None = None,
        ingest_tool: str | None = None,
        search_tool: str | None = None,
        reset_tool: str | None = None,
        text_arg: str = "text",
        id_arg: str | None = "id",
        query_arg: str = "query",
        k_arg: str | None = "k",
    ) -> None:
        if profile not in ("knowledge-graph", "tools"):
            raise UsageError(f"mcp subject: profile is knowledge-graph or tools, got {profile!r}")
        if (command is None) == (url is None):
            raise UsageError(
                "mcp subject: give `command` (a stdio server) or `url` (a Streamable HTTP"
                " server), not both"
            )
        if profile == "tools" and not (ingest_tool and search_tool):
            raise UsageError("mcp subject: profile 'tools' needs ingest_tool and search_tool")
        self.profile = profile
        self.events: list[WriteEvent] = []
        self.timeout = timeout
        self.tools_map = {
            "ingest": ingest_tool,
            "search": search_tool,
            "reset": reset_tool,
            "text": text_arg,
            "id": id_arg,
            "query": query_arg,
            "k": k_arg,
        }
        self._tmp: Path | None = None
        self._child: LineProcess | None = None
        self._link: HttpLink | None = None
        self._next_id = 0
        if url is not None:
            from memgauge.subjects.mcp_http import HttpLink  # the SDK, only for HTTP servers

            self._link = HttpLink(url, timeout=timeout, mode=mode)
            self.server_name = self._link.server_name
            try:
                self._check_tools()
            except Exception:
                self.close()
                raise
            return
        assert command is not None
        full_env = {**os.environ, **(env or {})}
        # a suite's paths start in its directory, as its dataset's and a subprocess: program's
        where = suite_dir()
        if profile == "knowledge-graph" and "MEMORY_FILE_PATH" not in (env or {}):
            if memory_file is None:
                fd, name = tempfile.mkstemp(prefix="memgauge-mcp-", suffix=".jsonl")
                os.close(fd)
                Path(name).unlink()  # the server creates it; an empty file is not valid JSONL
                self._tmp = Path(name)
                memory_file = name
            # absolute: the reference server reads a relative one from its own package's
            # directory, inside node_modules
            full_env["MEMORY_FILE_PATH"] = str(Path(where or ".", memory_file).absolute())
        self._child = LineProcess(command, kind="mcp", env=full_env, cwd=where)
        try:
            self._initialize()
        except Exception:
            self.close()
            raise

    @property
    def capabilities(self) -> Capabilities:
        """Knowledge graphs can be dumped; MCP servers give no scores."""
        kg = self.profile == "knowledge-graph"
        return Capabilities(dump=kg, write_events=kg)

    @property
    def name(self) -> str:
        """`mcp:<server name>`."""
        return f"mcp:{self.server_name}"

    def _error(self, message: str) -> SubjectError:
        """A SubjectError naming the server (with a stdio server's last stderr lines)."""
        if self._link is not None:
            return self._link.error(message)
        assert self._child is not None
        return self._child.error(message)

    def _request(self, method: str, params: dict[str, Any] | None = None) -> Any:
        assert self._child is not None  # JSON-RPC on stdio; the SDK speaks it over HTTP
        self._next_id += 1
        rid = self._next_id
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params is not None:
            message["params"] = params
        self._child.send(message)
        reply = self._child.receive(
            lambda m: m.get("id") == rid and "method" not in m,
            self.timeout,
            method,
            others=self._answer,
        )
        if "error" in reply:
            err = reply["error"]
            raise self._error(
                f"{method} failed: {err.get('message') if isinstance(err, dict) else err}"
            )
        return reply.get("result")

    def _answer(self, message: dict[str, Any]) -> None:
        """Answer a request the server sends while memgauge waits for a reply (a server that
        pings its client waits for the pong): `ping` gets its empty result, any other method
        JSON-RPC's "method not found" (memgauge declares no client capabilities).
        Notifications need no answer."""
        if "method" not in message or "id" not in message:
            return
        assert self._child is not None
        method = message["method"]
        answer = (
            {"result": {}}
            if method == "ping"
            else {"error": {"code": -32601, "message": f"method not found: {method}"}}
        )
        self._child.send({"jsonrpc": "2.0", "id": message["id"], **answer})

    def _list_tools(self) -> set[str]:
        """Every tool the server offers: `tools/list` page by page, following `nextCursor`."""
        names: set[str] = set()
        cursor: str | None = None
        seen: set[str] = set()
        while True:
            if self._link is not None:
                page = self._link.list_tools(cursor)
            else:
                page = self._request("tools/list", {"cursor": cursor} if cursor else {}) or {}
            names.update(str(t["name"]) for t in page.get("tools", []))
            cursor = page.get("nextCursor")
            if not cursor:
                return names
            if cursor in seen:
                raise self._error(f"tools/list repeated the cursor {cursor!r}")
            seen.add(cursor)

    def _initialize(self) -> None:
        result = self._request(
            "initialize",
            {
                "protocolVersion": PROTOCOL_VERSION,
                "capabilities": {},
                "clientInfo": {"name": "memgauge", "version": __version__},
            },
        )
        info = (result or {}).get("serverInfo", {})
        self.server_name = str(info.get("name", "server"))
        assert self._child is not None
        self._child.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        self._check_tools()

    def _check_tools(self) -> None:
        """List the server's tools; a UsageError naming those the profile needs and lacks."""
        self.tools = self._list_tools()
        needed = (
            _KG_TOOLS
            if self.profile == "knowledge-graph"
            else [t for t in (self.tools_map["ingest"], self.tools_map["search"]) if t]
        )
        missing = [t for t in needed if t not in self.tools]
        if missing:
            raise UsageError(
                f"mcp subject: server {self.server_name!r} has no tool {', '.join(missing)}; it "
                f"offers {', '.join(sorted(self.tools)) or 'none'}"
            )

    def call_tool(self, name: str, arguments: dict[str, Any]) -> Any:
        """`tools/call`; the structured content, or the JSON of the first text content."""
        if self._link is not None:
            result = self._link.call_tool(name, arguments)
        else:
            result = self._request("tools/call", {"name": name, "arguments": arguments}) or {}
        if result.get("isError"):
            text = " ".join(c.get("text", "") for c in result.get("content", []))
            raise self._error(f"tool {name} failed: {text[:300]}")
        if "structuredContent" in result:
            return result["structuredContent"]
        for content in result.get("content", []):
            if content.get("type") == "text":
                try:
                    return json.loads(content["text"])
                except (json.JSONDecodeError, KeyError):
                    return content.get("text")
        return None

    # --- memory-system protocol ------------------------------------------------------

    def reset(self) -> None:
        """Delete every entity (knowledge graph) or call the reset tool."""
        if self.profile == "knowledge-graph":
            graph = self._graph()
            names = [e["name"] for e in graph]
            if names:
                self.call_tool("delete_entities", {"entityNames": names})
                self.events.extend(
                    WriteEvent(
                        "DELETE",
                        str(e["name"]),
                        previous_text="; ".join(e.get("observations", [])),
                        source="traced",
                    )
                    for e in graph
                )
        elif self.tools_map["reset"]:
            self.call_tool(str(self.tools_map["reset"]), {})

    def ingest(self, memories: Sequence[Memory]) -> None:
        """Create entities (in batches of 200), or call the ingest tool per memory."""
        if self.profile == "knowledge-graph":
            for i in range(0, len(memories), 200):
                batch = memories[i : i + 200]
                created = self.call_tool(
                    "create_entities",
                    {
                        "entities": [
                            {"name": m.id, "entityType": "memory", "observations": [m.text]}
                            for m in batch
                        ]
                    },
                )
                self._trace_created(batch, created)
            return
        for m in memories:
            args = {str(self.tools_map["text"]): m.text}
            if self.tools_map["id"]:
                args[str(self.tools_map["id"])] = m.id
            self.call_tool(str(self.tools_map["ingest"]), args)

    def _trace_created(self, batch: Sequence[Memory], created: Any) -> None:
        if isinstance(created, Mapping):
            created = created.get("entities", [])
        new = {str(e.get("name")) for e in created or [] if isinstance(e, Mapping)}
        for m in batch:
            if m.id in new:
                self.events.append(WriteEvent("ADD", m.id, text=m.text, source="traced"))
            else:
                self.events.append(
                    WriteEvent(
                        "NOOP",
                        m.id,
                        text=m.text,
                        source="traced",
                        detail={"why": "an entity of this name exists"},
                    )
                )

    def flush(self) -> None:
        """Tool calls complete synchronously."""

    def search(self, query: str, k: int, *, session: SessionContext | None = None) -> SearchResult:
        """search_nodes, or the search tool; hits in the server's order."""
        t0 = time.perf_counter()
        if self.profile == "knowledge-graph":
            found = self.call_tool("search_nodes", {"query": query}) or {}
            hits = [
                Hit(
                    id=str(e["name"]),
                    text="; ".join(e.get("observations", [])),
                    score=None,
                    rank=r,
                )
                for r, e in enumerate(found.get("entities", [])[:k], 1)
            ]
        else:
            args: dict[str, Any] = {str(self.tools_map["query"]): query}
            if self.tools_map["k"]:
                args[str(self.tools_map["k"])] = k
            raw = self.call_tool(str(self.tools_map["search"]), args)
            if isinstance(raw, Mapping):
                raw = next(
                    (raw[key] for key in ("results", "memories", "hits", "entities") if key in raw),
                    raw,
                )
            try:
                hits = normalise_hits(raw, k)
            except SubjectError as exc:
                raise self._error(f"search tool result: {exc}") from None
        return SearchResult(hits, {"total": (time.perf_counter() - t0) * 1000})

    def _graph(self) -> list[dict[str, Any]]:
        graph = self.call_tool("read_graph", {}) or {}
        return list(graph.get("entities", []))

    def dump(self) -> list[Memory]:
        """Every entity of type memory (knowledge graph); [] for other profiles."""
        if self.profile != "knowledge-graph":
            return []
        return [
            Memory(id=str(e["name"]), text="; ".join(e.get("observations", [])))
            for e in self._graph()
        ]

    def close(self) -> None:
        """Stop the server and remove a temporary memory file."""
        child = getattr(self, "_child", None)
        if child is not None:
            child.close()
        link = getattr(self, "_link", None)
        if link is not None:
            link.close()
        if self._tmp is not None:
            self._tmp.unlink(missing_ok=True)
