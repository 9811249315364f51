"""memgauge used from a notebook: what a cell shows of the records it gets back."""

from __future__ import annotations

import memgauge
from memgauge.data.demo import demo_dataset


def test_a_run_and_its_records_show_a_readable_repr() -> None:
    # a cell ending in `report` printed the whole suite, every measure and every item: a third
    # of a megabyte; each record now shows a long value by its size, and keeps the short ones
    report = memgauge.evaluate(demo_dataset(), ["lexical"], store=False)
    summary = report.summary
    records = [report, report.run, summary, *summary.aggregates, report.items[0]]
    for record in [*records, demo_dataset()]:
        assert len(repr(record)) < 1500, type(record).__name__
    shown = repr(report)
    assert f"run_id='{report.run_id}'" in shown
    assert f"items=<list of {len(report.items)} ItemRecord>" in shown
    assert "tasks=<list of 1 TaskSummary>" in repr(summary)
    measure = summary.measures()[0]
    assert f"value={measure.value!r}" in repr(measure)
    assert f"n_scored={measure.n_scored}" in repr(measure)
