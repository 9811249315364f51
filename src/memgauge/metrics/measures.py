"""Measures as value objects with one canonical string each (`nDCG@10`, `RR@5`, `AP@100`,
`IPrec@0.1`, `RBP(p=0.8)`, ...).

`parse_measure` accepts the canonical form, ir_measures' names (`Bpref`, `SetP`, `NumRelRet`,
`Judged@10`, `IPrec@0.5`, `RBP(p=0.8)`), trec_eval's (`ndcg_cut_10`, `recip_rank`, `bpref`,
`iprec_at_recall_0.10`, `set_F`, `num_rel_ret`, `rbp`) and common aliases (`MRR@10` -> `RR@10`,
`MAP@100` -> `AP@100`), ir_measures' parameters where a measure has them (`ACCEPTS`:
`P(rel=2)@5`, its own relevance threshold; `AP(judged_only=True)`, unjudged documents taken out
of the ranking first; `nDCG(gains={0:0,1:1,2:3})@10`, a gain per grade; `nDCG(dcg='log2')`,
linear gain), and always prints back
the canonical form (parameters sorted by name), so a measure string is a stable key in files,
the store and reports. An unknown name is refused with the nearest known
one. `trec_name` gives trec_eval's name for a measure trec_eval computes the same way, for
output in trec_eval's layout.

RBP's persistence: `RBP` (ir_measures) defaults to p = 0.8, trec_eval's `rbp` / `rbp_resid` to
p = 0.9; the canonical form always names it.
"""

from __future__ import annotations

import contextlib
import difflib
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from memgauge._util.numbers import INT32_MAX
from memgauge.errors import UsageError

__all__ = [
    "ACCEPTS",
    "AGGREGATION",
    "MEASURE_NAMES",
    "SESSION_MEASURES",
    "TREC_OFFICIAL",
    "Measure",
    "is_measure",
    "own_conventions",
    "parse_measure",
    "refuse_run_level",
    "trec_name",
]

#: canonical name -> whether a cutoff is required
MEASURE_NAMES: dict[str, bool] = {
    "nDCG": False,
    "RR": False,
    "Recall": True,
    "P": True,
    "AP": False,
    "R-prec": False,
    "Hit": True,
    "recall_any": True,
    "recall_all": True,
    "ndcg_any": True,
    "session_recall_any": True,
    "session_recall_all": True,
    "session_ndcg_any": True,
    "gm_map": False,
    "Bpref": False,
    "infAP": False,
    "IPrec": False,
    "RBP": False,
    "RBP_resid": False,
    "Judged": False,
    "SetP": False,
    "SetR": False,
    "SetF": False,
    "NumQ": False,
    "NumRet": False,
    "NumRel": False,
    "NumRelRet": False,
}

#: Session-level measures computed from a turn ranking (LongMemEval's turn2session): they need
#: each query's corpus, so `memgauge.metrics.longmemeval` computes them, not `evaluate`.
SESSION_MEASURES: frozenset[str] = frozenset(
    {"session_recall_any", "session_recall_all", "session_ndcg_any"}
)

#: How a measure's per-query values become one number (every measure not named: "mean"):
#: counts are summed (trec_eval's and ir_measures' `all` line), gm_map is the geometric mean
#: of max(AP, 1e-5) (trec_eval's MIN_GEO_MEAN).
AGGREGATION: dict[str, Literal["sum", "gmean"]] = {
    "NumQ": "sum",
    "NumRet": "sum",
    "NumRel": "sum",
    "NumRelRet": "sum",
    "gm_map": "gmean",
}

#: measures that look at the whole ranking and take no cutoff (`--depth` cuts the run instead)
_NO_CUTOFF = frozenset(
    {
        "R-prec",
        "gm_map",
        "Bpref",
        "infAP",
        "IPrec",
        "RBP_resid",
        "SetP",
        "SetR",
        "SetF",
        "NumQ",
        "NumRet",
        "NumRel",
        "NumRelRet",
    }
)
_PERSISTENCE = frozenset({"RBP", "RBP_resid"})
_IR_MEASURES_P = 0.8  # ir_measures' RBP default
_TREC_EVAL_P = 0.9  # trec_eval's rbp / rbp_resid default

