"""memgauge's own components, by entry-point group: the same table `pyproject.toml` declares
under `[project.entry-points]` (a test keeps the two equal). Registries load these through the
entry-point path; this copy is read only when memgauge runs from a source tree whose metadata
is not installed."""

from __future__ import annotations

__all__ = ["BUILTINS"]

BUILTINS: dict[str, dict[str, str]] = {
    "memgauge.aggregates": {
        "ir": "memgauge.aggregates.ir:IRAggregate",
        "extraction": "memgauge.aggregates.write_path:ExtractionAggregate",
        "operations": "memgauge.aggregates.write_path:OperationsAggregate",
        "audit": "memgauge.aggregates.audit:AuditAggregate",
    },
}
