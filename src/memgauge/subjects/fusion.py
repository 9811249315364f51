"""Fusion of ranked channels, each method as ranx defines it (Bassani & Romelli, "ranx.fuse: A
Python Library for Metasearch", CIKM 2022).

A channel is a list of `(id, score)`, best first; a document's rank in it is its 1-based
position. A document retrieved by some channels and not others takes part with the channels that
retrieved it: it contributes 0 to a sum where a channel did not retrieve it (after
normalization), and counts only the channels that did in CombMNZ's and ISR's multiplier n(d).

Score methods normalize each channel's scores first (`normalization`, default min-max: ranx's
default; over the channel's retrieved list, as ranx normalizes each run's results for a query):

- `combsum`: sum_c s'_c(d) (Fox & Shaw 1993, CombSUM; ranx `sum`);
- `combmnz`: n(d) * sum_c s'_c(d) (Fox & Shaw 1993, CombMNZ; ranx `mnz`);
- `wsum`: sum_c w_c * s'_c(d) (ranx `wsum`, the weighted sum).

Rank methods read ranks only (a normalization is refused with them: it cannot change a rank):

- `rrf`: sum_c w_c / (k + r_c(d)) (Cormack, Clarke & Büttcher 2009; ranx `rrf` with all w_c = 1);
- `isr`: n(d) * sum_c 1 / r_c(d)^2 (Mourão, Martins & Magalhães 2015; ranx `isr`);
- `log_isr`: ln(n(d)) * sum_c 1 / r_c(d)^2 (the same paper; ranx `log_isr`: a document that one
  channel alone retrieved scores 0);
- `rbc`: sum_c (1 - phi) * phi^(r_c(d) - 1) (Bailey, Moffat, Scholer & Thomas 2017, rank-biased
  centroids; ranx `rbc`).

Normalizations of a channel's scores s (ranx's, with its guard of 1e-9 on every denominator):
`min-max` (s - min) / (max - min); `max` s / max; `sum` (s - min) / (sum(s) - n * min);
`z-score` (s - mean) / std, the population standard deviation (ranx `zmuv`); `none` the raw
scores. Channel weights w_c belong to the methods that define them (`rrf` and `wsum`); the others
are unweighted as published, and `fusion_problems` refuses weights other than 1 with them.

Ties: equal fused scores are ordered by id ascending, so the order never depends on the
channels' order or on the hash seed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import lru_cache
from operator import itemgetter
from typing import Literal, cast, get_args

import numpy as np

from memgauge._types import FloatArray

__all__ = [
    "DEFAULT_K_RRF",
    "DEFAULT_NORMALIZATION",
    "DEFAULT_PHI",
    "FUSION_METHODS",
    "NORMALIZATIONS",
    "RANK_METHODS",
    "WEIGHTED_METHODS",
    "FusionMethod",
    "Normalization",
    "fuse",
    "fuse_checked",
    "fusion_problems",
    "normalize",
]

FusionMethod = Literal["rrf", "combsum", "combmnz", "wsum", "isr", "log_isr", "rbc"]
Normalization = Literal["min-max", "max", "sum", "z-score", "none"]

FUSION_METHODS: tuple[str, ...] = get_args(FusionMethod)
NORMALIZATIONS: tuple[str, ...] = get_args(Normalization)
#: methods that read ranks only
RANK_METHODS = frozenset({"rrf", "isr", "log_isr", "rbc"})
#: methods whose definition has channel weights
WEIGHTED_METHODS = frozenset({"rrf", "wsum"})
#: the normalization of a score method when none is named (ranx's `fuse` default)
DEFAULT_NORMALIZATION: Normalization = "min-max"
#: RRF's k (Cormack et al.'s 60)
DEFAULT_K_RRF = 60
#: RBC's persistence when none is named (ranx asks for one; 0.8 is the middle of the values
#: Bailey et al. illustrate, 0.6 to 0.9)
DEFAULT_PHI = 0.8

# ranx guards every normalization's denominator with this floor
_FLOOR = 1e-9

Fused = tuple[str, float, dict[str, int]]


def fusion_problems(
    method: str,
    normalization: str | None,
    *,
    k_rrf: int = DEFAULT_K_RRF,
    rbc_phi: float | None = None,
    weights: Mapping[str, float] | None = None,
) -> list[tuple[str, str]]:
    """(field, message) for each setting that does not fit `method`; [] if none.

    A setting that a method does not read is refused rather than ignored, so that a spec never
    says more than the search does: a normalization with a rank method, `k_rrf` other than 60
    without `rrf`, `rbc_phi` without `rbc`, a channel weight other than 1 with an unweighted
    method.
    """
    if method not in FUSION_METHODS:
        return [("fusion", f"unknown fusion {method!r}; one of {', '.join(FUSION_METHODS)}")]
    out: list[tuple[str, str]] = []
    if normalization is not None and normalization not in NORMALIZATIONS:
        known = ", ".join(NORMALIZATIONS)
        out.append(("normalization", f"unknown normalization {normalization!r}; one of {known}"))
    elif normalization is not None and method in RANK_METHODS:
        out.append(
            (
                "normalization",
                f"fusion {method} reads ranks only, so a normalization cannot change it; leave "
                "normalization out, or choose a score fusion (combsum, combmnz, wsum)",
            )
        )
    if k_rrf != DEFAULT_K_RRF and method != "rrf":
        out.append(("k_rrf", f"k_rrf is RRF's constant; fusion {method} does not read it"))
    if k_rrf < 0:
        out.append(("k_rrf", f"k_rrf must be >= 0, got {k_rrf}"))
    if rbc_phi is not None:
        if method != "rbc":
            out.append(
                ("rbc_phi", f"rbc_phi is RBC's persistence; fusion {method} does not read it")
            )
        elif not 0 < rbc_phi < 1:
            out.append(("rbc_phi", f"rbc_phi must be between 0 and 1 (exclusive), got {rbc_phi}"))
    if method not in WEIGHTED_METHODS:
        for channel, w in (weights or {}).items():
            if w != 1:
                out.append(
                    (
                        f"{channel}_weight",
                        f"fusion {method} is unweighted as defined; a {channel} weight of {w:g} "
                        "needs fusion wsum (a weighted sum of normalized scores) or rrf",
                    )
                )
    return out


def normalize(scores: FloatArray, how: str) -> FloatArray:
    """One channel's scores normalized as ranx does (see the module docstring); an empty
    channel stays empty."""
    if how == "none" or scores.size == 0:
        return scores
    if how == "min-max":
        low = float(scores.min())
        return (scores - low) / max(float(scores.max()) - low, _FLOOR)
    if how == "max":
        return scores / max(float(scores.max()), _FLOOR)
    if how == "sum":
        low = float(scores.min())
        return (scores - low) / max(float(scores.sum()) - low * scores.size, _FLOOR)
    if how == "z-score":
        return (scores - float(scores.mean())) / max(float(scores.std()), _FLOOR)
    raise ValueError(f"unknown normalization {how!r}; one of {', '.join(NORMALIZATIONS)}")


@lru_cache(maxsize=256)
def _rank_terms(method: str, weight: float, k_rrf: int, phi: float, m: int) -> FloatArray:
    """A rank method's term at ranks 1..m (read-only: shared by every search with the same
    settings and depth, which is what makes the search path's fusion as fast as a loop)."""
    rank = np.arange(1, m + 1, dtype=np.float64)
    if method == "rrf":
        # w / (k + r), in this order of operations: the fused scores stay those of the
        # reference memory's RRF before the other methods came
        terms = weight / (k_rrf + rank)
    elif method == "rbc":
        terms = (1.0 - phi) * phi ** (rank - 1.0)
    else:  # isr, log_isr
        terms = 1.0 / rank**2
    terms.flags.writeable = False
    return terms