_ALIASES: dict[str, str] = {
    "ndcg": "nDCG",
    "ndcg_cut": "nDCG",
    "rr": "RR",
    "mrr": "RR",
    "recip_rank": "RR",
    "recall": "Recall",
    "r": "Recall",
    "p": "P",
    "precision": "P",
    "ap": "AP",
    "map": "AP",
    "map_cut": "AP",
    "r-prec": "R-prec",
    "rprec": "R-prec",
    "r_prec": "R-prec",
    "hit": "Hit",
    "success": "Hit",
    "recall_any": "recall_any",
    "recall_all": "recall_all",
    "ndcg_any": "ndcg_any",
    "session_recall_any": "session_recall_any",
    "session_recall_all": "session_recall_all",
    "session_ndcg_any": "session_ndcg_any",
    "gm_map": "gm_map",
    "gmap": "gm_map",
    "bpref": "Bpref",
    "infap": "infAP",
    "iprec": "IPrec",
    "iprec_at_recall": "IPrec",
    "rbp": "RBP",
    "rbp_resid": "RBP_resid",
    "judged": "Judged",
    "setp": "SetP",
    "set_p": "SetP",
    "set_relative_p": "SetP",
    "setr": "SetR",
    "set_recall": "SetR",
    "setf": "SetF",
    "set_f": "SetF",
    "numq": "NumQ",
    "num_q": "NumQ",
    "numret": "NumRet",
    "num_ret": "NumRet",
    "numrel": "NumRel",
    "num_rel": "NumRel",
    "numrelret": "NumRelRet",
    "num_rel_ret": "NumRelRet",
}

_PATTERN = re.compile(
    r"^\s*(?P<name>[A-Za-z][A-Za-z_\-]*?)(?:\((?P<args>[^()]*)\))?"
    r"(?:[@_](?P<at>[0-9]+(?:\.[0-9]*)?|\.[0-9]+))?\s*$"
)

#: trec_eval's default report (`-m official`), in its order (trec_eval also prints `runid`)
TREC_OFFICIAL: tuple[str, ...] = (
    "NumQ",
    "NumRet",
    "NumRel",
    "NumRelRet",
    "AP",
    "gm_map",
    "R-prec",
    "Bpref",
    "RR",
    *(f"IPrec@{i / 10!r}" for i in range(11)),
    *(f"P@{k}" for k in (5, 10, 15, 20, 30, 100, 200, 500, 1000)),
)


#: a measure's ir_measures parameter values: a relevance threshold, judged_only, a gain table
Option = int | bool | float | str | tuple[tuple[int, float], ...]


@dataclass(frozen=True, order=True, slots=True)
class Measure:
    """A retrieval measure, its rank cutoff (None = the whole ranking), its one real parameter
    where it has one (IPrec: the recall level; RBP and RBP_resid: the persistence p), and the
    ir_measures parameters it was given (`options`, sorted by name: `rel`, its own relevance
    threshold; `judged_only`, True; `gains`, a gain per grade).
    """

    name: str
    cutoff: int | None = None
    param: float | None = None
    options: tuple[tuple[str, Option], ...] = ()

    def __post_init__(self) -> None:
        if self.param is None and self.name in _PERSISTENCE:
            # built by hand (`Measure("RBP", 10)`): the persistence `RBP@10` parses to, so it
            # has the same name and value
            object.__setattr__(self, "param", _IR_MEASURES_P)
        # built by hand, it holds to what `parse_measure` holds a name to: `Measure("IPrec")`
        # printed `IPrec@None` and `Measure("P")` a P with no cutoff that no parser reads back
        if self.name not in MEASURE_NAMES:
            raise ValueError(f"Measure {self.name!r}: not a measure (parse_measure reads names)")
        if self.name == "IPrec":
            if self.param is None or not 0.0 <= self.param <= 1.0:
                raise ValueError("Measure('IPrec'): give its recall level from 0 to 1 as param")
        elif self.cutoff is None and MEASURE_NAMES[self.name]:
            raise ValueError(f"Measure({self.name!r}) needs a cutoff, e.g. {self.name}@10")
        if self.cutoff is not None and (self.name in _NO_CUTOFF or self.name == "IPrec"):
            raise ValueError(f"Measure({self.name!r}) takes no cutoff")
        if self.cutoff is not None and self.cutoff < 1:
            raise ValueError(f"Measure({self.name!r}): the cutoff must be 1 or more")

    @property
    def rel(self) -> int | None:
        """Its own relevance threshold (`rel=`), or None: the run's (`MetricConfig`)."""
        value = dict(self.options).get("rel")
        return value if isinstance(value, int) and not isinstance(value, bool) else None

    @property
    def judged_only(self) -> bool:
        """Whether unjudged documents are taken out of the ranking first (`judged_only=True`)."""
        return dict(self.options).get("judged_only") is True

    @property
    def gains(self) -> dict[int, float] | None:
        """nDCG's gain per grade (`gains=`; a grade not named gains its grade), or None."""
        value = dict(self.options).get("gains")
        return dict(value) if isinstance(value, tuple) else None

    @property
    def dcg_gain(self) -> str | None:
        """nDCG's gain kind named by `dcg=` (`linear` for 'log2', `exp` for 'exp-log2'), or
        None: the run's (`MetricConfig.gain`)."""
        value = dict(self.options).get("dcg")
        return DCG_GAIN[value] if isinstance(value, str) else None

    @property
    def relative(self) -> bool:
        """SetP relative to the most it could be (`relative=True`, trec_eval's set_relative_P)."""
        return dict(self.options).get("relative") is True

    @property
    def beta(self) -> float:
        """SetF's weight of recall against precision (`beta=`, default 1)."""
        value = dict(self.options).get("beta")
        return value if isinstance(value, float) else 1.0

    def __str__(self) -> str:
        parts = [(key, _option_text(value)) for key, value in self.options]
        if self.name in _PERSISTENCE:
            parts.append(("p", repr(self.param)))
        args = ",".join(f"{key}={text}" for key, text in sorted(parts))
        base = f"{self.name}({args})" if args else self.name
        if self.name == "IPrec":
            return f"{base}@{self.param!r}"
        return base if self.cutoff is None else f"{base}@{self.cutoff}"


