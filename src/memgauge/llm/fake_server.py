"""A fake OpenAI-compatible HTTP server on 127.0.0.1, for tests, benchmarks and offline demos.

It speaks enough of the API for memgauge's clients: `POST /v1/embeddings` returns deterministic
hashed bag-of-words vectors (texts that share words are similar, so dense search over them
behaves like a weak real model), `POST /v1/chat/completions` returns scripted or rule-made
replies, and `POST /v1/messages` does the same in Anthropic's shape. It injects latency and
failures: queued faults (`fail`) or random ones at configured rates (`FaultRates`: 429, 500,
timeouts, malformed JSON content, truncated bodies). It can play a reasoning model
(`reasoning`) that rejects `max_tokens` and any `temperature` but 1 with OpenAI's own 400
bodies. Real HTTP on a real socket, served by
aiohttp on an event loop of its own thread: the code under test runs exactly as it would
against a provider, and thousands of concurrent requests cost no thread each.

    with FakeOpenAIServer(latency=0.1) as server:
        server.respond(lambda request: '{"score": 80}')
        client = OpenAIClient(LLMConfig(base_url=server.base_url, api_key="k", model="m"))

Run on its own (benchmarks keep it in another process): `python -m memgauge.llm
--latency 0.1` prints the base URL on its first line and serves until stopped.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import random
import re
import sys
import threading
from collections import Counter, deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np
from aiohttp import web

__all__ = [
    "DEFAULT_REPLY",
    "ECHO_BODY",
    "FakeOpenAIServer",
    "Fault",
    "FaultRates",
    "hashed_embedding",
]

#: what `python -m memgauge.llm` answers unless `--reply` says otherwise: a rubric judge's verdict
DEFAULT_REPLY = '{"score": 80, "issues": [], "strengths": ["ok"]}'

_WORD = re.compile(r"\w+", re.UNICODE)

# a reply rule: the request's JSON -> the reply's text (None: fall through to the script / "OK")
Rule = Callable[[dict[str, Any]], "str | None"]


def hashed_embedding(text: str, dim: int = 64) -> list[float]:
    """A unit vector: each lowercase word adds +-1 at a hashed position (the hashing trick)."""
    v = np.zeros(dim)
    for word in _WORD.findall(text.lower()):
        h = hashlib.blake2b(word.encode(), digest_size=8).digest()
        v[int.from_bytes(h[:4], "little") % dim] += 1.0 if h[4] & 1 else -1.0
    norm = float(np.linalg.norm(v))
    if norm == 0:
        v[0] = 1.0
        norm = 1.0
    return [float(x) for x in v / norm]


@dataclass(frozen=True)
class Fault:
    """What the next request gets instead of a normal answer.

    `truncate` sends a 200 whose body stops halfway (the declared length is not met) and closes
    the connection; `content` replaces the reply's text with a 200 (malformed judge output).
    `echo_auth` plays a careless provider: `{authorization}` and `{key}` in `body` become the
    request's Authorization header and the bare key it carries (`ECHO_BODY` does both), so a
    test can check that no credential an endpoint echoes reaches a file or an output.
    """

    status: int = 500
    body: str = '{"error": {"message": "injected failure"}}'
    delay: float = 0.0
    headers: tuple[tuple[str, str], ...] = ()
    truncate: bool = False
    content: str | None = None
    echo_auth: bool = False


#: an error body quoting the request's credentials, as some endpoints do
ECHO_BODY = (
    '{"error": {"message": "rejected a request sent with Authorization: {authorization}; '
    'Incorrect API key provided: {key}", "request_headers": {"Authorization": "{authorization}"}}}'
)


@dataclass(frozen=True)
class FaultRates:
    """Random faults: each request independently gets at most one, by these probabilities."""

    rate_limit: float = 0.0
    server_error: float = 0.0
    timeout: float = 0.0
    malformed: float = 0.0
    truncated: float = 0.0
    timeout_delay: float = 5.0
    retry_after: float = 0.05
    seed: int = 0

    def total(self) -> float:
        """Probability that a request is faulty."""
        return self.rate_limit + self.server_error + self.timeout + self.malformed + self.truncated


_MALFORMED = "Sure! Here is my verdict: {score: eighty, reasons: [unclosed"


class FakeOpenAIServer:
    """Serve the fake API on 127.0.0.1 (a free port, or `port`) in a background thread."""

    def __init__(
        self,
        *,
        dim: int = 64,
        api_key: str | None = None,
        latency: float = 0.0,
        faults: FaultRates | None = None,
        port: int = 0,
        keep_alive: bool = True,
    ) -> None:
        self.dim = dim
        #: False: every response closes its connection (for clients a test cannot close, such
        #: as the one inside a third-party library, so no socket outlives the test)
        self.keep_alive = keep_alive
        self.api_key = api_key
        self.latency = latency
        self.faults = faults or FaultRates()
        self.port = port
        self.requests: list[dict[str, Any]] = []
        self.replies: deque[str] = deque()
        self.fault_counts: Counter[str] = Counter()
        self.keep_requests = True
        self._rule: Rule | None = None
        #: model id -> whether its 400s name the parameter (`param`, `code`) as OpenAI's do
        self._reasoning: dict[str, bool] = {}
        self._queued: deque[Fault] = deque()
        self._rng = random.Random(self.faults.seed)
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._runner: web.AppRunner | None = None
        self._thread: threading.Thread | None = None
        self._bound_port = 0

    @property
    def base_url(self) -> str:
        """`http://127.0.0.1:<port>/v1`."""
        if not self._bound_port:
            raise RuntimeError("server not started")
        return f"http://127.0.0.1:{self._bound_port}/v1"

    @property
    def n_requests(self) -> int:
        """Requests received so far (faulty ones included)."""
        with self._lock:
            return self._count

    _count = 0

    @property
    def n_queued_faults(self) -> int:
        """Faults queued with `fail` and not yet served."""
        with self._lock:
            return len(self._queued)

    def fail(self, *faults: Fault) -> None:
        """Queue faults: each of the next requests gets one, in order."""
        with self._lock:
            self._queued.extend(faults)

    def script(self, replies: Iterable[str]) -> None:
        """Queue chat replies (message content), served in order; then the rule, then 'OK'."""
        with self._lock:
            self.replies.extend(replies)

    def respond(self, rule: Rule | None) -> None:
        """Make replies with `rule(request_json)` once the script is used up."""
        self._rule = rule

    def reasoning(self, *models: str, name_param: bool = True) -> None:
        """Play OpenAI's reasoning models for these model ids: a chat request carrying
        `max_tokens`, or a `temperature` other than 1, gets the 400 OpenAI sends (without
        `param` and `code` when not `name_param`, as some compatible endpoints do)."""
        with self._lock:
            self._reasoning.update(dict.fromkeys(models, name_param))

    def set_faults(self, faults: FaultRates) -> None:
        """Change the random fault rates (and reseed)."""
        with self._lock:
            self.faults = faults
            self._rng = random.Random(faults.seed)

    # --- lifecycle -----------------------------------------------------------------------

    def start(self) -> FakeOpenAIServer:
        """Bind and serve on a thread of its own."""
        ready = threading.Event()
        errors: list[BaseException] = []

        def main() -> None:
            loop = asyncio.new_event_loop()
            self._loop = loop
            try:
                loop.run_until_complete(self._serve())
            except BaseException as exc:  # reported to start()'s caller
                errors.append(exc)
                ready.set()
                return
            ready.set()
            loop.run_forever()
            loop.run_until_complete(self._shutdown())
            loop.close()

        self._thread = threading.Thread(target=main, name="fake-openai", daemon=True)
        self._thread.start()
        ready.wait()
        if errors:
            raise errors[0]
        return self

    async def _serve(self) -> None:
        owner = self

        @web.middleware
        async def closing(request: web.Request, handler: Any) -> web.StreamResponse:
            response: web.StreamResponse = await handler(request)
            if not owner.keep_alive:
                response.force_close()
            return response

        app = web.Application(client_max_size=64 * 1024**2, middlewares=[closing])
        app.router.add_post("/{tail:.*}", self._handle)
        app.router.add_get("/_stats", self._stats)
        self._runner = web.AppRunner(app, access_log=None, handle_signals=False)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", self.port, backlog=2048)
        await site.start()
        server: Any = site._server  # aiohttp keeps the bound socket here; port 0 needs it
        self._bound_port = int(server.sockets[0].getsockname()[1])

    async def _shutdown(self) -> None:
        # requests still sleeping out an injected latency are dropped, not waited for
        me = asyncio.current_task()
        for task in asyncio.all_tasks():
            if task is not me:
                task.cancel()
        if self._runner is not None:
            await self._runner.cleanup()

    def stop(self) -> None:
        """Shut down and release the port."""
        loop, thread = self._loop, self._thread
        if loop is not None and thread is not None:
            loop.call_soon_threadsafe(loop.stop)
            thread.join(timeout=10)
        self._loop = self._thread = None
        self._bound_port = 0

    def __enter__(self) -> FakeOpenAIServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # --- requests ------------------------------------------------------------------------

    def _pick_fault(self) -> Fault | None:
        with self._lock:
            self._count += 1
            if self._queued:
                return self._queued.popleft()
            f = self.faults
            if f.total() <= 0:
                return None
            u = self._rng.random()
        for kind, p in (
            ("rate_limit", f.rate_limit),
            ("server_error", f.server_error),
            ("timeout", f.timeout),
            ("malformed", f.malformed),
            ("truncated", f.truncated),
        ):
            if u < p:
                with self._lock:
                    self.fault_counts[kind] += 1
                return _fault_of(kind, f)
            u -= p
        return None

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        raw = await request.read()
        try:
            payload: dict[str, Any] = json.loads(raw or b"{}")
        except json.JSONDecodeError:
            payload = {"_raw": raw.decode(errors="replace")}
        if self.keep_requests:
            with self._lock:
                self.requests.append({"path": request.path, "json": payload})
        fault = self._pick_fault()
        delay = self.latency + (fault.delay if fault is not None else 0.0)
        if delay > 0:
            await asyncio.sleep(delay)
        if fault is not None and fault.content is None:
            return await self._fault_response(request, fault)
        if self.api_key is not None and not _authorized(request, self.api_key):
            return _json(401, {"error": {"message": "invalid api key"}})
        path = request.path.rstrip("/")
        if path.endswith("/embeddings"):
            return _json(200, self._embeddings(payload))
        if path.endswith("/chat/completions"):
            rejected = self._rejected(payload)
            if rejected is not None:
                return _json(400, rejected)
            content = fault.content if fault and fault.content else self._reply(payload)
            return _json(200, _chat_body(payload, content))
        if path.endswith("/messages"):
            content = fault.content if fault and fault.content else self._reply(payload)
            return _json(200, _messages_body(payload, content))
        return _json(404, {"error": {"message": "no such route"}})

    async def _stats(self, request: web.Request) -> web.Response:
        """`GET /_stats`: requests received and faults injected (for a server in another
        process, such as the benchmarks')."""
        with self._lock:
            body = {"requests": self._count, "faults": dict(self.fault_counts)}
        return _json(200, body)

    async def _fault_response(self, request: web.Request, fault: Fault) -> web.StreamResponse:
        if not fault.truncate:
            text = fault.body
            if fault.echo_auth:
                auth = request.headers.get("authorization", "")
                key = request.headers.get("x-api-key") or auth.removeprefix("Bearer ")
                text = text.replace("{authorization}", auth).replace("{key}", key)
            resp = web.Response(status=fault.status, text=text, content_type="application/json")
            for k, v in fault.headers:
                resp.headers[k] = v
            return resp
        body = json.dumps(_chat_body({}, "truncated")).encode()
        stream = web.StreamResponse(status=200)
        stream.content_type = "application/json"
        stream.content_length = len(body)
        stream.force_close()
        await stream.prepare(request)
        await stream.write(body[: len(body) // 2])
        if request.transport is not None:
            request.transport.close()
        return stream

    def _rejected(self, payload: dict[str, Any]) -> dict[str, Any] | None:
        """OpenAI's 400 body for a parameter a reasoning model does not take, or None."""
        name_param = self._reasoning.get(str(payload.get("model")))
        if name_param is None:
            return None
        if "max_tokens" in payload:
            param, code = "max_tokens", "unsupported_parameter"
            message = (
                "Unsupported parameter: 'max_tokens' is not supported with this model. "
                "Use 'max_completion_tokens' instead."
            )
        elif "temperature" in payload and payload["temperature"] != 1:
            param, code = "temperature", "unsupported_value"
            message = (
                f"Unsupported value: 'temperature' does not support {payload['temperature']} "
                "with this model. Only the default (1) value is supported."
            )
        else:
            return None
        error: dict[str, Any] = {"message": message, "type": "invalid_request_error"}
        error.update({"param": param, "code": code} if name_param else {"param": None})
        return {"error": error}

    def _embeddings(self, payload: dict[str, Any]) -> dict[str, Any]:
        inputs = payload.get("input", [])
        texts = [inputs] if isinstance(inputs, str) else list(inputs)
        # OpenAI's `dimensions` (a client that sets its vectors' size, as mem0 does when its
        # embedder names embedding_dims) is honoured, as the API honours it
        asked = payload.get("dimensions")
        dim = (
            asked
            if isinstance(asked, int) and not isinstance(asked, bool) and asked > 0
            else self.dim
        )
        data = [
            {"object": "embedding", "index": i, "embedding": hashed_embedding(t, dim)}
            for i, t in enumerate(texts)
        ]
        return {"object": "list", "data": data, "model": payload.get("model", "fake")}

    def _reply(self, payload: dict[str, Any]) -> str:
        with self._lock:
            if self.replies:
                return self.replies.popleft()
        rule = self._rule
        if rule is not None:
            made = rule(payload)
            if made is not None:
                return made
        return "OK"


def _fault_of(kind: str, f: FaultRates) -> Fault:
    if kind == "rate_limit":
        return Fault(
            429,
            '{"error": {"message": "rate limited", "type": "rate_limit"}}',
            headers=(("retry-after", f"{f.retry_after:g}"),),
        )
    if kind == "server_error":
        return Fault(500)
    if kind == "timeout":
        return Fault(200, delay=f.timeout_delay, content=_MALFORMED)
    if kind == "malformed":
        return Fault(200, content=_MALFORMED)
    return Fault(200, truncate=True)


def _authorized(request: web.Request, key: str) -> bool:
    return (
        request.headers.get("authorization") == f"Bearer {key}"
        or request.headers.get("x-api-key") == key
    )


def _json(status: int, body: dict[str, Any]) -> web.Response:
    return web.Response(status=status, text=json.dumps(body), content_type="application/json")


def _tokens(text: str) -> int:
    return max(1, len(text) // 4)


def _prompt_text(payload: dict[str, Any]) -> str:
    parts = []
    for m in payload.get("messages") or []:
        c = m.get("content") if isinstance(m, dict) else None
        parts.append(c if isinstance(c, str) else json.dumps(c))
    return "\n".join(parts)


def _chat_body(payload: dict[str, Any], content: str) -> dict[str, Any]:
    prompt = _tokens(_prompt_text(payload))
    completion = _tokens(content)
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "model": payload.get("model", "fake"),
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": "stop",
            }
        ],
        "usage": {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
        },
    }


def _messages_body(payload: dict[str, Any], content: str) -> dict[str, Any]:
    return {
        "id": "msg_fake",
        "type": "message",
        "role": "assistant",
        "model": payload.get("model", "fake"),
        "content": [{"type": "text", "text": content}],
        "stop_reason": "end_turn",
        "usage": {
            "input_tokens": _tokens(_prompt_text(payload)),
            "output_tokens": _tokens(content),
        },
    }


def main(argv: list[str] | None = None) -> None:
    """Serve until interrupted; the first line of stdout is the base URL."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--latency", type=float, default=0.0)
    p.add_argument("--reply", default=DEFAULT_REPLY)
    p.add_argument("--fault-rate", type=float, default=0.0, help="split over the five kinds")
    p.add_argument("--timeout-delay", type=float, default=5.0)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "--dim",
        type=int,
        default=64,
        help="embedding size when a request names no `dimensions` (default: %(default)s;"
        " give 1536 for mem0's default embedder and vector store, which expect"
        " text-embedding-3-small's size)",
    )
    args = p.parse_args(argv)
    share = args.fault_rate / 5
    rates = FaultRates(
        share, share, share, share, share, timeout_delay=args.timeout_delay, seed=args.seed
    )
    server = FakeOpenAIServer(latency=args.latency, faults=rates, port=args.port, dim=args.dim)
    server.keep_requests = False
    reply = args.reply
    server.respond(lambda _payload: reply)
    server.start()
    print(server.base_url, flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
        sys.stdout.flush()


if __name__ == "__main__":
    main()
