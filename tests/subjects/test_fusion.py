"""Every fusion method of the reference memory against a plain-Python transcription of its
definition (ranx 0.3's `ranx/fusion/*.py` and `ranx/normalization/*.py`, the papers they cite),
on random two-channel runs; RRF, the default, bit for bit as the reference memory fused before
the other methods came; RBC against its paper's worked example; ranx itself when installed."""

from __future__ import annotations

import itertools
import math
import warnings
from collections.abc import Callable, Mapping, Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memgauge.subjects.fusion import (
    FUSION_METHODS,
    NORMALIZATIONS,
    RANK_METHODS,
    fuse,
    fusion_problems,
)

Channel = list[tuple[str, float]]


# -- the transcription: one dict per channel, one document at a time -------------------------


def _normalized(channel: Channel, how: str) -> dict[str, float]:
    """ranx/normalization: min_max_norm, max_norm, sum_norm, zmuv_norm (each denominator
    floored at 1e-9), or the scores as they are (fuse's norm=None)."""
    scores = [s for _, s in channel]
    if how == "none":
        return dict(channel)
    lo, hi, n = min(scores), max(scores), len(scores)
    if how == "min-max":
        return {d: (s - lo) / max(hi - lo, 1e-9) for d, s in channel}
    if how == "max":
        return {d: s / max(hi, 1e-9) for d, s in channel}
    if how == "sum":
        return {d: (s - lo) / max(sum(scores) - lo * n, 1e-9) for d, s in channel}
    mean = sum(scores) / n
    std = math.sqrt(sum((s - mean) ** 2 for s in scores) / n)  # population: np.std
    return {d: (s - mean) / max(std, 1e-9) for d, s in channel}


def _rank_scores(channel: Channel, f: Callable[[int], float]) -> dict[str, float]:
    """A rank method's per-run scores: position i (0-based) of the sorted run gives f(i + 1)."""
    return {d: f(i + 1) for i, (d, _) in enumerate(channel)}


def transcribed(
    channels: Mapping[str, Channel],
    method: str,
    normalization: str | None = None,
    weights: Mapping[str, float] | None = None,
    k: int = 60,
    phi: float = 0.8,
) -> dict[str, float]:
    """The fused score of each document, as ranx's fuse computes it."""
    w = {c: (weights or {}).get(c, 1.0) for c in channels}
    runs = [c for c in channels.values() if c]
    if method == "rrf":  # ranx rrf: comb_sum of 1 / (k + rank); weighted as memgauge's RRF
        per = {
            c: {d: w[c] / (k + i + 1) for i, (d, _) in enumerate(ch)} for c, ch in channels.items()
        }
    elif method in ("isr", "log_isr"):  # comb_mnz (log: log_comb_mnz) of 1 / rank^2
        per = {c: _rank_scores(ch, lambda r: 1 / r**2) for c, ch in channels.items()}
    elif method == "rbc":  # comb_sum of (1 - phi) * phi^(rank - 1)
        per = {
            c: _rank_scores(ch, lambda r: (1 - phi) * phi ** (r - 1)) for c, ch in channels.items()
        }
    else:
        per = {c: _normalized(ch, normalization or "min-max") for c, ch in channels.items() if ch}
    docs = {d for run in runs for d, _ in run}
    out: dict[str, float] = {}
    for d in docs:
        present = [c for c, res in per.items() if d in res]
        if method in ("combsum", "rrf", "rbc"):  # comb_sum: res.get(doc, 0.0) summed
            out[d] = sum(res.get(d, 0.0) for res in per.values())
        elif method == "wsum":  # weighted_sum: weights[i] * res.get(doc, 0.0)
            out[d] = sum(w[c] * res.get(d, 0.0) for c, res in per.items())
        elif method in ("combmnz", "isr"):  # comb_mnz: sum of the present scores * their count
            out[d] = sum(per[c][d] for c in present) * len(present)
        else:  # log_isr: sum of the present scores * log(their count)
            out[d] = sum(per[c][d] for c in present) * math.log(len(present))
    return out


