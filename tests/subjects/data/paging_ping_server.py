"""A stdio MCP server for tests: it lists its two tools on two pages (`nextCursor`), and before
answering each tool call it pings its client and asks it for sampling, waiting for both answers
(a client that ignores server requests hangs here). Memories live in a dict; `recall` returns
those whose text contains the query. Started as `python paging_ping_server.py`."""

import json
import sys

memories: dict[str, str] = {}
next_id = 0


def send(message: dict) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def ask(method: str) -> dict:
    """Send a request to the client and wait for its answer (nothing else comes meanwhile)."""
    global next_id
    next_id += 1
    rid = f"srv-{next_id}"
    send({"jsonrpc": "2.0", "id": rid, "method": method, "params": {}})
    while True:
        reply = json.loads(sys.stdin.readline())
        if reply.get("id") == rid:
            return reply


TOOLS = [
    {"name": "remember", "inputSchema": {"type": "object"}},
    {"name": "recall", "inputSchema": {"type": "object"}},
]

for line in sys.stdin:
    msg = json.loads(line)
    if "id" not in msg:
        continue  # a notification
    method, params = msg["method"], msg.get("params") or {}
    if method == "initialize":
        result = {
            "protocolVersion": params["protocolVersion"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "paging-ping", "version": "1"},
        }
    elif method == "tools/list":
        result = (
            {"tools": TOOLS[1:]}
            if params.get("cursor") == "page-2"
            else {"tools": TOOLS[:1], "nextCursor": "page-2"}
        )
    elif method == "tools/call":
        pong = ask("ping")
        assert pong.get("result") == {}, pong
        refused = ask("sampling/createMessage")
        assert refused["error"]["code"] == -32601, refused
        args = params["arguments"]
        if params["name"] == "remember":
            memories[args["id"]] = args["text"]
            found: object = {"ok": True}
        else:
            hits = [{"id": k, "text": v} for k, v in memories.items() if args["query"] in v]
            found = {"results": hits[: args["k"]]}
        result = {"content": [{"type": "text", "text": json.dumps(found)}]}
    else:
        send({"jsonrpc": "2.0", "id": msg["id"], "error": {"code": -32601, "message": method}})
        continue
    send({"jsonrpc": "2.0", "id": msg["id"], "result": result})
