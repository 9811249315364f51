"""memgauge.runs."""
