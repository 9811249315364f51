"""Repeats: the system's own variance, when every item went through each subject N times
(`repeat: N` on a task or a suite, `--repeat N`). The engine adds this aggregate to every task
asked more than once; it is given every repeat (`repeat_aware`), the task's other aggregates
the first repeat only (the records a run without repeats has).

Per subject and evaluator (its verdicts on every repeat of every item):
- `LABEL`: the mean over every item-repeat, with a 95% CI that resamples items with all their
  repeats (items as clusters, `stats.repeats.cluster_bootstrap_ci`). It has the evaluator's
  name, so it is the run's number for that evaluator: the gate, targets, history and `runs
  compare` read the repeat-aware value and interval (`RunSummary.measures`).
- `LABEL.sd`: the mean over items of the standard deviation (ddof 1) of the item's values
  across its repeats; the per-item min / max / sd are in the detail and on the item's page.
- `LABEL.pass@K` and `LABEL.pass^K` (Chen et al. 2021; Yao et al. 2024) for K = 1 and N (and
  2, 5, 10 ... below N): an item-repeat passes when its verdict says so, else when its value
  reaches `threshold`.

Per subject: `output_varied` (the share of items whose outputs were not all equal across
repeats) and, for rankings (a memory's hits), `rbo` (the mean over items of the mean pairwise
rank-biased overlap of the repeats' rankings, p = `p`; `metrics.rbo`). A subject whose outputs
varied at all is flagged (`data.records.Nondeterminism`), with the temperature and seed its spec
sets: at temperature 0 or a fixed seed, variance is a defect, not sampling.

A failed item-repeat has no value: it is left out of its item's values and counted, never 0.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from memgauge._util.numbers import N_RESAMPLES
from memgauge.aggregates.base import Target, TaskView, examples, shaped
from memgauge.data.records import (
    AggregateResult,
    ItemRecord,
    MeasureValue,
    Nondeterminism,
    RepeatsFacts,
)
from memgauge.data.shapes import Breakdown, Cell, Example, Shape, Table, cell, text
from memgauge.errors import UsageError
from memgauge.metrics.rbo import DEFAULT_P, mean_pairwise_rbo
from memgauge.stats.repeats import cluster_bootstrap_ci, pass_k_over_items

__all__ = ["RepeatsAggregate", "pass_ks", "repeats_of", "settings_of"]

#: the most items listed as varying most (the detail keeps every item)
_SHOWN = 10
_EPS = 1e-9


def repeats_of(suite: Mapping[str, Any], task: str) -> int:
    """The times `task` of a stored run's suite (its JSON) asked each item."""
    for t in suite.get("tasks") or ():
        if t.get("name") == task:
            return int(t.get("repeat") or suite.get("repeat") or 1)
    return 1


def pass_ks(n: int) -> list[int]:
    """The K of pass@K and pass^K shown for N repeats: 1, N, and the round numbers between."""
    return sorted({1, n, *(k for k in (2, 5, 10, 20, 50) if k < n)})


def settings_of(spec: Any) -> tuple[float | None, int | None]:
    """The temperature and seed a subject's spec sets anywhere in it (an agent's `llm:`
    block, a python subject's kwargs), None where it sets none."""
    temperature: float | None = None
    seed: int | None = None
    stack = [spec]
    while stack:
        node = stack.pop()
        if isinstance(node, Mapping):
            for key, value in node.items():
                if key == "temperature" and isinstance(value, int | float) and temperature is None:
                    temperature = float(value)
                elif key == "seed" and isinstance(value, int) and seed is None:
                    seed = value
                else:
                    stack.append(value)
        elif isinstance(node, list):
            stack.extend(node)
    return temperature, seed


def _ranking(output: Any) -> list[str] | None:
    """A memory's hits as the ranking of their ids; None for any other output."""
    if isinstance(output, list) and all(isinstance(h, Mapping) and "id" in h for h in output):
        return [str(h["id"]) for h in output]
    return None


def _canonical(output: Any) -> str:
    return json.dumps(output, sort_keys=True, default=str)


def _sd(values: Sequence[float]) -> float | None:
    return float(np.std(values, ddof=1)) if len(values) >= 2 else None


