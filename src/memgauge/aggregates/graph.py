"""The write pipeline beyond facts (seed 004): knowledge-graph entries and embedding quality.

`kg` sums the `kg-triples` verdicts of a task: per level (triples, entities, relations)
precision / recall / F1 micro (from summed TP / FP / FN) and macro (mean over items), each with
a 95% bootstrap CI over items; measures `triples.f1`, `entities.precision`, ... (micro) and
`triples.f1_macro`, .... An item whose output or expected triples could not be read is counted in
`n_failed`, never scored.

`embedding` reads the `embedding-pair` verdicts of an embedding task: for each known pair, the
system's stored vectors of its two texts and the reference embedder's. Over the pool of every
distinct text of the task, NN_sys(t) and NN_ref(t) are the `k` nearest other texts by cosine:

    nn_agreement   = mean over texts t of |NN_sys(t) & NN_ref(t)| / k'   (k' = min(k, n - 1))
    a pair is "near" in a space when b is in NN(a) or a is in NN(b);
    pair_accuracy  = share of pairs the system's space gets right (similar: near; different:
                     not near), pair_accuracy_reference the same in the reference space
    pair_agreement = share of pairs on which both spaces decide the same
    auc            = P(cos of a similar pair > cos of a different pair), ties count 1/2 (the
                     Mann-Whitney statistic), for the system (`auc`) and the reference

Shares carry Wilson 95% intervals. With no similar or no different pair the AUC is n/a.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from memgauge.aggregates.base import Target, TaskView, failure_examples, shaped, subject_rows
from memgauge.aggregates.write_path import prf_summary
from memgauge.data.records import AggregateResult, ItemRecord, MeasureValue
from memgauge.data.shapes import Confusion, Shape, Table, cell, text
from memgauge.stats.proportion import wilson_ci

__all__ = ["EmbeddingAggregate", "KGAggregate", "embedding_summary"]

LEVELS = ("triples", "entities", "relations")


@dataclass(frozen=True)
class _Seed004Aggregate:
    def targets(self, task: TaskView) -> list[Target]:
        """Seed 004 sets none."""
        return []


@dataclass(frozen=True)
class KGAggregate(_Seed004Aggregate):
    """P / R / F1 of knowledge-graph triples, entities and relations (see the module)."""

    name: ClassVar[str] = "kg"
    title: ClassVar[str] = "Knowledge graph"

    def measure_names(self, task: TaskView) -> list[str]:
        """`triples.f1`, `triples.f1_macro`, ... for each level and metric."""
        return [
            f"{level}.{m}{sfx}"
            for level in LEVELS
            for m in ("precision", "recall", "f1")
            for sfx in ("", "_macro")
        ]

    def compute(self, task: TaskView, items: Mapping[str, Sequence[ItemRecord]]) -> AggregateResult:
        """Per subject and level: the P / R / F1 summary and its measures."""
        detail: dict[str, Any] = {}
        measures: list[MeasureValue] = []
        for subject, rows, failed in subject_rows(task, items, "kg-triples"):
            ok = [r["verdict"].detail for r in rows if r["error"] is None]
            summary: dict[str, Any] = {
                "n_items": len(rows),
                "n_scored": len(ok),
                "n_failed": len(failed),
                "failures": failed,
            }
            for level in LEVELS:
                block = prf_summary([d[level] for d in ok], seed=task.seed)
                summary[level] = block
                for m in ("precision", "recall", "f1"):
                    e = (block or {}).get(m, {})
                    for sfx, key in (("", "micro"), ("_macro", "macro")):
                        ci = e.get(f"{key}_ci95") or [None, None]
                        measures.append(
                            MeasureValue(
                                subject=subject,
                                task=task.name,
                                name=f"{level}.{m}{sfx}",
                                value=e.get(key),
                                ci_low=ci[0],
                                ci_high=ci[1],
                                n_scored=len(ok),
                                n_failed=len(failed),
                                source="kg",
                                primary=key == "micro",
                            )
                        )
            detail[subject] = summary
        return shaped(self, task, measures, {"subjects": detail})

    @staticmethod
    def shapes_from(detail: Mapping[str, Any]) -> list[Shape]:
        """P / R / F1 micro and macro per level and subject; the items not scored."""
        subjects: Mapping[str, Any] = detail.get("subjects") or {}
        rows = []
        for level in LEVELS:
            for m in ("precision", "recall", "f1"):
                for avg in ("micro", "macro"):
                    row = [text(f"{level} {m} ({avg})")]
                    for s in subjects.values():
                        e = (s.get(level) or {}).get(m) or {}
                        ci = e.get(f"{avg}_ci95")
                        row.append(cell(e.get(avg), ci, s.get("n_scored"), s.get("n_failed", 0)))
                    rows.append(row)
        note = "micro from summed TP / FP / FN, macro the mean over items; 95% bootstrap CIs"
        table = Table(
            title="Triples, entities and relations",
            note=note,
            rows=rows,
            columns=["measure", *subjects],
        )
        return [table, *failure_examples(subjects)]


def _auc(cos: np.ndarray, similar: np.ndarray) -> float | None:
    pos, neg = cos[similar], cos[~similar]
    if not len(pos) or not len(neg):
        return None
    diff = pos[:, None] - neg[None, :]
    return float(((diff > 0).sum() + 0.5 * (diff == 0).sum()) / diff.size)


def _neighbours(vectors: np.ndarray, k: int) -> np.ndarray:
    """Indices of each row's k nearest other rows by cosine (ties: the lower index)."""
    unit = vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
    sims = unit @ unit.T
    np.fill_diagonal(sims, -np.inf)
    return np.argsort(-sims, axis=1, kind="stable")[:, :k]