def _contribution(
    method: str,
    scores: Sequence[tuple[str, float]],
    weight: float,
    normalization: str,
    k_rrf: int,
    phi: float,
) -> FloatArray:
    """Each retrieved document's term in its channel, best first."""
    m = len(scores)
    if method in RANK_METHODS:
        return _rank_terms(method, weight, k_rrf, phi, m)
    raw = np.fromiter((s for _, s in scores), dtype=np.float64, count=m)
    values = normalize(raw, normalization)
    return weight * values if method == "wsum" else values


def fuse(
    channels: Mapping[str, Sequence[tuple[str, float]]],
    method: str = "rrf",
    *,
    normalization: str | None = None,
    weights: Mapping[str, float] | None = None,
    k_rrf: int = DEFAULT_K_RRF,
    rbc_phi: float | None = None,
) -> list[Fused]:
    """Fuse `channels` (name -> (id, score) best first) by `method`.

    Returns (id, fused score, {channel: 1-based rank}) for every document some channel
    retrieved, best first, equal scores by id ascending. ValueError for settings that do not fit
    `method` (see `fusion_problems`).
    """
    found = fusion_problems(method, normalization, k_rrf=k_rrf, rbc_phi=rbc_phi, weights=weights)
    if found:
        raise ValueError("; ".join(f"{f}: {m}" for f, m in found))
    return fuse_checked(channels, method, normalization, weights, k_rrf, rbc_phi)


def fuse_checked(
    channels: Mapping[str, Sequence[tuple[str, float]]],
    method: str,
    normalization: str | None,
    weights: Mapping[str, float] | None,
    k_rrf: int,
    rbc_phi: float | None,
) -> list[Fused]:
    """`fuse` for settings checked already (a validated `ReferenceMemoryConfig`): the search
    path's.

    The terms and their sums per document are NumPy (each channel's terms at once, one
    `bincount` adding a document's terms in channel order); the ids are Python strings, so
    numbering them and the final sort by (score, id) are Python's, at C speed.
    """
    norm = normalization or DEFAULT_NORMALIZATION
    phi = DEFAULT_PHI if rbc_phi is None else rbc_phi
    index: dict[str, int] = {}
    ranks: list[dict[str, int]] = []
    positions: list[int] = []
    terms: list[FloatArray] = []
    for name, hits in channels.items():
        if not hits:
            continue
        for rank, (mid, _) in enumerate(hits, 1):
            j = index.get(mid)
            if j is None:
                index[mid] = j = len(ranks)
                ranks.append({name: rank})
            else:
                ranks[j][name] = rank
            positions.append(j)
        w = 1.0 if weights is None else weights.get(name, 1.0)
        terms.append(_contribution(method, hits, w, norm, k_rrf, phi))
    n = len(ranks)
    if n == 0:
        return []
    # a document's terms are added from 0.0 in channel order: RRF's sums are bit for bit those
    # of the dict-per-document loop the reference memory fused with before
    fused = cast(FloatArray, np.bincount(positions, weights=np.concatenate(terms), minlength=n))
    if method in ("combmnz", "isr", "log_isr"):
        count = np.bincount(positions, minlength=n).astype(np.float64)
        fused = fused * (np.log(count) if method == "log_isr" else count)
    out = sorted(zip(index, fused.tolist(), ranks, strict=True))  # by id: ids are unique
    out.sort(key=itemgetter(1), reverse=True)  # stable: equal scores stay by id
    return out