@dataclass(frozen=True)
class RepeatsAggregate:
    """Spread per item, pass@k / pass^k, the cluster CI and the nondeterminism flag (module
    docstring).

    Attributes:
        threshold: the value at or above which a verdict that says no pass/fail passes.
        p: the persistence of rank-biased overlap.
        n_resamples: cluster bootstrap resamples.
    """

    threshold: float = 1.0
    p: float = DEFAULT_P
    n_resamples: int = N_RESAMPLES
    name: ClassVar[str] = "repeats"
    title: ClassVar[str] = "Repeats"
    needs_detail: ClassVar[bool] = False
    repeat_aware: ClassVar[bool] = True

    def __post_init__(self) -> None:
        if not 0.0 < self.p < 1.0:
            raise UsageError(f"p {self.p}: give a persistence between 0 and 1 (0.9 by default)")
        if self.n_resamples < 1:
            raise UsageError(f"n_resamples {self.n_resamples}: give 1 or more")

    def measure_names(self, task: TaskView) -> list[str]:
        """See the module docstring."""
        out = ["output_varied", "rbo"]
        for label, _kind in task.evaluators:
            out += [label, f"{label}.sd"]
            for k in pass_ks(task.repeat):
                out += [f"{label}.pass@{k}", f"{label}.pass^{k}"]
        return out

    def targets(self, task: TaskView) -> list[Target]:
        """None of its own."""
        return []

    def _passed(self, record: ItemRecord, label: str) -> tuple[float | None, bool | None]:
        verdict = record.verdict(label) if record.status == "completed" else None
        if verdict is None or verdict.error is not None or verdict.value is None:
            return None, None
        value = float(verdict.value)
        ok = verdict.passed if verdict.passed is not None else value >= self.threshold
        return value, bool(ok)

    def item_entry(
        self, item_id: str, reps: Sequence[ItemRecord], labels: Sequence[str]
    ) -> dict[str, Any]:
        """One item's repeats (`reps`, in repeat order): whether their outputs varied, the
        mean pairwise RBO of their rankings, and per evaluator the values with min, max, sd."""
        answered = [r for r in reps if r.status == "completed"]
        outputs = {_canonical(r.output) for r in answered}
        rankings = [x for r in answered if (x := _ranking(r.output)) is not None]
        entry: dict[str, Any] = {
            "id": item_id,
            "n_repeats": len(reps),
            "n_answered": len(answered),
            "varied": len(answered) >= 2 and len(outputs) > 1,
            "rbo": mean_pairwise_rbo(rankings, self.p) if len(rankings) >= 2 else None,
            "values": {},
        }
        for label in labels:
            values = [self._passed(r, label)[0] for r in reps]
            got = [v for v in values if v is not None]
            entry["values"][label] = {
                "values": values,
                "min": min(got) if got else None,
                "max": max(got) if got else None,
                "sd": _sd(got),
            }
        return entry

    def spread_table(self, subject: str, entry: Mapping[str, Any]) -> Table:
        """One item's spread across its repeats (the viewer's item page): per evaluator its
        value on each repeat, min, max and sd; and its rankings' RBO."""
        n = int(entry["n_repeats"])
        rows = [
            [
                text(label),
                *(cell(x, None, None) for x in (*v["values"], v["min"], v["max"], v["sd"])),
            ]
            for label, v in (entry.get("values") or {}).items()
        ]
        rbo = entry.get("rbo")
        varied = "the same output on every repeat"
        if entry.get("varied"):
            varied = "its outputs differ across repeats"
        rbo_text = ""
        if rbo is not None:
            rbo_text = f"; rank-biased overlap of its rankings (p={self.p:g}) {rbo:.3f}"
        return Table(
            title=f"Across {n} repeats ({subject})",
            note=f"{varied}{rbo_text}",
            key="item-repeats",
            columns=["evaluator", *(f"repeat {r}" for r in range(n)), "min", "max", "sd"],
            rows=rows,
        )

    def compute(self, task: TaskView, items: Mapping[str, Sequence[ItemRecord]]) -> AggregateResult:
        """Per subject its measures; the detail has every item's values per repeat."""
        measures: list[MeasureValue] = []
        subjects: list[dict[str, Any]] = []
        for subject in task.subjects:
            found, detail = self._subject(task, subject, items.get(subject, ()))
            measures += found
            subjects.append(detail)
        detail_out = {
            "repeat": task.repeat,
            "threshold": self.threshold,
            "p": self.p,
            "evaluators": [label for label, _kind in task.evaluators],
            "ks": pass_ks(task.repeat),
            "subjects": subjects,
        }
        return shaped(
            self, task, measures, detail_out, facts=RepeatsFacts.model_validate(detail_out)
        )

    def _subject(
        self, task: TaskView, subject: str, rows: Iterable[ItemRecord]
    ) -> tuple[list[MeasureValue], dict[str, Any]]:
        by_item: dict[str, list[ItemRecord]] = {}
        for r in sorted(rows, key=lambda r: (r.seq, r.repeat)):
            by_item.setdefault(r.source_id, []).append(r)
        kinds = dict(task.evaluators)
        measures: list[MeasureValue] = []

        def measure(name: str, value: float | None, **more: Any) -> None:
            more.setdefault("primary", False)
            measures.append(
                MeasureValue(
                    subject=subject,
                    task=task.name,
                    name=name,
                    value=value,
                    source=self.name,
                    **more,
                )
            )

        per_item = [
            self.item_entry(item_id, reps, list(kinds)) for item_id, reps in by_item.items()
        ]
        repeated = [e for e in per_item if e["n_answered"] >= 2]
        n_varied = sum(1 for e in repeated if e["varied"])
        rbos = [e["rbo"] for e in per_item if e["rbo"] is not None]
        measure(
            "output_varied",
            n_varied / len(repeated) if repeated else None,
            n_scored=len(repeated),
            n_failed=len(per_item) - len(repeated),
            higher_is_better=False,
        )
        if rbos:
            measure(
                "rbo", float(np.mean(rbos)), n_scored=len(rbos), n_failed=len(per_item) - len(rbos)
            )
        summary: dict[str, Any] = {"name": subject, "n_items": len(per_item), "evaluators": {}}
        for label, kind in kinds.items():
            clusters = [
                [math.nan if v is None else v for v in e["values"][label]["values"]]
                for e in per_item
            ]
            ci = cluster_bootstrap_ci(clusters, n_resamples=self.n_resamples, seed=task.seed)
            n_items_scored = ci.n
            note = f"over {task.repeat} repeats; the CI resamples items, each with its repeats"
            measure(
                label,
                ci.mean,
                ci_low=ci.low,
                ci_high=ci.high,
                n_scored=n_items_scored,
                n_failed=len(per_item) - n_items_scored,
                kind=kind,
                primary=True,
                note=note,
            )
            sds = [
                e["values"][label]["sd"] for e in per_item if e["values"][label]["sd"] is not None
            ]
            mean_sd = float(np.mean(sds)) if sds else None
            measure(
                f"{label}.sd",
                mean_sd,
                n_scored=len(sds),
                n_failed=len(per_item) - len(sds),
                higher_is_better=False,
            )
            outcomes = [
                [ok for r in by_item[e["id"]] if (ok := self._passed(r, label)[1]) is not None]
                for e in per_item
            ]
            ks: dict[str, Any] = {}
            for k in pass_ks(task.repeat):
                at, hat, n, left = pass_k_over_items(outcomes, k)
                measure(f"{label}.pass@{k}", at, n_scored=n, n_failed=left)
                measure(f"{label}.pass^{k}", hat, n_scored=n, n_failed=left)
                ks[str(k)] = {"pass_at": at, "pass_hat": hat, "n": n, "n_left_out": left}
            summary["evaluators"][label] = {
                "mean": ci.mean,
                "ci": [ci.low, ci.high],
                "n_items": n_items_scored,
                "n_failed": len(per_item) - n_items_scored,
                "mean_sd": mean_sd,
                "pass": ks,
            }
        temperature, seed = settings_of(task.specs.get(subject, {}))
        flag = Nondeterminism(
            subject=subject,
            task=task.name,
            n_items=len(repeated),
            n_varied=n_varied,
            temperature=temperature,
            seed=seed,
        )
        summary["nondeterminism"] = flag.model_dump(mode="json") if n_varied else None
        summary["settings"] = {"temperature": temperature, "seed": seed}
        summary["n_varied"], summary["n_repeated"] = n_varied, len(repeated)
        summary["rbo"] = float(np.mean(rbos)) if rbos else None
        summary["items"] = per_item
        return measures, summary

    @staticmethod
    def shapes_from(detail: Mapping[str, Any]) -> list[Shape]:
        """The repeat-aware means and pass rates, pass@k / pass^k by k, the nondeterminism of
        each subject, the items that varied most."""
        n = int(detail.get("repeat") or 1)
        subjects: list[Mapping[str, Any]] = list(detail.get("subjects") or ())
        labels: list[str] = list(detail.get("evaluators") or ())
        ks = [str(k) for k in detail.get("ks") or pass_ks(n)]
        rows: list[list[Cell]] = []
        for s in subjects:
            for label in labels:
                e = (s.get("evaluators") or {}).get(label) or {}
                passes = e.get("pass") or {}
                first, last = passes.get("1") or {}, passes.get(str(n)) or {}
                rows.append(
                    [
                        text(s["name"]),
                        text(label),
                        cell(e.get("mean"), e.get("ci"), e.get("n_items"), e.get("n_failed", 0)),
                        cell(e.get("mean_sd"), None, None),
                        *(
                            cell(p.get(key), None, p.get("n"), p.get("n_left_out", 0), pct=True)
                            for p, key in (
                                (first, "pass_at"),
                                (last, "pass_at"),
                                (last, "pass_hat"),
                            )
                        ),
                    ]
                )
        shapes: list[Shape] = [
            Table(
                title=f"Each item {n} times",
                note="mean over item-repeats, 95% CI resampling items (each with its repeats);"
                " sd: mean per-item sd across repeats; the task's other tables show the first"
                " repeat",
                key="repeats",
                columns=[
                    "subject",
                    "evaluator",
                    "mean",
                    "within-item sd",
                    "pass@1",
                    f"pass@{n}",
                    f"pass^{n}",
                ],
                rows=rows,
            )
        ]
        # by k for the task's first evaluator (its headline); the table has every one's
        for label in labels[:1]:
            for which, key in (("pass@k", "pass_at"), ("pass^k", "pass_hat")):
                shapes.append(
                    Breakdown(
                        title=f"{label}: {which} by k",
                        measure=f"{label} {which}",
                        by="k",
                        subjects=[s["name"] for s in subjects],
                        values={
                            k: [
                                cell(
                                    (
                                        ((s.get("evaluators") or {}).get(label) or {}).get("pass")
                                        or {}
                                    )
                                    .get(k, {})
                                    .get(key),
                                    None,
                                    None,
                                    pct=True,
                                )
                                for s in subjects
                            ]
                            for k in ks
                        },
                    )
                )
        flags = []
        for s in subjects:
            raw = s.get("nondeterminism")
            flag = Nondeterminism.model_validate(raw) if raw else None
            rbo = s.get("rbo")
            flags.append(
                [
                    text(s["name"]),
                    Cell(
                        text="nondeterministic" if flag else "deterministic",
                        met=False if flag else None,
                        note=flag.describe() if flag else None,
                    ),
                    cell(
                        s.get("n_varied", 0) / s["n_repeated"] if s.get("n_repeated") else None,
                        None,
                        s.get("n_repeated"),
                        pct=True,
                    ),
                    cell(rbo, None, None) if rbo is not None else text("n/a (no rankings)"),
                    text(
                        "; ".join(
                            f"{k} {v:g}" if isinstance(v, float) else f"{k} {v}"
                            for k, v in (s.get("settings") or {}).items()
                            if v is not None
                        )
                        or "-"
                    ),
                ]
            )
        shapes.append(
            Table(
                title="Nondeterminism across repeats",
                note="a subject whose outputs for one item differ across repeats is flagged; at"
                " temperature 0 or a fixed seed that is a defect",
                key="repeats-nondeterminism",
                columns=["subject", "flag", "items whose output varied", "mean RBO", "settings"],
                rows=flags,
            )
        )
        shapes += examples("Items that varied most across repeats", _most_varied(subjects, labels))
        return shapes


