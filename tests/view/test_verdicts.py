"""An item's verdicts written in Python (`view.verdicts`) are the template loop they replaced,
byte for byte: judges' fields, votes, raw replies, errors, stand-ins and hostile values."""

from __future__ import annotations

from markupsafe import Markup

from memgauge.data.records import ScoreRecord
from memgauge.view.render import environment
from memgauge.view.verdicts import status_badge, verdict_blocks, verdict_cell

# the loop `_item_detail.html` drew the verdicts with before
_TEMPLATE_LOOP = (
    '{% import "_macros.html" as m %}'
    "{% for v in it.scores %}{% set jf = judge_fields(v) %}\n"
    "<div class=\"verdict {{ 'pass' if v.passed else 'fail' if v.passed == false else '' }}\">\n"
    '<p><b>{{ v.evaluator }}</b>: {{ m.verdict_cell(v) }}{% if v.fallback %} <span class="warn">(neutral stand-in, on_failure: neutral)</span>{% endif %}</p>\n'
    '{% if v.reason %}<p class="reason">{{ v.reason }}</p>{% endif %}\n'
    '{% if v.error %}<p class="bad reason">{{ v.error }}</p>{% endif %}\n'
    "{% if jf %}<div class=\"scroll\"><table class=\"judge\">{% for k in ['judge', 'model', 'template', 'template_version', 'template_hash', 'route'] if k in jf %}<tr><th>{{ k|replace('_', ' ') }}</th><td>{{ jf[k] }}</td></tr>{% endfor %}</table></div>\n"
    '{% if jf.votes %}<div class="scroll"><table class="votes"><thead><tr><th>round</th><th>judge</th><th class="num">value</th><th>pass</th><th>reason</th></tr></thead><tbody>\n'
    "{% for vo in jf.votes %}<tr><td>{{ vo['round'] }}</td><td>{{ vo['judge'] }}</td><td class=\"num\">{{ vo.get('value')|num }}</td><td>{{ '' if vo.get('passed') is none else ('pass' if vo.get('passed') else 'fail') }}</td><td class=\"reason\">{{ vo.get('reason') or vo.get('error') or '' }}</td></tr>{% endfor %}</tbody></table></div>{% endif %}\n"
    '{% if jf.raw_reply is defined %}<details class="raw"><summary>raw reply</summary><pre>{{ jf.raw_reply }}</pre></details>{% endif %}{% endif %}\n'
    "{% set rest = other_detail(v) %}{% if rest %}<details><summary>detail</summary>{{ m.kv(rest) }}</details>{% endif %}\n"
    '</div>{% else %}<p class="meta">No verdict.</p>{% endfor %}\n'
)

HOSTILE = "<script>alert('x & \"y\"')</script>"


def _scores() -> list[ScoreRecord]:
    return [
        ScoreRecord(evaluator="RR@5", value=1.0, reason="RR@5 = 1.000"),
        ScoreRecord(evaluator=HOSTILE, value=0.25, passed=True, reason=HOSTILE),
        ScoreRecord(evaluator="exact", value=0.0, passed=False, fallback=True),
        ScoreRecord(evaluator="judge", value=None, error=HOSTILE, reason=""),
        ScoreRecord(
            evaluator="panel",
            value=0.5,
            passed=True,
            reason="two of three",
            detail={
                "judge": "llm<j>",
                "model": "gpt-x",
                "template": "qa",
                "template_version": 3,
                "template_hash": "abc&def",
                "route": None,
                "votes": [
                    {"round": 1, "judge": "a", "value": 0.75, "passed": True, "reason": HOSTILE},
                    {"judge": "b", "value": None, "passed": False, "error": "timeout"},
                    {"round": 2, "judge": "c", "value": 1, "passed": None},
                ],
                "raw_reply": {"score": 1, "why": "<b>"},
                "extra": {"nested": {"deep": [1, "<x>"]}, "flag": True},
                "note": HOSTILE,
            },
        ),
        ScoreRecord(
            evaluator="raw",
            value=0.9,
            raw_reply=HOSTILE,
            detail={"votes": [], "model": "m"},
        ),
        ScoreRecord(evaluator="votes only", value=0.1, detail={"votes": [{"round": 1}]}),
    ]


