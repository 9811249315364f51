"""The templates, and the filters they format numbers and texts with.

Autoescape is on for every template: a subject, task or evaluator name, a query, a memory
text, an output, a judge's reason or raw reply, a file name is always text, never markup. The
only markup that does not come from a template is an SVG chart (`memgauge.view.charts`), which
escapes every text it draws itself, and the rows of a ranked-hits table (`view.hit_table`, the
template's markup written in Python for speed, escaped as autoescape escapes).

`standalone` pages (a `memgauge report`, `evaluate`'s report.html) inline the stylesheet, load
no script at all and forbid any with a Content-Security-Policy: one file that opens anywhere.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import os
import pickle
import re
from collections.abc import Callable, Collection, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from functools import cache, partial
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, urlencode

from jinja2 import (
    BytecodeCache,
    ChainableUndefined,
    Environment,
    FileSystemBytecodeCache,
    PackageLoader,
    Undefined,
)
from jinja2.bccache import Bucket
from markupsafe import Markup

from memgauge._util.listing import counted
from memgauge.aggregates.ir_facts import IrFacts
from memgauge.aggregates.repeats import RepeatsAggregate
from memgauge.data.environment import memgauge_home
from memgauge.data.facts import IrView
from memgauge.data.records import ItemRecord, RunRecord
from memgauge.errors import UsageError, named_by
from memgauge.metrics.agent import agent_metric_definition
from memgauge.metrics.conventions import DEFAULT_REL_THRESHOLD
from memgauge.report.escape import encodable
from memgauge.report.fmt import (
    fmt_ci,
    fmt_num,
    fmt_p,
    fmt_pct,
    fmt_signed,
)
from memgauge.report.gate import no_baseline_note
from memgauge.report.shapes import Section, cell_text, grid
from memgauge.report.shapes_markdown import run_markdown
from memgauge.runs.hit_texts import HitTexts, hit_texts
from memgauge.view.agent_rows import agent_metric_rows
from memgauge.view.hit_table import hit_table_rows
from memgauge.view.item_rows import item_table_rows
from memgauge.view.pages import (
    duration,
    hit_rows,
    item_row,
    judge_fields,
    other_detail,
    run_page,
    shape_chart,
)
from memgauge.view.verdicts import status_badge, verdict_blocks, verdict_cell

if TYPE_CHECKING:
    from starlette.requests import Request

    from memgauge.store.run_pages import RunReader
    from memgauge.store.url import StoreURL

__all__ = [
    "NAV",
    "PER_PAGE",
    "Pager",
    "environment",
    "inline_css",
    "item_context",
    "page_url",
    "pager",
    "render",
    "render_run_report",
    "report_from_store",
    "root_path",
    "rooted",
    "run_named",
    "run_url",
    "self_url",
    "sent_path",
    "static_bytes",
]

#: the pages in the top bar: (label, path). A new page family is one entry here, one route and
#: one template.
NAV: list[tuple[str, str]] = [
    ("Runs", "/"),
    ("Optimizations", "/optimizations"),
    ("A/B tests and shadow", "/ab"),
    ("Traces", "/traces"),
    ("Watches", "/watch"),
]

MAX_REPORT_ITEMS = 1000  # items written whole into a report (failures first)


def _brief(value: Any, limit: int = 160) -> str:
    """A value on one line, cut at `limit` characters: an input's text, an output, a list."""
    if value is None:
        return ""
    if isinstance(value, Mapping) and set(value) <= {"text", "metadata"} and "text" in value:
        value = value["text"]
    text = ""
    # a retrieval item's output is its 20 hits, of which a cell shows the first two or three:
    # the JSON of the first few without its "]" is the head of the whole JSON, and its
    # whitespace collapsed the head of the whole collapsed (two of LoCoMo's hits fill a cell)
    for head in _HEADS if isinstance(value, list) else ():
        if len(value) <= head or len(text) > limit:
            break
        text = " ".join(_dumps(value[:head])[:-1].split())
    if len(text) <= limit:
        text = " ".join((value if isinstance(value, str) else _dumps(value)).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


_HEADS = (2, 6)  # the members of a long list dumped first: two, then six
#: `json.dumps(value, ensure_ascii=False, default=str)` without making its encoder each call
_dumps = json.JSONEncoder(ensure_ascii=False, default=str).encode


#: a flat mapping's members as `json.dumps(indent=2)` separates them, by the C encoder (the
#: indenting encoder is Python's own: each item's input and expected value of a report is one)
_FLAT = json.JSONEncoder(ensure_ascii=False, separators=(",\n  ", ": "))
_SCALARS = (str, int, float, bool, type(None))


def _pretty(value: Any) -> str:
    """A value in full: a text as it is, anything else as indented JSON."""
    if isinstance(value, str):
        return value
    if isinstance(value, Mapping) and set(value) == {"text"}:
        return str(value["text"])
    if (
        type(value) is dict
        and value
        and all(type(k) is str and type(v) in _SCALARS for k, v in value.items())
    ):
        return "{\n  " + _FLAT.encode(value)[1:-1] + "\n}"
    return json.dumps(value, indent=2, ensure_ascii=False, default=str)


def _ts(value: str | None) -> str:
    return "" if not value else value[:19].replace("T", " ")


#: the path the viewer is served under (`memgauge view --root-path`, behind a proxy), set for
#: each request by `app`; "" at the host's root and in `memgauge report`'s files
ROOT: ContextVar[str] = ContextVar("memgauge_view_root", default="")
_ROOT_PATH = re.compile(r"(/[A-Za-z0-9._~-]+)+")


def root_path(given: str | None) -> str:
    """`--root-path` as the viewer prefixes its URLs with: `/memgauge` for `memgauge/` or
    `/memgauge/`, "" for none or `/`; a UsageError for anything but path segments of letters,
    digits and `._~-` (what a proxy's location holds, nothing a URL would need to escape)."""
    root = "/" + (given or "").strip().strip("/")
    if root == "/":
        return ""
    if not _ROOT_PATH.fullmatch(root) or any(s in (".", "..") for s in root.split("/")):
        raise UsageError(
            f"--root-path {given!r}: give the path the proxy serves the viewer under, e.g."
            " /memgauge (segments of letters, digits and ._~-)"
        )
    return root


def rooted(path: str) -> str:
    """A viewer path (`/runs/...`) as the browser asks for it: under the root path."""
    return ROOT.get() + path if path.startswith("/") else path


def sent_path(request: Request) -> str:
    """The request's path as the client sent it, escapes kept (ASGI's `raw_path`; the decoded
    path where the server gives none)."""
    raw = request.scope.get("raw_path")
    return raw.decode("latin-1") if raw else str(request.scope["path"])


def self_url(request: Request) -> str:
    """The URL of the page asked for, as a page links itself (a live page's refresh)."""
    query = request.url.query
    return rooted(sent_path(request) + (f"?{query}" if query else ""))


def page_url(path: str, /, **params: Any) -> str:
    """`path` with `params` (empty ones left out) as its query string."""
    query = {k: v for k, v in params.items() if v not in (None, "", False)}
    return path + ("?" + urlencode(query) if query else "")


def run_url(run_id: str, page: str = "", /, **params: Any) -> str:
    """The viewer's URL of run `run_id`'s `page` ("" its page, "items", "item") with
    `params`. The id is one path segment with every character but letters, digits and `_.-~`
    quoted: a stored id may hold a space, `/`, `?`, `#` or `%` (one an older memgauge
    imported), and the viewer reads it back from the path as sent (`app.run_path`)."""
    return page_url("/runs/" + quote(run_id, safe="") + (f"/{page}" if page else ""), **params)


def _link(path: str, /, **params: Any) -> str:
    return rooted(page_url(path, **params))


def _run_link(run_id: str, page: str = "", /, **params: Any) -> str:
    return rooted(run_url(run_id, page, **params))


@dataclass(frozen=True)
class Pager:
    """One page of a paged table (`_macros.html`'s `pager` draws it): its number, how many
    pages and rows, its first and last row's numbers, and the URL of any page."""

    page: int
    pages: int
    total: int
    first: int
    last: int
    url: Callable[[int], str]


#: the rows a paged view (items, runs' candidates, traces) shows at once
PER_PAGE = 50


def pager(
    path: str, params: Mapping[str, Any], page: int, size: int, total: int, shown: int
) -> Pager:
    """Page `page` of `total` rows, `size` a page and `shown` on this one; its pages' URLs are
    `path` with `params` and the page's number."""

    def url(n: int) -> str:
        return rooted(page_url(path, **params, page=n))

    first = (page - 1) * size + 1
    return Pager(page, max(1, math.ceil(total / size)), total, first, first + shown - 1, url)


def _evaluators(rows: Sequence[Any]) -> list[str]:
    return list(dict.fromkeys(s.evaluator for r in rows for s in r.scores))


def _verdict(row: Any, evaluator: str) -> Any:
    return next((s for s in row.scores if s.evaluator == evaluator), None)


def _missing_is_none(f: Callable[..., str]) -> Callable[..., str]:
    """A number filter that reads a missing value (a key an older run did not record) as
    None: n/a, never an error page."""

    def wrapped(value: Any, *args: Any) -> str:
        # called for every number of a report (tens of thousands): no generator when no
        # argument is missing
        if isinstance(value, Undefined):
            value = None
        if args and any(isinstance(v, Undefined) for v in args):
            args = tuple(None if isinstance(v, Undefined) else v for v in args)
        return f(value, *args)

    return wrapped


class _KeptTemplates(FileSystemBytecodeCache):
    """The templates' compiled code kept between processes (Jinja's own file cache: a file
    per template, written whole then renamed, used only while the template's source is the one
    it was compiled from). A cache that cannot be read or written is passed over: the template
    is compiled, as without one."""

    def load_bytecode(self, bucket: Bucket) -> None:
        try:
            super().load_bytecode(bucket)
        except (OSError, EOFError, pickle.UnpicklingError, ValueError, TypeError):
            # a file Jinja cannot read (cut short after its header: its pickle raises where
            # its marshal is a miss) is compiled again, and the file written anew
            bucket.reset()

    def dump_bytecode(self, bucket: Bucket) -> None:
        with contextlib.suppress(OSError):
            super().dump_bytecode(bucket)


def _compiled_with(env: Environment) -> str:
    """What a template's compiled code depends on besides its source, which Jinja's cache
    checks alone: Jinja, the syntax and whitespace settings, autoescape, and the
    filters and tests (a name is resolved, and its taking the context decided, when the
    template is compiled). A home kept across a change of any of them compiles anew."""
    import jinja2.compiler

    # Jinja itself as its code generator's file (an upgrade replaces it): its `__version__`
    # is on its way out, as MarkupSafe's was, and reading its metadata costs 20 ms
    made_by = os.stat(jinja2.compiler.__file__)
    settings = [
        f"{made_by.st_size}:{made_by.st_mtime_ns}",
        *(
            repr(getattr(env, k))
            for k in (
                "block_start_string",
                "block_end_string",
                "variable_start_string",
                "variable_end_string",
                "comment_start_string",
                "comment_end_string",
                "line_statement_prefix",
                "line_comment_prefix",
                "trim_blocks",
                "lstrip_blocks",
                "newline_sequence",
                "keep_trailing_newline",
                "autoescape",
                "optimized",
                "is_async",
            )
        ),
        *sorted(env.extensions),
        *(
            f"{kind}:{name}:{getattr(f, 'jinja_pass_arg', None)}"
            for kind, table in (("filter", env.filters), ("test", env.tests))
            for name, f in sorted(table.items())
        ),
    ]
    return hashlib.sha1("\n".join(settings).encode(), usedforsecurity=False).hexdigest()[:16]


def _template_cache(env: Environment) -> BytecodeCache | None:
    """`MEMGAUGE_HOME/templates`: loading a report's templates compiled costs a fifth of
    compiling them (BENCHMARKS.md, evalcpu6); none when the folder cannot be made, or there
    is no home to make it in. A file's name carries `_compiled_with(env)`, so code compiled
    under other settings is not read."""
    try:
        directory = memgauge_home() / "templates"
        directory.mkdir(parents=True, exist_ok=True)
    except (OSError, RuntimeError, UsageError):  # RuntimeError: no home directory to find;
        return None  # UsageError: a home that is a file (the command that needs it says so)
    return _KeptTemplates(str(directory), pattern=f"{_compiled_with(env)}-%s.cache")


@cache
def environment() -> Environment:
    """The one template environment: autoescape on; a key a stored record lacks (an older
    run's) is empty, not an error."""
    env = Environment(
        loader=PackageLoader("memgauge.view", "templates"),
        autoescape=True,
        undefined=ChainableUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(
        num=_missing_is_none(fmt_num),
        pct=_missing_is_none(fmt_pct),
        p=_missing_is_none(fmt_p),
        signed=_missing_is_none(fmt_signed),
        brief=_brief,
        counted=counted,
        pretty=_pretty,
        ts=_ts,
        cell=cell_text,
    )
    env.globals.update(
        ci=_missing_is_none(fmt_ci),
        # a link's URL under the root path: a path built in Python reaches a page through `url`
        url=_link,
        run_url=_run_link,
        nav=NAV,
        grid=grid,
        shape_chart=shape_chart,
        agent_definition=agent_metric_definition,
        judge_fields=judge_fields,
        evaluators=_evaluators,
        verdict=_verdict,
        gate_note=no_baseline_note,
        other_detail=other_detail,
        hit_table_rows=hit_table_rows,
        agent_metric_rows=agent_metric_rows,
        verdict_blocks=verdict_blocks,
        verdict_cell=verdict_cell,
        status_badge=status_badge,
        item_table_rows=partial(item_table_rows, brief=_brief),
        live=False,
        keep_forms=False,
        standalone=False,
        self_url="",
    )
    env.bytecode_cache = _template_cache(env)
    return env


def static_bytes(name: str) -> bytes:
    """A file shipped in `memgauge/view/static`."""
    return resources.files("memgauge.view").joinpath("static", name).read_bytes()


def inline_css(css: str) -> Markup:
    """A stylesheet as the text of a `<style>` element. Not HTML-escaped: a `<style>`
    element's text is raw, entities in it are not decoded, so `"Segoe UI"` escaped to
    `&#34;Segoe UI&#34;` voids the rule that sets the page's font. Instead every `</` is
    written `<\\/`, which is the same text in the only places CSS allows it (a string, a
    comment), so nothing in it can end the element. Only memgauge's own stylesheet goes here,
    never user data."""
    return Markup(css.replace("</", "<\\/"))


def run_named(reader: RunReader, given: str) -> str:
    """The run `given` names: its whole id, or the first characters of only one run's id (a
    page's URL may carry either); a 404 otherwise."""
    from starlette.exceptions import HTTPException  # the viewer's only: not `memgauge report`'s

    found = reader.find_run_ids(given)
    if given in found:
        return given
    if len(found) == 1:
        return found[0]
    raise HTTPException(404, f"no run {given!r} in this store")


def render(template: str, **context: Any) -> str:
    """One page; a lone surrogate of a stored value shown as U+FFFD (what a UTF-8 decoder
    shows for bytes it cannot read), so that every page, the viewer's and `memgauge report`'s
    alike, encodes."""
    html = environment().get_template(template).render(**context)
    return encodable(html)


def _rel_threshold(run: RunRecord, task: str | None = None) -> int:
    """The relevance threshold the run's ir aggregate (of `task`) scored with; the default
    one where it has none, as a retrieval evaluator's default then scored."""
    agg = run.summary.aggregate("ir", task) if run.summary else None
    facts = agg.facts_as(IrFacts) if agg else None
    return facts.settings.rel_threshold if facts is not None else DEFAULT_REL_THRESHOLD


def item_context(
    run: RunRecord,
    it: ItemRecord,
    query: Mapping[str, Any] | None = None,
    *,
    queries: _Queries | None = None,
    repeats: Sequence[ItemRecord] = (),
    texts: HitTexts | None = None,
) -> dict[str, Any]:
    """What `_item_detail.html` needs of one item: its hits (a retrieval item) and the
    relevant memories it did not retrieve; with `repeats` (every repeat of the item, in
    order: `repeat: N`), `p`, the section of its spread across them. `query`: the ir aggregate's record of its query
    where the caller has read it (`RunReader.query_detail`; `run` may then hold only its
    headline); `queries`: `_queries(run)`, for a caller that draws many items of the run;
    else it is found in `run`'s summary. `texts`: `hit_texts(run)`, for a caller that draws
    many items of the run: the texts of the hits the store kept without theirs."""
    texts = hit_texts(run) if texts is None else texts
    it = texts.fill(it)
    threshold = _rel_threshold(run, it.task)
    hits = hit_rows(it, threshold)
    missing: list[str] = []
    if hits is not None and isinstance(it.expected, Mapping):
        found = {h["id"] for h in hits}
        missing = [
            str(k)
            for k, g in it.expected.items()
            if isinstance(g, int) and g >= threshold and k not in found
        ]
    return {
        "it": it,
        "hits": hits,
        "missing": missing,
        "hit_note": texts.note(it.task) if hits and any(h["text"] is None for h in hits) else None,
        "rel_threshold": threshold,
        "query": dict(query)
        if query is not None
        else dict((_queries(run) if queries is None else queries).get(_key(it), {})),
        "p": {"sections": _spread(it, repeats)},
    }


def _spread(it: ItemRecord, repeats: Sequence[ItemRecord]) -> list[Section]:
    """The item's spread across its repeats, as a section `_shapes.html` draws."""
    if len(repeats) < 2:
        return []
    agg = RepeatsAggregate()
    labels = list(dict.fromkeys(s.evaluator for r in repeats for s in r.scores))
    entry = agg.item_entry(it.source_id, repeats, labels)
    return [Section(agg.name, it.task, "Repeats", [agg.spread_table(it.subject, entry)])]


#: (task, subject, query id) -> the ir aggregate's view of that query
_Queries = Mapping[tuple[str, str, Any], Mapping[str, Any]]


def _key(it: ItemRecord) -> tuple[str, str, Any]:
    return (it.task, it.subject, it.item_id)


def _queries(run: RunRecord, fields: set[str] | None = None) -> _Queries:
    """The ir aggregates' view of each query (its agent-metric values, its judgments'
    channels, its ranking before query expansion), read once for every item of a report
    (one scan per item was a quarter of a LoCoMo report's rendering); the first one found
    for a key, as a search item by item finds it. `fields`: only these of each record."""
    out: dict[tuple[str, str, Any], Mapping[str, Any]] = {}
    for agg in run.summary.aggregates if run.summary else ():
        if agg.aggregate != "ir":
            continue
        facts = agg.facts_as(IrView)
        for system in facts.systems if facts is not None else ():
            for q in system.per_query:
                key = (agg.task, system.name, q.query_id)
                if key not in out:
                    out[key] = q.model_dump(mode="json", include=fields)
    return out


#: what `_item_detail.html` reads of a query (a query's whole record, its metrics, hits and
#: channels, dumped for each of 1,536 queries was most of `_queries`)
_DRAWN = {"agent_metrics", "relevant_channels", "pre_expansion"}


def render_run_report(
    run: RunRecord,
    items: Sequence[ItemRecord],
    *,
    subjects: Mapping[str, Any] | None = None,
    tasks: Sequence[Mapping[str, Any]] | None = None,
    usage: Mapping[str, Mapping[str, int]] | None = None,
    history: Sequence[RunRecord] = (),
    failures: Sequence[Mapping[str, Any]] = (),
    excluded: Collection[str] = (),
    verdict: str | None = None,
) -> str:
    """A run as one self-contained HTML file: the run page, then its items (failures first,
    up to `MAX_REPORT_ITEMS`, each with its verdicts, reasons and raw replies). `history`:
    the suite's earlier completed runs, `excluded` those that failed the gate (not accepted):
    the gate's rolling baseline; `verdict`: what `memgauge gate` recorded for the run."""
    if subjects is None:
        subjects = dict(run.suite.get("subjects") or {})
    if tasks is None:
        datasets = run.provenance.get("datasets") or {}
        tasks = [
            {
                "task": t.get("name"),
                "kind": t.get("kind"),
                "dataset": t.get("dataset"),
                "dataset_sha256": datasets.get(t.get("name")),
                # the dataset's items: one record per subject and repeat of each
                "n_items": len(
                    {it.item_id for it in items if it.task == t.get("name") and it.repeat == 0}
                ),
            }
            for t in run.suite.get("tasks", [])
        ]
    page = run_page(
        run,
        items=lambda: items,
        usage=lambda: usage or {},
        subjects=subjects,
        tasks=tasks,
        history=lambda: history,
        failures=failures,
        excluded=lambda: excluded,
        verdict=verdict,
    )

    def failing(it: ItemRecord) -> bool:
        return it.status == "failed" or any(s.error or s.passed is False for s in it.scores)

    chosen = sorted(items, key=lambda it: not failing(it))[:MAX_REPORT_ITEMS]
    queries = _queries(run, _DRAWN)
    texts = hit_texts(run)
    threshold = _rel_threshold(run)
    # each item's section drawn on its own, as `item.html` includes it (an include inside
    # the report's loop copied the whole page's context for each of 1,000 items)
    detail = environment().get_template("_item_detail.html")
    sections = [
        Markup(
            detail.render(
                {**item_context(run, it, queries=queries, texts=texts), "rel_threshold": threshold}
            )
        )
        for it in chosen
    ]
    return render(
        "run.html",
        p=page,
        standalone=True,
        css=inline_css(static_bytes("style.css").decode()),
        duration=duration(run.started_at or run.created_at, run.finished_at),
        rows=[item_row(it) for it in chosen],
        details=chosen,
        it_html=sections,
        rel_threshold=threshold,
        n_items=len(items),
    )


def report_from_store(
    store: str | Path | StoreURL, run_id: str, *, markdown: bool = False
) -> tuple[str, str]:
    """The run `run_id` (or the first characters of its id) of the store at `store`, opened
    read-only, as one self-contained HTML file (or Markdown): (the whole run id, the text)."""
    from memgauge.store.run_pages import RunReader  # a store read only for a report

    with RunReader(store) as reader:
        found = reader.find_run_ids(run_id)
        exact = named_by(
            run_id,
            found,
            none=f"no run {run_id!r} in {store}; see `memgauge runs list`",
            several=f"{run_id!r} matches {len(found)} runs ({', '.join(found[:5])}); type more",
        )
        run = reader.get_run(exact)
        assert run is not None
        if markdown:
            return exact, run_markdown(run)
        html = render_run_report(
            run,
            reader.item_records(exact),
            subjects=reader.subjects(exact),
            tasks=reader.tasks(exact),
            usage=reader.usage(exact),
            history=reader.suite_history(run.suite_name, headline=True, before=run),
            failures=reader.run_failures(exact),
            excluded=reader.failed_gates(run.suite_name),
            verdict=reader.gate_verdict(exact),
        )
    return exact, html
