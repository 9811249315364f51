"""LLM providers by name: `openai` (any OpenAI-compatible endpoint) and `anthropic`, and any a
plug-in declares in the entry-point group `memgauge.llm_providers`.

A provider is a client class called as `Provider(config, meter=meter)`. It may say where its
endpoint and key come from by default with the class attributes `base_url_env`,
`default_base_url` and `api_key_env` (OpenAI's variables when it does not).
"""

from __future__ import annotations

import os
from typing import Any

from memgauge._util.registry import Registry, RegistryError
from memgauge.errors import UsageError
from memgauge.llm.types import LLMClient

__all__ = ["DEFAULT_BASE_URL", "LLM_PROVIDERS", "provider", "provider_endpoint"]

LLM_PROVIDERS: Registry[LLMClient] = Registry(
    "LLM provider", "memgauge.llm_providers", short_forms=False
)

DEFAULT_BASE_URL = "https://api.openai.com/v1"
_OPENAI = ("OPENAI_BASE_URL", DEFAULT_BASE_URL, "OPENAI_API_KEY")


def provider(name: str) -> Any:
    """The client class of provider `name`; UsageError naming the known ones."""
    try:
        return LLM_PROVIDERS.get(name).factory
    except RegistryError as exc:
        raise UsageError(f"{exc}; set provider: to one of them") from None


def provider_endpoint(name: str) -> tuple[str, str | None, str]:
    """(base URL, API key) of provider `name` from the environment, else its defaults, and
    the variable the base URL is read from (what a message about a bad one names)."""
    cls = provider(name)
    base_env = getattr(cls, "base_url_env", _OPENAI[0])
    default = getattr(cls, "default_base_url", _OPENAI[1])
    key_env = getattr(cls, "api_key_env", _OPENAI[2])
    return os.environ.get(base_env) or default, os.environ.get(key_env), base_env
