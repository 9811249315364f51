"""A remote MCP server over Streamable HTTP, through the official MCP Python SDK
(`pip install 'memgauge[mcp]'`).

The SDK is asynchronous and its client must be entered and left by one task, so a link owns an
event loop on a thread of its own: one task holds `mcp.Client(url)` open until `close`, and the
memory-system calls, made from any thread, run on that loop and wait for their results. The SDK
answers what the server asks meanwhile (`ping`), and `tools/list` is read page by page.
Results come back as the JSON-RPC shapes the stdio client reads (`content`, `structuredContent`,
`isError`, `nextCursor`), so both transports share one tool mapping (`memgauge.subjects.mcp`).

`mode` is the SDK's protocol negotiation: `legacy` (the default) is the `initialize` handshake
that every server of the 2024-2025 protocol versions speaks, and in which a server may send its
client requests such as `ping`; `auto` probes for the 2026-07-28 protocol first.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

from memgauge.errors import SubjectError, UnavailableError

__all__ = ["HttpLink"]

T = TypeVar("T")


class HttpLink:
    """One open connection to the MCP server at `url`."""

    def __init__(self, url: str, *, timeout: float, mode: str = "legacy") -> None:
        try:
            from mcp import Client
        except ImportError:
            raise UnavailableError(
                f"mcp subject {url}: Streamable HTTP servers need the MCP SDK:"
                " pip install 'memgauge[mcp]'"
            ) from None
        self.url = url
        self.timeout = timeout
        self.label = f"mcp:{url}"
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self._loop.run_forever, name="memgauge-mcp-http", daemon=True
        )
        self._thread.start()
        self._client: Any = None
        self._stop: asyncio.Event | None = None
        opened: concurrent.futures.Future[Any] = concurrent.futures.Future()
        self._owner = asyncio.run_coroutine_threadsafe(
            self._hold(
                Client(url, read_timeout_seconds=timeout, raise_exceptions=True, mode=mode), opened
            ),
            self._loop,
        )
        try:
            self.server_name = str(opened.result(timeout=timeout))
        except concurrent.futures.TimeoutError:
            self.close()
            raise SubjectError(
                f"{self.label}: no answer to initialize within {timeout:g} s"
            ) from None
        except Exception as exc:
            self.close()
            raise SubjectError(f"{self.label}: cannot connect: {_reason(exc)}") from None

    async def _hold(self, client: Any, opened: concurrent.futures.Future[Any]) -> None:
        """Enter the client, report the server's name, and keep it open until `close`."""
        self._stop = asyncio.Event()
        try:
            async with client:
                self._client = client
                info = client.server_info
                opened.set_result(getattr(info, "name", None) or "server")
                await self._stop.wait()
        except BaseException as exc:
            if not opened.done():
                opened.set_exception(exc)
            elif not isinstance(exc, asyncio.CancelledError):
                raise

    def _run(self, coro: Coroutine[Any, Any, T], what: str) -> T:
        future = asyncio.run_coroutine_threadsafe(coro, self._loop)
        try:
            return future.result(timeout=self.timeout)
        except concurrent.futures.TimeoutError:
            future.cancel()
            raise SubjectError(
                f"{self.label}: no answer to {what} within {self.timeout:g} s"
            ) from None
        except SubjectError:
            raise
        except Exception as exc:
            raise SubjectError(f"{self.label}: {what} failed: {_reason(exc)}") from None

    def list_tools(self, cursor: str | None) -> dict[str, Any]:
        """One page of `tools/list`: `{"tools": [...], "nextCursor": ...}`."""
        page = self._run(self._client.list_tools(cursor=cursor), "tools/list")
        return dict(page.model_dump(by_alias=True, exclude_none=True, mode="json"))

    def call_tool(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """`tools/call`: `{"content": [...], "structuredContent": ..., "isError": ...}`."""
        result = self._run(self._client.call_tool(name, arguments), f"tools/call {name}")
        return dict(result.model_dump(by_alias=True, exclude_none=True, mode="json"))

    def error(self, message: str) -> SubjectError:
        """A SubjectError naming the server."""
        return SubjectError(f"{self.label}: {message}")

    def close(self) -> None:
        """Leave the client (ending the server's session) and stop the loop."""
        if self._stop is not None and not self._loop.is_closed():
            self._loop.call_soon_threadsafe(self._stop.set)
            with contextlib.suppress(Exception):  # closing: the connection may already be gone
                self._owner.result(timeout=5)
        if not self._loop.is_closed():
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(timeout=5)
            self._loop.close()


def _reason(exc: BaseException) -> str:
    """An exception as one line; an exception group as its first leaf (anyio wraps them)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return f"{type(exc).__name__}: {' '.join(str(exc).split())[:300]}"