def _rrf_before(
    rankings: Mapping[str, Sequence[str]], weights: Mapping[str, float], k_rrf: int
) -> list[tuple[str, float, dict[str, int]]]:
    """The reference memory's fusion before this module (kept to pin the default's numbers)."""
    scores: dict[str, float] = {}
    ranks: dict[str, dict[str, int]] = {}
    for channel, ids in rankings.items():
        w = weights.get(channel, 1.0)
        for rank, mid in enumerate(ids, 1):
            scores[mid] = scores.get(mid, 0.0) + w / (k_rrf + rank)
            ranks.setdefault(mid, {})[channel] = rank
    fused = sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))
    return [(mid, score, ranks[mid]) for mid, score in fused]


# -- random two-channel runs ------------------------------------------------------------------

_IDS = [f"m{i:02d}" for i in range(14)]


@st.composite
def channel(draw: st.DrawFn, distinct: bool = False) -> Channel:
    """One channel's hits, best first, ties by id (as the reference memory's channels come)."""
    ids = draw(st.lists(st.sampled_from(_IDS), unique=True, max_size=10))
    score = st.floats(-40, 40, allow_nan=False).map(lambda x: round(x, 3))
    if distinct:
        scores = draw(st.lists(score, min_size=len(ids), max_size=len(ids), unique=True))
    else:
        scores = draw(st.lists(score, min_size=len(ids), max_size=len(ids)))
    return sorted(zip(ids, scores, strict=True), key=lambda h: (-h[1], h[0]))


@st.composite
def two_channels(draw: st.DrawFn, distinct: bool = False) -> dict[str, Channel]:
    return {"lexical": draw(channel(distinct)), "dense": draw(channel(distinct))}


COMBOS = [
    (m, n)
    for m in FUSION_METHODS
    for n in ((None,) if m in RANK_METHODS else (None, *NORMALIZATIONS))
]
_TOL = 1e-9


def _agrees(
    got: list[tuple[str, float, dict[str, int]]],
    want: Mapping[str, float],
    channels: Mapping[str, Channel],
) -> None:
    assert {d for d, _, _ in got} == set(want)
    for d, score, ranks in got:
        assert score == pytest.approx(want[d], rel=_TOL, abs=_TOL), d
        assert ranks == {
            c: [h[0] for h in hits].index(d) + 1 for c, hits in channels.items() if d in dict(hits)
        }
    # best first, equal scores by id; the order agrees with the transcription's scores
    assert got == sorted(got, key=lambda h: (-h[1], h[0]))
    for (a, _, _), (b, _, _) in itertools.pairwise(got):
        assert want[a] >= want[b] - 2 * _TOL * max(1.0, abs(want[b]))


@pytest.mark.parametrize(("method", "normalization"), COMBOS)
@settings(max_examples=60, deadline=None)
@given(channels=two_channels())
def test_each_method_equals_its_transcription(
    method: str, normalization: str | None, channels: dict[str, Channel]
) -> None:
    got = fuse(channels, method, normalization=normalization)
    _agrees(got, transcribed(channels, method, normalization), channels)


@settings(max_examples=150, deadline=None)
@given(
    channels=two_channels(),
    method=st.sampled_from(["rrf", "wsum"]),
    normalization=st.sampled_from([None, *NORMALIZATIONS]),
    lw=st.floats(0.05, 8),
    dw=st.floats(0.05, 8),
    k=st.integers(0, 200),
)
def test_weighted_methods_equal_their_transcription(
    channels: dict[str, Channel],
    method: str,
    normalization: str | None,
    lw: float,
    dw: float,
    k: int,
) -> None:
    weights = {"lexical": lw, "dense": dw}
    if method == "rrf":
        normalization, kw = None, {"k_rrf": k}
    else:
        kw = {}
    got = fuse(channels, method, normalization=normalization, weights=weights, **kw)
    _agrees(got, transcribed(channels, method, normalization, weights, k=k), channels)


