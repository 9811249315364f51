"""Concurrency that backs off when the provider says "too many requests" and recovers.

Additive increase, multiplicative decrease (AIMD, as TCP does): a 429 halves the number of
requests allowed in flight (at most once per `cooldown` seconds, so one burst of 429s counts
once), and every `limit` successes in a row allow one more, up to the configured maximum.

`RequestRate` adds an optional cap on requests per minute, for providers that publish one:
the concurrency limit alone lets a fast endpoint take far more than its quota before the first
429 comes back.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections import deque
from collections.abc import Awaitable, Callable

__all__ = ["AdaptiveLimiter", "RequestRate"]


class AdaptiveLimiter:
    """An asyncio semaphore whose size adapts to rate limiting. Use on one event loop."""

    def __init__(self, max_concurrency: int, *, cooldown: float = 1.0) -> None:
        if max_concurrency < 1:
            raise ValueError("max_concurrency must be at least 1")
        self.max_limit = max_concurrency
        self.limit = max_concurrency
        self.lowest = max_concurrency
        self.in_flight = 0
        self.cuts = 0
        self.cooldown = cooldown
        self._streak = 0
        self._last_cut = -float("inf")
        self._waiters: deque[asyncio.Future[None]] = deque()

    async def acquire(self) -> None:
        """Wait for a slot."""
        if self.in_flight < self.limit and not self._waiters:
            self.in_flight += 1
            return
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.append(fut)
        try:
            await fut
        except asyncio.CancelledError:
            if fut.done() and not fut.cancelled():
                self.release()  # the slot was handed over just as we were cancelled
            raise

    def release(self) -> None:
        """Give a slot back."""
        self.in_flight -= 1
        self._wake()

    def _wake(self) -> None:
        while self._waiters and self.in_flight < self.limit:
            fut = self._waiters.popleft()
            if fut.done():
                continue
            self.in_flight += 1
            fut.set_result(None)

    def on_success(self) -> None:
        """A request succeeded: grow back toward the maximum."""
        if self.limit >= self.max_limit:
            return
        self._streak += 1
        if self._streak >= self.limit:
            self._streak = 0
            self.limit += 1
            self._wake()

    def on_rate_limited(self) -> None:
        """A 429: halve the limit (once per cooldown)."""
        self._streak = 0
        now = time.monotonic()
        if now - self._last_cut < self.cooldown:
            return
        self._last_cut = now
        self.cuts += 1
        self.limit = max(1, self.limit // 2)
        self.lowest = min(self.lowest, self.limit)


class RequestRate:
    """At most `rpm` requests started per minute, spaced evenly: request n may start no earlier
    than `first + n * 60 / rpm` (a leaky bucket without burst, the GCRA of ATM networks with
    zero tolerance), so no 60-second window ever holds more than `rpm` starts.

    Each caller reserves the next free start under a thread lock, then sleeps until it on its
    own event loop, so one cap holds across every loop a client serves. A caller cancelled
    while it waits leaves its start unused: the cap errs on the side of fewer requests.

    `clock` and `sleep` are injectable, so tests check the schedule without waiting on it.
    """

    def __init__(
        self,
        rpm: float,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[object]] = asyncio.sleep,
    ) -> None:
        if not rpm > 0:
            raise ValueError(f"rpm must be positive, got {rpm}")
        self.rpm = rpm
        self.interval = 60.0 / rpm
        self.clock = clock
        self.sleep = sleep
        self.waited = 0.0
        self._next = -float("inf")
        self._lock = threading.Lock()

    def reserve(self) -> float:
        """Take the next start; seconds until it (0 when it is now)."""
        with self._lock:
            now = self.clock()
            start = max(now, self._next)
            self._next = start + self.interval
            wait = start - now
            self.waited += wait
            return wait

    async def acquire(self) -> None:
        """Wait for this request's start."""
        wait = self.reserve()
        if wait > 0:
            await self.sleep(wait)
