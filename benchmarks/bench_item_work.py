"""CPU-seconds of the engine's own work on LoCoMo's items in `evaluate -s lexical` (evalcpu18),
in process, before against after, interleaved: the hit records of every search
(`runs.kinds.base.hit_record`, as `RetrievalKind.ask` makes them), the answered items' records
(`runs.work._record`) and the scoring of every answered item (`runs.work.score_item`: the 7
retrieval measures and their records).

    python benchmarks/bench_item_work.py --before DIR --dataset DS [--runs 15]

DIR: a checkout of the code before (its `src/memgauge` files of those parts are loaded under
other names; the rest of memgauge is this checkout's). DS: a retrieval dataset (`memgauge
import locomo ... --out DS`), evaluated once in this process to capture each item's search
result and answered record. Each part: one warm-up (results checked equal, but for the
timestamps), then `--runs` pairs alternating; min and median of `time.process_time`.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def _capture(dataset: Path) -> list[tuple[Any, ...]]:
    """(task, item, answered record, t0, search result) of every item, run in this process."""
    from memgauge.cli.main import main
    from memgauge.runs import engine

    got: list[tuple[Any, ...]] = []
    answer = engine.answer_item

    def spy(subject: Any, name: str, answers: bool, task: Any, item: Any) -> Any:
        search, seen = subject.search, []

        def searched(*args: Any, **kw: Any) -> Any:
            seen.append(search(*args, **kw))
            return seen[-1]

        subject.search = searched
        try:
            out = answer(subject, name, answers, task, item)
        finally:
            del subject.search
        got.append((task, item, out[0], out[1], seen[0]))
        return out

    engine.answer_item = spy  # type: ignore[assignment]
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["MEMGAUGE_HOME"] = tmp
        with open(os.devnull, "w") as devnull:
            stdout, sys.stdout = sys.stdout, devnull
            try:
                main(["evaluate", str(dataset), "-s", "lexical", "--out", f"{tmp}/out", "--quiet"])
            except SystemExit:
                pass
            finally:
                sys.stdout = stdout
    engine.answer_item = answer  # type: ignore[assignment]
    return got


def _equal_by(key: Callable[[Any], Any]) -> Callable[[Any, Any], bool]:
    return lambda a, b: bool(key(a) == key(b))


def _untimed(record: Any) -> Any:
    """A scored record without its clock readings, and what its fields set say."""
    return (
        record.model_copy(update={"finished_at": None, "duration_ms": None}),
        record.model_fields_set,
        [(s.model_fields_set, list(vars(s))) for s in record.scores],
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--before", type=Path, required=True)
    ap.add_argument("--dataset", type=Path, required=True)
    ap.add_argument("--runs", type=int, default=15)
    args = ap.parse_args()
    sys.path.insert(0, str(ROOT / "benchmarks"))
    sys.path.insert(0, str(ROOT / "src"))
    from bench_summary_cuts import _load, _pair
    from memgauge.runs import work
    from memgauge.runs.kinds import base
    from memgauge.scorers import retrieval

    old = args.before / "src" / "memgauge"
    old_base = _load(old / "runs" / "kinds" / "base.py", "_before_kinds_base")
    old_single = _load(old / "metrics" / "single.py", "_before_single")
    old_retrieval = _load(old / "scorers" / "retrieval.py", "_before_scorers_retrieval")
    old_retrieval.Prepared = old_single.Prepared  # type: ignore[attr-defined]
    old_retrieval.score_prepared = old_single.score_prepared  # type: ignore[attr-defined]
    old_work = _load(old / "runs" / "work.py", "_before_work")

    got = _capture(args.dataset)
    task = got[0][0]
    known = task.memory_texts()
    results = [r[4] for r in got]

    def hits(make: Callable[..., Any]) -> Callable[[], Any]:
        return lambda: [[make(h, i, known) for i, h in enumerate(r.hits, 1)] for r in results]

    _pair("hit records", hits(old_base.hit_record), hits(base.hit_record), args.runs)

    def records(module: ModuleType) -> Callable[[], Any]:
        return lambda: [
            module._record(
                on,
                rec.subject,
                it,
                attempts=rec.attempts,
                output=rec.output,
                latency_ms=rec.latency_ms,
                extra=rec.extra,
                failures=rec.failures,
                started_at=rec.started_at,
            )
            for on, it, rec, _t0, _r in got
        ]

    def fields(rs: list[Any]) -> Any:
        return [(r, r.model_fields_set, list(vars(r))) for r in rs]

    _pair("item records", records(old_work), records(work), args.runs, _equal_by(fields))

    def measures(module: ModuleType) -> Any:
        made = [
            (
                label,
                module.RetrievalMeasure(
                    **{f.name: getattr(ev, f.name) for f in dataclasses.fields(ev)}
                ),
                w,
            )
            for label, ev, w in task.evaluators
        ]
        return dataclasses.replace(task, evaluators=made)

    old_task, new_task = measures(old_retrieval), measures(retrieval)

    def scored(module: ModuleType, on: Any) -> Callable[[], Any]:
        return lambda: [module.score_item(on, it, rec, t0) for _t, it, rec, t0, _r in got]

    before, after = scored(old_work, old_task), scored(work, new_task)
    _pair("score_item", before, after, args.runs, _equal_by(lambda rs: [_untimed(r) for r in rs]))


if __name__ == "__main__":
    main()
