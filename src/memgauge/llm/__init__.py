"""LLM-shaped parts: the fake OpenAI-compatible server used by tests and offline runs."""

from memgauge.llm.fake_server import FakeOpenAIServer, Fault, hashed_embedding

__all__ = ["FakeOpenAIServer", "Fault", "hashed_embedding"]
