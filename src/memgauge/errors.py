"""The one exception tree of memgauge.

```
MemgaugeError                 anything memgauge raises on purpose
├── UsageError                the user asked for something that cannot work (bad flag, bad spec)
├── DataError                 a file or record is malformed; carries every Problem found
├── UnavailableError          an optional capability is missing (no embedder, no extra installed)
└── SubjectError              the system under test failed (a crash, a timeout, a bad answer)
```

`UsageError` and `DataError` are user mistakes: the CLI prints their message and exits with
code 2, never a traceback. Their messages name the file, line or field and say how to fix it.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "DataError",
    "MemgaugeError",
    "Problem",
    "SubjectError",
    "UnavailableError",
    "UsageError",
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


class UsageError(MemgaugeError):
    """The user asked for something that cannot work; the message says what to do instead."""


class DataError(MemgaugeError):
    """An input is malformed. `problems` lists every problem found, not only the first."""

    def __init__(self, problems: list[Problem] | Problem | str, *, file: str = "<input>") -> None:
        if isinstance(problems, str):
            problems = [Problem(file, None, None, problems)]
        elif isinstance(problems, Problem):
            problems = [problems]
        self.problems: list[Problem] = list(problems)
        super().__init__("\n".join(str(p) for p in self.problems))


class UnavailableError(MemgaugeError):
    """An optional capability is not installed or not reachable; the message says how to get it."""


class SubjectError(MemgaugeError):
    """The memory system or agent under test failed."""
