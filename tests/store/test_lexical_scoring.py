"""`memgauge.store.lexical_scoring` against bm25() summed in plain Python floats, term by term
in the query's order from 0.0 as fts5_aux.c sums it: the scores must be equal bit for bit,
whichever path (every row, or the common terms added to the candidates only) scored them."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

from memgauge.store.lexical_postings import Postings, Stats, Weights
from memgauge.store.lexical_scoring import _distinct, top

K1, B = 1.2, 0.75


def test_distinct_keeps_each_position_once() -> None:
    slots = np.full(50, -7, dtype=np.int64)
    rows = np.array([4, 9, 4, 4, 0, 9, 31, 0, 2], dtype=np.int64)
    assert sorted(_distinct(rows, slots).tolist()) == [0, 2, 4, 9, 31]
    assert _distinct(rows[:1], slots).tolist() == [4]
    assert _distinct(rows[:0], slots).tolist() == []


def test_idf_is_kept_for_the_counts_it_was_computed_for() -> None:
    w = Weights(np.zeros(1, dtype=np.int64), np.ones(1))
    assert w.idf(100, 10) == math.log((100.0 - 10.0 + 0.5) / (10.0 + 0.5))
    assert w.idf(100, 60) == 1e-6  # not positive: FTS5's floor
    assert w.idf(101, 10) == math.log((101.0 - 10.0 + 0.5) / (10.0 + 0.5))


def _reference(
    stats: Stats, docs: list[dict[str, int]], ids: list[str], phrases: list[str], k: int
) -> list[tuple[str, float]]:
    n = float(stats.n_rows)
    avgdl = float(stats.tokens) / n
    scored = []
    for rid, terms in zip(ids, docs, strict=True):
        if not any(t in terms for t in phrases):
            continue
        d = float(sum(terms.values()))
        score = 0.0
        for t in phrases:
            if t not in terms:
                continue
            held = float(stats.df[t])
            idf = math.log((n - held + 0.5) / (held + 0.5))
            idf = 1e-6 if idf <= 0.0 else idf
            tf = float(terms[t])
            score += idf * ((tf * (K1 + 1.0)) / (tf + K1 * (1 - B + B * d / avgdl)))
        scored.append((-score, rid))
    return [(rid, -s) for s, rid in sorted(scored)[:k]]


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_scores_equal_plain_float_sums_bit_for_bit(seed: int) -> None:
    rng = random.Random(seed)
    vocab = [f"t{i}" for i in range(300)]
    weights = [1.0 / (r + 1) for r in range(len(vocab))]
    docs = []
    for _ in range(3_000):
        terms: dict[str, int] = {}
        for t in rng.choices(vocab, weights, k=rng.randint(1, 25)):
            terms[t] = terms.get(t, 0) + 1
        docs.append(terms)
    ids = [f"m{i:05d}" for i in range(len(docs))]
    stats = Stats()
    for terms in docs:
        stats.add(terms)
    space = Postings()
    space.add(list(zip(ids, docs, strict=True)))
    space.compact()
    for _ in range(120):
        # common and rare words together, repeated at times: both scoring paths
        phrases = rng.choices(vocab, weights, k=rng.randint(2, 6)) + [
            rng.choice(vocab) for _ in range(rng.randint(0, 2))
        ]
        k = rng.choice([1, 5, 25])
        want = _reference(stats, docs, ids, phrases, k)
        for _ in range(2):  # the second search reuses the weights: the floor and common terms
            assert top(stats, space, phrases, k) == want, phrases


@pytest.mark.parametrize("seed", range(3))
def test_stats_add_all_counts_what_add_counts_row_by_row(seed: int) -> None:
    """`Stats.add_all` counts what `Stats.add` row by row does, and `Postings.add` goes through
    the pending lists, a namespace's first rows too (a batch is laid out from its arrays by
    `Postings.fill`: tests/store/test_lexical.py)."""
    rng = random.Random(seed)
    vocab = [f"t{i}" for i in range(60)] + ["café", "ünï", ""]
    rows = []
    for i in range(rng.choice([1, 7, 300])):
        terms: dict[str, int] = {}
        for t in rng.choices(vocab, k=rng.randint(0, 12)):
            terms[t] = terms.get(t, 0) + 1
        rows.append((f"m{i:04d}", terms))
    one, many = Stats(), Stats()
    for _, terms in rows:
        one.add(terms)
    many.add_all([terms for _, terms in rows])
    assert (one.n_rows, one.tokens, one.df) == (many.n_rows, many.tokens, many.df)
    space = Postings()
    space.add([("m0", {"t1": 2}), ("m1", {"t1": 1, "t2": 3})])
    assert space.pending == {"t1": ([0, 1], [2.0, 1.0]), "t2": ([1], [3.0])}
    assert (space.ids, space.where) == (["m0", "m1"], {"m0": 0, "m1": 1})
