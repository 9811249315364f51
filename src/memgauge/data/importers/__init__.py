"""memgauge.data.importers."""