def test_blocks_are_the_template_loops_byte_for_byte() -> None:
    env = environment()
    template = env.from_string(_TEMPLATE_LOOP)
    for scores in (_scores(), _scores()[:1], [], _scores()[3:]):
        expected = template.render(it={"scores": scores})
        got = verdict_blocks(scores)
        assert isinstance(got, Markup)
        assert str(got) == expected
    got = str(verdict_blocks(_scores()))
    assert "&lt;script&gt;alert(&#39;x &amp;" in got
    assert "<script>" not in got
    assert str(verdict_blocks([])) == '<p class="meta">No verdict.</p>'


def test_a_verdict_with_nothing_left_of_its_detail_draws_no_detail_block() -> None:
    """A retrieval measure's verdict (empty detail) and a judge's whose detail is only the
    judge's own fields drew a "detail" block of one row, an empty key and `{}` (7,000 of them in
    a LoCoMo report); a detail with something left still draws it, an empty nested value too."""
    bare = ScoreRecord(evaluator="RR@5", value=1.0, reason="RR@5 = 1.000")
    judged = ScoreRecord(evaluator="qa", value=1.0, detail={"judge": "llm", "model": "m"})
    for v in (bare, judged):
        assert "<summary>detail</summary>" not in str(verdict_blocks([v]))
        assert "<td>{}</td>" not in str(verdict_blocks([v]))
    kept = ScoreRecord(evaluator="qa", value=1.0, detail={"model": "m", "extra": {}})
    assert "<tr><th>extra</th><td>{}</td></tr>" in str(verdict_blocks([kept]))


def test_cell_is_the_macros() -> None:
    macro = environment().from_string('{% import "_macros.html" as m %}{{ m.verdict_cell(v) }}')
    for v in (None, *_scores()):
        assert verdict_cell(v) == macro.render(v=v)


def test_a_flat_mapping_is_written_as_indented_json_writes_it() -> None:
    """`pretty` (an item's input and expected value) writes a flat mapping through the C
    encoder: the same text as `json.dumps(indent=2)`, odd values included."""
    import json

    from memgauge.view.render import _pretty

    cases: list[object] = [
        {"text": "When?", "corpus": "conv-26"},
        {"conv-26:D1:3": 3, "conv-26:D2:1": 2},
        {"k": 1.5, "n": None, "b": True, "f": False, "s": 'é\n"<>\u2028\ud800'},
        {"x": float("nan"), "y": float("inf"), "z": -0.0, "w": 1e300, "v": 10**30},
        {"": ""},
        {"a": [1, 2], "b": {"c": None}},
        {1: "int key"},
        {},
        [1, "a"],
    ]
    for value in cases:
        assert _pretty(value) == json.dumps(value, indent=2, ensure_ascii=False, default=str)
    assert _pretty({"text": "t"}) == "t"


def test_status_badge_is_the_macros() -> None:
    macro = environment().from_string('{% import "_macros.html" as m %}{{ m.status(s) }}')
    for s in ("completed", "failed", HOSTILE, None, Markup("<i>q</i>")):
        assert status_badge(s) == macro.render(s=s)


def test_a_reports_queries_carry_every_field_an_item_section_reads() -> None:
    """`render._queries` dumps only the query fields `_item_detail.html` reads: a field the
    template reads is among them."""
    import re
    from importlib import resources

    from memgauge.view.render import _DRAWN

    text = resources.files("memgauge.view").joinpath("templates", "_item_detail.html")
    read = set(re.findall(r"\bquery\.([a-z_]+)", text.read_text()))
    assert read
    assert read <= _DRAWN
