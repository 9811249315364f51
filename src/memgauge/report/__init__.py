"""Reports: a retrieval run's JSON, Markdown and terminal views (`retrieval_result` rebuilds
what they render from the run's record), and the number formatting every renderer shares
(`memgauge.report.fmt`, the viewer's too). The viewer (`memgauge.view`) stands above the
reports: it draws the one-file HTML report and uses these; nothing here imports it.

Each name loads on first use (as in `memgauge.api`): a command that writes one file with
`atomic_write_text` does not load the aggregates."""

from __future__ import annotations

from typing import TYPE_CHECKING

from memgauge._util.lazy import lazy_names

if TYPE_CHECKING:
    from memgauge._util.files import atomic_write_text as atomic_write_text
    from memgauge.aggregates.retrieval_result import RetrievalEvalResult as RetrievalEvalResult
    from memgauge.report.json_io import read_json as read_json
    from memgauge.report.json_io import write_json as write_json
    from memgauge.report.markdown import render_markdown as render_markdown
    from memgauge.report.retrieval import retrieval_result as retrieval_result
    from memgauge.report.terminal import render_terminal as render_terminal
else:
    lazy_names(globals())