def _option_text(value: Option) -> str:
    if isinstance(value, tuple):
        return "{" + ",".join(f"{g}:{gain_text(v)}" for g, v in value) + "}"
    if isinstance(value, float):
        return gain_text(value)
    return repr(value) if isinstance(value, str) else str(value)


def gain_text(gain: float) -> str:
    """A gain as written back: `3` for 3.0, `4.5` for 4.5."""
    return str(int(gain)) if gain.is_integer() else repr(gain)


def refuse_run_level(measure: str | Measure, where: str) -> None:
    """UsageError for a measure that is one number over the whole run (the counts, summed, and
    gm_map, a geometric mean) where per-query values are averaged with a confidence interval:
    a mean of per-query gm_map would be MAP under another name."""
    m = parse_measure(measure)
    if m.name in AGGREGATION:
        raise UsageError(
            f"{where}: {m} is a run-level number ({AGGREGATION[m.name]} over queries), not a "
            "per-query score to average; `memgauge metrics` reports it (use AP, SetP, SetR "
            "or Judged@k for a per-query value)"
        )


def trec_name(m: Measure) -> str | None:
    """trec_eval's name for `m` (`ndcg_cut_10`, `iprec_at_recall_0.10`), or None where
    trec_eval has no measure computed the same way (RR@k, Hit-less LongMemEval measures,
    Judged@k, RBP: trec_eval's rbp uses graded gains). nDCG with a gain table alone is
    trec_eval's `ndcg` with its parameters (`ndcg_1=3,2=9,4=4.5`)."""
    gains = m.gains
    if m.name == "nDCG" and m.cutoff is None and gains is not None and len(m.options) == 1:
        return "ndcg_" + ",".join(f"{g}={gain_text(v)}" for g, v in gains.items())
    if m.name == "SetP" and m.options == (("relative", True),):
        return "set_relative_P"
    if m.options:  # its own threshold, gains or judged_only: trec_eval's -l and -J are global
        return None
    k = m.cutoff
    cut = {"P": "P", "Recall": "recall", "nDCG": "ndcg_cut", "AP": "map_cut", "Hit": "success"}
    if k is not None:
        return f"{cut[m.name]}_{k}" if m.name in cut else None
    if m.name == "IPrec":
        return f"iprec_at_recall_{m.param:.2f}"
    if m.name == "RBP_resid":
        return "rbp_resid" if m.param == _TREC_EVAL_P else None
    return {
        "nDCG": "ndcg",
        "AP": "map",
        "RR": "recip_rank",
        "R-prec": "Rprec",
        "gm_map": "gm_map",
        "Bpref": "bpref",
        "infAP": "infAP",
        "SetP": "set_P",
        "SetR": "set_recall",
        "SetF": "set_F",
        "NumQ": "num_q",
        "NumRet": "num_ret",
        "NumRel": "num_rel",
        "NumRelRet": "num_rel_ret",
    }.get(m.name)


