"""What production feeds back: sequential A/B tests, shadow runs, and the query log (retention,
judgments from feedback, the golden set, annotation, re-searches)."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from memgauge._util.files import atomic_write_text
from memgauge._util.listing import counted
from memgauge._util.numbers import ALPHA, BETA
from memgauge.api._store import Location, Where, require_store, results_store
from memgauge.data.importers import ImportReport
from memgauge.data.importers.spans import SpanSearch, read_spans
from memgauge.data.io import load_memories_file
from memgauge.data.jsonio import read_records, records_text
from memgauge.data.models import Memory
from memgauge.errors import (
    EmptyMemoryError,
    MemgaugeError,
    SubjectError,
    UsageError,
    argument,
    check_name,
    check_path,
)
from memgauge.online import ab
from memgauge.online.annotations import import_graded
from memgauge.online.querylog import QueryLog
from memgauge.online.shadow import summarize_by_intent, summarize_shadow
from memgauge.stats.sequential import DEFAULT_BOUNDS, DEFAULT_GRADUATION, PROB_THRESHOLD, SPRTState
from memgauge.stats.sprt_rates import BoundsRate, bounds_rates, rates_markdown
from memgauge.store.ab_tests import ABTestStore
from memgauge.store.querylog import annotation_pool
from memgauge.store.shadow import ShadowStore
from memgauge.subjects.parse import one_spec
from memgauge.subjects.protocol import close_subject
from memgauge.subjects.registry import build_subject

__all__ = [
    "ab_test_reports",
    "add_ab_pairs",
    "create_ab_test",
    "detect_re_searches",
    "dump_memories",
    "export_golden_set",
    "import_graded",
    "import_spans",
    "pause_ab_test",
    "shadow_summaries",
    "simulate_sprt_bounds",
    "write_annotation_pool",
]


def create_ab_test(
    name: str,
    *,
    delta: float,
    metric: str = "MRR",
    alpha: float = ALPHA,
    beta: float = BETA,
    min_samples: int = DEFAULT_GRADUATION.min_samples,
    improvement: float = DEFAULT_GRADUATION.improvement,
    max_latency_increase: float = DEFAULT_GRADUATION.max_latency_increase,
    rule: str = "sprt",
    prob_threshold: float = PROB_THRESHOLD,
    allow_unmeasured: bool = False,
    bounds: str = DEFAULT_BOUNDS,
    store: Where = None,
) -> bool:
    """Start A/B test `name` in the results store: an SPRT for a mean paired difference of
    `delta` (at `alpha`, `beta`), graduating past `min_samples` pairs with an `improvement` and
    p95 latency up by at most `max_latency_increase`. `rule` "beta-binomial" decides a binary
    metric by P(T > C) > `prob_threshold` instead of the SPRT. A test with a guardrail
    unmeasured (no latency or constitutional data) is not graduated unless
    `allow_unmeasured`. `bounds`: the SPRT's stopping bounds, "ville" (log(1/alpha),
    log(beta)) or "wald" (seed 002's log((1-beta)/alpha), log(beta/(1-alpha)));
    `stats.sequential` says why Ville's are the default. Whether it started one: a test of
    that name with these settings is kept (False), one with others refused (UsageError)."""
    check_name("name", name)
    if not name.strip():
        raise UsageError("an A/B test needs a name")
    config = {
        "delta": delta,
        "alpha": alpha,
        "beta": beta,
        "min_samples": min_samples,
        "improvement": improvement,
        "max_latency_increase": max_latency_increase,
        "rule": rule,
        "prob_threshold": prob_threshold,
        "allow_unmeasured": allow_unmeasured,
        "bounds": bounds,
    }
    ab.check_settings(config)  # before the store is opened (or made)
    with ABTestStore(results_store(store)) as opened:
        return ab.create_test(opened, name, metric, config)


def add_ab_pairs(
    name: str, pairs_file: str | Path, *, store: Where = None
) -> tuple[int, int, SPRTState, dict[str, Any]]:
    """Feed test `name` the paired results of `pairs_file` (JSONL of `online.ab.Pair`), each
    once: (pairs added, pairs skipped because the test already holds them or the file repeats
    them, the SPRT's state after them, the test's report as `ab_test_reports` gives it). A
    pair is its query id and its values (`online.ab.pair_key`): adding a file again adds
    nothing."""
    check_path("pairs_file", pairs_file)
    pairs = read_records(pairs_file, ab.Pair)
    with ABTestStore(results_store(store)) as opened:
        added, state, report = ab.add_pairs(opened, name, pairs)
    return added, len(pairs) - added, state, report


def pause_ab_test(name: str, *, paused: bool = True, store: Where = None) -> str:
    """Pause test `name` (or resume it, `paused=False`); its status now."""
    with ABTestStore(results_store(store)) as opened:
        return ab.set_paused(opened, name, paused)


def ab_test_reports(name: str | None = None, *, store: Where = None) -> list[dict[str, Any]]:
    """Every test's state and decision (or only `name`'s), from an existing store."""
    with ABTestStore(results_store(store), read_only=True) as opened:
        names = [name] if name else opened.names()
        if name and opened.get(name) is None:
            raise UsageError(f"no A/B test {name!r}")
        return [ab.ab_report(opened, n) for n in names]


def shadow_summaries(
    experiment: str | None = None, *, store: Where = None, by: Literal["intent"] | None = None
) -> dict[str, dict[str, Any]]:
    """Per shadow experiment (or only `experiment`): queries compared, the classes of change,
    rank agreement, judged metric deltas, p95 latencies, treatment errors and the shadowed
    queries a full queue dropped (`n_dropped`). `by="intent"` adds `by_intent`, the same
    numbers per intent the queries were recorded with (seed 002's per-intent error breakdown;
    `online.shadow.summarize_by_intent`). Each
    experiment's seed 002 `eval_results` row (run_type shadow) is brought up to date too."""
    with ShadowStore(require_store(store)) as opened:
        names = [experiment] if experiment else opened.experiments()
        if experiment and experiment not in opened.experiments():
            raise UsageError(f"no shadow runs of {experiment!r}")
        out = {
            n: {
                **summarize_shadow(opened.shadow_rows(n)),
                "n_errors": opened.shadow_errors(n),
                "n_dropped": opened.shadow_dropped(n),
            }
            for n in names
        }
        if by == "intent":
            for n in names:
                out[n]["by_intent"] = summarize_by_intent(
                    opened.shadow_rows(n), opened.shadow_errors_by_intent(n)
                )
        for n in names:
            opened.project(n)
    return out