def _share(flags: Sequence[bool]) -> dict[str, Any]:
    n, hits = len(flags), int(sum(flags))
    ci = wilson_ci(hits, n)
    return {"value": hits / n if n else None, "n": n, "ci95": list(ci) if ci else None}


def embedding_summary(pairs: Sequence[Mapping[str, Any]], k: int = 1) -> dict[str, Any]:
    """The embedding measures of the module docstring from scored pairs: each with `a`, `b`
    (texts), `label` (similar / different), `system` and `reference` (`{"a": vec, "b": vec}`)."""
    texts: dict[str, int] = {}
    sys_vecs: list[Any] = []
    ref_vecs: list[Any] = []
    for p in pairs:
        for side in ("a", "b"):
            if p[side] not in texts:
                texts[p[side]] = len(texts)
                sys_vecs.append(p["system"][side])
                ref_vecs.append(p["reference"][side])
    out: dict[str, Any] = {"n_pairs": len(pairs), "n_texts": len(texts), "k": k}
    if len(texts) < 2:
        return out
    kk = min(k, len(texts) - 1)
    nn_sys = _neighbours(np.asarray(sys_vecs, dtype=np.float64), kk)
    nn_ref = _neighbours(np.asarray(ref_vecs, dtype=np.float64), kk)
    overlap = [
        len(set(a) & set(b)) / kk for a, b in zip(nn_sys.tolist(), nn_ref.tolist(), strict=True)
    ]
    out["nn_agreement"] = {"value": float(np.mean(overlap)), "n": len(texts)}

    def near(nn: np.ndarray, a: int, b: int) -> bool:
        return b in nn[a] or a in nn[b]

    idx = [(texts[p["a"]], texts[p["b"]]) for p in pairs]
    similar = np.array([p["label"] == "similar" for p in pairs])
    sys_near = [near(nn_sys, a, b) for a, b in idx]
    ref_near = [near(nn_ref, a, b) for a, b in idx]
    out["pair_accuracy"] = _share([n == s for n, s in zip(sys_near, similar, strict=True)])
    out["pair_accuracy_reference"] = _share(
        [n == s for n, s in zip(ref_near, similar, strict=True)]
    )
    out["pair_agreement"] = _share([x == y for x, y in zip(sys_near, ref_near, strict=True)])
    # rows: the pair's label (similar, different); columns: near in the space or not
    out["confusion"] = {
        space: [[int((g & m).sum()), int((~g & m).sum())] for m in (similar, ~similar)]
        for space, g in (("system", np.array(sys_near)), ("reference", np.array(ref_near)))
    }
    cos_sys = np.array([p["cos_system"] for p in pairs], dtype=np.float64)
    cos_ref = np.array([p["cos_reference"] for p in pairs], dtype=np.float64)
    out["auc"] = {"value": _auc(cos_sys, similar), "n": len(pairs)}
    out["auc_reference"] = {"value": _auc(cos_ref, similar), "n": len(pairs)}
    return out


