"""Where an LLM lives and how to talk to it, from flags and the environment.

Precedence: explicit argument > environment > default. Environment: `MEMGAUGE_MODEL` (or
memaudit's `MEMAUDIT_MODEL`), `OPENAI_API_KEY`, `OPENAI_BASE_URL`, `MEMGAUGE_LLM_CONCURRENCY`,
`MEMGAUGE_LLM_TIMEOUT`, `MEMGAUGE_LLM_RETRIES`, `MEMGAUGE_LLM_RPM`. The key is held only here: it is not part of
the repr, the cache key, any log line, report or stored spec, and is scrubbed from every
error text (`memgauge._util.redact`).

Settings that can never work (a base URL that is no http(s) URL with a host, a blank model, an
unknown provider, a knob that is no number in its range) are a UsageError naming the setting,
raised by `from_env`: the judges' `prepare()` and the LLM subjects' constructors call it before
a run is written, so a run never asks every item of a model it cannot reach.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal
from urllib.parse import urlsplit

from memgauge._util.redact import redact, register_secret
from memgauge.errors import UsageError
from memgauge.llm.providers import DEFAULT_BASE_URL, provider_endpoint

__all__ = [
    "DEFAULT_BASE_URL",
    "LLMConfig",
    "StructuredMode",
    "check_base_url",
    "check_model",
    "env_concurrency",
]

StructuredMode = Literal["json_schema", "json_object", "prompt"]

#: the defaults of `LLMConfig`'s knobs, which the environment's variables replace
DEFAULT_CONCURRENCY = 16
DEFAULT_TIMEOUT = 60.0
DEFAULT_RETRIES = 4


def _env_number(name: str, default: float, need: str, ok: Callable[[float], bool]) -> float:
    """`name` as a number `ok` takes (`need` says which), or `default` when it is unset or
    empty; UsageError naming the variable and what to write otherwise."""
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = float(raw)
    except ValueError:
        raise _refused(name, raw, "is not a number", need, default) from None
    if not math.isfinite(value):
        # nan and inf would pass the range checks below, or fail int() with a traceback
        raise _refused(name, raw, "is not a finite number", need, default)
    if not ok(value):
        raise _refused(name, raw, "is out of range", need, default)
    return value


def _refused(name: str, raw: str, problem: str, need: str, default: float) -> UsageError:
    """Bad input: the variable `name`, its value, what is wrong and what to write."""
    return UsageError(
        f"environment variable {name}={raw!r} {problem}: set it to {need}, or unset it for the "
        f"default ({default:g})"
    )


def _env_whole(name: str, default: int, least: int) -> int:
    need = f"a whole number, at least {least}"
    value = _env_number(name, default, need, lambda v: v >= least)
    if value != int(value):
        raise _refused(name, os.environ[name], "is not a whole number", need, default)
    return int(value)


def env_concurrency() -> int:
    """Most LLM requests in flight: `MEMGAUGE_LLM_CONCURRENCY`, else `DEFAULT_CONCURRENCY`."""
    return _env_whole("MEMGAUGE_LLM_CONCURRENCY", DEFAULT_CONCURRENCY, 1)


def _env_timeout() -> float:
    return _env_number(
        "MEMGAUGE_LLM_TIMEOUT", DEFAULT_TIMEOUT, "seconds, more than 0", lambda v: v > 0
    )


def _env_retries() -> int:
    return _env_whole("MEMGAUGE_LLM_RETRIES", DEFAULT_RETRIES, 0)


def _given_or(given: dict[str, Any], name: str, env: Callable[[], Any]) -> Any:
    """`given`'s `name` (taken out of it), else what the environment says: read only then, so
    a variable the argument overrides is not refused (explicit argument > environment)."""
    return given.pop(name) if name in given else env()


def _env_rpm() -> float | None:
    rpm = _env_number("MEMGAUGE_LLM_RPM", 0, "requests per minute (0: no cap)", lambda v: v >= 0)
    return rpm or None


def check_base_url(url: str, source: str) -> None:
    """UsageError, naming `source` (where `url` was given), unless `url` is an http(s) URL
    with a host: anything else failed every call of a run, one by one."""
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 (a port that is not a number raises here)
    except ValueError as exc:
        problem = f"is not a URL ({exc})"
    else:
        if parts.scheme.lower() not in ("http", "https"):
            problem = "does not start with http:// or https://"
        elif not parts.hostname:
            problem = "names no host"
        else:
            return
    raise UsageError(
        f"{source}={redact(url)!r} {problem}: write the endpoint's URL, as "
        f"{DEFAULT_BASE_URL} or http://localhost:8000/v1"
    )


def check_model(model: str, source: str) -> None:
    """UsageError, naming `source`, when `model` is blank or has spaces around it (a
    provider knows no such model: every call failed)."""
    if not model.strip() or model != model.strip():
        raise UsageError(
            f"{source}={model!r} is not a model id: write the id without spaces around it, "
            "e.g. gpt-4o-mini"
        )


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
    concurrency: int = DEFAULT_CONCURRENCY
    timeout: float = DEFAULT_TIMEOUT
    max_retries: int = DEFAULT_RETRIES
    backoff: float = 0.5
    backoff_max: float = 20.0
    retry_after_max: float = 120.0
    structured: StructuredMode = "json_schema"
    rpm: float | None = None

    def __post_init__(self) -> None:
        check_model(self.model, "model")
        check_base_url(self.base_url, "base_url")
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
        password = urlsplit(self.base_url).password  # a URL `check_base_url` read
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
        # where each setting comes from: what a message about a bad one names
        model, model_from = next(
            (
                (str(value), name)
                for name, value in (
                    ("model", given.pop("model", None)),
                    ("MEMGAUGE_MODEL", os.environ.get("MEMGAUGE_MODEL")),
                    ("MEMAUDIT_MODEL", os.environ.get("MEMAUDIT_MODEL")),
                )
                if value
            ),
            ("", ""),
        )
        if not model:
            raise UsageError(
                "no LLM model configured: set MEMGAUGE_MODEL (e.g. gpt-4o-mini) or give "
                "model: in the judge's spec; OPENAI_BASE_URL and OPENAI_API_KEY say where"
            )
        check_model(model, model_from)
        provider = str(given.pop("provider", "openai"))
        base, key, base_from = provider_endpoint(provider)
        if "base_url" in given:
            base, base_from = str(given.pop("base_url")), "base_url"
        check_base_url(base, base_from)
        return cls(
            model=model,
            base_url=base.rstrip("/"),
            api_key=given.pop("api_key", key),
            provider=provider,
            concurrency=int(_given_or(given, "concurrency", env_concurrency)),
            timeout=float(_given_or(given, "timeout", _env_timeout)),
            max_retries=int(_given_or(given, "max_retries", _env_retries)),
            rpm=given.pop("rpm", None) or _env_rpm(),
            **given,
        )

    def identity(self) -> dict[str, str]:
        """What may be recorded about this configuration (no key)."""
        return {"provider": self.provider, "model": self.model, "base_url": self.base_url}