def _valid_forms() -> str:
    forms = []
    for name, needs in MEASURE_NAMES.items():
        if name == "IPrec":
            forms.append("IPrec@RECALL")
        elif name in _PERSISTENCE:
            forms.append(f"{name}(p=P)" + ("" if name in _NO_CUTOFF else "[@K]"))
        elif name in _NO_CUTOFF:
            forms.append(name)
        else:
            forms.append(f"{name}@K" if needs else f"{name}[@K]")
    return ", ".join(forms) + (
        "; ir_measures' parameters in parentheses where a measure has them: rel=N, "
        "judged_only=True, gains={GRADE:GAIN,...}, e.g. P(rel=2)@5"
    )


def _unknown(text: str, hint: bool = True) -> UsageError:
    """The error for a name that is no measure, naming the nearest known name (`hint`; the
    guess itself is parsed without one, so a guess that is no measure either ends there)."""
    if not hint:
        return UsageError(f"unknown measure {text!r}")
    stripped = text.strip()
    word = re.sub(r"[_@]?[0-9.]+$", "", re.split(r"[(@]", stripped, maxsplit=1)[0])
    if word.lower() in _ALIASES:  # a known name, what follows it is not a cutoff
        return UsageError(
            f"measure {text!r}: {word} is a measure, but {stripped[len(word) :]!r} is not a "
            f"cutoff (@K, a whole number from 1) or parameters; valid forms: {_valid_forms()}"
        )
    near = difflib.get_close_matches(word.lower(), list(_ALIASES), n=1, cutoff=0.5)
    nearest = ""
    if near:  # the nearest name, with the cutoff or parameters as the user wrote them
        guess = _ALIASES[near[0]]
        with contextlib.suppress(UsageError):
            guess = str(_parse(guess + stripped[len(word) :], hint=False))
        nearest = f" (did you mean {guess!r}?)"
    return UsageError(f"unknown measure {text!r}{nearest}; valid forms: {_valid_forms()}")


_BINARY = ("judged_only", "rel")
#: the ir_measures parameters each measure takes in parentheses (the cutoff is `@K`)
ACCEPTS: dict[str, tuple[str, ...]] = {
    **dict.fromkeys(("P", "Recall", "RR", "AP", "R-prec", "Hit", "gm_map"), _BINARY),
    **dict.fromkeys(("recall_any", "recall_all", "ndcg_any"), _BINARY),
    **dict.fromkeys(("Bpref", "infAP", "SetR", "NumRet", "NumRel", "NumRelRet"), ("rel",)),
    "IPrec": ("judged_only", "recall", "rel"),
    "nDCG": ("dcg", "gains", "judged_only"),
    "SetF": ("beta", "judged_only", "rel"),
    "SetP": ("judged_only", "rel", "relative"),
    "RBP": ("p", "rel"),
    "RBP_resid": ("p",),
}
#: ir_measures' nDCG `dcg=` formulas: the gain each names (the discount is log2(rank + 1))
DCG_GAIN: dict[str, str] = {"log2": "linear", "exp-log2": "exp"}
_FORMS = {
    "rel": "rel=N (its own relevance threshold, a whole number from 0)",
    "judged_only": "judged_only=True (unjudged documents taken out of the ranking first)",
    "gains": "gains={GRADE:GAIN,...} (grades whole numbers from 0, gains numbers from 0; a grade "
    "not named gains its grade)",
    "p": "p=P (the persistence, between 0 and 1)",
    "recall": "recall=X (the recall level from 0 to 1, as @X)",
    "relative": "relative=True (NumRelRet / min(n, R): trec_eval's set_relative_P)",
    "beta": "beta=X (the weight of recall against precision, from 0; default 1)",
    "dcg": "dcg='log2' (linear gain) or dcg='exp-log2' (2^grade - 1), in place of --gain",
}
_GAIN = r"[0-9]+\s*:\s*(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)"
_GAINS = re.compile(rf"^\{{\s*(?:{_GAIN}\s*(?:,\s*{_GAIN}\s*)*,?)?\s*\}}$")


