"""trec_eval's `-m` arguments, read as trec_eval reads them, and the order it prints measures in.

A trec_eval user writes `-m P.5,10`, `-m iprec_at_recall..10,.50`, `-m ndcg_cut.10,20`,
`-m recall` (its default cutoffs), `-m all_trec` or `-m official`; `memgauge metrics -m` reads
each of them as the measures trec_eval would compute, named as memgauge names them:

- `NAME.PARAMS`: the family NAME at each comma-separated parameter, sorted and without
  repeats as trec_eval does; a cutoff is read as trec_eval's `atol` reads it (`23.4` is 23), a
  recall level as a number from 0 to 1 (`.25`);
- a family name alone (`P`, `recall`, `ndcg_cut`, `map_cut`, `success`, `iprec_at_recall`):
  trec_eval's default parameters;
- `official`: trec_eval's default report; `all_trec`: every measure of trec_eval's `all_trec`
  that memgauge computes the same way (`TREC_ALL`), the others named in `TREC_ALL_LEFT_OUT`.

`ndcg.1=3,2=9,4=4.5` (a gain per relevance level) is memgauge's `nDCG(gains={1:3,2:9,4:4.5})`.
A trec_eval measure memgauge does not compute (`utility`, `Rprec_mult`, ...) is refused by name (`rbp` is memgauge's RBP at trec_eval's p = 0.9, which equals
trec_eval's on binary judgments only: read as a name, left out of `all_trec`). Anything else
is not trec_eval's syntax and is left to `parse_measure` (`P@5`, `P_5`, `nDCG@10`, ...).

`trec_order` sorts measures into the order trec_eval prints them in (its measure table, then
each family's parameters ascending), whatever order `-m` named them in.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from memgauge._util.numbers import INT32_MAX
from memgauge.errors import UsageError
from memgauge.metrics.measures import (
    TREC_OFFICIAL,
    Measure,
    gain_table,
    gain_text,
    is_measure,
    parse_measure,
    trec_name,
)

__all__ = [
    "TREC_ALL",
    "TREC_ALL_LEFT_OUT",
    "prints_runid",
    "trec_eval_measures",
    "trec_order",
]

#: trec_eval's measure families in the order it prints them (its measure table), and whether
#: memgauge computes each as trec_eval does (`rbp`: trec_eval's weighs graded judgments by their
#: grade, memgauge's RBP counts a document relevant or not)
_TABLE: tuple[tuple[str, bool], ...] = (
    ("runid", True),
    ("num_q", True),
    ("num_ret", True),
    ("num_rel", True),
    ("num_rel_ret", True),
    ("map", True),
    ("gm_map", True),
    ("Rprec", True),
    ("bpref", True),
    ("recip_rank", True),
    ("iprec_at_recall", True),
    ("P", True),
    ("recall", True),
    ("infAP", True),
    ("gm_bpref", False),
    ("Rprec_mult", False),
    ("utility", False),
    ("11pt_avg", False),
    ("binG", False),
    ("G", False),
    ("ndcg", True),
    ("ndcg_rel", False),
    ("Rndcg", False),
    ("ndcg_cut", True),
    ("map_cut", True),
    ("relative_P", False),
    ("success", True),
    ("set_P", True),
    ("set_relative_P", True),
    ("set_recall", True),
    ("set_map", False),
    ("set_F", True),
    ("num_nonrel_judged_ret", False),
    ("rbp", False),
    ("rbp_resid", True),
    ("unj", False),
    ("relstring", False),
)
_RANK = {family: i for i, (family, _) in enumerate(_TABLE)}

_CUTOFFS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
#: the families that take parameters, with trec_eval's defaults: cutoffs, or recall levels
_DEFAULTS: dict[str, tuple[float, ...]] = {
    "iprec_at_recall": tuple(i / 10 for i in range(11)),
    "P": _CUTOFFS,
    "recall": _CUTOFFS,
    "ndcg_cut": _CUTOFFS,
    "map_cut": _CUTOFFS,
    "success": (1, 5, 10),
}

#: trec_eval's measures memgauge does not compute as trec_eval does, in its order
TREC_ALL_LEFT_OUT: tuple[str, ...] = tuple(family for family, same in _TABLE if not same)


def _named(family: str, value: float) -> str:
    return f"{family}_{value:.2f}" if family == "iprec_at_recall" else f"{family}_{int(value)}"


def _family(family: str, values: Iterable[float]) -> list[str]:
    return [_named(family, v) for v in sorted(set(values))]


#: `-m all_trec`: trec_eval's all_trec, the measures memgauge computes as trec_eval does
TREC_ALL: tuple[str, ...] = tuple(
    name
    for family, same in _TABLE
    if same and family != "runid"
    for name in (_family(family, _DEFAULTS[family]) if family in _DEFAULTS else [family])
)


def _params(text: str, family: str, raw: str) -> list[float]:
    """The parameters of `-m family.raw`, as trec_eval reads them."""
    values: list[float] = []
    for part in raw.split(","):
        if family == "iprec_at_recall":
            try:
                level = float(part)
            except ValueError:
                level = -1.0
            if not 0.0 <= level <= 1.0:
                raise UsageError(
                    f"-m {text}: {part!r} is not a recall level; write levels from 0 to 1, "
                    "e.g. iprec_at_recall..10,.50"
                )
            values.append(level)
            continue
        digits = re.match(r"\s*\+?([0-9]+)", part)  # atol: the leading whole number
        if digits is None or not 1 <= int(digits.group(1)) <= INT32_MAX:
            raise UsageError(
                f"-m {text}: {part!r} is not a cutoff; write whole numbers from 1 to 2^31-1, "
                f"e.g. {family}.5,10"
            )
        values.append(int(digits.group(1)))
    return values


def trec_eval_measures(text: str) -> list[str] | None:
    """The measures trec_eval's `-m text` names (in trec_eval's names, which `parse_measure`
    reads), or None when `text` is not trec_eval's syntax; UsageError for a trec_eval measure
    memgauge does not compute or a parameter trec_eval would not take."""
    if text == "official":
        return [trec for m in TREC_OFFICIAL if (trec := trec_name(parse_measure(m)))]
    if text == "all_trec":
        return list(TREC_ALL)
    if text == "runid":
        return []  # no measure: the run's tag, which the report prints (`prints_runid`)
    family, dot, raw = text.partition(".")
    if family not in _RANK or (not dot and family not in _DEFAULTS and is_measure(family)):
        return None  # not trec_eval's syntax, or a plain name memgauge reads (`map`, `rbp`)
    if family == "ndcg" and dot:
        return [_gain_table(text, raw)]
    if family in TREC_ALL_LEFT_OUT:
        what = family
        raise UsageError(
            f"-m {text}: memgauge does not compute trec_eval's {what}; the measures it "
            f"computes as trec_eval does are those of -m all_trec: {', '.join(TREC_ALL[:9])} ..."
        )
    if family not in _DEFAULTS:
        raise UsageError(f"-m {text}: {family} takes no parameters; write -m {family}")
    if not dot:
        return _family(family, _DEFAULTS[family])
    if not raw:
        raise UsageError(f"-m {text}: no parameters after the dot, e.g. -m {family}.5,10")
    return _family(family, _params(text, family, raw))


def _gain_table(text: str, raw: str) -> str:
    """`-m ndcg.1=3,2=9,4=4.5`: trec_eval's ndcg with a gain per relevance level (a level not
    named gains its level), as memgauge's `nDCG(gains={1:3,2:9,4:4.5})`."""
    pairs = [part.split("=") for part in raw.split(",")]
    if not raw or any(len(p) != 2 or not p[1].strip() for p in pairs):
        raise UsageError(f"-m {text}: ndcg takes a gain per relevance level, e.g. ndcg.1=3,2=9")
    try:
        table = gain_table(f"-m {text}", pairs)
    except UsageError:
        raise  # a grade named twice, or out of range: said as gain_table says it
    except ValueError:
        raise UsageError(f"-m {text}: a gain is a number from 0, e.g. ndcg.1=3,2=9.5") from None
    return "nDCG(gains={" + ",".join(f"{g}:{gain_text(v)}" for g, v in table) + "})"


def prints_runid(texts: Iterable[str]) -> bool:
    """Whether trec_eval, given these `-m`, prints the run's tag first (`runid` is in
    `official` and `all_trec`)."""
    return any(t in ("runid", "official", "all_trec") for t in texts)


def _table_key(m: Measure) -> tuple[int, float]:
    """Where trec_eval prints `m`: its family's place in the table, then its parameter; a
    measure trec_eval has no name for after all of them."""
    name = trec_name(m)
    if name is None:
        return (len(_TABLE), 0.0)
    if m.name == "IPrec":
        return (_RANK["iprec_at_recall"], m.param or 0.0)
    if m.name == "nDCG" and m.cutoff is None:  # ndcg, or ndcg with a gain table (ndcg_1=3)
        return (_RANK["ndcg"], 0.0)
    if m.cutoff is not None:
        return (_RANK[name.rsplit("_", 1)[0]], float(m.cutoff))
    return (_RANK[name], 0.0)


def trec_order(measures: Iterable[Measure]) -> list[Measure]:
    """`measures` in the order trec_eval prints them (stable for those it has no name for)."""
    return sorted(measures, key=_table_key)
