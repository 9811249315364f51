"""memgauge.stats."""
