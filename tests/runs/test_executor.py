"""The local asyncio executor: bounded concurrency, timeouts as data, and stopping early."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from memgauge.runs.executor import Job, LocalExecutor, TimedOut


def test_never_more_jobs_in_flight_than_the_concurrency() -> None:
    in_flight, peak, lock = [0], [0], threading.Lock()

    def work() -> str:
        with lock:
            in_flight[0] += 1
            peak[0] = max(peak[0], in_flight[0])
        time.sleep(0.01)
        with lock:
            in_flight[0] -= 1
        return "ok"

    done: list[Any] = []
    with ThreadPoolExecutor(max_workers=16) as pool:
        jobs = [Job((str(i),), work, pool, 5.0) for i in range(40)]
        LocalExecutor().execute(jobs, concurrency=3, on_done=lambda j, r: done.append(r) or True)
    assert done == ["ok"] * 40
    assert peak[0] == 3


def test_a_timeout_is_reported_and_the_rest_go_on() -> None:
    results: dict[str, Any] = {}
    with ThreadPoolExecutor(max_workers=4) as pool:
        jobs = [
            Job(("slow",), lambda: time.sleep(0.5) or "late", pool, 0.05),
            Job(("fast",), lambda: "ok", pool, 5.0),
        ]

        def on_done(job: Job, result: Any) -> bool:
            results[job.key[0]] = result
            return True

        LocalExecutor().execute(jobs, concurrency=2, on_done=on_done)
    assert results["fast"] == "ok"
    assert results["slow"] == TimedOut(0.05)


def test_on_done_false_stops_taking_new_jobs() -> None:
    seen: list[str] = []
    with ThreadPoolExecutor(max_workers=1) as pool:
        jobs = (Job((str(i),), lambda i=i: i, pool, 5.0) for i in range(100))  # type: ignore[misc]

        def on_done(job: Job, result: Any) -> bool:
            seen.append(job.key[0])
            return len(seen) < 5

        LocalExecutor().execute(jobs, concurrency=1, on_done=on_done)
    assert seen == ["0", "1", "2", "3", "4"]


def test_the_timeout_counts_from_when_the_lane_starts_the_job() -> None:
    # four jobs of 0.2 s queued at once for a one-thread lane: the last starts after 0.6 s,
    # beyond its 0.5 s timeout counted from the queue, yet it runs for only 0.2 s
    results: list[Any] = []
    with ThreadPoolExecutor(max_workers=1) as lane:
        jobs = [Job((str(i),), lambda i=i: time.sleep(0.2) or i, lane, 0.5) for i in range(4)]  # type: ignore[misc]
        LocalExecutor().execute(jobs, concurrency=4, on_done=lambda j, r: results.append(r) or True)
    assert sorted(results) == [0, 1, 2, 3]


def test_a_slow_job_in_a_one_thread_lane_times_out_and_the_queue_behind_it_answers() -> None:
    results: dict[str, Any] = {}
    with ThreadPoolExecutor(max_workers=1) as lane:
        jobs = [
            Job(("slow",), lambda: time.sleep(1.0) or "late", lane, 0.3),
            *[Job((str(i),), lambda i=i: time.sleep(0.1) or i, lane, 0.3) for i in range(3)],  # type: ignore[misc]
        ]

        def on_done(job: Job, result: Any) -> bool:
            results[job.key[0]] = result
            return True

        LocalExecutor().execute(jobs, concurrency=4, on_done=on_done)
    assert results == {"slow": TimedOut(0.3), "0": 0, "1": 1, "2": 2}


def test_on_done_is_called_for_one_job_at_a_time() -> None:
    inside, overlapped, lock = [0], [False], threading.Lock()

    def on_done(job: Job, result: Any) -> bool:
        with lock:
            inside[0] += 1
            overlapped[0] |= inside[0] > 1
        time.sleep(0.001)
        with lock:
            inside[0] -= 1
        return True

    with ThreadPoolExecutor(max_workers=8) as pool:
        jobs = [Job((str(i),), lambda i=i: i, pool, 5.0) for i in range(200)]  # type: ignore[misc]
        LocalExecutor().execute(jobs, concurrency=8, on_done=on_done)
    assert not overlapped[0]


def test_a_job_that_raises_stops_the_run_with_its_exception() -> None:
    def boom() -> str:
        raise RuntimeError("broken job")

    seen: list[str] = []
    with ThreadPoolExecutor(max_workers=1) as pool:
        jobs = [Job(("a",), lambda: "a", pool, 5.0), Job(("b",), boom, pool, 5.0)]
        jobs += [Job((str(i),), lambda i=i: i, pool, 5.0) for i in range(50)]  # type: ignore[misc]
        with pytest.raises(RuntimeError, match="broken job"):
            LocalExecutor().execute(
                jobs, concurrency=1, on_done=lambda j, r: seen.append(j.key[0]) or True
            )
    assert seen == ["a"]


def test_then_runs_in_its_pool_and_its_result_is_reported() -> None:
    names: list[str] = []
    with (
        ThreadPoolExecutor(max_workers=1, thread_name_prefix="lane") as lane,
        ThreadPoolExecutor(max_workers=2, thread_name_prefix="score") as scoring,
    ):

        def then(x: int) -> int:
            names.append(threading.current_thread().name)
            return x * 10

        jobs = [
            Job((str(i),), lambda i=i: i, lane, 5.0, then=then, then_pool=scoring)  # type: ignore[misc]
            for i in range(5)
        ]
        results: list[int] = []
        LocalExecutor().execute(jobs, concurrency=3, on_done=lambda j, r: results.append(r) or True)
    assert sorted(results) == [0, 10, 20, 30, 40]
    assert all(n.startswith("score") for n in names)
