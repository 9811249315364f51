"""An item's verdicts as `_item_detail.html` draws them, written here instead of in the
template: a LoCoMo report draws 1,000 items of 7 verdicts, and the template's loop (a macro call,
two helper calls and a dozen tests per verdict) was half of each item's section. The markup is
the template's, byte for byte (`tests/view/test_verdicts.py` renders the loop it replaced);
every value is escaped as autoescape escapes it (`hit_table.escape_text`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from markupsafe import Markup

from memgauge.data.records import ScoreRecord
from memgauge.report.fmt import fmt_num
from memgauge.view.hit_table import escape_text as esc
from memgauge.view.pages import judge_fields, other_detail

__all__ = ["status_badge", "verdict_blocks", "verdict_cell"]

_JUDGE_KEYS = ("judge", "model", "template", "template_version", "template_hash", "route")
_VOTES_HEAD = (
    '<div class="scroll"><table class="votes"><thead><tr><th>round</th><th>judge</th>'
    '<th class="num">value</th><th>pass</th><th>reason</th></tr></thead><tbody>\n'
)


def status_badge(status: Any) -> Markup:
    """`_macros.html`'s `status`: an item's status as a badge (an item's section draws it in
    Python, so that it imports no macros: each import was a module built and the template's
    file checked again, for each of 1,000 sections)."""
    s = esc(status)
    return Markup(f'<span class="badge {s}">{s}</span>')


def _verdict_class(v: Any) -> str:
    return "pass" if v.passed else "fail" if v.passed == False else ""  # noqa: E712  (Jinja's ==)


def verdict_cell(v: Any) -> Markup:
    """`_macros.html`'s `verdict_cell`: a verdict's value and pass/fail, its error, or `-`
    (the items table draws one per item and evaluator: 7,000 in a LoCoMo report)."""
    return Markup(_cell(v))


def _cell(v: Any) -> str:
    if v is None:
        return '<span class="na">-</span>'
    if v.error:
        return f'<span class="bad" title="{esc(v.error)}">error</span>'
    passed = "" if v.passed is None else (" pass" if v.passed else " fail")
    return f'<span class="{_verdict_class(v)}">{esc(fmt_num(v.value))}{passed}</span>'


def _judge(jf: Mapping[str, Any]) -> str:
    out = ['<div class="scroll"><table class="judge">']
    for k in _JUDGE_KEYS:
        if k in jf:
            out.append(f"<tr><th>{k.replace('_', ' ')}</th><td>{esc(jf[k])}</td></tr>")
    out.append("</table></div>\n")
    votes = jf.get("votes")
    if votes:
        out.append(_VOTES_HEAD)
        for vo in votes:
            passed = vo.get("passed")
            out.append(
                f"<tr><td>{esc(vo.get('round', ''))}</td><td>{esc(vo.get('judge', ''))}</td>"
                f'<td class="num">{esc(fmt_num(vo.get("value")))}</td>'
                f"<td>{'' if passed is None else ('pass' if passed else 'fail')}</td>"
                f'<td class="reason">{esc(vo.get("reason") or vo.get("error") or "")}</td></tr>'
            )
        out.append("</tbody></table></div>")
    if "raw_reply" in jf:
        raw = esc(jf["raw_reply"])
        out.append(f'<details class="raw"><summary>raw reply</summary><pre>{raw}</pre></details>')
    return "".join(out)


def _block(v: ScoreRecord) -> str:
    out = [f'<div class="verdict {_verdict_class(v)}">\n<p><b>{esc(v.evaluator)}</b>: ']
    out.append(_cell(v))
    if v.fallback:
        out.append(' <span class="warn">(neutral stand-in, on_failure: neutral)</span>')
    out.append("</p>\n")
    if v.reason:
        out.append(f'<p class="reason">{esc(v.reason)}</p>')
    if v.error:
        out.append(f'<p class="bad reason">{esc(v.error)}</p>')
    if v.detail or v.raw_reply is not None:  # none for a retrieval measure's (7,000 in LoCoMo)
        jf = judge_fields(v)
        if jf:
            out.append(_judge(jf))
        rest = other_detail(v)
        if rest:
            rows = "".join(f"<tr><th>{esc(k)}</th><td>{esc(t)}</td></tr>" for k, t in rest)
            out.append(
                '<details><summary>detail</summary><div class="scroll"><table>'
                f"{rows}</table></div></details>"
            )
    out.append("</div>")
    return "".join(out)


def verdict_blocks(scores: Sequence[ScoreRecord]) -> Markup:
    """Each verdict's block (evaluator, value, reason, error, the judge's fields, votes and raw
    reply, the rest of its detail), or `No verdict.`."""
    if not scores:
        return Markup('<p class="meta">No verdict.</p>')
    return Markup("".join(_block(v) for v in scores))
