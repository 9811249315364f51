"""The OpenAI-compatible chat client: aiohttp, adaptive concurrency, bounded jittered retries.

Why aiohttp and not the official SDK: measured on this 2-core machine against the fake server
(`benchmarks/bench_llm.py`, figures in BENCHMARKS.md), the `openai` SDK spends several
milliseconds of CPU per call; a judge pass of tens of thousands of calls at high concurrency
would be bound by our own CPU, not by the provider. A bare aiohttp POST costs a fraction of
that, and the chat-completions wire format is small and stable.

Failure handling, per request:

- 429: the concurrency limit halves (AIMD, `limiter.AdaptiveLimiter`), then retry after the
  larger of `Retry-After` (seconds, or an HTTP-date; one that is neither is ignored) and the
  backoff, failing at once when it asks for more than `retry_after_max`;
- 5xx, 408, 409, timeouts, refused or dropped connections, truncated or unreadable bodies:
  retry with full-jitter exponential backoff, at most `max_retries` times;
- 400 for a parameter the model does not take (OpenAI's reasoning models reject any
  `temperature` but the default, and `max_tokens` for `max_completion_tokens`): asked again at
  once without `temperature`, or with `max_completion_tokens`, each at most once per call and
  not counted against `max_retries`. The client remembers it per model (`adapted`), as
  structured output remembers a rejected mode, so later calls go out right the first time; the
  response says what was changed (`ChatResponse.adapted`) and the meter counts it;
- 401 / 403 (bad key) and other 4xx: fail at once, nothing to gain from retrying;
- a reply cut off at the token limit (`finish_reason: length`): not an answer, and asking
  again would cut it off again: fails at once (`truncated`), its tokens counted as billed.

A call that fails for good raises `LLMError(kind, message, attempts=n)`, the message naming
the endpoint and the model and saying what to do (`failures.NamesFailures`). Every text that came
from the endpoint (an error body, an unreadable reply, a transport error) is scrubbed of keys
and bearer tokens before it becomes part of a message (`memgauge._util.redact`).
"""

from __future__ import annotations

import asyncio
import json
import math
import random
import time
from dataclasses import replace
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any

import aiohttp

from memgauge._util.redact import redact
from memgauge.llm._loop import run_sync
from memgauge.llm.config import DEFAULT_BASE_URL, LLMConfig
from memgauge.llm.failures import NamesFailures
from memgauge.llm.limiter import AdaptiveLimiter, RequestRate
from memgauge.llm.types import ChatRequest, ChatResponse, Usage
from memgauge.llm.usage import UsageMeter

__all__ = ["ADAPTATIONS", "OpenAIClient", "backoff_delay", "rejected_parameter"]

#: what a model may need changed on the wire: `no_temperature` (send none: the provider's
#: default), `max_completion_tokens` (the budget under that name instead of `max_tokens`)
ADAPTATIONS = ("no_temperature", "max_completion_tokens")
_PARAM_ADAPTATION = {"temperature": "no_temperature", "max_tokens": "max_completion_tokens"}
_RETRY_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504, 520, 522, 524, 529})


def backoff_delay(
    attempt: int, base: float, cap: float, retry_after: float | None, rng: random.Random
) -> float:
    """Full jitter: uniform in [0, min(cap, base * 2**(attempt-1))], at least Retry-After."""
    jittered = rng.uniform(0.0, min(cap, base * (2 ** (attempt - 1))))
    return max(jittered, retry_after or 0.0)


def _retry_after(headers: Any) -> float | None:
    """The seconds `Retry-After` asks to wait (RFC 9110: seconds, or an HTTP-date, from now);
    None when there is none, or it is neither: the backoff decides."""
    raw = headers.get("retry-after")
    if not raw:
        return None
    try:
        seconds = float(raw)
    except ValueError:
        try:
            when = parsedate_to_datetime(raw)
        except (TypeError, ValueError):
            return None
        if when.tzinfo is None:  # RFC 850 and asctime dates are GMT too
            when = when.replace(tzinfo=UTC)
        seconds = (when - datetime.now(UTC)).total_seconds()
    return max(0.0, seconds) if not math.isnan(seconds) else None


def rejected_parameter(raw: bytes) -> str | None:
    """The adaptation a 400's body asks for, or None.

    OpenAI names the parameter: `{"error": {"param": "temperature", "code":
    "unsupported_value", "message": "Unsupported value: 'temperature' does not support 0 with
    this model. Only the default (1) value is supported."}}`, and for `max_tokens` the code
    `unsupported_parameter` with "Use 'max_completion_tokens' instead". Compatible endpoints
    that leave out `param` are recognized by the same words in the message.
    """
    try:
        error = json.loads(raw).get("error")
    except (ValueError, AttributeError):
        return None
    if not isinstance(error, dict):
        return None
    param, message = error.get("param"), str(error.get("message") or "")
    if param in _PARAM_ADAPTATION and error.get("code") in (
        "unsupported_value",
        "unsupported_parameter",
    ):
        return _PARAM_ADAPTATION[param]
    for name, adaptation in _PARAM_ADAPTATION.items():
        if f"Unsupported value: '{name}'" in message or f"Unsupported parameter: '{name}'" in (
            message
        ):
            return adaptation
    return None


