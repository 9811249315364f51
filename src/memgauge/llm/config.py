"""Where an LLM lives and how to talk to it, from flags and the environment.

Precedence: explicit argument > environment > default. Environment: `MEMGAUGE_MODEL` (or
memaudit's `MEMAUDIT_MODEL`), `OPENAI_API_KEY`, `OPENAI_BASE_URL`, `MEMGAUGE_LLM_CONCURRENCY`,
`MEMGAUGE_LLM_TIMEOUT`, `MEMGAUGE_LLM_RETRIES`, `MEMGAUGE_LLM_RPM`. The key is held only here: it is not part of
the repr, the cache key, any log line, report or stored spec, and is scrubbed from every
error text (`memgauge._util.redact`).
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from typing import Any, Literal
from urllib.parse import urlsplit

from memgauge._util.redact import redact, register_secret
from memgauge.errors import UsageError
from memgauge.llm.providers import DEFAULT_BASE_URL, provider_endpoint

__all__ = ["DEFAULT_BASE_URL", "LLMConfig", "StructuredMode", "env_concurrency"]

StructuredMode = Literal["json_schema", "json_object", "prompt"]


def _env_number(name: str, default: float, least: float, *, above: bool = False) -> float:
    """The number the environment variable `name` holds (`default` when unset or empty): at
    least `least` (`above`: more than it), else a UsageError naming the variable."""
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = float(raw)
    except ValueError:
        raise UsageError(f"environment variable {name}={raw!r} is not a number") from None
    if not math.isfinite(value):
        # nan and inf would pass the range checks below, or fail int() with a traceback
        raise UsageError(f"environment variable {name}={raw!r} is not a finite number")
    if value < least or (above and value == least):
        # LLMConfig's own check ("LLM timeout must be positive") named no variable to look for
        bound = f"above {least:g}" if above else f"{least:g} or more"
        unset = f" for {default:g}" if default else ""
        raise UsageError(
            f"environment variable {name}={raw!r}: give a number {bound}, or unset it{unset}"
        )
    return value


def _env_whole(name: str, default: int, least: int) -> int:
    value = _env_number(name, default, least)
    if value != int(value):
        raise UsageError(f"environment variable {name}={os.environ[name]!r} is not a whole number")
    return int(value)


def env_concurrency() -> int:
    """Most LLM requests in flight: `MEMGAUGE_LLM_CONCURRENCY`, else 16."""
    return _env_whole("MEMGAUGE_LLM_CONCURRENCY", 16, 1)


def _env_rpm() -> float | None:
    rpm = _env_number("MEMGAUGE_LLM_RPM", 0.0, 0.0)  # 0: no cap
    return rpm or None


@dataclass(frozen=True)
class LLMConfig:
    """How to reach one model.

    Attributes:
        model: model id sent to the provider.
        base_url: an OpenAI-compatible endpoint (OpenAI, vLLM, Ollama, LM Studio, OpenRouter...).
        api_key: sent as a bearer token; never shown.
        provider: a registered LLM provider: `openai` (any compatible endpoint), `anthropic`,
            or a plug-in's (`memgauge.llm.providers`).
        concurrency: most requests in flight (lowered automatically on 429, then recovered).
        timeout: seconds for one request.
        max_retries: retries after the first attempt, on 429 / 5xx / timeouts / broken
            connections / unreadable bodies, with jittered exponential backoff.
        backoff: first backoff in seconds (doubles per retry, full jitter).
        backoff_max: longest single backoff.
        retry_after_max: the longest `Retry-After` honoured; a provider asking for more fails
            the call (kind `rate_limit`) rather than stall the run for hours.
        structured: how to ask for JSON: a JSON schema, JSON mode, or the prompt alone (the
            client falls back by itself when an endpoint rejects the first two).
        rpm: at most this many requests started per minute (retries included), spaced
            evenly (`limiter.RequestRate`); None: no cap beyond `concurrency`.
    """

    model: str
    base_url: str = DEFAULT_BASE_URL
    api_key: str | None = field(default=None, repr=False)
    provider: str = "openai"
    concurrency: int = 16
    timeout: float = 60.0
    max_retries: int = 4
    backoff: float = 0.5
    backoff_max: float = 20.0
    retry_after_max: float = 120.0
    structured: StructuredMode = "json_schema"
    rpm: float | None = None

    def __post_init__(self) -> None:
        if self.rpm is not None and not self.rpm > 0:
            raise UsageError(f"LLM rpm must be positive (requests per minute), got {self.rpm}")
        if self.concurrency < 1:
            raise UsageError("LLM concurrency must be at least 1")
        if self.timeout <= 0:
            raise UsageError("LLM timeout must be positive")
        if self.max_retries < 0:
            raise UsageError("LLM max_retries must be 0 or more")
        # an endpoint may echo the key in an error body: every error text is scrubbed of it
        register_secret(self.api_key)
        try:
            password = urlsplit(self.base_url).password
        except ValueError:  # a port that is not a number: aiohttp says so on the first call
            password = None
        register_secret(password)
        if password is not None and self.api_key:
            # aiohttp refuses both at once: every call failed with a ValueError
            raise UsageError(
                f"the LLM base URL {redact(self.base_url)} carries a user:password and an API "
                "key is set too (OPENAI_API_KEY, or the spec's api_key): an endpoint is sent "
                "one of them; drop the other"
            )

    @classmethod
    def from_env(cls, **overrides: Any) -> LLMConfig:
        """The configuration from the environment, with `overrides` (None values ignored)."""
        given = {k: v for k, v in overrides.items() if v is not None}
        model = (
            given.pop("model", None)
            or os.environ.get("MEMGAUGE_MODEL")
            or os.environ.get("MEMAUDIT_MODEL")
        )
        if not model:
            raise UsageError(
                "no LLM model configured: set MEMGAUGE_MODEL (e.g. gpt-4o-mini) or give "
                "model: in the judge's spec; OPENAI_BASE_URL and OPENAI_API_KEY say where"
            )
        provider = str(given.pop("provider", "openai"))
        base, key = provider_endpoint(provider)
        return cls(
            model=str(model),
            base_url=str(given.pop("base_url", base)).rstrip("/"),
            api_key=given.pop("api_key", key),
            provider=provider,
            concurrency=int(given.pop("concurrency", env_concurrency())),
            timeout=float(
                given.pop("timeout", _env_number("MEMGAUGE_LLM_TIMEOUT", 60, 0, above=True))
            ),
            max_retries=int(given.pop("max_retries", _env_whole("MEMGAUGE_LLM_RETRIES", 4, 0))),
            rpm=given.pop("rpm", None) or _env_rpm(),
            **given,
        )

    def identity(self) -> dict[str, str]:
        """What may be recorded about this configuration (no key)."""
        return {"provider": self.provider, "model": self.model, "base_url": self.base_url}
