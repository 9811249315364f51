"""How many queries each category needs (seed 002 sections 2.2 and 2.3): the one rule behind
`memgauge health`'s golden-set warnings and `memgauge evaluate`'s dataset warnings.

- Section 2.3: a per-category comparison needs at least `MIN_PER_CATEGORY` (15) queries in the
  category (15 detect an MRR difference of 0.10 within it); fewer, and its marks say little.
- Section 2.2: the golden set's target is `GOLDEN_TOTAL` (280) queries, spread over the eight
  categories as `GOLDEN_TARGETS` says.

A set of queries that uses the seed's categories is held to both (every seed category, present
or not); one that uses only its own categories (a LoCoMo import, a team's own labels) to the
minimum alone, for each category it has. Each shortfall is one warning.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["GOLDEN_TARGETS", "GOLDEN_TOTAL", "MIN_PER_CATEGORY", "category_coverage"]

#: seed 002 section 2.2: target queries per category, 280 in all
GOLDEN_TARGETS: dict[str, int] = {
    "trigger-match": 30,
    "semantic-search": 50,
    "causal-query": 25,
    "cross-folder": 25,
    "intent-specific": 105,
    "cold-start": 15,
    "multi-concept": 20,
    "edge-case": 10,
}
GOLDEN_TOTAL = 280
#: seed 002 section 2.3: 15 per category detects an MRR difference of 0.10 within it
MIN_PER_CATEGORY = 15


def category_coverage(
    counts: Mapping[str | None, int], label: str, *, seed_targets: bool | None = None
) -> tuple[dict[str, Any], list[str]]:
    """Queries per category (`counts`; None: no category) against the rule, and its warnings,
    each starting with `label` ("golden set", "dataset"). `seed_targets`: hold the queries to
    seed 002's targets (None: when any query has one of its categories, or there is none).

    The coverage: `queries`, `target` (None without the seed's targets), `min_per_category`,
    per seed category `queries`, `target`, `short_of_target`, `below_minimum`, and
    `other_categories` (name -> queries) with `other_below_minimum` (their names)."""
    total = sum(counts.values())
    named = {str(c): n for c, n in counts.items() if c is not None}
    if seed_targets is None:
        seed_targets = total == 0 or any(c in GOLDEN_TARGETS for c in named)
    categories = {}
    if seed_targets:
        for cat, target in GOLDEN_TARGETS.items():
            have = named.get(cat, 0)
            categories[cat] = {
                "queries": have,
                "target": target,
                "short_of_target": max(target - have, 0),
                "below_minimum": have < MIN_PER_CATEGORY,
            }
    other = {c: n for c, n in named.items() if c not in categories}
    other_low = [c for c, n in other.items() if n < MIN_PER_CATEGORY]
    coverage = {
        "queries": total,
        "target": GOLDEN_TOTAL if seed_targets else None,
        "min_per_category": MIN_PER_CATEGORY,
        "categories": categories,
        "other_categories": other,
        "other_below_minimum": other_low,
    }
    warnings = []
    if seed_targets and total < GOLDEN_TOTAL:
        warnings.append(f"{label}: {total} of {GOLDEN_TOTAL} queries")
    short = [
        f"{cat} ({c['queries']} of {c['target']})"
        for cat, c in categories.items()
        if c["short_of_target"]
    ]
    if short:
        warnings.append(f"{label}: short of the category target: {', '.join(short)}")
    low = [f"{cat} ({c['queries']})" for cat, c in categories.items() if c["below_minimum"]]
    low += [f"{cat} ({other[cat]})" for cat in other_low]
    if low:
        warnings.append(
            f"{label}: under the {MIN_PER_CATEGORY} queries a per-category comparison needs:"
            f" {', '.join(low)}"
        )
    return coverage, warnings
