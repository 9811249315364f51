"""One retry policy for every HTTP call memgauge makes (embeddings, HTTP subjects, and later
LLM calls): jittered exponential backoff on transient statuses and transport errors, bounded,
honouring a numeric Retry-After."""

from __future__ import annotations

import random
import time
from collections.abc import Callable

import httpx

__all__ = ["RETRY_STATUS", "RetriesExhausted", "send_with_retries"]

RETRY_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504})


class RetriesExhausted(Exception):  # noqa: N818 - named for what happened, like StopIteration
    """Every attempt failed: the last response (a transient status) or transport error."""

    def __init__(
        self, attempts: int, response: httpx.Response | None, error: Exception | None
    ) -> None:
        self.attempts = attempts
        self.response = response
        self.error = error
        what = f"status {response.status_code}" if response is not None else type(error).__name__
        super().__init__(f"{what} after {attempts} attempts")


def send_with_retries(
    send: Callable[[], httpx.Response],
    *,
    max_retries: int,
    base_delay: float = 0.5,
    max_delay: float = 30.0,
) -> httpx.Response:
    """Call `send` until it returns a status outside `RETRY_STATUS`, which is returned (errors
    such as 400 or 404 included: the caller decides). Raises RetriesExhausted after
    `max_retries + 1` attempts that all failed transiently."""
    delay = base_delay
    for attempt in range(1, max_retries + 2):
        response: httpx.Response | None = None
        try:
            response = send()
        except (httpx.TimeoutException, httpx.TransportError) as exc:
            if attempt > max_retries:
                raise RetriesExhausted(attempt, None, exc) from None
        else:
            if response.status_code not in RETRY_STATUS:
                return response
            if attempt > max_retries:
                raise RetriesExhausted(attempt, response, None)
            retry_after = response.headers.get("retry-after", "")
            if retry_after.replace(".", "", 1).isdigit():
                delay = max(delay, float(retry_after))
        time.sleep(min(delay, max_delay) * (0.5 + random.random()))
        delay = min(delay * 2, max_delay)
    raise AssertionError("unreachable")
