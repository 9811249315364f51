"""The LLM layer: an OpenAI-compatible client (aiohttp, adaptive concurrency, bounded retries),
Anthropic as an extra, a response cache with exact replay, structured output with one repair,
token and cost accounting, a scripted client and a fake OpenAI-compatible server for tests."""

from memgauge.llm.cache import CachingClient, request_key
from memgauge.llm.config import LLMConfig
from memgauge.llm.context import configure, llm_context
from memgauge.llm.scripted import ScriptedClient
from memgauge.llm.structured import Structured, acomplete_structured, extract_json
from memgauge.llm.types import ChatRequest, ChatResponse, LLMClient, Message, Usage
from memgauge.llm.usage import Price, UsageMeter, load_prices

__all__ = [
    "CachingClient",
    "ChatRequest",
    "ChatResponse",
    "FakeOpenAIServer",
    "Fault",
    "FaultRates",
    "LLMClient",
    "LLMConfig",
    "Message",
    "Price",
    "ScriptedClient",
    "Structured",
    "Usage",
    "UsageMeter",
    "acomplete_structured",
    "configure",
    "extract_json",
    "hashed_embedding",
    "llm_context",
    "load_prices",
    "request_key",
]

# the fake server pulls in aiohttp's server side: loaded when first asked for, not by every
# command that imports the LLM layer
_LAZY = {"FakeOpenAIServer", "Fault", "FaultRates", "hashed_embedding"}


def __getattr__(name: str) -> object:
    if name in _LAZY:
        from memgauge.llm import fake_server

        return getattr(fake_server, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