@settings(max_examples=150, deadline=None)
@given(channels=two_channels(), phi=st.floats(0.01, 0.99))
def test_rbc_at_any_persistence_equals_its_transcription(
    channels: dict[str, Channel], phi: float
) -> None:
    got = fuse(channels, "rbc", rbc_phi=phi)
    _agrees(got, transcribed(channels, "rbc", phi=phi), channels)


@settings(max_examples=300, deadline=None)
@given(
    channels=two_channels(),
    lw=st.sampled_from([1, 1.0, 0.5, 2.5, 3]),
    dw=st.sampled_from([1, 1.0, 0.25, 4]),
    k=st.sampled_from([60, 0, 10, 120]),
)
def test_rrf_is_bit_for_bit_the_reference_memorys_rrf_before(
    channels: dict[str, Channel], lw: float, dw: float, k: int
) -> None:
    weights = {"lexical": lw, "dense": dw}
    before = _rrf_before({c: [d for d, _ in h] for c, h in channels.items()}, weights, k)
    assert fuse(channels, "rrf", weights=weights, k_rrf=k) == before  # floats compared with ==


def test_a_document_one_channel_missed_contributes_nothing_there() -> None:
    lexical = [("a", 9.0), ("b", 5.0), ("c", 1.0)]
    dense = [("b", 0.8), ("d", 0.4)]
    channels = {"lexical": lexical, "dense": dense}
    # min-max: a 1, b 0.5, c 0 | b 1, d 0
    assert {d: s for d, s, _ in fuse(channels, "combsum")} == {
        "a": 1.0,
        "b": 1.5,
        "c": 0.0,
        "d": 0.0,
    }
    # CombMNZ counts only the channels that retrieved the document
    assert {d: s for d, s, _ in fuse(channels, "combmnz")} == {
        "a": 1.0,
        "b": 3.0,
        "c": 0.0,
        "d": 0.0,
    }
    # z-score: an absent document takes 0, the channel's mean, as in ranx
    z = {d: s for d, s, _ in fuse(channels, "combsum", normalization="z-score")}
    assert z["d"] == pytest.approx(-1.0)  # dense: 0.4 is one std below the mean 0.6
    # log-ISR: ln(1) = 0 for what one channel alone retrieved
    isr = {d: s for d, s, _ in fuse(channels, "log_isr")}
    assert isr == {"b": pytest.approx((1 / 4 + 1) * math.log(2)), "a": 0, "c": 0, "d": 0}
    # equal scores: id ascending
    assert [d for d, _, _ in fuse(channels, "log_isr")] == ["b", "a", "c", "d"]
    assert fuse({"lexical": [], "dense": []}, "combmnz") == []


def test_rbc_reproduces_the_papers_worked_example() -> None:
    """Bailey, Moffat, Scholer & Thomas (SIGIR 2017), Table 1: four rankings of A-G and the
    fused scores at p = 0.6, 0.8 and 0.9, as quoted (two decimals) by the rank_biased_centroids
    crate's README (github.com/mpetri/rank_biased_centroids, MIT). One quoted value is off its
    own formula: G at p = 0.8 is 0.2 + 2 * 0.2 * 0.8^4 = 0.364, quoted 0.37; it is checked at
    its formula's value, the other 17 at the quoted ones."""
    runs = {
        "r1": "ADBCGF",
        "r2": "BDEC",
        "r3": "ABDCGFE",
        "r4": "GDEAFC",
    }
    channels = {name: [(d, 0.0) for d in order] for name, order in runs.items()}
    paper = {
        0.6: [("A", 0.89), ("D", 0.86), ("B", 0.78), ("G", 0.50), ("E", 0.31), ("C", 0.29)],
        0.8: [("D", 0.61), ("A", 0.50), ("B", 0.49), ("C", 0.37), ("G", 0.364), ("E", 0.31)],
        0.9: [("D", 0.35), ("C", 0.28), ("A", 0.27), ("B", 0.27), ("G", 0.23), ("E", 0.22)],
    }
    for phi, expected in paper.items():
        got = fuse(channels, "rbc", rbc_phi=phi)
        scores = {d: s for d, s, _ in got}
        for d, value in expected:
            assert scores[d] == pytest.approx(value, abs=0.005), (phi, d)
        assert [d for d, _, _ in got][:3] == [d for d, _ in expected][:3]


