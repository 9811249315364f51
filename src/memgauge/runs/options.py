"""How one run goes, whatever built its suite: one object, made once (by the CLI's shared options
or the API's keywords) and read by the engine as it is."""

from __future__ import annotations

from collections.abc import Iterable
from concurrent.futures import Executor as PoolExecutor
from dataclasses import dataclass, field
from typing import get_args

from memgauge._util.numbers import MAX_REPEAT
from memgauge.aggregates.targets import By, Requirement, parse_fail_under
from memgauge.errors import UsageError, argument

__all__ = ["RunOptions", "whole_number"]


@dataclass(frozen=True, kw_only=True)
class RunOptions:
    """A run's settings beside its suite.

    Attributes:
        resume: finish this run (its id) instead of starting one.
        retry_failed: with `resume`, run failed items (and retryable judge failures) again.
        force: with `resume`, take over a run whose owner is on another host.
        fail_under: targets from `--fail-under` (`[SUBJECT/][TASK/]MEASURE=VALUE`, parsed here:
            a bad one is a UsageError before anything runs; a name matching nothing is one at
            the end).
        by: the rule deciding targets, `point` or `ci-upper`.
        seed_targets: whether the seeds' targets fail the run (`--no-targets`: shown only).
        concurrency: items in flight (default: the suite's).
        workers: with more than one, subjects run in shards on a process pool of that many
            (or on `executor`); each worker keeps `concurrency` items in flight.
        executor: where shards run: `process`, `dask:local`, `dask://HOST:PORT`, or any
            `concurrent.futures.Executor` (`runs.pools`). Subjects given as live objects run
            in this process, after the shards.
        repeat: times every item goes through each subject (`--repeat`), over the suite's
            and its tasks' `repeat:`; None: as the suite says.
    """

    resume: str | None = None
    retry_failed: bool = False
    force: bool = False
    fail_under: Iterable[str | Requirement] = ()
    by: By = "point"
    seed_targets: bool = True
    concurrency: int | None = None
    workers: int = 1
    executor: str | PoolExecutor | None = None
    repeat: int | None = None
    #: `fail_under`, parsed
    requirements: tuple[Requirement, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        # the API's keywords arrive here as given: a wrong type is named here, not met as an
        # AttributeError or a comparison of str and int deep in the engine
        whole_number("concurrency", self.concurrency)
        whole_number("workers", self.workers, optional=False)
        whole_number("repeat", self.repeat)
        if self.concurrency is not None and self.concurrency < 1:
            raise UsageError(f"concurrency {self.concurrency}: give 1 or more items in flight")
        if self.repeat is not None and not 1 <= self.repeat <= MAX_REPEAT:
            raise UsageError(f"repeat {self.repeat}: give 1 to {MAX_REPEAT}")
        _check_executor(self.executor)
        if self.by not in get_args(By):
            raise UsageError(f"by {self.by!r}: give {' or '.join(map(repr, get_args(By)))}")
        if isinstance(self.fail_under, str | Requirement):
            raise TypeError(
                f"fail_under takes a list of targets, e.g. [{self.fail_under!r}], not one target"
            )
        given = tuple(self.fail_under)  # a list or a generator given: kept, and compared, as one
        for target in given:
            if not isinstance(target, str | Requirement):
                raise TypeError(
                    f"fail_under: a target is a 'MEASURE=VALUE' string or a Requirement, "
                    f"got {type(target).__name__} {target!r}"
                )
        object.__setattr__(self, "fail_under", given)
        parsed = (r if isinstance(r, Requirement) else parse_fail_under(r) for r in given)
        object.__setattr__(self, "requirements", tuple(parsed))


def _check_executor(executor: object) -> None:
    """UsageError for a scheduler address with no host or port (Dask's ValueError deep in the
    run, or a 20-second timeout for a port past 65535), TypeError for an executor that is
    neither a name nor an object with `submit`."""
    if executor is None:
        return
    if not isinstance(executor, str):
        if not callable(getattr(executor, "submit", None)):
            raise TypeError(
                "executor takes process, dask:local, dask://HOST:PORT or a "
                f"concurrent.futures.Executor, got {type(executor).__name__}"
            )
        return
    for scheme in ("dask://", "tcp://"):
        if executor.startswith(scheme):
            host, colon, port = executor.removeprefix(scheme).rpartition(":")
            if not (host and colon and port.isascii() and port.isdigit() and 0 < int(port) < 65536):
                raise UsageError(
                    f"{argument('executor', repr(executor))}: give the scheduler as {scheme}HOST:PORT "
                    "(a port from 1 to 65535)"
                )


def whole_number(name: str, value: object, *, optional: bool = True) -> None:
    """TypeError naming `name` unless `value` is a whole number (a bool is not one), or None
    when `optional`."""
    if value is None and optional:
        return
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} takes a whole number, got {type(value).__name__} {value!r}")
