"""The suite of `memgauge bench systems`: every system on every benchmark dataset, one retrieval
task each (as `evaluate` builds it: a verdict per query and measure, the IR aggregate's CIs and
paired comparisons, the cost aggregate's tokens and latency), and the ranking of the systems.

The same suite can be written to a file and run by `memgauge run` (examples/bench-systems.yaml
is one): the command adds nothing the suite does not hold.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from memgauge.aggregates.ir import DEFAULT_MEASURES
from memgauge.errors import UsageError
from memgauge.runs.kinds.retrieval import evaluate_suite
from memgauge.runs.suite import Suite

__all__ = ["BENCH_MEASURES", "bench_systems_suite"]

#: recall and nDCG at the depth memory benchmarks report, then evaluate's others, each once;
#: the first ranks the systems
BENCH_MEASURES: tuple[str, ...] = tuple(dict.fromkeys(("nDCG@10", "Recall@10", *DEFAULT_MEASURES)))


def bench_systems_suite(
    datasets: Sequence[tuple[str, Path, str | None]],
    systems: Sequence[tuple[str, Mapping[str, Any]]],
    *,
    measures: Sequence[str] = BENCH_MEASURES,
    corpora: Sequence[str] = (),
    limit: int | None = None,
    name: str = "bench-systems",
    **settings: Any,
) -> Suite:
    """One retrieval task per `(task name, dataset path, dataset kind)`, every system on each,
    ranked by the first of `measures`. `corpora` (LoCoMo's conversations) and `limit` (the
    first N judged queries) keep a run small; `settings` go to `evaluate_suite` (k, seed,
    n_resamples, concurrency, max_failure_rate, ...)."""
    if not datasets:
        raise UsageError(
            "give a dataset to benchmark on: --locomo PATH, --longmemeval PATH or --dataset PATH"
        )
    if not systems:
        raise UsageError("no system to benchmark: none is installed and none was named with -s")
    names = [n for n, _p, _k in datasets]
    if len(set(names)) != len(names):
        raise UsageError(f"two datasets would be the same task: {', '.join(names)}")
    measures = list(dict.fromkeys(measures))
    held = _corpora_held(datasets, corpora)
    tasks: list[dict[str, Any]] = []
    base: dict[str, Any] = {}
    for task_name, path, kind in datasets:
        one = evaluate_suite(
            path,
            systems,
            name=name,
            measures=measures,
            dataset_kind=kind,
            corpora=held[task_name],
            limit=limit,
            **settings,
        )
        base = one.model_dump(mode="json", exclude_unset=True)
        (task,) = base["tasks"]
        task["name"] = task_name
        task["aggregates"] = [*task["aggregates"], {"ranking": {"measure": one_measure(measures)}}]
        tasks.append(task)
    base["tasks"] = tasks
    base["description"] = "memgauge bench systems: " + ", ".join(p.name for _n, p, _k in datasets)
    return Suite.model_validate(base)


def _corpora_held(
    datasets: Sequence[tuple[str, Path, str | None]], corpora: Sequence[str]
) -> dict[str, list[str]]:
    """Each task's share of `corpora`: the ones its dataset holds. A LoCoMo conversation
    (`--corpus conv-26`) narrows the LoCoMo task and leaves a LongMemEval file beside it whole,
    not refused; a corpus no dataset holds is refused (it would run nothing)."""
    if not corpora or len(datasets) == 1:
        # one dataset: the task itself refuses a corpus it lacks, naming its corpora
        return {task_name: list(corpora) for task_name, _p, _k in datasets}
    from memgauge.data.readers import load_retrieval_source

    held: dict[str, list[str]] = {}
    for task_name, path, kind in datasets:
        have = {q.corpus for q in load_retrieval_source(path, kind).queries}
        held[task_name] = [c for c in corpora if c in have]
    unknown = [c for c in corpora if not any(c in mine for mine in held.values())]
    if unknown:
        raise UsageError(
            f"--corpus {', '.join(unknown)}: no dataset given holds it "
            f"({', '.join(p.name for _n, p, _k in datasets)})"
        )
    return held


def one_measure(measures: Sequence[str]) -> str:
    """The measure systems are ranked by, as the IR aggregate names it."""
    from memgauge.metrics import parse_measure

    return str(parse_measure(measures[0]))
