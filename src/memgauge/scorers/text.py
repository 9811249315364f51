"""Deterministic text evaluators: exact, contains, icontains, regex; each can be negated.

`expected` may be one string or a list of strings (any of them may match). Non-string outputs
are compared as their `str()`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from memgauge.errors import UsageError
from memgauge.scorers.base import EvalContext, Score

__all__ = ["Contains", "ExactMatch", "IContains", "Regex"]


def _targets(ctx: EvalContext, own: str | None) -> list[str] | None:
    value: Any = own if own is not None else ctx.expected
    if value is None:
        return None
    if isinstance(value, str):
        return [value]
    if isinstance(value, Sequence):
        return [str(v) for v in value]
    return [str(value)]


def _verdict(hit: str | None, negate: bool, shown: str) -> Score:
    matched = hit is not None
    passed = matched != negate
    if matched:
        reason = f"output {'must not' if negate else 'does'} {shown} {hit!r}"
    else:
        reason = f"output {'does not' if not negate else 'correctly does not'} {shown}"
    return Score(
        value=1.0 if passed else 0.0, passed=passed, reason=reason, detail={"matched": hit}
    )


@dataclass(frozen=True)
class _TextEvaluator:
    """The arguments every text evaluator shares.

    Args:
        value: the expected text; default: the item's expected (one string or a list, any of
            which may match).
        negate: pass when the output does not match instead.
        strip: strip surrounding whitespace from the output and the expected text before
            comparing.
    """

    value: str | None = None
    negate: bool = False
    strip: bool = True
    name: ClassVar[str] = ""
    verb: ClassVar[str] = ""

    def _match(self, output: str, target: str) -> bool:
        raise NotImplementedError

    def evaluate(self, ctx: EvalContext) -> Score:
        targets = _targets(ctx, self.value)
        if targets is None:
            return Score.failure(f"{self.name}: no expected value on the item or the evaluator")
        out = "" if ctx.output is None else str(ctx.output)
        if self.strip:
            out = out.strip()
        clean = self.strip and self.name != "regex"  # a pattern's spaces are part of it
        try:
            hit = next((t for t in targets if self._match(out, t.strip() if clean else t)), None)
        except UsageError as exc:
            return Score.failure(str(exc))
        return _verdict(hit, self.negate, self.verb)


@dataclass(frozen=True)
class ExactMatch(_TextEvaluator):
    """Output equals the expected text (after stripping surrounding whitespace).

    Args:
        case_sensitive: false compares the texts ignoring case (Unicode case folding).
    """

    case_sensitive: bool = True
    name: ClassVar[str] = "exact"
    verb: ClassVar[str] = "equal"

    def _match(self, output: str, target: str) -> bool:
        if self.case_sensitive:
            return output == target
        return output.casefold() == target.casefold()


@dataclass(frozen=True)
class Contains(_TextEvaluator):
    """Output contains the expected text."""

    name: ClassVar[str] = "contains"
    verb: ClassVar[str] = "contain"

    def _match(self, output: str, target: str) -> bool:
        return target in output


@dataclass(frozen=True)
class IContains(_TextEvaluator):
    """Output contains the expected text, ignoring case (Unicode case folding)."""

    name: ClassVar[str] = "icontains"
    verb: ClassVar[str] = "contain (ignoring case)"

    def _match(self, output: str, target: str) -> bool:
        return target.casefold() in output.casefold()


@dataclass(frozen=True)
class Regex(_TextEvaluator):
    """Output matches the pattern (re.search); `flags` from i, m, s.

    Args:
        value: the pattern (Python `re` syntax); default: the item's expected (one pattern or
            a list, any of which may match).
        strip: strip surrounding whitespace from the output (never from the pattern, whose
            spaces are part of it).
        flags: any of `i` (ignore case), `m` (^ and $ at each line), `s` (. matches a newline).
    """

    flags: str = ""
    name: ClassVar[str] = "regex"
    verb: ClassVar[str] = "match"
    _cache: dict[str, re.Pattern[str]] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    def __post_init__(self) -> None:
        bad = set(self.flags) - set("ims")
        if bad:
            raise UsageError(f"regex flags are i, m and s; got {''.join(sorted(bad))!r}")
        if self.value is not None:
            self._compile(self.value)

    def _compile(self, pattern: str) -> re.Pattern[str]:
        if pattern not in self._cache:
            flags = 0
            for ch, f in (("i", re.IGNORECASE), ("m", re.MULTILINE), ("s", re.DOTALL)):
                if ch in self.flags:
                    flags |= f
            try:
                self._cache[pattern] = re.compile(pattern, flags)
            except re.error as exc:
                raise UsageError(f"regex {pattern!r} does not compile: {exc}") from None
        return self._cache[pattern]

    def _match(self, output: str, target: str) -> bool:
        return self._compile(target).search(output) is not None