def write_annotation_pool(
    db: Location,
    out_path: Path,
    *,
    k: int = 20,
    system: str | None = None,
    memories_file: Path | None = None,
) -> tuple[int, int]:
    """Write the harvested queries of query log `db` with their pooled top-`k` results to
    `out_path` (JSONL) for people to grade 0-3; (queries, candidates) written.

    With `system` (as `evaluate -s` takes it), each query is searched again there (seed 002
    section 2.1 phase B: re-run the search, capture the top 20) and its results lead the
    candidates, the logged ones not among them following (pooling); each candidate carries the
    memory's `text` for the annotator: from the search, else from `memories_file` (JSONL of
    Memory), else from the system's dump. With `memories_file` the system is first filled with
    those memories (an offline copy, as `evaluate` does); without, the live system is only
    searched. A memory whose text is known nowhere has `text: null`."""
    pool = annotation_pool(db, k=k)
    texts: dict[str, str] = {}
    if memories_file is not None:
        texts = {m.id: m.text for m in load_memories_file(memories_file)}
    if system is not None:
        _rerun(pool, system, k, texts, memories_file is not None)
    elif texts:
        for p in pool:
            for c in p["candidates"]:
                c["text"] = texts.get(c["memory_id"])
    atomic_write_text(out_path, records_text(out_path, [json.dumps(p) for p in pool]))
    return len(pool), sum(len(p["candidates"]) for p in pool)


