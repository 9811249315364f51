"""memgauge.embed."""