def _most_varied(
    subjects: Sequence[Mapping[str, Any]], labels: Sequence[str]
) -> list[Example | None]:
    """The items with the widest spread (then the lowest RBO), per subject, as examples."""
    found: list[tuple[float, Example]] = []
    for s in subjects:
        for e in s.get("items") or ():
            spread = max(
                (
                    (v["max"] - v["min"])
                    for v in (e.get("values") or {}).values()
                    if v.get("max") is not None and v.get("min") is not None
                ),
                default=0.0,
            )
            rbo = e.get("rbo")
            # a float sum's round-off is not a spread
            if spread <= _EPS and (rbo is None or rbo >= 1.0 - _EPS) and not e.get("varied"):
                continue
            parts = []
            for label in labels:
                v = (e.get("values") or {}).get(label) or {}
                if v.get("min") is not None:
                    sd = v.get("sd")
                    sd_text = f", sd {sd:.3f}" if sd is not None else ""
                    parts.append(f"{label} {v['min']:.3g}..{v['max']:.3g}{sd_text}")
            if rbo is not None:
                parts.append(f"RBO {rbo:.3f}")
            if e.get("varied"):
                parts.append("outputs differ")
            example = Example(id=str(e["id"]), subject=str(s["name"]), text="; ".join(parts))
            found.append((spread + (1.0 - rbo if rbo is not None else 0.0), example))
    found.sort(key=lambda f: -f[0])
    return [ex for _score, ex in found[:_SHOWN]]
