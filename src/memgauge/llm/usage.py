"""Token and cost accounting: what a run spent, per model, from a configurable price table.

Prices change and differ per provider, so none are built in: a model without a price shows
its tokens and `cost: n/a`, never a made-up 0. A price table is YAML or JSON mapping model ids
to USD per million tokens: `{"gpt-4o-mini": {"input": 0.15, "output": 0.60}}`, given with
`MEMGAUGE_PRICES=path` or `load_prices(path)`.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memgauge.data.jsonio import decode_text
from memgauge.data.parsing import ParseError, load_yaml
from memgauge.data.records import USAGE_COUNTERS
from memgauge.errors import DataError, Problem, UsageError
from memgauge.llm.scope import CallScope, current_scope
from memgauge.llm.tally import add_to_tally
from memgauge.llm.types import ChatResponse, Usage

__all__ = [
    "PRICE_PER_TOKENS",
    "Listener",
    "Price",
    "UsageMeter",
    "load_prices",
    "priced",
]


#: the tokens a price is for: a price table gives USD per million tokens
PRICE_PER_TOKENS = 1_000_000


@dataclass(frozen=True)
class Price:
    """USD per million input and output tokens."""

    input: float
    output: float

    def usd(self, prompt_tokens: int, completion_tokens: int) -> float:
        """What `prompt_tokens` in and `completion_tokens` out cost, in USD: the one rule a
        run's spend (`priced`) and a query's (the cost aggregate) are counted by."""
        return (prompt_tokens * self.input + completion_tokens * self.output) / PRICE_PER_TOKENS


def load_prices(path: str | Path | None = None) -> dict[str, Price]:
    """Read a price table (`MEMGAUGE_PRICES` when `path` is None; empty when neither)."""
    where = path or os.environ.get("MEMGAUGE_PRICES")
    if not where:
        return {}
    p = Path(where)
    # a table the environment names is named by its variable: the command line never gave it
    name = str(p) if path else f"MEMGAUGE_PRICES={p}"
    if p.exists() and not p.is_file():
        # a FIFO's read waited for a writer: every run hung before its first item
        raise UsageError(
            f"{name}: not a regular file (a directory, FIFO or device); give the price table's"
            " file (YAML or JSON)"
        )
    try:
        data = p.read_bytes()
    except OSError as exc:
        raise UsageError(f"{name}: cannot read the price table ({exc.strerror})") from None
    # YAML is a superset of JSON: the one bounded YAML reader takes both
    try:
        raw: Any = load_yaml(decode_text(data, str(p)))[0]
    except ParseError as exc:
        raise DataError(Problem(str(p), exc.line, None, exc.message)) from None
    if not isinstance(raw, Mapping):
        raise UsageError(f"{p}: a price table maps model ids to {{input: USD/Mtok, output: ...}}")
    out: dict[str, Price] = {}
    for model, entry in raw.items():
        prices: list[Any] = [
            entry.get(k) if isinstance(entry, Mapping) else None for k in ("input", "output")
        ]
        if not all(
            isinstance(v, int | float) and not isinstance(v, bool) and v >= 0 for v in prices
        ):
            raise UsageError(
                f"{p}: {model}: give input and output prices in USD per million tokens, "
                '>= 0, e.g. {"input": 0.15, "output": 0.6}'
            )
        out[str(model)] = Price(float(prices[0]), float(prices[1]))
    return out


#: told of every change as it happens: (model, counter -> increment)
Listener = Callable[[str, Mapping[str, int]], None]


def priced(
    rows: Mapping[str, Mapping[str, Any]], prices: Mapping[str, Price]
) -> dict[str, dict[str, Any]]:
    """Usage rows with `cost_usd`: tokens times the model's price, None when it has none."""
    out: dict[str, dict[str, Any]] = {}
    for model, row in rows.items():
        counts = {k: int(row.get(k) or 0) for k in USAGE_COUNTERS}
        price = prices.get(model)
        cost = (
            price.usd(counts["prompt_tokens"], counts["completion_tokens"])
            if price is not None
            else None
        )
        out[model] = {**counts, "cost_usd": cost}
    return out


class UsageMeter:
    """Thread-safe running totals per model: calls, cache hits, HTTP requests, failures, tokens.

    Counted as it happens, so that a process killed at any moment has told its listeners (a
    run's store) everything it spent: `sent` before each HTTP request goes out (every attempt,
    retries included), `record` for each completion (from the network or the cache),
    `record_failure` for a call that failed for good. A listener is called synchronously, in the
    thread that counts, before the request is sent or the response used.
    """

    def __init__(self, prices: Mapping[str, Price] | None = None) -> None:
        self.prices = dict(prices) if prices is not None else load_prices()
        self._lock = threading.Lock()
        self._rows: dict[str, dict[str, int]] = {}
        self._listeners: tuple[tuple[Listener, CallScope | None], ...] = ()
        self._adapted: dict[str, set[str]] = {}

    def listen(self, listener: Listener, scope: CallScope | None = None) -> Callable[[], None]:
        """Tell `listener` of every change from now on (with `scope`: of the calls made in
        that scope only, one run's); returns the function that stops it."""
        pair = (listener, scope)
        with self._lock:
            self._listeners = (*self._listeners, pair)

        def stop() -> None:
            with self._lock:
                self._listeners = tuple(p for p in self._listeners if p is not pair)

        return stop

    def _add(self, model: str, delta: Mapping[str, int]) -> None:
        add_to_tally(model, delta)  # the item it is spent for, when the engine keeps one
        with self._lock:
            row = self._rows.setdefault(model, dict.fromkeys(USAGE_COUNTERS, 0))
            for key, value in delta.items():
                row[key] += value
            listeners = self._listeners
        scope = current_scope() if listeners else None
        for listener, only in listeners:
            if only is None or only is scope:
                listener(model, delta)

    def sent(self, model: str) -> None:
        """Count one HTTP request, before it is sent."""
        self._add(model, {"requests": 1})

    def record(self, response: ChatResponse) -> None:
        """Count one completion (from the network or the cache; its requests were `sent`)."""
        if response.cached:
            self._add(response.model, {"calls": 1, "cached": 1})
        else:
            self._add(
                response.model,
                {
                    "calls": 1,
                    "prompt_tokens": response.usage.prompt_tokens,
                    "completion_tokens": response.usage.completion_tokens,
                },
            )

    def record_failure(self, model: str) -> None:
        """Count a call that failed for good (its requests were `sent`)."""
        self._add(model, {"failures": 1})

    def billed(self, model: str, usage: Usage) -> None:
        """Count the tokens of a reply the provider billed and the call could not use (cut off
        at the token limit, no choice in it): spent, though no completion came of it."""
        if usage.prompt_tokens or usage.completion_tokens:
            self._add(
                model,
                {
                    "prompt_tokens": usage.prompt_tokens,
                    "completion_tokens": usage.completion_tokens,
                },
            )

    def adapted(self, model: str, adaptation: str) -> None:
        """Note that `model` rejected a parameter and is now asked without it
        (`llm.openai.ADAPTATIONS`): why its requests differ from what a spec says."""
        with self._lock:
            self._adapted.setdefault(model, set()).add(adaptation)

    def adaptations(self) -> dict[str, list[str]]:
        """model -> the parameter adaptations it needed, sorted."""
        with self._lock:
            return {m: sorted(a) for m, a in self._adapted.items()}

    def snapshot(self) -> dict[str, dict[str, Any]]:
        """Totals per model with `cost_usd` (None when the model has no price)."""
        with self._lock:
            rows = {m: dict(r) for m, r in self._rows.items()}
        return priced(rows, self.prices)
