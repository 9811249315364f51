"""An item's agent-metric rows written in Python (`view.agent_rows`) are the template loop
they replaced, byte for byte: definitions, names that are no metric, hostile names, n/a."""

from __future__ import annotations

from markupsafe import Markup

from memgauge.view.agent_rows import agent_metric_rows
from memgauge.view.render import environment

# the loop `_item_detail.html` drew the rows with before
_TEMPLATE_LOOP = (
    "{% for name, v in m.items() %}<tr><th>{{ name }}{% set d = agent_definition(name) %}"
    '{% if d %}<div class="meta definition">{{ d }}</div>{% endif %}</th>'
    '<td class="num">{{ v|num }}</td></tr>{% endfor %}'
)


def test_the_rows_are_the_template_loops() -> None:
    loop = environment().from_string(_TEMPLATE_LOOP)
    cases: list[dict[str, float | int | None]] = [
        {},
        {"tier_precision[normal]@5": 0.123456, "folder_ils@5": None, "equivalence_recall@5": 1},
        {"<b>x</b> & 'y'": 0.5, 'not_a_metric"@5': 2.0, "channel_contribution[<i>]@10": 0.0},
    ]
    for metrics in cases:
        got = agent_metric_rows(metrics)
        assert isinstance(got, Markup)
        assert str(got) == loop.render(m=metrics)
    assert "&lt;b&gt;x&lt;/b&gt; &amp; &#39;y&#39;" in agent_metric_rows(cases[2])
    assert 'class="meta definition">of the top-K hits' in agent_metric_rows(cases[1])
