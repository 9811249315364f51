"""memgauge.metrics."""
