"""Anthropic's Messages API through the official `anthropic` SDK (`pip install memgauge[anthropic]`).

The SDK brings its own retries (bounded by `max_retries`, honouring Retry-After); structured
output goes through the prompt (`structured = "prompt"`), since the Messages API has no JSON
mode. `ANTHROPIC_API_KEY` and `ANTHROPIC_BASE_URL` configure it. The SDK's error texts carry the
response body, so they are scrubbed of keys (`memgauge._util.redact`) like every other.

As with the OpenAI client, a reply cut off at the token limit (`stop_reason: max_tokens`,
OpenAI's `finish_reason: length`) is not an answer: it fails at once (kind `truncated`), its
tokens counted as billed; and a call that failed for good names the endpoint, the model and
what to do (`failures.NamesFailures`).
"""

from __future__ import annotations

import inspect
import json
import time
from typing import Any

from memgauge._util.redact import redact
from memgauge.errors import UnavailableError
from memgauge.llm._loop import run_sync
from memgauge.llm.config import LLMConfig
from memgauge.llm.failures import NamesFailures
from memgauge.llm.types import ChatRequest, ChatResponse, Usage
from memgauge.llm.usage import UsageMeter

__all__ = ["AnthropicClient"]

#: the reply's budget when a request sets none (the Messages API requires one)
_MAX_TOKENS = 1024


class AnthropicClient(NamesFailures):
    """Chat completions against the Anthropic Messages API."""

    base_url_env = "ANTHROPIC_BASE_URL"
    default_base_url = "https://api.anthropic.com/v1"
    api_key_env = "ANTHROPIC_API_KEY"
    structured = "prompt"

    def __init__(self, config: LLMConfig, *, meter: UsageMeter | None = None) -> None:
        try:
            import anthropic
        except ImportError:
            raise UnavailableError(
                "the Anthropic client needs the anthropic package: pip install 'memgauge[anthropic]'"
            ) from None
        self._anthropic = anthropic
        self.config, self.meter = config, meter
        base = config.base_url.rstrip("/")
        self._client = anthropic.AsyncAnthropic(
            api_key=config.api_key or "unset",
            base_url=base.removesuffix("/v1"),
            timeout=config.timeout,
            max_retries=config.max_retries,
            # the SDK retries inside one call: a hook sees (and counts) every request it sends
            http_client=anthropic.DefaultAsyncHttpxClient(event_hooks={"request": [self._sent]}),
        )
        params = inspect.signature(self._client.messages.create).parameters
        self._temperature = "temperature" in params

    async def _sent(self, request: Any) -> None:
        """Count a request before it goes out (each attempt of the SDK's retries)."""
        if self.meter is not None:
            try:
                model = str(json.loads(request.content).get("model") or self.config.model)
            except (ValueError, AttributeError):
                model = self.config.model
            self.meter.sent(model)

    @property
    def model(self) -> str:
        """The configured model id."""
        return self.config.model

    async def acomplete(self, request: ChatRequest) -> ChatResponse:
        """See `LLMClient.acomplete`."""
        model = request.model or self.config.model
        system = "\n\n".join(m.content for m in request.messages if m.role == "system")
        budget = request.max_tokens or _MAX_TOKENS
        kwargs: dict[str, Any] = {
            "model": model,
            "max_tokens": budget,
            "messages": [m.as_dict() for m in request.messages if m.role != "system"],
        }
        if self._temperature:
            # SDK 2.x dropped the parameter (newer models fix their sampling)
            kwargs["temperature"] = request.temperature
        if system:
            kwargs["system"] = system
        t0 = time.perf_counter()
        msg = await self._create(kwargs)
        text = "".join(getattr(b, "text", "") for b in msg.content)
        response = ChatResponse(
            content=text,
            model=model,
            usage=Usage(msg.usage.input_tokens, msg.usage.output_tokens),
            latency_ms=(time.perf_counter() - t0) * 1000,
            finish_reason=msg.stop_reason,
        )
        if msg.stop_reason == "max_tokens":
            raise self._cut_off(response, "stop_reason max_tokens", budget)
        if self.meter is not None:
            self.meter.record(response)
        return response

    async def _create(self, kwargs: dict[str, Any]) -> Any:
        """One Messages call (the SDK retries inside); its errors as `LLMError`s that name
        the endpoint, the model and what to do (`NamesFailures`)."""
        a, model = self._anthropic, str(kwargs["model"])
        tries = self.config.max_retries + 1
        try:
            return await self._client.messages.create(**kwargs)
        except a.AuthenticationError as exc:
            raise self._give_up(model, "auth", f"status {exc.status_code}", 1) from None
        except a.RateLimitError as exc:
            raise self._give_up(model, "rate_limit", redact(str(exc), limit=300), tries) from None
        except a.APITimeoutError:
            message = f"no response within {self.config.timeout:g} s"
            raise self._give_up(model, "timeout", message, tries) from None
        except a.APIConnectionError as exc:
            raise self._give_up(model, "connection", redact(str(exc), limit=300), tries) from None
        except a.APIStatusError as exc:
            status = exc.status_code
            # the SDK retried 408, 409, 429 and 5xx; any other 4xx was sent once
            kind, n = ("server", tries) if status >= 500 else ("bad_request", 1)
            if status == 404:
                kind = "model"
            text = f"status {status}: {redact(str(exc), limit=300)}"
            raise self._give_up(model, kind, text, n) from None

    def complete(self, request: ChatRequest) -> ChatResponse:
        """See `LLMClient.complete`."""
        return run_sync(self.acomplete(request))

    def close(self) -> None:
        """Close the SDK's connection pool."""
        run_sync(self._client.close())
