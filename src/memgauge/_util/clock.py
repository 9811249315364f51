"""The clock of every stored timestamp."""

from __future__ import annotations

from datetime import UTC, datetime

__all__ = ["utc_now"]


def utc_now() -> str:
    """The current UTC time, ISO 8601."""
    return datetime.now(UTC).isoformat()
