"""An item's section written in Python (`render.item_detail`) is the template it replaced,
`_item_detail.html`, byte for byte: retrieval items (hits, relevant memories not retrieved, the
query's agent metrics, channels and ranking before expansion) and others (an output, failures,
extra values, an attribution's cause), hostile values, missing and empty fields."""

from __future__ import annotations

import inspect
import re
from types import SimpleNamespace
from typing import Any

from jinja2 import ChoiceLoader, DictLoader

from memgauge.data.records import Failure, ItemRecord, ScoreRecord
from memgauge.view.pages import hit_rows
from memgauge.view.render import _DRAWN, environment, item_detail

# `_item_detail.html` as it was when the section was written in Python
_TEMPLATE = (
    '<div class="scroll"><table class="item-meta"><tr><th>status</th><td>{{ status_badge(it.status) }} · {{ it.attempts }} attempt(s){% if it.duration_ms is not none %} · {{ it.duration_ms|num(1) }} ms{% endif %}</td></tr>\n'
    "{% if it.category %}<tr><th>category</th><td>{{ it.category }}</td></tr>{% endif %}\n"
    "{% if it.latency_ms %}<tr><th>latency (ms)</th><td>{% for k, v in it.latency_ms.items() %}{{ k }} {{ v|num(2) }}{% if not loop.last %} · {% endif %}{% endfor %}</td></tr>{% endif %}\n"
    "<tr><th>score</th><td>{{ it.score|num }}</td></tr></table></div>\n"
    '<h3>Input</h3><pre class="input">{{ it.input|pretty }}</pre>\n'
    '{% if hits is not none %}<h3>Ranked hits</h3><p class="meta">Relevant memories (grade &gt;= {{ rel_threshold }}) are highlighted.</p>\n'
    '<div class="scroll"><table class="hits"><thead><tr><th class="num">rank</th><th>memory</th><th>text</th><th class="num">grade</th><th>channels</th><th class="num">score</th></tr></thead><tbody>\n'
    "{{ hit_table_rows(hits) }}</tbody></table></div>\n"
    '{% if missing %}<p class="meta">Relevant but not retrieved: {% for mid in missing %}<span class="chip">{{ mid }}</span>{% endfor %}</p>{% endif %}\n'
    '{% else %}<h3>Output</h3><pre class="output">{{ it.output|pretty }}</pre>{% endif %}\n'
    '{% if query.agent_metrics %}<h3>Agent-memory metrics of this query</h3><div class="scroll"><table class="query-agent"><tbody>\n'
    "{{ agent_metric_rows(query.agent_metrics) }}</tbody></table></div>{% endif %}\n"
    '{% if query.relevant_channels %}<p class="meta">Channels that produced the judged memories (sourceChannels): {% for mid, chans in query.relevant_channels.items() %}{{ mid }} {% for c in chans %}<span class="chip">{{ c }}</span>{% endfor %}{% if not loop.last %} · {% endif %}{% endfor %}</p>{% endif %}\n'
    '{% if query.pre_expansion is not none and query.pre_expansion is defined %}<p class="meta">Before query expansion: {% for mid in query.pre_expansion %}<span class="chip">{{ mid }}</span>{% endfor %}</p>{% endif %}\n'
    '<h3>Expected</h3><pre class="expected">{{ it.expected|pretty }}</pre>\n'
    "{% if it.extra %}<h3>Also returned</h3><pre>{{ it.extra|pretty }}</pre>{% endif %}\n"
    "{% set cause = it.extra.get('attribution') if it.extra else none %}{% if cause is mapping and cause.get('cause') %}<h3>Why the answer is wrong</h3><p class=\"cause\"><span class=\"chip\">{{ cause['cause']|replace('_', ' ') }}</span> {{ cause.get('text', '') }}</p>{% endif %}\n"
    "<h3>Verdicts</h3>\n"
    '{{ verdict_blocks(it.scores) }}{% if it.failures %}<h3>Failures</h3><div class="scroll"><table class="failures"><thead><tr><th>attempt</th><th>stage</th><th>kind</th><th>message</th><th>at</th></tr></thead><tbody>\n'
    '{% for f in it.failures %}<tr><td>{{ f.attempt }}</td><td>{{ f.stage }}</td><td>{{ f.kind }}</td><td class="reason">{{ f.message }}</td><td>{{ f.at|ts }}</td></tr>{% endfor %}</tbody></table></div>{% endif %}\n'
)

HOSTILE = "<script>alert('x & \"y\"')</script>"


