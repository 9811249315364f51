"""Anthropic's Messages API through the official `anthropic` SDK (`pip install memgauge[anthropic]`).

The SDK brings its own retries (bounded by `max_retries`, honouring Retry-After); structured
output goes through the prompt (`structured = "prompt"`), since the Messages API has no JSON
mode. `ANTHROPIC_API_KEY` and `ANTHROPIC_BASE_URL` configure it. The SDK's error texts carry the
response body, so they are scrubbed of keys (`memgauge._util.redact`) like every other.
"""

from __future__ import annotations

import inspect
import json
import time
from typing import Any

from memgauge._util.redact import redact
from memgauge.errors import LLMError, UnavailableError
from memgauge.llm._loop import run_sync
from memgauge.llm.config import LLMConfig
from memgauge.llm.types import ChatRequest, ChatResponse, Usage
from memgauge.llm.usage import UsageMeter

__all__ = ["AnthropicClient"]


class AnthropicClient:
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
        kwargs: dict[str, Any] = {
            "model": model,
            "max_tokens": request.max_tokens or 1024,
            "messages": [m.as_dict() for m in request.messages if m.role != "system"],
        }
        if self._temperature:
            # SDK 2.x dropped the parameter (newer models fix their sampling)
            kwargs["temperature"] = request.temperature
        if system:
            kwargs["system"] = system
        t0 = time.perf_counter()
        try:
            msg = await self._create(kwargs)
        except LLMError:
            if self.meter is not None:
                self.meter.record_failure(model)
            raise
        text = "".join(getattr(b, "text", "") for b in msg.content)
        response = ChatResponse(
            content=text,
            model=model,
            usage=Usage(msg.usage.input_tokens, msg.usage.output_tokens),
            latency_ms=(time.perf_counter() - t0) * 1000,
            finish_reason=msg.stop_reason,
        )
        if self.meter is not None:
            self.meter.record(response)
        return response

    async def _create(self, kwargs: dict[str, Any]) -> Any:
        """One Messages call (the SDK retries inside); its errors as `LLMError`s."""
        a = self._anthropic
        tries = self.config.max_retries + 1
        try:
            return await self._client.messages.create(**kwargs)
        except a.AuthenticationError:
            raise LLMError("auth", "rejected by Anthropic: check ANTHROPIC_API_KEY") from None
        except a.RateLimitError as exc:
            raise LLMError("rate_limit", redact(str(exc), limit=300), attempts=tries) from None
        except a.APITimeoutError:
            raise LLMError(
                "timeout", f"no response within {self.config.timeout:g} s", attempts=tries
            ) from None
        except a.APIConnectionError as exc:
            raise LLMError("connection", redact(str(exc), limit=300), attempts=tries) from None
        except a.APIStatusError as exc:
            kind = "server" if exc.status_code >= 500 else "bad_request"
            text = redact(str(exc), limit=300)
            raise LLMError(kind, f"status {exc.status_code}: {text}") from None

    def complete(self, request: ChatRequest) -> ChatResponse:
        """See `LLMClient.complete`."""
        return run_sync(self.acomplete(request))

    def close(self) -> None:
        """Close the SDK's connection pool."""
        run_sync(self._client.close())
