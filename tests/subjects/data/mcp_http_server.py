"""A Streamable HTTP MCP server built with the official MCP Python SDK, for tests: it lists its
two tools on two pages (`nextCursor`) and pings its client before answering each tool call
(counting the pongs it got, which `recall` reports). Memories live in a dict; `recall` returns
those whose text contains the query. `python mcp_http_server.py PORT`."""

import json
import sys

import mcp_types as types
import uvicorn
from mcp.server.lowlevel import Server

memories: dict[str, str] = {}
pongs = 0

TOOLS = [
    types.Tool(name="remember", input_schema={"type": "object"}),
    types.Tool(name="recall", input_schema={"type": "object"}),
]


async def list_tools(ctx, params):
    if params is not None and params.cursor == "page-2":
        return types.ListToolsResult(tools=TOOLS[1:])
    return types.ListToolsResult(tools=TOOLS[:1], next_cursor="page-2")


async def call_tool(ctx, params):
    global pongs
    await ctx.session.send_ping()  # waits for the client's answer
    pongs += 1
    args = params.arguments or {}
    if params.name == "remember":
        memories[args["id"]] = args["text"]
        found: object = {"ok": True}
    else:
        hits = [{"id": k, "text": v} for k, v in memories.items() if args["query"] in v]
        found = {"results": hits[: args["k"]], "pongs": pongs}
    return types.CallToolResult(content=[types.TextContent(type="text", text=json.dumps(found))])


server = Server("paging-ping-http", on_list_tools=list_tools, on_call_tool=call_tool)

if __name__ == "__main__":
    uvicorn.run(
        server.streamable_http_app(), host="127.0.0.1", port=int(sys.argv[1]), log_level="warning"
    )
