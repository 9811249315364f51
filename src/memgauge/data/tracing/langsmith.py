"""LangSmith runs exported as JSON (`Client.list_runs` / the REST API's run schema, one run a
line, a list, `{"runs": [...]}`, or a run tree with `child_runs`) as trace `Span`s.

The fields read, from LangSmith's run schema: `id`, `name`, `run_type` (`llm`, `chain`,
`tool`, `retriever`, `embedding`, `prompt`, `parser`), `parent_run_id` (or the nesting of
`child_runs`), `trace_id` (the root run's id), `start_time` / `end_time` (ISO 8601), `inputs`,
`outputs`, `error`, `tags`, `prompt_tokens` / `completion_tokens` / `total_tokens` (else the
`usage_metadata` a run tree holds, `input_tokens` / `output_tokens` / `total_tokens` in its
`outputs` or `extra.metadata`, where LangSmith documents them) and `extra`
(`metadata.session_id`, `thread_id` or `conversation_id`: the thread, LangSmith's grouping of a
conversation's traces; `invocation_params.model`, `metadata.ls_model_name`). An LLM run's
output is its `generations`' first text (LangChain) or its `choices`' first message's content
(OpenAI's completion, as LangSmith's `@traceable` LLM runs log it), else its outputs whole. A run's own
`session_id` is its tracing project, not a conversation, and is not read as one.

A retriever run's query is `inputs.query` (or `input`, `question`), its documents
`outputs.documents` (LangChain's retrievers) or `outputs.output` (the list a function under
`@traceable(run_type="retriever")` returned), LangChain `Document`s whose id is `id` or
`metadata.id`; a tool run's
arguments are `inputs.input` (or `inputs`), its result `outputs.output` (or `outputs`).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

from memgauge.data.importers.common import ImportReport, json_type
from memgauge.data.importers.otel import ENDS_BEFORE_START, SpanError, span_times
from memgauge.data.importers.spans import DroppedSpanError
from memgauge.data.tracing.model import (
    LLMCall,
    Retrieval,
    Span,
    SpanKind,
    ToolCall,
    as_text,
    token_count,
)

__all__ = ["is_langsmith", "runs_of", "span_of_run"]

_KINDS: dict[str, SpanKind] = {
    "llm": "LLM",
    "retriever": "RETRIEVER",
    "tool": "TOOL",
    "chain": "CHAIN",
    "embedding": "EMBEDDING",
    "prompt": "CHAIN",  # a prompt template or an output parser: a step of a chain
    "parser": "CHAIN",
}
_THREAD = ("session_id", "thread_id", "conversation_id")
#: LangSmith's `usage_metadata` names of the run's token counts
_USAGE = {
    "prompt_tokens": "input_tokens",
    "completion_tokens": "output_tokens",
    "total_tokens": "total_tokens",
}


def _run_like(value: Any) -> bool:
    return isinstance(value, dict) and "run_type" in value


def is_langsmith(value: Any) -> bool:
    """Whether a file's first JSON value is LangSmith's: a run, a list of runs, `{"runs"}`."""
    if isinstance(value, dict) and isinstance(value.get("runs"), list):
        return True
    if isinstance(value, list):
        return bool(value) and _run_like(value[0])
    return _run_like(value)


def runs_of(
    value: Any, where: str, parent: str | None = None
) -> Iterator[tuple[str, dict[str, Any], str | None]]:
    """(path, run, parent id from the nesting) of every run under `value`, children after
    their parent. Raises SpanError for a run that is not an object."""
    if isinstance(value, dict) and isinstance(value.get("runs"), list) and "run_type" not in value:
        yield from runs_of(value["runs"], f"{where}runs.", parent)
        return
    many = value if isinstance(value, list) else [value]
    for i, run in enumerate(many):
        path = f"{where}{i}" if isinstance(value, list) else where.rstrip(".")
        if not isinstance(run, dict):
            raise SpanError(path, f"a run must be an object, got {json_type(run)}")
        yield path, run, parent
        children = run.get("child_runs")
        if children:
            if not isinstance(children, list):
                raise SpanError(f"{path}.child_runs", "must be a list of runs")
            own = run.get("id")
            yield from runs_of(children, f"{path}.child_runs.", None if own is None else str(own))


def _get(value: Any, *path: str) -> Any:
    for key in path:
        if not isinstance(value, dict):
            return None
        value = value.get(key)
    return value


def _count(run: dict[str, Any], key: str, report: ImportReport) -> int | None:
    value = run.get(key)
    if value is None:
        value = _get(run, "outputs", "llm_output", "token_usage", key)
    for where in ("outputs", "extra.metadata"):  # a run tree as @traceable leaves it
        if value is None:
            value = _get(run, *where.split("."), "usage_metadata", _USAGE[key])
    return token_count(value, report)


def _llm(run: dict[str, Any], span_id: str, report: ImportReport) -> LLMCall:
    model = (
        _get(run, "extra", "invocation_params", "model")
        or _get(run, "extra", "invocation_params", "model_name")
        or _get(run, "extra", "metadata", "ls_model_name")
        or _get(run, "outputs", "llm_output", "model_name")
    )
    if model is None:
        report.add("llm_spans_without_model")
    counts = {f"{k}_tokens": _count(run, f"{k}_tokens", report) for k in ("prompt", "completion")}
    total = _count(run, "total_tokens", report)
    if total is None and all(v is None for v in counts.values()):
        report.add("llm_spans_without_token_counts")
    generation = _get(run, "outputs", "generations")
    while isinstance(generation, list) and generation:
        generation = generation[0]  # [[Generation]] for a completion, [Generation] for a chat
    choices = _get(run, "outputs", "choices")  # OpenAI's completion, as @traceable logs it
    choice = choices[0] if isinstance(choices, list) and choices else None
    text = (
        _get(generation, "text")
        or _get(generation, "message", "kwargs", "content")
        or _get(choice, "message", "content")
    )
    return LLMCall(
        span_id=span_id,
        model=None if model is None else str(model),
        total_tokens=total,
        output=str(text) if text else as_text(_get(run, "outputs")),
        error=_error(run),
        **counts,
    )


def _retrieval(run: dict[str, Any], span_id: str, report: ImportReport) -> Retrieval:
    given = run.get("inputs")
    inputs: dict[str, Any] = given if isinstance(given, dict) else {}
    query = next((inputs[k] for k in ("query", "input", "question") if inputs.get(k)), None)
    if not isinstance(query, str):
        raise DroppedSpanError(
            "retriever_spans_without_query_dropped",
            "inputs.query",
            "a retriever run needs its query (a non-empty string)",
        )
    outputs = run.get("outputs")
    field, docs = "outputs.documents", _get(outputs, "documents")
    if docs is None:  # `@traceable(run_type="retriever")` wraps the returned list
        docs = _unwrap(outputs, "output")
        field = "outputs" if docs is outputs else "outputs.output"  # the field read
    if not isinstance(docs, list):
        raise DroppedSpanError(
            "retriever_spans_documents_not_a_list_dropped",
            field,
            f"is {json_type(docs)}, not a list of documents",
        )
    if any(not isinstance(d, dict) for d in docs):
        raise DroppedSpanError(
            "retriever_spans_documents_not_objects_dropped",
            field,
            "holds something other than document objects",
        )
    ids: list[str] = []
    scores: list[float | None] = []
    for doc in docs:
        raw_id = doc.get("id") or _get(doc, "metadata", "id")
        if raw_id is None or isinstance(raw_id, bool) or not isinstance(raw_id, str | int):
            report.add("documents_without_id_dropped")
            continue
        score = _get(doc, "metadata", "score")
        ok = isinstance(score, int | float) and not isinstance(score, bool) and math.isfinite(score)
        ids.append(str(raw_id))
        scores.append(float(score) if ok else None)
    report.add("documents", len(ids))
    return Retrieval(
        span_id=span_id,
        query=query,
        result_ids=ids,
        scores=scores,
        latency_ms=span_times(run).latency_ms,
    )


def _error(run: dict[str, Any]) -> str | None:
    error = run.get("error")
    if error in (None, ""):
        return "error" if run.get("status") == "error" else None
    return str(error)


def _unwrap(value: Any, key: str) -> Any:
    """`{"input": x}` as x: how LangSmith wraps a single value."""
    return value[key] if isinstance(value, dict) and set(value) == {key} else value


def span_of_run(
    run: dict[str, Any], parent: str | None, trace_of: dict[str, str], report: ImportReport
) -> tuple[Span, DroppedSpanError | None]:
    """The span of one run; `trace_of` maps run ids to their trace (filled as runs are read,
    parents first). Why its search could not be read, for a retriever run that cannot be."""
    run_id = run.get("id")
    if run_id in (None, ""):
        raise SpanError("id", "a run needs its id")
    span_id = str(run_id)
    parent_id = run.get("parent_run_id") or parent
    parent_id = None if parent_id is None else str(parent_id)
    run_type = run.get("run_type")
    kind = _KINDS.get(str(run_type).lower()) if run_type is not None else None
    if kind is None:
        report.add("runs_of_unknown_type")
        kind = "UNKNOWN"
    trace_id = run.get("trace_id") or (trace_of.get(parent_id) if parent_id else None) or span_id
    trace_of[span_id] = str(trace_id)
    thread = next(
        (str(v) for k in _THREAD if (v := _get(run, "extra", "metadata", k)) not in (None, "")),
        None,
    )
    tags = run.get("tags")
    times = span_times(run)
    if times.backwards:
        report.add(ENDS_BEFORE_START)
    dropped: DroppedSpanError | None = None
    retrieval = tool = llm = None
    if kind == "RETRIEVER":
        try:
            retrieval = _retrieval(run, span_id, report)
        except DroppedSpanError as why:
            dropped = why
    elif kind == "TOOL":
        tool = ToolCall(
            span_id=span_id,
            name=None if run.get("name") is None else str(run["name"]),
            arguments=_unwrap(run.get("inputs"), "input"),
            result=_unwrap(run.get("outputs"), "output"),
            error=_error(run),
        )
        if tool.name is None:
            report.add("tool_spans_without_name")
    elif kind == "LLM":
        llm = _llm(run, span_id, report)
    span = Span(
        span_id=span_id,
        trace_id=str(trace_id),
        parent_id=parent_id,
        kind=kind,
        name=None if run.get("name") is None else str(run["name"]),
        session_id=thread,
        start_ns=times.start_ns,
        end_ns=times.end_ns,
        input=run.get("inputs"),
        output=run.get("outputs"),
        tags=[str(t) for t in tags] if isinstance(tags, list) else [],
        error=_error(run),
        retrieval=retrieval,
        tool_call=tool,
        llm_call=llm,
    )
    return span, dropped
