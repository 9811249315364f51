"""memgauge.report."""