def _rerun(
    pool: list[dict[str, Any]], system: str, k: int, texts: dict[str, str], fill: bool
) -> None:
    """Search each pooled query again on `system`; its top `k` lead the candidates."""
    from memgauge.runs.work import fill_memory

    subject = build_subject(one_spec(system, argument("system")))
    try:
        if fill:
            fill_memory(subject, [Memory(id=i, text=t) for i, t in texts.items()])
        for p in pool:
            try:
                hits = list(subject.search(p["query"], k).hits)[:k]
            except MemgaugeError:
                raise
            except Exception as exc:
                raise SubjectError(
                    f"{argument('system', system)}: search for {p['query_id']} failed:"
                    f" {type(exc).__name__}: {exc}"
                ) from None
            for h in hits:
                if h.text:
                    texts.setdefault(str(h.id), h.text)
            logged = [c["memory_id"] for c in p["candidates"]]
            order = [str(h.id) for h in hits] + [
                m for m in logged if m not in {str(h.id) for h in hits}
            ]
            p["candidates"] = [{"memory_id": m, "grade": None} for m in order]
            p["searched_top"] = len(hits)
        if pool and not any(p["searched_top"] for p in pool):
            _found_nothing(subject, system, len(pool))
        if any(c["memory_id"] not in texts for p in pool for c in p["candidates"]):
            with contextlib.suppress(Exception):  # a system without dump: texts stay unknown
                texts.update({m.id: m.text for m in subject.dump() if m.id not in texts})
    finally:
        close_subject(subject)
    for p in pool:
        for c in p["candidates"]:
            c["text"] = texts.get(c["memory_id"])


def _found_nothing(subject: Any, system: str, n: int) -> None:
    """EmptyMemoryError when no search of the pool's `n` queries found anything and the
    system holds nothing: its count or dump lists no memory, or (neither available) `n` is
    at least the MIN_SEARCHES that make an empty memory of a run. A pool led by nothing of
    the system's is not what was asked for: nothing is written."""
    from memgauge.runs.hollow import MIN_SEARCHES
    from memgauge.subjects.events import capabilities_of

    held: int | None = None
    count = getattr(subject, "count_stored", None)
    with contextlib.suppress(Exception):  # what cannot be counted is judged by the searches
        if callable(count):
            held = count()
        elif capabilities_of(subject).dump:
            held = len(subject.dump())
    if held == 0 or (held is None and n >= MIN_SEARCHES):
        whose = counted(n, "query's", "queries'")
        raise EmptyMemoryError(
            f"{argument('system', system)}: none of the {whose} searches found anything"
            f"{', and it holds no memory' if held == 0 else ''}: give"
            f" {argument('memories_file', 'FILE', flag='--memories')} to "
            "fill it with the memories "
            "(an offline copy), or point it at the live system as it stands (a mem0 spec "
            "names the application's user_id; without one it reads a new, empty user)"
        )


def detect_re_searches(db: Location, *, threshold: float = 0.8, window_s: float = 300.0) -> int:
    """Record the re-searches of query log `db` (a query followed in its session, within
    `window_s`, by one whose MiniLM cosine with it is at least `threshold`); how many new."""
    # the embedder and its model load only for this command
    from memgauge.embed import load_embedder
    from memgauge.online.harvest import detect_re_searches as detect

    return detect(db, load_embedder("minilm"), threshold=threshold, window_s=window_s)


def export_golden_set(
    db: Location,
    out_dir: Path,
    *,
    memories_file: Path | None = None,
    dump_from: str | None = None,
) -> dict[str, int]:
    """Write query log `db`'s golden set (harvested queries, best judgments) as a retrieval
    dataset in `out_dir`, complete with the memories of `memories_file` (JSONL of Memory) or
    of `dump_from`'s dump (a system as `evaluate -s` takes it); the counts written."""
    from memgauge.online.harvest import export_golden_set as export

    return export(db, out_dir, memories_from(memories_file, dump_from))


