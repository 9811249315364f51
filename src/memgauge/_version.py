"""memgauge's version, in a module of its own: the code below the package face (the engine's
provenance, the MCP client's name, the CLI) reads it here, so nothing imports `memgauge`
itself, which only re-exports the API."""

from __future__ import annotations

__all__ = ["__version__"]

__version__ = "0.1.0"