EMBEDDING_MEASURES = (
    "nn_agreement",
    "pair_agreement",
    "pair_accuracy",
    "pair_accuracy_reference",
    "auc",
    "auc_reference",
)


@dataclass(frozen=True)
class EmbeddingAggregate(_Seed004Aggregate):
    """Nearest-neighbour agreement of a system's stored vectors with the reference embedder,
    and how each separates known-similar from known-different pairs (see the module).

    Attributes:
        k: neighbours per text.
    """

    k: int = 1
    name: ClassVar[str] = "embedding"
    title: ClassVar[str] = "Embedding"

    def measure_names(self, task: TaskView) -> list[str]:
        """nn_agreement, pair_agreement, pair_accuracy(_reference), auc(_reference)."""
        return list(EMBEDDING_MEASURES)

    def compute(self, task: TaskView, items: Mapping[str, Sequence[ItemRecord]]) -> AggregateResult:
        """Per subject: the summary and its measures."""
        detail: dict[str, Any] = {}
        measures: list[MeasureValue] = []
        for subject, rows, failed in subject_rows(task, items, "embedding-pair"):
            # the system's vectors are the item's output; the reference's are in the verdict
            pairs = [
                {**r["verdict"].detail, "system": r["item"].output}
                for r in rows
                if r["error"] is None
            ]
            summary = {**embedding_summary(pairs, self.k), "n_failed": len(failed)}
            summary["failures"] = failed
            detail[subject] = summary
            for name in EMBEDDING_MEASURES:
                e = summary.get(name) or {}
                ci = e.get("ci95") or [None, None]
                measures.append(
                    MeasureValue(
                        subject=subject,
                        task=task.name,
                        name=name,
                        value=e.get("value"),
                        ci_low=ci[0],
                        ci_high=ci[1],
                        n_scored=int(e.get("n", 0)),
                        n_failed=len(failed),
                        source="embedding",
                    )
                )
        return shaped(self, task, measures, {"subjects": detail})

    @staticmethod
    def shapes_from(detail: Mapping[str, Any]) -> list[Shape]:
        """The measures per subject (Wilson CIs on shares), how each space decides the known
        pairs, the items not scored."""
        subjects: Mapping[str, Any] = detail.get("subjects") or {}
        rows = []
        for name in EMBEDDING_MEASURES:
            row = [text(name)]
            for s in subjects.values():
                e = s.get(name) or {}
                row.append(cell(e.get("value"), e.get("ci95"), e.get("n"), s.get("n_failed", 0)))
            rows.append(row)
        k = next((s.get("k") for s in subjects.values()), 1)
        shapes: list[Shape] = [
            Table(
                title="Embedding quality",
                note=f"nearest neighbours: k = {k}; a pair is near when one text is among the other's",
                columns=["measure", *subjects],
                rows=rows,
            )
        ]
        for space in ("system", "reference"):
            counts = {s: d["confusion"][space] for s, d in subjects.items() if d.get("confusion")}
            if counts:
                shapes.append(
                    Confusion(
                        title=f"Known pairs in the {space} space",
                        note="rows: the pair's label; columns: what the space puts near",
                        labels=["similar", "different"],
                        counts=counts,
                    )
                )
        return [*shapes, *failure_examples(subjects)]
