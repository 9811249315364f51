"""Helpers with no memgauge dependencies."""
