"""Token and cost accounting: what a run spent, per model, from a configurable price table.

Prices change and differ per provider, so none are built in: a model without a price shows
its tokens and `cost: n/a`, never a made-up 0. A price table is YAML or JSON mapping model ids
to USD per million tokens: `{"gpt-4o-mini": {"input": 0.15, "output": 0.60}}`, given with
`MEMGAUGE_PRICES=path` or `load_prices(path)`.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memgauge.data.jsonio import decode_text
from memgauge.data.parsing import ParseError, load_yaml
from memgauge.errors import DataError, Problem, UsageError
from memgauge.llm.types import ChatResponse

__all__ = ["Price", "UsageMeter", "add_usage", "load_prices"]


@dataclass(frozen=True)
class Price:
    """USD per million input and output tokens."""

    input: float
    output: float


def load_prices(path: str | Path | None = None) -> dict[str, Price]:
    """Read a price table (`MEMGAUGE_PRICES` when `path` is None; empty when neither)."""
    where = path or os.environ.get("MEMGAUGE_PRICES")
    if not where:
        return {}
    p = Path(where)
    try:
        data = p.read_bytes()
    except OSError as exc:
        raise UsageError(f"{p}: cannot read the price table ({exc.strerror})") from None
    # YAML is a superset of JSON: the one bounded YAML reader takes both
    try:
        raw: Any = load_yaml(decode_text(data, str(p)))[0]
    except ParseError as exc:
        raise DataError(Problem(str(p), exc.line, None, exc.message)) from None
    if not isinstance(raw, Mapping):
        raise UsageError(f"{p}: a price table maps model ids to {{input: USD/Mtok, output: ...}}")
    out: dict[str, Price] = {}
    for model, entry in raw.items():
        prices = [entry.get(k) if isinstance(entry, Mapping) else None for k in ("input", "output")]
        if not all(
            isinstance(v, int | float) and not isinstance(v, bool) and v >= 0 for v in prices
        ):
            raise UsageError(
                f"{p}: {model}: give input and output prices in USD per million tokens, "
                '>= 0, e.g. {"input": 0.15, "output": 0.6}'
            )
        out[str(model)] = Price(float(prices[0]), float(prices[1]))  # type: ignore[arg-type]
    return out


class UsageMeter:
    """Thread-safe running totals per model: calls, cache hits, HTTP attempts, failures, tokens."""

    def __init__(self, prices: Mapping[str, Price] | None = None) -> None:
        self.prices = dict(prices) if prices is not None else load_prices()
        self._lock = threading.Lock()
        self._rows: dict[str, dict[str, int]] = {}

    def _row(self, model: str) -> dict[str, int]:
        return self._rows.setdefault(
            model,
            {
                "calls": 0,
                "cached": 0,
                "requests": 0,
                "failures": 0,
                "prompt_tokens": 0,
                "completion_tokens": 0,
            },
        )

    def record(self, response: ChatResponse) -> None:
        """Count one completion (from the network or the cache)."""
        with self._lock:
            row = self._row(response.model)
            row["calls"] += 1
            row["requests"] += response.attempts
            if response.cached:
                row["cached"] += 1
            else:
                row["prompt_tokens"] += response.usage.prompt_tokens
                row["completion_tokens"] += response.usage.completion_tokens

    def record_failure(self, model: str, attempts: int) -> None:
        """Count a call that failed for good after `attempts` requests."""
        with self._lock:
            row = self._row(model)
            row["failures"] += 1
            row["requests"] += attempts

    def snapshot(self) -> dict[str, dict[str, Any]]:
        """Totals per model with `cost_usd` (None when the model has no price)."""
        with self._lock:
            rows = {m: dict(r) for m, r in self._rows.items()}
        out: dict[str, dict[str, Any]] = {}
        for model, row in rows.items():
            price = self.prices.get(model)
            cost = (
                (row["prompt_tokens"] * price.input + row["completion_tokens"] * price.output) / 1e6
                if price is not None
                else None
            )
            out[model] = {**row, "cost_usd": cost}
        return out

    def since(self, before: Mapping[str, Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
        """What was spent since `before` (an earlier `snapshot()`), models with activity only."""
        now = self.snapshot()
        out: dict[str, dict[str, Any]] = {}
        for model, row in now.items():
            prev = before.get(model, {})
            delta: dict[str, Any] = {
                k: v - int(prev.get(k, 0)) for k, v in row.items() if k != "cost_usd"
            }
            if not any(delta.values()):
                continue
            price = self.prices.get(model)
            delta["cost_usd"] = (
                (delta["prompt_tokens"] * price.input + delta["completion_tokens"] * price.output)
                / 1e6
                if price is not None
                else None
            )
            out[model] = delta
        return out


def add_usage(
    a: Mapping[str, Mapping[str, Any]], b: Mapping[str, Mapping[str, Any]]
) -> dict[str, dict[str, Any]]:
    """Two usage tables added per model (a cost is None when either side's is unknown)."""
    out: dict[str, dict[str, Any]] = {m: dict(r) for m, r in a.items()}
    for model, row in b.items():
        cur = out.setdefault(model, {})
        for k, v in row.items():
            if k == "cost_usd":
                prev = cur.get(k, 0.0) if model in a else 0.0
                cur[k] = None if v is None or prev is None else prev + v
            else:
                cur[k] = int(cur.get(k, 0)) + int(v)
    return out
