"""USD per million tokens is said once, `Price.usd`: a run's spend (`priced`, the LLM usage
table of `runs show`, the optimizer's `maxCost`) and a query's cost (the cost aggregate's
`llm_cost_usd`) are priced by that one rule."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from memgauge.aggregates.cost import _cost
from memgauge.errors import UsageError
from memgauge.llm.usage import PRICE_PER_TOKENS, Price, UsageMeter, priced


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


def _meter_with(prices: str, monkeypatch: pytest.MonkeyPatch) -> str:
    """The UsageError of the meter a process builds on start (memgauge.llm.context) when
    MEMGAUGE_PRICES is `prices`."""
    with monkeypatch.context() as env:
        env.setenv("MEMGAUGE_PRICES", prices)
        with pytest.raises(UsageError) as caught:
            UsageMeter()
    return str(caught.value)


def test_memgauge_prices_on_a_fifo_is_refused_not_waited_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """MEMGAUGE_PRICES naming a FIFO blocked every command until something wrote to it
    (fuzzC-6). A writer stands by so that a reader would not block: the table it would read is
    refused all the same."""
    fifo = tmp_path / "prices"
    os.mkfifo(fifo)

    def write() -> None:
        fd = os.open(fifo, os.O_WRONLY)  # waits for a reader
        os.write(fd, b"{}\n")
        os.close(fd)

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    try:
        message = _meter_with(str(fifo), monkeypatch)
    finally:
        # the writer still waits for a reader: one that does not block lets it finish
        reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
        writer.join()
        os.close(reader)
    assert message.startswith(f"MEMGAUGE_PRICES={fifo}: not a regular file (a directory, FIFO")


def test_memgauge_prices_that_names_no_file_says_the_variable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """It said `abc: cannot read the price table`, naming no variable to look for."""
    message = _meter_with("abc", monkeypatch)
    assert message == "MEMGAUGE_PRICES=abc: cannot read the price table (No such file or directory)"
