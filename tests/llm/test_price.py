"""USD per million tokens is said once, `Price.usd`: a run's spend (`priced`, the LLM usage
table of `runs show`, the optimizer's `maxCost`) and a query's cost (the cost aggregate's
`llm_cost_usd`) are priced by that one rule."""

from __future__ import annotations

from memgauge.aggregates.cost import _cost
from memgauge.llm.usage import PRICE_PER_TOKENS, Price, priced


def test_a_runs_spend_and_a_querys_cost_are_priced_by_one_rule() -> None:
    price = Price(0.15, 0.6)
    row = {"prompt_tokens": 1234, "completion_tokens": 567}
    one = price.usd(1234, 567)
    assert one == (1234 * 0.15 + 567 * 0.6) / PRICE_PER_TOKENS
    assert priced({"m": row}, {"m": price})["m"]["cost_usd"] == one
    # a query that called two priced models costs the sum of their prices, by the same rule
    assert _cost({"m": row, "n": {"prompt_tokens": 10}}, {"m": price, "n": price}) == (
        one + price.usd(10, 0)
    )
