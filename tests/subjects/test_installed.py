"""Which memory systems `memgauge bench systems` finds here: each adapter usable as it stands,
or skipped with why and the line that installs it (never built to find out)."""

from __future__ import annotations

import importlib.util
from typing import Any

import pytest

from memgauge.subjects import installed
from memgauge.subjects.installed import MCP_MEMORY_SERVER, installed_systems


def test_what_is_missing_is_skipped_with_its_install_line(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    real = importlib.util.find_spec

    def find_spec(name: str, *args: Any) -> Any:
        return None if name in ("mem0", "agents") else real(name, *args)

    monkeypatch.setattr(importlib.util, "find_spec", find_spec)
    monkeypatch.setattr(installed.shutil, "which", lambda name: None)
    found = {f.label: f for f in installed_systems()}
    assert list(found) == [
        "lexical",
        "dense",
        "hybrid",
        "mem0",
        "langmem",
        "mcp-server-memory",
        "agents-session",
    ]
    assert found["lexical"].skipped is None
    assert (found["mem0"].skipped, found["mem0"].install) == (
        "mem0 not installed",
        "pip install 'memgauge[mem0]'",
    )
    assert found["agents-session"].install == "pip install 'memgauge[agents]'"
    assert found["mcp-server-memory"].skipped == "npx (Node.js) is not on PATH"
    assert found["mcp-server-memory"].spec == {"mcp": {"command": MCP_MEMORY_SERVER}}


def test_mem0_without_an_openai_endpoint_is_skipped_not_failed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """mem0's default embedder and LLM are OpenAI's: with no key or endpoint every ingest would
    fail, so it is listed as skipped, saying how to give it one."""
    monkeypatch.setattr(installed, "_module", lambda name: True)
    for var in ("OPENAI_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(var, raising=False)
    mem0 = next(f for f in installed_systems() if f.label == "mem0")
    assert mem0.skipped is not None
    assert "set OPENAI_API_KEY" in mem0.skipped
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    mem0 = next(f for f in installed_systems() if f.label == "mem0")
    assert mem0.skipped is None
    assert mem0.spec == {"mem0": {}}
