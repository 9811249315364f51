"""The one exception tree of memgauge.

```
MemgaugeError                 anything memgauge raises on purpose
├── UsageError (ValueError)   the user asked for something that cannot work (bad flag, bad spec)
├── DataError                 a file or record is malformed; carries every Problem found
├── UnavailableError          an optional capability is missing (no embedder, no extra installed)
├── SubjectError              the system under test failed (a crash, a timeout, a bad answer)
│   ├── ReplyError            it returned something memgauge cannot read (the type is named)
│   └── EmptyMemoryError      after ingest, it holds nothing (failure kind `empty_memory`)
└── LLMError                  an LLM call failed after its retries (kind says how)
    └── CacheMissError        a `--cache-only` replay needed a response the cache does not hold
```

`UsageError` and `DataError` are user mistakes: the CLI prints their message and exits with
code 2, never a traceback. Their messages name the file, line or field and say how to fix it.

From Python (`memgauge.api`), an argument of the wrong type is a `TypeError` and one of a wrong
value a `UsageError`, which is a `ValueError` too: `except ValueError` catches it, as it
catches the standard library's.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "CacheMissError",
    "DataError",
    "EmptyMemoryError",
    "LLMError",
    "MemgaugeError",
    "Problem",
    "ReplyError",
    "RunInterrupted",
    "SubjectError",
    "UnavailableError",
    "UsageError",
    "argument",
    "check_name",
    "check_number",
    "check_path",
    "command_line",
    "in_order",
    "named_by",
    "on_command_line",
]


@dataclass(frozen=True, slots=True)
class Problem:
    """One thing wrong with an input file.

    Attributes:
        file: the path as the user gave it.
        line: 1-based line number, or None when the problem is about the whole file.
        field: dotted path of the field inside the record (`judgments.3.grade`), or None.
        message: what is wrong and how to fix it.
    """

    file: str
    line: int | None
    field: str | None
    message: str

    def __str__(self) -> str:
        where = self.file
        if self.line is not None:
            where += f":{self.line}"
        if self.field:
            where += f": {self.field}"
        return f"{where}: {self.message}"


class MemgaugeError(Exception):
    """Base of every error memgauge raises on purpose."""


class UsageError(MemgaugeError, ValueError):
    """The user asked for something that cannot work; the message says what to do instead.
    A `ValueError` too: what a Python caller catches for an argument of a wrong value."""


def named_by(given: str, found: Sequence[str], *, none: str, several: str) -> str:
    """The id of `found` (the ids starting with `given`) that `given` names: itself, or the
    only one; else a UsageError saying `none` (no id) or `several` (more than one)."""
    if given in found:
        return given
    if not found:
        raise UsageError(none)
    if len(found) > 1:
        raise UsageError(several)
    return found[0]


def in_order(problems: Iterable[Problem]) -> list[Problem]:
    """Problems file by file (in the order the files first appear), each file's by line (the
    whole-file ones first), the rest as found."""
    problems = list(problems)
    first: dict[str, int] = {}
    for p in problems:
        first.setdefault(p.file, len(first))
    return sorted(problems, key=lambda p: (first[p.file], -1 if p.line is None else p.line))


class DataError(MemgaugeError):
    """An input is malformed. `problems` lists every problem found, not only the first, in
    file and line order (`in_order`); `unlisted` counts those a reader found but did not keep
    (a file with thousands of bad lines)."""

    def __init__(
        self,
        problems: Iterable[Problem] | Problem | str,
        *,
        file: str = "<input>",
        unlisted: int = 0,
    ) -> None:
        if isinstance(problems, str):
            problems = [Problem(file, None, None, problems)]
        elif isinstance(problems, Problem):
            problems = [problems]
        self.problems: list[Problem] = in_order(problems)
        self.unlisted = unlisted
        super().__init__("\n".join(str(p) for p in self.problems))

    @property
    def count(self) -> int:
        """How many problems were found, listed or not."""
        return len(self.problems) + self.unlisted


class UnavailableError(MemgaugeError):
    """An optional capability is not installed or not reachable; the message says how to get it."""


class SubjectError(MemgaugeError):
    """The memory system or agent under test failed."""


class ReplyError(SubjectError):
    """The subject returned something memgauge cannot read: an agent's `answer()` gave neither
    text, an object with a `text` attribute, nor a mapping with "text". The message names the
    type returned and what is expected; a run records it as the item's failure (kind
    `subject`)."""


class EmptyMemoryError(SubjectError):
    """A memory subject holds nothing after ingest (its `dump()` lists no memory, or every
    search of a task found nothing): its items are failures of kind `empty_memory`, never
    scores of 0. The message says what was seen and what to check."""

    #: the `Failure.kind` its items are recorded with (see `Failure.of`)
    failure_kind = "empty_memory"


class LLMError(MemgaugeError):
    """An LLM call failed for good.

    `kind` is one of `rate_limit`, `server`, `timeout`, `connection`, `bad_response`, `auth`,
    `bad_request`, `truncated`, `cache_miss`; `attempts` is how many requests were made. The message never
    holds a key or a request header.
    """

    def __init__(self, kind: str, message: str, *, attempts: int = 1) -> None:
        self.kind = kind
        self.attempts = attempts
        super().__init__(
            f"{kind}: {message}" + (f" (after {attempts} attempts)" if attempts > 1 else "")
        )


class RunInterrupted(KeyboardInterrupt):
    """Ctrl-C (or SIGTERM, or a cancelled scope) stopped a run, which is kept as cancelled: its
    id, and whether it is in a store where `--resume` finds it."""

    def __init__(self, run_id: str, *, resumable: bool) -> None:
        self.run_id = run_id
        self.resumable = resumable
        super().__init__(run_id)

    def __str__(self) -> str:
        """What a program (a notebook's traceback) is told: the run, and how to finish it (the
        command line says its own, naming its flags)."""
        if not self.resumable:
            return (
                f"run {self.run_id} was interrupted; it was kept in memory only"
                f" ({argument('store', False, flag='--no-store')}): nothing to resume"
            )
        return (
            f"run {self.run_id} was interrupted and is kept as cancelled; finish it with the same"
            f" call and {argument('resume', repr(self.run_id))}"
        )


class CacheMissError(LLMError):
    """Replaying from the cache only, and this request was never made before."""

    def __init__(self, model: str, key: str) -> None:
        super().__init__(
            "cache_miss",
            f"no cached response for model {model!r} (key {key[:12]}); a --cache-only replay "
            "makes no calls: run once without --cache-only to fill the cache",
        )


#: whether a command of the CLI is running (`command_line`): its messages name its flags
_COMMAND_LINE: ContextVar[bool] = ContextVar("memgauge_command_line", default=False)


@contextmanager
def command_line() -> Iterator[None]:
    """Within it, `argument` names a setting by the command line's flag (the CLI runs each
    command within it); outside it, by the Python keyword."""
    token = _COMMAND_LINE.set(True)
    try:
        yield
    finally:
        _COMMAND_LINE.reset(token)


def on_command_line() -> bool:
    """Whether a command of the CLI is running (`command_line`): a message may name its flags."""
    return _COMMAND_LINE.get()


def argument(name: str, value: object = None, *, flag: str | None = None) -> str:
    """The setting `name` (a Python keyword, `pool_depth`), with `value` when given, as its
    caller wrote it: `--pool-depth N` in a command (its flag is `flag` where that is not
    `--pool-depth`), `pool_depth=N` from Python; for a message that says what to write. A
    switch is named by its flag alone: `argument("store", False, flag="--no-store")` is
    `--no-store` in a command, `store=False` from Python."""
    if on_command_line():
        option = flag or "--" + name.replace("_", "-")
        return option if value is None or isinstance(value, bool) else f"{option} {value}"
    return name if value is None else f"{name}={value}"


def check_number(name: str, value: object, *, whole: bool = False) -> None:
    """TypeError naming the argument `name` unless `value` is a number (a whole one when
    `whole`; a bool is not one): a setting from Python that would be stored as it came
    (`min_samples="5"`) and fail every later read of it."""
    if isinstance(value, bool) or not isinstance(value, int if whole else int | float):
        what = "a whole number" if whole else "a number"
        raise TypeError(f"{name} takes {what}, got {type(value).__name__} {value!r}")


def check_name(name: str, value: object) -> None:
    """TypeError naming the argument `name` unless `value` is a string."""
    if not isinstance(value, str):
        raise TypeError(f"{name} takes a string, got {type(value).__name__} {value!r}")


def check_path(name: str, value: object, instead: type | None = None) -> None:
    """TypeError naming the argument `name` unless `value` is a path (a string or any
    os.PathLike of one, as `Path` takes) or an `instead`; UsageError for an empty one (which `Path`
    reads as the current directory)."""
    if not isinstance(value, str | os.PathLike | (instead or Path)):
        also = f" or a {instead.__name__}" if instead else ""
        raise TypeError(f"{name} takes a path{also}, got {type(value).__name__} {value!r}")
    if isinstance(value, os.PathLike):
        value = os.fspath(value)
        if not isinstance(value, str):  # `Path` takes no bytes, and named no argument
            raise TypeError(f"{name} takes a path of text, got {type(value).__name__} {value!r}")
    if isinstance(value, str) and not value.strip():
        raise UsageError(f"{name} {value!r}: give a path")