def _items() -> list[ItemRecord]:
    hits = [
        {"id": "m1", "text": "Alice moved to Lyon", "score": 3.5, "channel_ranks": {"lexical": 1}},
        {
            "id": HOSTILE,
            "text": HOSTILE,
            "score": 1.25,
            "channel_ranks": {"lexical": 2, "dense": 1},
        },
        {"id": "m3", "text": None, "score": 0.5, "channels": ["dense"], "rank": 7},
    ]
    return [
        ItemRecord(
            subject="lexical",
            task="t",
            item_id="q1",
            status="completed",
            attempts=1,
            duration_ms=1.234,
            category="single-hop",
            latency_ms={"lexical": 0.25, "total": 0.5},
            score=0.75,
            input={"text": "Where does Alice live?"},
            output={"hits": hits},
            expected={"m1": 3, "m9": 2, HOSTILE: 2, "m0": 0},
            scores=[
                ScoreRecord(evaluator="RR@5", value=1.0, reason="RR@5 = 1.000"),
                ScoreRecord(evaluator=HOSTILE, value=0.0, passed=False, reason=HOSTILE),
            ],
        ),
        ItemRecord(
            subject=HOSTILE,
            task=HOSTILE,
            item_id=HOSTILE,
            status="failed",
            attempts=3,
            duration_ms=None,
            category="",
            latency_ms={},
            score=None,
            input={"text": HOSTILE, "session": [HOSTILE, 1]},
            output={"answer": HOSTILE, "n": [1, 2.5, None]},
            expected=[HOSTILE, 2],
            extra={"attribution": {"cause": "retrieval_miss", "text": HOSTILE}, "x": HOSTILE},
            failures=[
                Failure(
                    attempt=1,
                    stage="answer",
                    kind="timeout",
                    message=HOSTILE,
                    at="2026-11-28T10:00:00.123+00:00",
                ),
                Failure(attempt=2, stage="evaluate", kind=HOSTILE, message="", at=""),
            ],
        ),
        ItemRecord(
            subject="s",
            task="t",
            item_id="q3",
            status="completed",
            attempts=2,
            duration_ms=0.0,
            input={"text": "plain"},
            output="plain answer",
            expected=None,
            extra={"attribution": {"cause": "", "text": "no cause"}},
        ),
        ItemRecord(
            subject="s",
            task="t",
            item_id="q4",
            status="completed",
            attempts=1,
            input={"a": 1},
            output=None,
            expected={"b": "<b>"},
            extra={"attribution": "not a mapping"},
        ),
    ]


_QUERIES: list[dict[str, Any]] = [
    {},
    {"agent_metrics": {}, "relevant_channels": {}, "pre_expansion": None},
    {
        "agent_metrics": {"tier_precision[normal]@5": 0.25, "folder_ils@5": None},
        "relevant_channels": {"m1": ["lexical", HOSTILE], HOSTILE: []},
        "pre_expansion": ["m3", HOSTILE],
    },
    {"pre_expansion": []},
]


def test_the_section_is_the_templates_byte_for_byte() -> None:
    template = environment().from_string(_TEMPLATE)
    n = 0
    for it in _items():
        for threshold in (2, 3):
            hits = hit_rows(it, threshold)
            found = {h["id"] for h in hits} if hits is not None else set()
            grades = it.expected if isinstance(it.expected, dict) else {}
            for missing in (
                [
                    k
                    for k, g in grades.items()
                    if isinstance(g, int) and g >= threshold and k not in found
                ],
                [],
            ):
                for query in _QUERIES:
                    ctx = {
                        "it": it,
                        "hits": hits,
                        "missing": missing,
                        "rel_threshold": threshold,
                        "query": query,
                    }
                    assert str(item_detail(**ctx)) == template.render(ctx), (it.item_id, query)
                    n += 1
    assert n == len(_items()) * 2 * 2 * len(_QUERIES)


def test_the_section_escapes_every_value() -> None:
    it = _items()[1]
    html = str(item_detail(it, None, [], 2, _QUERIES[2]))
    assert "<script>" not in html
    assert "&lt;script&gt;alert(&#39;x &amp;" in html
    assert '<span class="chip">retrieval miss</span>' in html


def test_a_reports_queries_carry_every_field_an_item_section_reads() -> None:
    """`render._queries` dumps only the query fields an item's section reads: every field
    `item_detail` reads is among them."""
    read = set(re.findall(r'query\.get\("([a-z_]+)"\)', inspect.getsource(item_detail)))
    assert read == {"agent_metrics", "relevant_channels", "pre_expansion"}
    assert read <= _DRAWN


# `item.html` as it was, including the template
_ITEM_PAGE = (
    '{% extends "base.html" %}\n'
    "{% block title %}{{ it.item_id }}{% endblock %}\n"
    "{% block main %}\n"
    "<h1>{{ it.item_id }} <span class=\"meta\">{{ it.subject }} · {{ it.task }} · <a href=\"{{ url('/runs/' ~ run.run_id) }}\">run {{ run.run_id }}</a> · <a href=\"{{ url('/runs/' ~ run.run_id ~ '/items', subject=it.subject, task=it.task) }}\">items</a></span></h1>\n"
    '{% include "_item_detail.html" %}\n'
    '{% if p.sections %}{% include "_shapes.html" %}{% endif %}\n'
    "{% endblock %}\n"
)


def test_the_viewers_item_page_is_the_one_that_included_the_template() -> None:
    """`item.html` draws the section with `item_detail` where it included the template: the
    page is the same, the whitespace between the section and what follows included."""
    env = environment()
    before = env.overlay(
        loader=ChoiceLoader(
            [
                DictLoader({"_item_detail.html": _TEMPLATE, "item_before.html": _ITEM_PAGE}),
                env.loader,
            ]
        )
    )
    run = SimpleNamespace(run_id="20261128-000000-abcdef12")
    for it in _items():
        hits = hit_rows(it, 2)
        for query in _QUERIES:
            ctx = {"run": run, "it": it, "hits": hits, "missing": ["m9"], "rel_threshold": 2}
            ctx.update(query=query, p={"sections": []})
            page = env.get_template("item.html").render(ctx)
            assert page == before.get_template("item_before.html").render(ctx)
            assert "</main>" in page
