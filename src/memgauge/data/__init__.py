"""memgauge.data."""
