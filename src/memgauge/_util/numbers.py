"""Numbers written as text (TREC columns, `KEY=VALUE` settings, a script's last line), read the
way C tools and JSON read them, not the way Python's `int()` / `float()` do.

Python accepts forms no other tool does: `1_0` (10 to Python, 1 to trec_eval's `atof`),
Arabic-Indic or other non-ASCII digits (`١٢`), surrounding Unicode spaces, and `nan`,
`inf`, `infinity`. A number here is ASCII: an optional sign, digits, an optional fraction and
exponent; and it is finite. Anything else is refused with a message saying why, so a file is
never read differently by memgauge and by the tool that wrote it. One exception: a TREC run's
score may be infinite (`parse_run_score`), as trec_eval, pytrec_eval and ir_measures read it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable

__all__ = [
    "AUDIT_MAX_FAILURE_RATE",
    "CONFIDENCE",
    "INT32_MAX",
    "INT64_MAX",
    "INT64_MIN",
    "MAX_FAILURE_RATE",
    "MAX_GRADE",
    "MAX_K",
    "MAX_REPEAT",
    "MAX_RESAMPLES",
    "MIN_RESAMPLES",
    "N_RESAMPLES",
    "SEED_MAX",
    "digits_shown",
    "fmean",
    "int_of_digits",
    "parse_finite_float",
    "parse_int",
    "parse_run_score",
    "resamples_out_of_range",
]

INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1
#: the largest value of the store's INTEGER columns on PostgreSQL (SQLite's hold 64 bits)
INT32_MAX = 2**31 - 1
#: the largest relevance grade memgauge stores (int32); readers refuse larger ones. Here rather
#: than in `_types` so that reading a qrels file does not import NumPy.
MAX_GRADE = INT32_MAX
#: the largest seed: NumPy's legacy seeding and Optuna's samplers take 0 to 2^32 - 1
SEED_MAX = 2**32 - 1
#: the most hits a task asks of a memory subject (a suite task's `k`, `evaluate --k`)
MAX_K = 1000
#: the most times a run may put each item through a subject (`repeat:`, `--repeat`): past it
#: a typo (1000 for 10) would multiply a run's cost unseen
MAX_REPEAT = 100
#: the most bootstrap resamples: each one is a column of every measure's resample matrix
MAX_RESAMPLES = 1_000_000
#: the fewest: a 95% interval's bounds are its 2.5th and 97.5th percentiles, and below 100
#: resamples each is two or three draws, an interval that moves with the seed. One bound for
#: `--resamples`, `evaluate(resamples=)` and a suite's `n_resamples:`
MIN_RESAMPLES = 100


def resamples_out_of_range(n: int) -> str | None:
    """What to give instead of `n` bootstrap resamples, or None when they are in range."""
    if MIN_RESAMPLES <= n <= MAX_RESAMPLES:
        return None
    return f"give {MIN_RESAMPLES} to {MAX_RESAMPLES:,}"


#: the bootstrap's resamples and confidence level, unless a caller sets others: every interval
#: drawn with the defaults (an evaluator's row, an aggregate's measure, `--resamples`) draws these
N_RESAMPLES = 1000
CONFIDENCE = 0.95
#: the share of a subject's items that may fail before the run stops it (exit 4), unless a
#: suite or --max-failure-rate says otherwise; an audit's probes, of which half may fail
MAX_FAILURE_RATE = 0.1
AUDIT_MAX_FAILURE_RATE = 0.5
#: every test's significance level (its type I error) and a sequential test's type II error,
#: unless a caller sets others; a sample size's power; seed 002's minimum detectable effect
#: (0.05 MRR) of a sequential test and of `sample-size`
ALPHA = 0.05
BETA = 0.20
POWER = 0.80
MDE = 0.05

_INT = re.compile(r"[+-]?[0-9]+", re.ASCII)
_FLOAT = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?", re.ASCII)


def _why_not(text: str) -> str:
    if "_" in text:
        return ": underscores are not digit separators here"
    if not text.isascii():
        return ": only the ASCII digits 0-9 are read as digits here"
    if text.strip().lower().lstrip("+-") in ("nan", "inf", "infinity"):
        return ": NaN and infinity are not allowed; write a finite number"
    return ""


_INFINITY = re.compile(r"[+-]?inf(?:inity)?", re.ASCII | re.IGNORECASE)


def parse_run_score(text: str) -> float:
    """A TREC run's score: a number as `parse_finite_float` reads it, or an infinity (`inf`,
    `-Infinity`, or a literal past the largest double such as `1e999`), which trec_eval's
    `atof`, pytrec_eval and ir_measures all read and order; NaN, which none can order, is
    refused with a ValueError."""
    if _INFINITY.fullmatch(text):
        return float(text)
    if not _FLOAT.fullmatch(text):
        if text.strip().lower().lstrip("+-") == "nan":
            raise ValueError(f"{text!r} is not a number: NaN has no place in a ranking")
        raise ValueError(f"{text!r} is not a number{_why_not(text)}")
    return float(text)


def int_of_digits(text: str) -> int:
    """The integer `text` (`[+-]?[0-9]+`) writes, its value deciding whether it fits in 64
    bits, not its digit count: leading zeros count for nothing (`0000000000000000000001` is
    1). A value of more than 19 digits, which no 64-bit integer has, is one past the bound on
    its side (INT64_MAX + 1, INT64_MIN - 1) without int() of it (slow past thousands of
    digits, an error past 4300)."""
    negative = text.startswith("-")
    digits = text.lstrip("+-").lstrip("0") or "0"
    if len(digits) > 19:
        return INT64_MIN - 1 if negative else INT64_MAX + 1
    return -int(digits) if negative else int(digits)


def parse_int(text: str) -> int:
    """`text` as an integer that fits in 64 bits (what SQLite stores); ValueError saying why
    not."""
    if not _INT.fullmatch(text):
        raise ValueError(f"{text!r} is not an integer{_why_not(text)}")
    value = int_of_digits(text)
    if not INT64_MIN <= value <= INT64_MAX:
        shown = digits_shown(text)
        raise ValueError(f"'{shown}' is out of range: integers must fit in 64 bits")
    return value


def parse_finite_float(text: str) -> float:
    """`text` as a finite float; ValueError saying why not (`1e999` overflows to infinity)."""
    if not _FLOAT.fullmatch(text):
        raise ValueError(f"{text!r} is not a number{_why_not(text)}")
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"{text!r} is too large: it overflows to infinity; write a finite number")
    return value


def fmean(values: Iterable[float]) -> float:
    """The mean of `values` (at least one, none NaN) from their exactly rounded sum
    (`math.fsum`, as `statistics.fmean`): one number whatever their order, so every path that
    reports the mean of the same values (a run's evaluator row, the IR aggregate, a
    comparison's means and paired delta, an item's repeats) gives the same bits and prints the
    same digits, where a float sum in another order may not (0.4774999999999999, printed
    0.477, for the 0.47750000000000004 of twenty F1 scores). Values whose sum passes the
    largest float (a plug-in evaluator's 1e308s) are averaged as their shares, and both
    infinities give NaN, as NumPy's mean: fsum's OverflowError and ValueError were exit 70."""
    # a NumPy array's tolist() hands fsum Python floats without a loop in Python
    tolist = getattr(values, "tolist", None)
    vals: list[float] = tolist() if callable(tolist) else list(values)
    try:
        return math.fsum(vals) / len(vals)
    except OverflowError:  # the sum, not the mean, is past the largest float
        return math.fsum(v / len(vals) for v in vals)
    except ValueError:  # inf + -inf
        return math.nan


def digits_shown(number: int | str) -> str:
    """An integer as a message shows it: in full up to 30 characters, else its first 12 and
    how many digits it has (a 4300-digit grade is not written out)."""
    text = str(number)
    return text if len(text) <= 30 else f"{text[:12]}...({len(text.lstrip('-'))} digits)"
