"""The items table's rows written in Python (`view.item_rows`) are the template loop they
replaced, byte for byte: a report's rows and the viewer's, baselines, failures and hostile
values."""

from __future__ import annotations

import json
import random
from typing import Any

from markupsafe import Markup

from memgauge.data.records import ScoreRecord
from memgauge.store.run_pages import ItemRow
from memgauge.view.render import _brief, environment

# the loop `_items_table.html` drew the rows with before
_TEMPLATE_LOOP = (
    '{% import "_macros.html" as m %}{% set evals = evaluators(rows) %}'
    "{% for r in rows %}<tr>\n"
    '<td>{% if standalone %}<a href="#item-{{ loop.index }}">{{ r.item_id }}</a>{% else %}<a class="item-link" href="{{ item_url(r) }}">{{ r.item_id }}</a>{% endif %}{% if r.category %}<div class="meta">{{ r.category }}</div>{% endif %}</td>\n'
    '<td>{{ r.subject }}</td><td>{{ r.task }}</td><td>{{ m.status(r.status) }}{% if r.n_failures %}<div class="bad">{{ r.n_failures }} failure(s)</div>{% endif %}</td>\n'
    "<td>{{ r.input|brief }}</td><td>{{ r.output|brief }}</td><td>{{ r.expected|brief(80) }}</td>\n"
    '{% for e in evals %}{% set v = verdict(r, e) %}<td>{{ verdict_cell(v) }}{% if r.baseline %}{% set bv = r.baseline.get(e) %}<div class="meta">was {{ verdict_cell(bv) }}</div>{% endif %}{% if v and v.reason %}<div class="meta reason">{{ v.reason|brief(120) }}</div>{% endif %}</td>{% endfor %}\n'
    '<td class="num">{{ r.score|num }}</td><td class="num">{{ r.duration_ms|num(0) }}</td>\n'
    "</tr>{% endfor %}\n"
)

HOSTILE = "<script>alert('x & \"y\"')</script>"


def _rows() -> list[ItemRow]:
    good = ScoreRecord(evaluator="RR@5", value=1.0, reason="RR@5 = 1.000")
    return [
        ItemRow(
            subject="lexical",
            task="retrieval",
            item_id="q<0>",
            seq=0,
            status="completed",
            category="temporal",
            input={"text": "When?", "corpus": "c"},
            expected={"m1": 3},
            output=[{"id": "m1", "score": 1.5}],
            score=0.5,
            duration_ms=12.345,
            n_failures=0,
            scores=[good, ScoreRecord(evaluator=HOSTILE, value=0.0, passed=False, reason=HOSTILE)],
        ),
        ItemRow(
            subject=HOSTILE,
            task="t&t",
            item_id=HOSTILE,
            seq=1,
            status="failed",
            category=None,
            input="x " * 200,
            expected=None,
            output=None,
            score=None,
            duration_ms=None,
            n_failures=2,
            scores=[
                ScoreRecord(evaluator="RR@5", value=None, error=HOSTILE),
                ScoreRecord(evaluator="RR@5", value=0.5, reason="second of the same evaluator"),
            ],
            baseline={"RR@5": good},
        ),
        ItemRow(
            subject="s",
            task="t",
            item_id="q2",
            seq=2,
            status="completed",
            category="",
            input=HOSTILE,
            expected=["a", "b"],
            output="out",
            score=1.0,
            duration_ms=0.4,
            n_failures=0,
            scores=[],
            baseline={HOSTILE: good},
        ),
    ]


def test_rows_are_the_template_loops_byte_for_byte() -> None:
    env = environment()
    template = env.from_string(_TEMPLATE_LOOP)
    own = env.from_string(
        "{% set evals = evaluators(rows) %}{{ item_table_rows(rows, evals, standalone, item_url) }}"
    )

    def item_url(row: Any) -> str:
        return f"/runs/r/items/{row.item_id}?a=1&b=2"

    for rows in (_rows(), _rows()[1:], []):
        for standalone in (True, False):
            context = {"rows": rows, "standalone": standalone, "item_url": item_url}
            expected = template.render(context)
            got = own.render(context)
            assert got == expected
    got = own.render(rows=_rows(), standalone=True)
    assert "&lt;script&gt;alert(&#39;x &amp;" in got
    assert "<script>" not in got
    assert isinstance(env.globals["item_table_rows"]([], [], True, None), Markup)


def _whole_brief(value: Any, limit: int = 160) -> str:
    """`_brief` as it was: the whole value dumped to JSON, collapsed, then cut."""
    if value is None:
        return ""
    if isinstance(value, dict) and set(value) <= {"text", "metadata"} and "text" in value:
        value = value["text"]
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


class _Unprintable:
    def __str__(self) -> str:
        raise AssertionError("dumped past what the cell shows")


def test_a_cell_dumps_only_the_head_of_a_long_output() -> None:
    """A retrieval item's output is its 20 hits, shown cut at 160 characters: only the first
    few are written as JSON (the member past them is never reached), and every cell is what
    dumping the whole value, collapsing its whitespace and cutting it gave."""
    hits = [{"id": f"m{i}", "channels": ["lexical"], "score": 1.5} for i in range(20)]
    assert _brief([*hits, _Unprintable()]).startswith('[{"id": "m0", "channels": ["lexical"]')
    # two members that fill the cell: the third is never dumped
    wide = [{"id": f"m{i}", "text": "w " * 50} for i in range(2)]
    assert _brief([*wide, _Unprintable()]) == _whole_brief([*wide, "x"])
    assert _brief([*wide, _Unprintable()], 20) == '[{"id": "m0", "text…'
    rng = random.Random(7)
    pieces: list[Any] = ["a b", "  x\n\ty  ", "é" * 90, " " * 200, 3, 2.5, None, True, "\xa0 w"]

    def value(depth: int = 0) -> Any:
        roll = rng.random()
        if depth > 3 or roll < 0.3:
            piece = rng.choice(pieces)
            return piece * 3 if isinstance(piece, str) and rng.random() < 0.5 else piece
        if roll < 0.6:
            return [value(depth + 1) for _ in range(rng.randint(0, 12))]
        if roll < 0.8:
            return {f"k {i}": value(depth + 1) for i in range(rng.randint(0, 5))}
        if roll < 0.9:
            return {1: value(depth + 1), "a": value(depth + 1)}  # a key JSON converts
        return (value(depth + 1), value(depth + 1))

    for _ in range(3_000):
        v = value()
        for limit in (1, 5, 80, 160):
            assert _brief(v, limit) == _whole_brief(v, limit), (v, limit)