def _error_text(raw: bytes) -> str:
    """The message of an error body, without secrets (an endpoint may echo the key)."""
    try:
        body = json.loads(raw)
        msg = body.get("error", {}).get("message") if isinstance(body, dict) else None
        if isinstance(msg, str):
            return redact(msg, limit=300)
    except (ValueError, AttributeError):
        pass
    return redact(raw.decode(errors="replace"), limit=300)


class _LoopState:
    """A connection pool and a limiter, owned by one event loop."""

    def __init__(self, config: LLMConfig) -> None:
        headers = {"content-type": "application/json"}
        if config.api_key:
            headers["authorization"] = f"Bearer {config.api_key}"
        self.session = aiohttp.ClientSession(
            headers=headers,
            connector=aiohttp.TCPConnector(limit=0, ttl_dns_cache=300),
            timeout=aiohttp.ClientTimeout(total=config.timeout),
        )
        self.limiter = AdaptiveLimiter(config.concurrency)


class OpenAIClient(NamesFailures):
    """Chat completions against any OpenAI-compatible endpoint.

    Usable from async code (`await client.acomplete(req)`, on any event loop: each loop gets its
    own connection pool) and from threads (`client.complete(req)`, which runs on one shared
    background loop). Call `close()` when done.
    """

    base_url_env = "OPENAI_BASE_URL"
    default_base_url = DEFAULT_BASE_URL
    api_key_env = "OPENAI_API_KEY"

    def __init__(
        self, config: LLMConfig, *, meter: UsageMeter | None = None, seed: int | None = None
    ) -> None:
        self.config = config
        self.meter = meter
        self.structured = config.structured
        self._url = config.base_url.rstrip("/") + "/chat/completions"
        self._states: dict[asyncio.AbstractEventLoop, _LoopState] = {}
        self._formats: dict[int, tuple[Any, str]] = {}
        self._rng = random.Random(seed)
        #: model id -> the parameters it rejected, learned from its 400s (see ADAPTATIONS);
        #: the client is shared per endpoint and model for the process (`llm.context`)
        self.adapted: dict[str, frozenset[str]] = {}
        #: the requests-per-minute cap, one for every event loop this client serves
        self.rate = RequestRate(config.rpm) if config.rpm else None

    @property
    def model(self) -> str:
        """The configured model id."""
        return self.config.model

    def __repr__(self) -> str:
        return f"OpenAIClient(model={self.config.model!r}, base_url={self.config.base_url!r})"

    def _state(self) -> _LoopState:
        loop = asyncio.get_running_loop()
        state = self._states.get(loop)
        if state is None:
            for old in [lp for lp in self._states if lp.is_closed()]:
                del self._states[old]
            state = self._states[loop] = _LoopState(self.config)
        return state

    @property
    def limiter(self) -> AdaptiveLimiter:
        """The limiter of the current event loop (for inspection)."""
        return self._state().limiter

    def _body(self, request: ChatRequest, adapted: frozenset[str] = frozenset()) -> bytes:
        body: dict[str, Any] = {
            "model": request.model or self.config.model,
            "messages": [m.as_dict() for m in request.messages],
        }
        if "no_temperature" not in adapted:
            body["temperature"] = request.temperature
        if request.max_tokens is not None:
            budget = "max_completion_tokens" if "max_completion_tokens" in adapted else "max_tokens"
            body[budget] = request.max_tokens
        if request.seed is not None:
            body["seed"] = request.seed
        text = json.dumps(body)
        fmt = request.response_format
        if fmt is None:
            return text.encode()
        # a JSON schema is the bulk of the body and the same on every call: serialize it once
        cached = self._formats.get(id(fmt))
        if cached is None or cached[0] is not fmt:
            cached = self._formats[id(fmt)] = (fmt, json.dumps(fmt))
        return f'{text[:-1]}, "response_format": {cached[1]}}}'.encode()

    async def acomplete(self, request: ChatRequest) -> ChatResponse:
        """See `LLMClient.acomplete`."""
        state = self._state()
        model = request.model or self.config.model
        adapted = self.adapted.get(model, frozenset())
        payload = self._body(request, adapted)
        kind, message = "connection", ""
        cfg = self.config
        attempt = retries = 0
        while True:
            attempt += 1
            retry_after: float | None = None
            await state.limiter.acquire()
            t0 = time.perf_counter()
            try:
                if self.rate is not None:
                    # after the concurrency slot: starts queued behind it stay spaced
                    await self.rate.acquire()
                    t0 = time.perf_counter()
                if self.meter is not None:
                    # counted before it goes out: a process killed at any moment has recorded
                    # every request the provider may have received
                    self.meter.sent(model)
                async with state.session.post(self._url, data=payload) as resp:
                    status = resp.status
                    raw = await resp.read()
                    retry_after = _retry_after(resp.headers)
            except TimeoutError:
                kind, message = "timeout", f"no response within {cfg.timeout:g} s"
                status = -1
            except aiohttp.ClientError as exc:
                kind, message = "connection", redact(f"{type(exc).__name__}: {exc}", limit=300)
                status = -1
            finally:
                state.limiter.release()
            if status == 200:
                try:
                    response = _parse(raw, model, attempt, (time.perf_counter() - t0) * 1000)
                except ValueError as exc:
                    kind, message = "bad_response", str(exc)
                    if self.meter is not None:
                        self.meter.billed(model, _billed(raw))
                else:
                    state.limiter.on_success()
                    if response.finish_reason == "length":
                        raise self._cut_off(response, "finish_reason length", request.max_tokens)
                    if adapted:
                        response = replace(response, adapted=tuple(sorted(adapted)))
                    if self.meter is not None:
                        self.meter.record(response)
                    return response
            elif status == 429:
                state.limiter.on_rate_limited()
                kind, message = "rate_limit", _error_text(raw)
                if retry_after is not None and retry_after > cfg.retry_after_max:
                    raise self._give_up(
                        model,
                        "rate_limit",
                        f"the provider asks to wait {retry_after:g} s, more than "
                        f"retry_after_max {cfg.retry_after_max:g} s: {message}",
                        attempt,
                    )
            elif status in (401, 403):
                raise self._give_up(model, "auth", f"status {status}", attempt)
            elif status == 400 and (fix := self._adaptation(raw, model, adapted)) is not None:
                # not a retry of a transient failure: the same call, worded as this model
                # takes it, once per parameter (a fix already applied cannot come back)
                adapted = adapted | {fix}
                payload = self._body(request, adapted)
                continue
            elif status > 0 and status not in _RETRY_STATUS:
                kind = "model" if status == 404 else "bad_request"
                message = f"status {status}: {_error_text(raw)}"
                raise self._give_up(model, kind, message, attempt)
            elif status > 0:
                kind, message = "server", f"status {status}: {_error_text(raw)}"
            retries += 1
            if retries > cfg.max_retries:
                raise self._give_up(model, kind, message, attempt)
            await asyncio.sleep(
                backoff_delay(retries, cfg.backoff, cfg.backoff_max, retry_after, self._rng)
            )

    def _adaptation(self, raw: bytes, model: str, adapted: frozenset[str]) -> str | None:
        """The fix a 400 asks for, when this call has not applied it yet; remembered for
        `model` and counted by the meter."""
        fix = rejected_parameter(raw)
        if fix is None or fix in adapted:
            return None
        known = self.adapted.get(model, frozenset())
        if fix not in known:
            self.adapted[model] = known | {fix}
            if self.meter is not None:
                self.meter.adapted(model, fix)
        return fix

    def complete(self, request: ChatRequest) -> ChatResponse:
        """See `LLMClient.complete`."""
        return run_sync(self.acomplete(request))

    async def aclose(self) -> None:
        """Close the connection pool of the current loop."""
        loop = asyncio.get_running_loop()
        state = self._states.pop(loop, None)
        if state is not None:
            await state.session.close()

    def close(self) -> None:
        """Close every connection pool this client opened (from synchronous code)."""
        for loop, state in list(self._states.items()):
            del self._states[loop]
            if loop.is_closed():
                continue
            if loop.is_running():
                asyncio.run_coroutine_threadsafe(state.session.close(), loop).result(timeout=10)
            else:
                loop.run_until_complete(state.session.close())


