"""Agent audits (seed 003): probes made from conversation datasets, and their metrics."""
