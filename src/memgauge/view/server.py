"""Serving the viewer: uvicorn on one host and port, in the foreground until interrupted."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import uvicorn

from memgauge.view.app import create_app

if TYPE_CHECKING:
    from memgauge.store.url import StoreURL

__all__ = ["serve"]


def serve(
    store: str | Path | StoreURL,
    *,
    host: str = "127.0.0.1",
    port: int = 8765,
    reviewer: str | None = None,
) -> None:
    """Serve the viewer of `store` on host:port until interrupted (the store is checked, and
    refused when this memgauge cannot read it, before the port is bound); with `reviewer`, in
    review mode."""
    app = create_app(store, reviewer=reviewer)
    uvicorn.run(app, host=host, port=port, log_level="warning", access_log=False)
