"""memgauge.store."""
