"""memgauge.subjects."""
