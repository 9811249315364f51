"""`memgauge view`: a local web viewer of the results store (runs, a run's grid, its items,
comparisons, trends, A/B tests and shadow runs), and the templates `memgauge report` renders
into one self-contained file. Read-only by construction: see `memgauge.view.app`."""

from memgauge.view.render import render_run_report, report_from_store

__all__ = ["render_run_report", "report_from_store"]
