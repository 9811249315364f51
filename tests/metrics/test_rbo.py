"""Rank-biased overlap (Webber, Moffat & Zobel 2010, equation 32) against values worked out by
hand at p = 0.9."""

from __future__ import annotations

import pytest

from memgauge.metrics.rbo import mean_pairwise_rbo, rbo_ext


def test_identical_and_disjoint_rankings() -> None:
    assert rbo_ext(["a", "b", "c"], ["a", "b", "c"]) == pytest.approx(1.0)
    assert rbo_ext(["a", "b", "c"], ["d", "e", "f"]) == 0.0


def test_two_swapped_items() -> None:
    # X_1 = 0, X_2 = 2: (1-p)/p * (2/2 * p^2) + (2/2) * p^2 = 0.09 + 0.81
    assert rbo_ext(["a", "b"], ["b", "a"]) == pytest.approx(0.9)


def test_even_lengths_by_equation_30() -> None:
    # S = abcd, L = badc: X = 0, 2, 2, 4
    # (1/9) * (0 + 1 * .81 + 2/3 * .729 + 1 * .6561) + 1 * .6561 = 0.2169 + 0.6561
    assert rbo_ext("abcd", "badc") == pytest.approx(0.873)


def test_uneven_lengths_by_equation_32() -> None:
    # S = ab (s = 2), L = cad (l = 3): X_1 = 0, X_2 = 1 (a), X_3 = 1; X_s = 1
    # sum_d X_d/d p^d = .81/2 + .729/3 = 0.648; tail X_s (d-s)/(s d) p^d at d=3: .729/6 = 0.1215
    # (1/9) * 0.7695 + ((1 - 1)/3 + 1/2) * .729 = 0.0855 + 0.3645
    assert rbo_ext("ab", "cad") == pytest.approx(0.45)
    assert rbo_ext("cad", "ab") == pytest.approx(0.45)  # symmetric


def test_a_prefix_extrapolates_to_full_agreement() -> None:
    # the shorter list agrees with the longer one as far as it goes: RBO_ext assumes it goes on
    assert rbo_ext("abcd", "ab") == pytest.approx(1.0)


def test_edges_and_pairs() -> None:
    assert rbo_ext([], []) == 1.0
    assert rbo_ext([], ["a"]) == 0.0
    assert rbo_ext(["a", "a", "b"], ["a", "b"]) == pytest.approx(1.0)  # first rank counts
    with pytest.raises(ValueError, match="p must be in"):
        rbo_ext("ab", "ab", p=1.0)
    assert mean_pairwise_rbo([["a", "b"]]) is None
    # pairs: (ab, ab) 1, (ab, ba) .9, (ab, ba) .9 -> mean 2.8 / 3
    assert mean_pairwise_rbo([["a", "b"], ["a", "b"], ["b", "a"]]) == pytest.approx(2.8 / 3)