def _accepted(name: str) -> str:
    keys = ACCEPTS.get(name, ())
    if not keys:
        return f"{name} takes no parameters in parentheses"
    return f"{name} takes " + ", ".join(_FORMS[k] for k in keys)


def _split_args(args: str) -> list[str]:
    """`args` split at the commas outside braces (a gain table has its own)."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(args):
        depth += {"{": 1, "}": -1}.get(ch, 0)
        if ch == "," and depth == 0:
            parts.append(args[start:i])
            start = i + 1
    parts.append(args[start:])
    return parts


def _gains(text: str, value: str) -> tuple[tuple[int, float], ...]:
    if not _GAINS.match(value):
        raise UsageError(
            f"measure {text!r}: gains={value!r} is not a gain table; write "
            "gains={0:0,1:1,2:3} (grades whole numbers from 0, gains numbers from 0)"
        )
    pairs = [pair.split(":") for pair in value.strip()[1:-1].split(",")]
    return gain_table(f"measure {text!r}", pairs)


def gain_table(text: str, pairs: list[list[str]]) -> tuple[tuple[int, float], ...]:
    """A gain table from (grade, gain) texts (a pair of blanks is skipped), sorted by grade;
    UsageError naming `text` for a grade named twice, a grade or gain out of range, or no
    pair at all. A gain below 0 is refused: trec_eval adds it to the DCG where ir_measures
    reads the grade it maps to as unjudged."""
    table: dict[int, float] = {}
    for pair in pairs:
        if len(pair) == 1 and not pair[0].strip():
            continue
        grade_text, gain_value = (x.strip() for x in pair)
        if not grade_text.isdigit():
            raise UsageError(f"{text}: {grade_text!r} is not a grade (a whole number from 0)")
        grade, gain = int(grade_text), float(gain_value)
        if grade in table:
            raise UsageError(f"{text}: the gain table names grade {grade} twice")
        if grade > INT32_MAX or not 0.0 <= gain <= INT32_MAX:
            raise UsageError(f"{text}: a grade or gain must be from 0 to 2^31-1")
        table[grade] = gain
    if not table:
        raise UsageError(f"{text}: the gain table names no grade; leave it out")
    return tuple(sorted(table.items()))


def _options(
    text: str, name: str, raw: str, args: str | None
) -> tuple[float | None, float | None, tuple[tuple[str, Option], ...]]:
    """The persistence p (RBP), the recall level given as `recall=` (IPrec) and the ir_measures
    options of `NAME(args)`; UsageError naming the measure and what it takes otherwise."""
    p = (
        (_TREC_EVAL_P if raw in ("rbp", "rbp_resid") else _IR_MEASURES_P)
        if name in _PERSISTENCE
        else None
    )
    recall: float | None = None
    options: dict[str, Option] = {}
    if args is None or not args.strip():
        return p, recall, ()
    seen: set[str] = set()
    for part in _split_args(args):
        key, eq, value = (x.strip() for x in part.partition("="))
        if key not in ACCEPTS.get(name, ()) or not eq:
            what = f"{key}= is not one" if eq else f"{part.strip()!r} is not a name=value pair"
            raise UsageError(f"measure {text!r}: {_accepted(name)}; {what}")
        if key in seen:
            raise UsageError(f"measure {text!r}: {key}= is given twice")
        seen.add(key)
        if key in ("p", "recall"):
            try:
                number = float(value)
            except ValueError:
                raise UsageError(f"measure {text!r}: {key}={value!r} is not a number") from None
            if key == "p" and not 0.0 < number < 1.0:
                raise UsageError(f"measure {text!r}: the persistence p must be between 0 and 1")
            if key == "recall" and not 0.0 <= number <= 1.0:
                raise UsageError(f"measure {text!r}: the recall level must be from 0 to 1")
            p, recall = (number, recall) if key == "p" else (p, number)
        elif key == "beta":
            try:
                beta = float(value)
            except ValueError:
                beta = -1.0
            if not 0.0 <= beta <= INT32_MAX:
                raise UsageError(f"measure {text!r}: beta is a number from 0, not {value!r}")
            if beta != 1.0:  # the default, left out of the canonical name
                options["beta"] = beta
        elif key == "rel":
            if not value.isdigit() or int(value) > INT32_MAX:
                raise UsageError(
                    f"measure {text!r}: rel={value!r} is not a relevance threshold; write a "
                    "whole number from 0, e.g. rel=2"
                )
            options["rel"] = int(value)
        elif key == "dcg":
            formula = value.strip("'\"")
            if formula not in DCG_GAIN:
                raise UsageError(
                    f"measure {text!r}: dcg is 'log2' (linear gain) or 'exp-log2' (2^grade - 1), "
                    f"not {value!r}"
                )
            options["dcg"] = formula
        elif key in ("judged_only", "relative"):
            if value.lower() not in ("true", "false"):
                raise UsageError(f"measure {text!r}: {key} is True or False, not {value!r}")
            if value.lower() == "true":
                options[key] = True
        else:
            options["gains"] = _gains(text, value)
    if "dcg" in options and "gains" in options:
        raise UsageError(
            f"measure {text!r}: gains= gives each grade's gain and dcg= a gain formula; give one"
        )
    return p, recall, tuple(sorted(options.items()))


def parse_measure(text: str | Measure) -> Measure:
    """Parse `text` into a Measure; raises UsageError naming the nearest known name and the
    valid forms if it is not one."""
    if isinstance(text, Measure):
        return text
    return _parse(text, hint=True)


def is_measure(text: str) -> bool:
    """Whether `parse_measure` takes `text` (without making the hint of a name it refuses)."""
    with contextlib.suppress(UsageError):
        _parse(text, hint=False)
        return True
    return False


def _parse(text: str, *, hint: bool) -> Measure:
    match = _PATTERN.match(text)
    raw = match.group("name") if match else ""
    name = _ALIASES.get(raw.lower()) if match else None
    if match is None or name is None:
        raise _unknown(text, hint)
    args, at = match.group("args"), match.group("at")
    param, recall, options = _options(text, name, raw, args)
    if raw.lower() == "set_relative_p":  # trec_eval's name for SetP(relative=True)
        options = tuple(sorted({**dict(options), "relative": True}.items()))
    if name == "IPrec":
        if recall is not None and at is not None:
            raise UsageError(f"measure {text!r}: give the recall level once, as @X or recall=X")
        level = recall if at is None else float(at)
        if level is None or not 0.0 <= level <= 1.0:
            raise UsageError(
                f"measure {text!r}: IPrec needs a recall level from 0 to 1, e.g. IPrec@0.1"
            )
        return Measure(name, None, level, options)
    if at is not None and not at.isdigit():
        raise UsageError(f"measure {text!r}: a cutoff is a whole number of results, e.g. @10")
    cutoff = int(at) if at is not None else None
    if name == "R-prec" and cutoff is not None:
        raise UsageError(f"measure {text!r}: R-prec takes no cutoff (its cutoff is R)")
    if name in _NO_CUTOFF and cutoff is not None:
        raise UsageError(
            f"measure {text!r}: {name} takes no cutoff (it looks at the whole ranking; "
            "--depth cuts the run)"
        )
    if cutoff is None and MEASURE_NAMES[name]:
        raise UsageError(f"measure {text!r} needs a cutoff, e.g. {name}@10")
    if cutoff is not None and cutoff < 1:
        raise UsageError(f"measure {text!r}: the cutoff must be 1 or more")
    if cutoff is not None and cutoff > INT32_MAX:  # --depth's bound; NumPy's int64 overflows
        raise UsageError(f"measure {text!r}: the cutoff must be at most 2^31-1 ({INT32_MAX})")
    return Measure(name, cutoff, param, options)


def own_conventions(measures: Iterable[Measure | str]) -> str | None:
    """The words saying which of `measures` keep conventions of their own over the run's
    (`their own conventions: P(rel=3)@5 (relevant: grade >= 3)`), or None when none does; a
    name that is not an IR measure (an agent-memory metric) keeps none."""
    own = []
    for given in measures:
        try:
            m = parse_measure(given) if isinstance(given, str) else given
        except UsageError:
            continue
        said = []
        if m.rel is not None:
            said.append(f"relevant: grade >= {m.rel}")
        if m.gains is not None:
            said.append("gain: its table")
        elif m.dcg_gain is not None:
            said.append(f"gain: {m.dcg_gain}")
        if m.judged_only:
            said.append("judged documents only")
        if said:
            own.append(f"{m} ({', '.join(said)})")
    return "their own conventions: " + "; ".join(own) if own else None