def _usage_of(body: Any) -> Usage:
    """The tokens a 200's decoded body says were billed (zero when it says nothing readable)."""
    try:
        usage = body.get("usage") or {}
        return Usage(int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0))
    except (ValueError, AttributeError, TypeError):
        return Usage()


def _billed(raw: bytes) -> Usage:
    """`_usage_of` a body that is not a chat completion (it may not be JSON at all)."""
    try:
        return _usage_of(json.loads(raw))
    except ValueError:
        return Usage()


def _parse(raw: bytes, model: str, attempts: int, latency_ms: float) -> ChatResponse:
    """A 200's body -> ChatResponse; ValueError when it is not a chat completion."""
    try:
        body = json.loads(raw)
        choice = body["choices"][0]
        content = choice["message"].get("content")
    except (ValueError, KeyError, IndexError, TypeError, AttributeError):
        text = redact(raw.decode(errors="replace"), limit=200)
        raise ValueError(f"not a chat completion: {text!r}") from None
    if not isinstance(content, str):
        refusal = choice["message"].get("refusal")
        refusal = redact(str(refusal), limit=300) if refusal else None
        raise ValueError(f"no text in the reply{f' (refusal: {refusal})' if refusal else ''}")
    return ChatResponse(
        content=content,
        model=model,  # the id asked for: prices and the cache are keyed on it
        usage=_usage_of(body),
        attempts=attempts,
        latency_ms=latency_ms,
        finish_reason=choice.get("finish_reason"),
    )
