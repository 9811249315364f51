"""The ranked-hits rows written in Python (`view.hit_table`) are the template loop they
replaced, byte for byte, hostile values included."""

from __future__ import annotations

from typing import Any

from markupsafe import Markup

from memgauge.view.hit_table import escape_text, hit_table_rows
from memgauge.view.render import environment

# the loop `_item_detail.html` drew the rows with before
_TEMPLATE_LOOP = (
    '{% for h in hits %}<tr{% if h.relevant %} class="relevant"{% endif %}>'
    "<td class=\"num\">{{ h.rank }}</td><td>{{ h.id }}</td><td>{{ h.text or '' }}</td>"
    "<td class=\"num\">{{ '' if h.grade is none else h.grade }}</td>"
    '<td>{% for c in h.channels %}<span class="chip">{{ c }}</span>{% endfor %}</td>'
    '<td class="num">{{ h.score|num }}</td></tr>{% endfor %}'
)

HOSTILE = "<script>alert('x & \"y\"')</script>"


def _hits() -> list[dict[str, Any]]:
    return [
        {
            "rank": 1,
            "id": "m<1>",
            "text": HOSTILE,
            "score": 0.98765,
            "grade": 2,
            "relevant": True,
            "channels": ["lexical", "de'nse"],
        },
        {
            "rank": 2,
            "id": 'm"2"&',
            "text": None,
            "score": None,
            "grade": None,
            "relevant": False,
            "channels": [],
        },
        {
            "rank": "3",
            "id": Markup("<b>m3</b>"),
            "text": "",
            "score": -1.5,
            "grade": 0,
            "relevant": False,
            "channels": [Markup("<i>x</i>"), 7],
        },
        # one channel each (written without the join): a text, markup, a number
        {
            "rank": 4,
            "id": 44,
            "text": Markup("<em>kept</em>"),
            "score": 3,
            "grade": "2<",
            "relevant": True,
            "channels": ["<lex & 'ical'>"],
        },
        {
            "rank": True,
            "id": "m5",
            "text": 0,
            "score": 1e-9,
            "grade": False,
            "relevant": False,
            "channels": [Markup("<i>dense</i>")],
        },
        {
            "rank": 6,
            "id": "m6",
            "text": "plain & <b>",
            "score": float("nan"),
            "grade": 1,
            "relevant": False,
            "channels": [8],
        },
    ]


def test_rows_are_the_template_loops_byte_for_byte() -> None:
    hits = _hits()
    expected = environment().from_string(_TEMPLATE_LOOP).render(hits=hits)
    got = hit_table_rows(hits)
    assert isinstance(got, Markup)
    assert str(got) == expected
    assert "&lt;script&gt;alert(&#39;x &amp; &#34;y&#34;&#39;)&lt;/script&gt;" in got
    assert "<b>m3</b>" in got  # markup stays markup, as autoescape leaves it
    assert '<span class="chip">&lt;lex &amp; &#39;ical&#39;&gt;</span>' in got
    assert '<span class="chip"><i>dense</i></span>' in got
    assert str(hit_table_rows([])) == ""


def test_escape_text_is_autoescapes() -> None:
    env = environment()
    for value in (HOSTILE, 3, None, 0.5, Markup("<i>a</i>"), "plain", "&amp;"):
        assert escape_text(value) == env.from_string("{{ v }}").render(v=value)


def test_escape_text_of_a_text_is_the_five_replacements() -> None:
    """A text goes through markupsafe's own escaping (C where built): the same characters
    as autoescape's five replacements, lone surrogates, controls and astral ones included."""
    from memgauge.view.hit_table import _replaced

    alphabet = "&<>'\"ab \u00e9\ud800\udfff\U0001f600\x00\n"
    import random

    rng = random.Random(7)
    texts = ["", HOSTILE, "&amp;", "plain"]
    texts += ["".join(rng.choice(alphabet) for _ in range(rng.randrange(40))) for _ in range(500)]
    for text in texts:
        assert escape_text(text) == _replaced(text), repr(text)
        assert type(escape_text(text)) is str
