"""The LLM layer: an OpenAI-compatible client (aiohttp, adaptive concurrency, bounded retries),
Anthropic as an extra, a response cache with exact replay, structured output with one repair,
token and cost accounting, a scripted client and a fake OpenAI-compatible server for tests.

The names below load on first use (`memgauge._util.lazy`): a run without judges or LLM
subjects imports the usage meter and the process's context (which every run holds), not the
cache, the clients' configuration, structured output, `asyncio` or the fake server."""

from __future__ import annotations

from typing import TYPE_CHECKING

from memgauge._util.lazy import lazy_names

if TYPE_CHECKING:
    from memgauge.llm.cache import CachingClient as CachingClient
    from memgauge.llm.cache import request_key as request_key
    from memgauge.llm.config import LLMConfig as LLMConfig
    from memgauge.llm.context import configure as configure
    from memgauge.llm.context import llm_context as llm_context
    from memgauge.llm.fake_server import FakeOpenAIServer as FakeOpenAIServer
    from memgauge.llm.fake_server import Fault as Fault
    from memgauge.llm.fake_server import FaultRates as FaultRates
    from memgauge.llm.fake_server import hashed_embedding as hashed_embedding
    from memgauge.llm.scripted import ScriptedClient as ScriptedClient
    from memgauge.llm.structured import Structured as Structured
    from memgauge.llm.structured import acomplete_structured as acomplete_structured
    from memgauge.llm.structured import extract_json as extract_json
    from memgauge.llm.types import ChatRequest as ChatRequest
    from memgauge.llm.types import ChatResponse as ChatResponse
    from memgauge.llm.types import LLMClient as LLMClient
    from memgauge.llm.types import Message as Message
    from memgauge.llm.types import Usage as Usage
    from memgauge.llm.usage import Price as Price
    from memgauge.llm.usage import UsageMeter as UsageMeter
    from memgauge.llm.usage import load_prices as load_prices
else:
    lazy_names(globals())
