"""Reproductions of the benchmarks' own scoring, checked on randomized cases.

Each run draws a fresh seed, so every run tries new cases; a failure prints the seed, and
`MEMGAUGE_TEST_SEED=<seed>` replays it exactly.
"""

from __future__ import annotations

import os
import random
import secrets

import pytest


@pytest.fixture
def rng() -> random.Random:
    """A random generator with a fresh seed (or MEMGAUGE_TEST_SEED), printed if a test fails."""
    seed = int(os.environ.get("MEMGAUGE_TEST_SEED") or secrets.randbits(32))
    print(f"MEMGAUGE_TEST_SEED={seed}")  # pytest shows captured output of a failing test
    return random.Random(seed)
