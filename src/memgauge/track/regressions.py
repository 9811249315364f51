"""From a gate's regressions to failure memories (seed 000's eval-to-learning): which items
failed, what the scorer saw, and the memory that keeps it for future prompts."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from memgauge._util.listing import counted
from memgauge.data.records import ItemRecord, RunRecord, ScoreRecord
from memgauge.runs.suite import EvaluatorEntry, evaluator_label
from memgauge.subjects.learnings import learnings_memory, learnings_path
from memgauge.track.diagnosis import diagnose
from memgauge.track.gate import GateResult, StoredMemory
from memgauge.track.learning import failure_memory

__all__ = ["failing_items", "kinds_of", "learn_from", "learnings_memory", "learnings_path"]


def kinds_of(run: RunRecord) -> dict[tuple[str, str], str]:
    """(task, evaluator label) -> evaluator name, from the suite the run recorded."""
    out: dict[tuple[str, str], str] = {}
    for task in run.suite.get("tasks", []):
        raw = task.get("evaluators", [])
        parsed = [
            EvaluatorEntry.model_validate(e if isinstance(e, dict) and "spec" in e else {"spec": e})
            for e in raw
        ]
        for e in parsed:
            spec = e.spec
            name = spec if isinstance(spec, str) else next(iter(spec))
            out[(task["name"], evaluator_label(e, parsed))] = str(name)
    return out


def _evaluator_for(items: Sequence[ItemRecord], measure: str) -> str | None:
    """The evaluator behind a measure: itself when it is an evaluator's label, else the one
    verdict the task's items carry (an aggregate's number, e.g. extraction precision)."""
    labels = {s.evaluator for it in items for s in it.scores}
    if measure in labels:
        return measure
    return next(iter(sorted(labels)), None)


def failing_items(
    items: Sequence[ItemRecord], evaluator: str, n: int | None = 3
) -> list[ItemRecord]:
    """Up to `n` (None: all) items the evaluator failed, worst first: judged not passed, or
    errored, or (for an evaluator with no pass/fail) scored below its mean over the run."""
    scored = [(r, sc) for r in items if (sc := r.verdict(evaluator)) is not None]
    values = [sc.value for _r, sc in scored if sc.value is not None]
    mean = sum(values) / len(values) if values else None

    def failed(sc: ScoreRecord) -> bool:
        if sc.error is not None or sc.value is None:
            return True
        if sc.passed is not None:
            return not sc.passed
        return mean is not None and sc.value < mean

    bad = [(r, sc) for r, sc in scored if failed(sc)]
    bad.sort(key=lambda pair: -1.0 if pair[1].value is None else float(pair[1].value))
    return [r for r, _sc in (bad if n is None else bad[:n])]


def _fmt(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.3f}"


def learn_from(
    result: GateResult,
    run: RunRecord,
    items: Sequence[ItemRecord],
    memory: Any,
) -> list[StoredMemory]:
    """Store one failure memory per regressed measure of `result` in `memory` (skipping those
    it already holds); each regression's memory id, `new` False for one it already held."""
    regressed = [c for c in result.checks if c.regressed]
    if not regressed:
        return []
    measures = (
        {(m.subject, m.task, m.name): m for m in run.summary.measures()} if run.summary else {}
    )
    kinds = kinds_of(run)
    memories = []
    for c in regressed:
        mine = [r for r in items if (r.subject, r.task) == (c.subject, c.task)]
        evaluator = _evaluator_for(mine, c.evaluator)
        every = failing_items(mine, evaluator, None) if evaluator else []
        failing = every[:3]
        kind = kinds.get((c.task, evaluator or c.evaluator))
        found = diagnose(mine, evaluator, kind, every)
        m = measures.get((c.subject, c.task, c.evaluator))
        pass_rate = next(
            (
                e.pass_rate
                for e in (run.summary.evaluators if run.summary else [])
                if (e.subject, e.task, e.evaluator) == (c.subject, c.task, c.evaluator)
            ),
            None,
        )
        context = (
            f"{c.evaluator}: mean {_fmt(m.value if m else None)} over "
            f"{counted(m.n_scored if m else 0, 'item')}, {m.n_failed if m else 0} failed; pass rate "
            f"{_fmt(pass_rate)}"
        )
        context = "\n".join([context, *found.lines(kind)])
        memories.append(
            failure_memory(
                c,
                suite=result.suite,
                run_id=result.run_id,
                scorer_context=context,
                failing=[
                    {
                        "item_id": f.item_id,
                        "input": f.input.get("text", f.input),
                        "expected": f.expected,
                        "output": f.output,
                    }
                    for f in failing
                ],
            )
        )
    known = {m.id for m in memory.dump()}
    fresh = [m for m in memories if m.id not in known]
    if fresh:
        memory.ingest(fresh)
    return [
        StoredMemory(m.id, c.subject, c.task, c.evaluator, new=m.id not in known)
        for c, m in zip(regressed, memories, strict=True)
    ]
