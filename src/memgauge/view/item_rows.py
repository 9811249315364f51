"""The rows of the items table (`_items_table.html`), written here instead of in the template:
a LoCoMo report's table has 1,000 rows of 7 verdicts, and the template's loop (a lookup, a cell,
a baseline test and a reason per verdict) was a quarter of the report's rendering. The markup is
the template's, byte for byte (`tests/view/test_item_rows.py` renders the loop it replaced);
every value is escaped as autoescape escapes it (`hit_table.escape_text`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from markupsafe import Markup

from memgauge.report.fmt import fmt_num
from memgauge.view.hit_table import escape_text as esc
from memgauge.view.verdicts import verdict_cell

if TYPE_CHECKING:  # a report reads no store module it does not need
    from memgauge.data.records import ScoreRecord
    from memgauge.store.run_pages import ItemRow

__all__ = ["item_table_rows"]


def item_table_rows(
    rows: Sequence[ItemRow],
    evals: Sequence[str],
    standalone: bool,
    item_url: Callable[[ItemRow], str] | Any,
    *,
    brief: Callable[..., str],
) -> Markup:
    """The `<tr>` rows of `rows`, a cell per evaluator of `evals`; each item's link is to its
    section of the page (`standalone`) or its page (`item_url`); `brief` is the template's
    filter of that name."""
    out = []
    for n, r in enumerate(rows, 1):
        iid = esc(r.item_id)
        if standalone:
            link = f'<a href="#item-{n}">{iid}</a>'
        else:
            link = f'<a class="item-link" href="{esc(item_url(r))}">{iid}</a>'
        if r.category:
            link += f'<div class="meta">{esc(r.category)}</div>'
        status = esc(r.status)
        fails = f'<div class="bad">{esc(r.n_failures)} failure(s)</div>' if r.n_failures else ""
        found: dict[str, ScoreRecord] = {}
        for s in r.scores:  # the first verdict of an evaluator, as the template's lookup
            found.setdefault(s.evaluator, s)
        cells = []
        for e in evals:
            v = found.get(e)
            cell = f"<td>{verdict_cell(v)}"
            if r.baseline:
                cell += f'<div class="meta">was {verdict_cell(r.baseline.get(e))}</div>'
            if v and v.reason:
                cell += f'<div class="meta reason">{esc(brief(v.reason, 120))}</div>'
            cells.append(cell + "</td>")
        out.append(
            f"<tr>\n<td>{link}</td>\n"
            f"<td>{esc(r.subject)}</td><td>{esc(r.task)}</td>"
            f'<td><span class="badge {status}">{status}</span>{fails}</td>\n'
            f"<td>{esc(brief(r.input))}</td><td>{esc(brief(r.output))}</td>"
            f"<td>{esc(brief(r.expected, 80))}</td>\n"
            + "".join(cells)
            + f'<td class="num">{esc(fmt_num(r.score))}</td>'
            f'<td class="num">{esc(fmt_num(r.duration_ms, 0))}</td>\n</tr>'
        )
    return Markup("".join(out))