def memories_from(memories_file: Path | None, dump_from: str | None) -> list[Memory] | None:
    """The memories of `memories_file` (ids unique) or of `dump_from`'s dump, or None when
    neither is given; a UsageError for both. Messages name each as its caller wrote it
    (`--memories`, `--dump-from` in a command; `memories_file`, `dump_from` from Python)."""
    mine = argument("memories_file", flag="--memories")
    if memories_file is not None and dump_from is not None:
        raise UsageError(f"give {mine} or {argument('dump_from')}, not both")
    if memories_file is not None:
        return load_memories_file(memories_file)
    if dump_from is not None:
        return dump_memories(dump_from)
    return None


def dump_memories(system: str, flag: str | None = None, instead: str | None = None) -> list[Memory]:
    """Every memory `system` (as `evaluate -s` takes it) holds, read through its `dump`; it is
    only read. A SubjectError when the dump fails or is empty; messages name `flag` (default:
    `dump_from`, as its caller writes it: `--dump-from` or `dump_from=`), and say to give
    `instead` (default: the memories file, as its caller writes it)."""
    where = flag or argument("dump_from")
    named = f"{flag} {system}" if flag else argument("dump_from", system)
    instead = instead or argument("memories_file", "FILE", flag="--memories")
    subject = build_subject(one_spec(system, where))
    try:
        memories = list(subject.dump())
    except MemgaugeError:
        raise
    except Exception as exc:
        raise SubjectError(f"{named}: dump failed: {type(exc).__name__}: {exc}") from None
    finally:
        close_subject(subject)
    if not memories:
        raise SubjectError(
            f"{named}: the system dumped no memories (does it implement dump?);"
            f" give {instead} instead"
        )
    return memories


def import_spans(path: str | Path, *, store: Where = None) -> ImportReport:
    """Log the searches recorded by the OpenInference retriever spans in `path` (OTLP-JSON or
    Phoenix's flattened JSON lines; see `data.importers.spans`) into the query log of `store`,
    through the logging SDK as production logs them; the report counts what was read, logged,
    skipped and dropped. The file is read whole first: a malformed one logs nothing."""
    check_path("path", path)
    searches, report = read_spans(path)
    log_searches(searches, store, report)
    return report


def log_searches(searches: Sequence[SpanSearch], store: Where, report: ImportReport) -> None:
    """`searches` into the query log of `store`, through the logging SDK as production logs
    them, counted into `report` (logged, refused by the store)."""
    # every search of the file in one buffer: none is dropped for the buffer's bound
    log = QueryLog(results_store(store), max_buffer=max(100_000, len(searches) + 1))
    with contextlib.closing(log):
        for s in searches:
            log.query(
                s.query,
                session_id=s.session_id,
                tool_name=s.tool_name,
                result_ids=s.result_ids,
                latency_ms=s.latency_ms,
                trace_id=s.trace_id,
                query_id=s.query_id,
            )
        log.flush()
    if log.rejected:
        report.add("queries_rejected_by_the_store", log.rejected)
        report.notes.append(f"the store refused a search: {log.last_rejected}")
    report.counts["queries_logged"] = len(searches) - log.rejected - log.dropped


def simulate_sprt_bounds(
    n_sims: int,
    *,
    alpha: float = ALPHA,
    beta: float = BETA,
    min_samples: int = 30,
    seed: int = 0,
) -> tuple[list[BoundsRate], str]:
    """Each SPRT bounds' (ville, seed 002's wald) type I error and power by simulation
    (`stats.sprt_rates`), and the Markdown table `memgauge ab simulate` prints."""
    rates = bounds_rates(n_sims, alpha=alpha, beta=beta, min_samples=min_samples, seed=seed)
    return rates, rates_markdown(rates)
