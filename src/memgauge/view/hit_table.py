"""The rows of a retrieval item's ranked-hits table, written here instead of in
`_item_detail.html`: a LoCoMo report draws 1,000 items of 25 hits, and the template's loop
spent half of the report's rendering building a `Markup` object for each of the 150,000 cells.
The markup is the template's, byte for byte; every value is escaped as Jinja's autoescape
escapes it (markupsafe's rules: `&`, `<`, `>`, `'` and `"`; a value with `__html__` is
already markup)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from markupsafe import Markup

__all__ = ["escape_text", "hit_table_rows"]


def _replaced(text: str) -> str:
    return (
        text.replace("&", "&amp;")
        .replace(">", "&gt;")
        .replace("<", "&lt;")
        .replace("'", "&#39;")
        .replace('"', "&#34;")
    )


try:
    # markupsafe's own escaping of a text, in C where its speedups are built, without the
    # `Markup` object `escape` wraps it in: one pass instead of five `replace` (a LoCoMo report
    # escapes 120,000 values, 0.7 us each the Python way, 0.2 us this way)
    from markupsafe._speedups import _escape_inner as _escaped
except ImportError:  # pragma: no cover - a markupsafe without its C speedups
    _escaped = _replaced


def escape_text(value: Any) -> str:
    """`value` as autoescape writes it: its own markup, or its text escaped."""
    if type(value) is str:  # a str subclass may be markup (`__html__`)
        return _escaped(value)
    html = getattr(value, "__html__", None)
    if html is not None:
        return str(html())
    return _replaced(str(value))


def hit_table_rows(hits: Sequence[Mapping[str, Any]]) -> Markup:
    """The `<tr>` rows of `hits` (`pages.hit_rows`)."""
    esc, text_of = escape_text, _escaped
    out = []
    for h in hits:
        rank, hid, text, grade, score, channels = (
            h["rank"], h["id"], h["text"], h["grade"], h["score"], h["channels"]
        )  # fmt: skip
        # a text (most ids, texts and channel names) escaped without `escape_text`'s checks,
        # an int's digits and a formatted number not escaped (nothing in them to escape), a
        # hit of one channel without a generator's join: 20,000 rows of a LoCoMo report
        if len(channels) == 1:
            c = channels[0]
            chips = f'<span class="chip">{text_of(c) if type(c) is str else esc(c)}</span>'
        else:
            chips = "".join(f'<span class="chip">{esc(c)}</span>' for c in channels)
        out.append(
            ('<tr class="relevant">' if h["relevant"] else "<tr>")
            + f'<td class="num">{rank if type(rank) is int else esc(rank)}</td>'
            f"<td>{text_of(hid) if type(hid) is str else esc(hid)}</td>"
            f"<td>{'' if not text else text_of(text) if type(text) is str else esc(text)}</td>"
            f'<td class="num">{"" if grade is None else grade if type(grade) is int else esc(grade)}</td>'
            f"<td>{chips}</td>"
            f'<td class="num">{"n/a" if score is None else f"{score:.3f}"}</td></tr>'
        )
    return Markup("".join(out))
