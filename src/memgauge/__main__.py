"""`python -m memgauge`."""

from memgauge.cli.main import run

run()