@pytest.mark.parametrize(
    ("settings_", "field", "says"),
    [
        ({"normalization": "min-max"}, "normalization", "reads ranks only"),
        ({"method": "isr", "normalization": "z-score"}, "normalization", "reads ranks only"),
        ({"method": "combsum", "k_rrf": 10}, "k_rrf", "RRF's constant"),
        ({"rbc_phi": 0.5}, "rbc_phi", "RBC's persistence"),
        ({"method": "rbc", "rbc_phi": 1.0}, "rbc_phi", "between 0 and 1"),
        ({"method": "combmnz", "weights": {"lexical": 2.0}}, "lexical_weight", "wsum"),
        ({"method": "borda"}, "fusion", "unknown fusion"),
        ({"method": "combsum", "normalization": "zmuv"}, "normalization", "z-score"),
    ],
)
def test_settings_a_method_does_not_read_are_refused(
    settings_: dict[str, object], field: str, says: str
) -> None:
    args = dict(settings_)
    method = str(args.pop("method", "rrf"))
    normalization = args.pop("normalization", None)
    found = fusion_problems(method, normalization, **args)  # type: ignore[arg-type]
    assert [f for f, _ in found] == [field]
    assert says in found[0][1]
    with pytest.raises(ValueError, match=says):
        fuse({"lexical": [("a", 1.0)]}, method, normalization=normalization, **args)  # type: ignore[arg-type]


# -- ranx itself, when it is installed (the `bench` extra; numba makes it heavy) ---------------


@pytest.mark.parametrize(("method", "normalization"), COMBOS)
@settings(max_examples=25, deadline=None)
@given(channels=two_channels(distinct=True))
def test_each_method_equals_ranx(
    method: str, normalization: str | None, channels: dict[str, Channel]
) -> None:
    ranx = pytest.importorskip("ranx")
    if not all(channels.values()):
        return  # ranx refuses a run without results for the query
    runs = [ranx.Run({"q": dict(hits)}) for hits in channels.values()]
    norm = {"min-max": "min-max", "max": "max", "sum": "sum", "z-score": "zmuv", "none": None}
    alias = {"combsum": "sum", "combmnz": "mnz"}.get(method, method)
    params = {"rrf": {"k": 60}, "rbc": {"phi": 0.8}, "wsum": {"weights": [1.0, 1.0]}}
    ranx_norm = None if method in RANK_METHODS else norm[normalization or "min-max"]
    with warnings.catch_warnings():  # numba's, while it compiles ranx's kernels
        warnings.simplefilter("ignore")
        fused = ranx.fuse(runs, norm=ranx_norm, method=alias, params=params.get(method))
    want = fused.to_dict()["q"]
    got = fuse(channels, method, normalization=normalization)
    _agrees(got, want, channels)


@settings(max_examples=25, deadline=None)
@given(channels=two_channels(distinct=True), lw=st.floats(0.1, 5), dw=st.floats(0.1, 5))
def test_wsum_equals_ranx_with_weights(channels: dict[str, Channel], lw: float, dw: float) -> None:
    ranx = pytest.importorskip("ranx")
    if not all(channels.values()):
        return
    runs = [ranx.Run({"q": dict(hits)}) for hits in channels.values()]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = ranx.fuse(runs, norm="min-max", method="wsum", params={"weights": [lw, dw]})
    got = fuse(channels, "wsum", weights={"lexical": lw, "dense": dw})
    _agrees(got, want.to_dict()["q"], channels)
