"""The `memgauge` command line: one module per command group, thin over the library."""
