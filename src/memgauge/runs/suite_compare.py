"""Compare suite runs item by item.

Two runs (`compare_runs`): per subject, task and evaluator, the mean of each run, the paired
delta (B - A) with its bootstrap CI, and a paired test (Fisher's randomization test by
default), corrected across rows (Holm by default).

Any number of systems (`compare_suite_systems`), for a paper's table: with one run, its
subjects are the systems and each (task, evaluator) a measure; with several runs, the runs are
the systems and each (subject, task, evaluator) a measure. `stats.compare_systems` does the
tests.

Items pair by (subject, task, item id); an item asked N times (`repeat: N`) is its repeats'
mean, so that a run with repeats is compared item by item, with items as clusters. An item that failed or was not scored in a run is
left out of that pair and counted (`n_dropped`), never scored 0. When each run has a single
subject under different names (the same suite pointed at different systems), the subjects
pair up.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Protocol, TypedDict, Unpack

import numpy as np

from memgauge._util.listing import counted
from memgauge.data.records import ItemRecord, MeasureValue, RunRecord, RunSummary
from memgauge.stats import (
    Correction,
    Family,
    SystemsComparison,
    SystemTest,
    compare_systems,
    significance_mark,
)
from memgauge.store.item_rows import MeasureValues, measure_values

__all__ = [
    "Measures",
    "PairOptions",
    "compare_measures",
    "compare_runs",
    "compare_suite_systems",
    "measure_deltas",
    "reported_means",
    "system_measures",
    "unended_note",
    "unpaired_notes",
]

Key = tuple[str, str, str]


class PairOptions(TypedDict, total=False):
    """How two runs are compared: `stats.compare_systems`' keywords, whose defaults apply
    (Fisher's randomization test, Holm across the table, alpha 0.05, seed 0, 10,000
    permutations)."""

    seed: int
    test: SystemTest
    correction: Correction | None
    family: Family
    alpha: float
    n_permutations: int


Values = dict[Key, dict[str, float]]


def _measures(items: Sequence[ItemRecord], rename: Mapping[str, str]) -> MeasureValues:
    """Each (subject, task, evaluator)'s values in item id order, read as the store keeps them
    (`store.item_rows.measure_values`: a repeat's verdict is its item's, the item's value the
    mean of its repeats'), so the paired tests and the delta's bootstrap resample items, each
    with all its repeats, and a run compared from memory or from the store gives one value."""
    return measure_values(
        (
            rename.get(it.subject, it.subject),
            *(it.task, s.evaluator, it.item_id, s.value, s.error, it.repeat),
        )
        for it in items
        for s in it.scores
    )


def _values(items: Sequence[ItemRecord], rename: Mapping[str, str]) -> Values:
    return {
        key: dict(zip(ids, vals, strict=True))
        for key, (ids, vals) in _measures(items, rename).items()
    }


def _subjects(items: Sequence[ItemRecord]) -> list[str]:
    return sorted({it.subject for it in items})


def _matrices(per_system: Sequence[Values], keys: Sequence[Key]) -> dict[Key, np.ndarray]:
    """Per key a (systems, items) matrix over the union of the systems' item ids, NaN where a
    system has no value."""
    out: dict[Key, np.ndarray] = {}
    for key in keys:
        found = [v.get(key, {}) for v in per_system]
        ids = sorted(set().union(*(f.keys() for f in found)))
        if all(len(f) == len(ids) for f in found):
            # every system scored every item (the common case): no lookup of a missing id
            out[key] = np.array([[f[i] for i in ids] for f in found], dtype=np.float64)
            continue
        out[key] = np.array([[f.get(i, np.nan) for i in ids] for f in found], dtype=np.float64)
    return out


def _label(key: Key, *, subject: bool) -> str:
    return " / ".join(key if subject else key[1:])


@dataclass(frozen=True)
class _System:
    """A system of a comparison: its name, its run, and its one subject (None: several runs
    of several subjects each, where a measure's key names its subject)."""

    name: str
    run: str
    subject: str | None

    def subject_of(self, key: Key) -> str:
        return key[0] if self.subject is None else self.subject


def _systems(
    subjects: Mapping[str, Sequence[str]], baseline: str | None
) -> tuple[list[_System], bool]:
    """The systems of runs with these scored `subjects` (run id -> its subjects), `baseline`
    first (see `compare_suite_systems`), and whether a measure's label names its subject. A
    ValueError when there are fewer than two systems or no system is named `baseline`."""
    if len(subjects) == 1:
        ((run_id, names),) = subjects.items()
        systems = [_System(s, run_id, s) for s in names]
        label_subject = False
    else:
        single = all(len(s) == 1 for s in subjects.values())
        names = [s[0] for s in subjects.values()] if single else []
        distinct = single and len(set(names)) == len(names)
        systems = [
            _System(names[i] if distinct else run, run, s[0] if single else None)
            for i, (run, s) in enumerate(subjects.items())
        ]
        label_subject = not single
    if len(systems) < 2:
        raise ValueError(
            f"comparing needs at least 2 systems; found {len(systems)} "
            "(give one run with several subjects, or several runs)"
        )
    if baseline is not None:
        named = [s.name for s in systems]
        if baseline not in named:
            raise ValueError(f"no system named {baseline!r}; the systems: {', '.join(named)}")
        systems.insert(0, systems.pop(named.index(baseline)))
    return systems, label_subject


def compare_suite_systems(
    runs: Mapping[str, Sequence[ItemRecord]],
    *,
    baseline: str | None = None,
    reported: Mapping[str, RunSummary | None] | None = None,
    **options: Any,
) -> SystemsComparison:
    """The systems of `runs` (run id -> its items) compared on every measure they share (see
    the module docstring) by `compare_systems`, which takes `options` (test, correction,
    family, pairing, alpha, seed, ...). One run: its subjects, by name. Several: the runs in the order
    given, named by their single subject when each has one under a different name, else by run
    id. `baseline` (a system's name) goes first: the baseline of `pairing="baseline"`. A
    ValueError when there are fewer than two systems or no system is named `baseline`.
    `reported` (run id -> its summary): each system's mean of a measure is the run's own
    number where the system scored as many items as the run reports (`reported_means`)."""
    systems, label_subject = _systems({r: _subjects(items) for r, items in runs.items()}, baseline)
    if len(runs) == 1:
        every = _values(next(iter(runs.values())), {})
        # each subject a system, each (task, evaluator) a measure
        per_system = [
            {("", t, e): v for (subj, t, e), v in every.items() if subj == s.subject}
            for s in systems
        ]
    else:
        # single-subject runs pair up under the first one's subject
        rename_to = systems[0].subject
        per_system = [
            _values(runs[s.run], {s.subject: rename_to} if s.subject and rename_to else {})
            for s in systems
        ]
    if reported:
        _add_unscored(per_system, systems, reported, one_run=len(runs) == 1)
    keys = sorted(set().union(*per_system))
    matrices = _matrices(per_system, keys)
    cmp = compare_systems(
        [s.name for s in systems],
        {_label(k, subject=label_subject): matrices[k] for k in keys},
        **options,
    )
    if not reported:
        return cmp
    labels = {_label(k, subject=label_subject): k for k in keys}
    measured = {
        run: {(m.subject, m.task, m.name): m for m in summary.measures()}
        for run, summary in reported.items()
        if summary is not None
    }

    def own(label: str, i: int, mean: float | None, n: int) -> float | None:
        key = labels[label]
        m = measured.get(systems[i].run, {}).get((systems[i].subject_of(key), key[1], key[2]))
        return m.value if m is not None and m.is_mean(mean, n) else mean

    means = {
        label: tuple(own(label, i, v, cmp.counts[label][i]) for i, v in enumerate(cmp.means[label]))
        for label in cmp.measures
    }
    pairs = tuple(
        replace(
            p,
            paired=replace(
                p.paired,
                mean_a=own(p.measure, p.a, p.paired.mean_a, p.paired.n),
                mean_b=own(p.measure, p.b, p.paired.mean_b, p.paired.n),
            ),
        )
        if not p.paired.n_dropped
        else p
        for p in cmp.pairs
    )
    return replace(cmp, means=means, pairs=pairs)


def _add_unscored(
    per_system: list[Values],
    systems: Sequence[_System],
    reported: Mapping[str, RunSummary | None],
    *,
    one_run: bool,
) -> None:
    """Each evaluator a system's run reports with no item scored (a subject whose every item
    failed), as a measure with no values: the items give it none, and a table that left it out
    read as if the subject had never been run (`_unscored_rows` for two runs)."""
    rename_to = None if one_run else systems[0].subject
    for values, system in zip(per_system, systems, strict=True):
        summary = reported.get(system.run)
        for e in summary.evaluators if summary is not None else ():
            if e.n_scored or system.subject not in (None, e.subject):
                continue
            subject = "" if one_run else (rename_to if system.subject else None) or e.subject
            values.setdefault((subject, e.task, e.evaluator), {})


def system_measures(
    runs: Mapping[str, Sequence[ItemRecord]],
    reported: Mapping[str, RunSummary | None],
    *,
    baseline: str | None = None,
) -> list[dict[str, Any]]:
    """The run-level numbers the evaluators' rows do not show (as `measure_deltas` has them for
    two runs: an audit's rates, tiers' pass rates, pass@k, a cost) of the systems
    `compare_suite_systems` makes of `runs`, in its order: per (subject, task, measure) each
    system's number as its run reports it (`reported`: run id -> its summary), with its own
    interval and counts, by system name (None where it has none). `subject` is "" where each system is one
    subject. `headline`: the gate decides on it by default in some system's run."""
    systems, label_subject = _systems({r: _subjects(items) for r, items in runs.items()}, baseline)
    summaries = {s.run: reported.get(s.run) or RunSummary() for s in systems}
    keys: dict[Key, bool] = {}
    for system in systems:
        summary = summaries[system.run]
        found = summary.beyond_evaluators()
        headline = {(m.subject, m.task, m.name) for m in summary.headline(found)}
        for m in found:
            if system.subject in (None, m.subject):
                key = (m.subject if label_subject else "", m.task, m.name)
                keys[key] = keys.get(key, False) or (m.subject, m.task, m.name) in headline
    measured = {
        run: {(m.subject, m.task, m.name): m for m in summary.measures()}
        for run, summary in summaries.items()
    }
    rows = []
    for key in sorted(keys):
        values = {s.name: measured[s.run].get((s.subject_of(key), key[1], key[2])) for s in systems}
        rows.append(
            {
                "subject": key[0],
                "task": key[1],
                "measure": key[2],
                "values": {
                    name: None if m is None else m.model_dump(mode="json")
                    for name, m in values.items()
                },
                "headline": keys[key],
            }
        )
    return rows


def compare_runs(
    items_a: Sequence[ItemRecord],
    items_b: Sequence[ItemRecord],
    **options: Unpack[PairOptions],
) -> list[dict[str, Any]]:
    """Rows of the comparison of two runs, in subject, task, evaluator order (see the module
    docstring). Each row is a measure: the correction's family is every row (`table`), or
    each row alone (`measure`, where one comparison needs no correction)."""
    return compare_measures(_measures(items_a, {}), _measures(items_b, {}), **options)


#: each (subject, task, evaluator)'s values: its item ids, sorted, and their values in that
#: order (NaN: not scored, or an error), as the store keeps them (`suite_run_values`)
Measures = Mapping[Key, tuple[Sequence[str], Any]]


def _pair_matrix(a: tuple[Sequence[str], Any], b: tuple[Sequence[str], Any]) -> np.ndarray:
    """The (2, items) matrix of two runs' values of one measure over the union of their item
    ids, sorted; NaN where a run has no value."""
    (ids_a, va), (ids_b, vb) = a, b
    xa, xb = np.asarray(va, dtype=np.float64), np.asarray(vb, dtype=np.float64)
    if len(ids_a) == len(ids_b) and list(ids_a) == list(ids_b):
        return np.vstack([xa, xb])
    ids = sorted(set(ids_a) | set(ids_b))
    da, db = dict(zip(ids_a, xa.tolist(), strict=True)), dict(zip(ids_b, xb.tolist(), strict=True))
    return np.array(
        [[da.get(i, np.nan) for i in ids], [db.get(i, np.nan) for i in ids]], dtype=np.float64
    )


def compare_measures(
    measures_a: Measures,
    measures_b: Measures,
    **options: Unpack[PairOptions],
) -> list[dict[str, Any]]:
    """`compare_runs` of the runs' values per measure (`Measures`: a few arrays per run, not a
    record per verdict)."""
    subjects_a, subjects_b = {k[0] for k in measures_a}, {k[0] for k in measures_b}
    label = _paired(subjects_a, subjects_b)
    # the pair's values under A's subject name, so that they pair item by item
    rename = {min(subjects_b): min(subjects_a)} if label else {}
    a = dict(measures_a)
    b = {(rename.get(k[0], k[0]), k[1], k[2]): v for k, v in measures_b.items()}
    if not a and not b:
        return []
    # a measure one run has and the other not (a subject that failed every item there, an
    # evaluator added) is a row with nothing paired, not a row left out: a subject that broke
    # vanished from the comparison that should show it, and so did the run's only subject
    # (B with no measure at all: A's mean read n/a, "neither run scored an item")
    keys = sorted(a.keys() | b.keys())
    none: tuple[Sequence[str], Any] = ((), ())
    matrices = {k: _pair_matrix(a.get(k, none), b.get(k, none)) for k in keys}
    cmp = compare_systems(["a", "b"], {str(n): matrices[k] for n, k in enumerate(keys)}, **options)
    rows: list[dict[str, Any]] = []
    for key, pair in zip(keys, cmp.pairs, strict=True):
        c = pair.paired
        mean_a, mean_b, note = c.mean_a, c.mean_b, c.note
        if not c.n:  # nothing paired: each run's own mean, and which scored nothing
            mean_a, mean_b = cmp.means[pair.measure]
            note = _unpaired_note(mean_a, mean_b)
        rows.append(
            {
                "subject": label.get(key[0], key[0]),
                "task": key[1],
                "evaluator": key[2],
                "mean_a": mean_a,
                "mean_b": mean_b,
                "delta": c.delta,
                "delta_ci_low": c.delta_ci_low,
                "delta_ci_high": c.delta_ci_high,
                "p_value": pair.p_value,
                "p_adjusted": pair.p_adjusted,
                "p_holm": pair.p_adjusted if cmp.correction == "holm" else None,
                "mark": significance_mark(pair.p_adjusted, cmp.alpha),
                "n": c.n,
                "n_dropped": c.n_dropped,
                "note": note,
            }
        )
    return rows


class _Items(Protocol):
    def item_records(self, run_id: str, *, detail: bool = ...) -> Sequence[ItemRecord]: ...


def unended_note(run: RunRecord, store: _Items) -> str | None:
    """That `run`, one of two compared, has not completed (None when it has): its numbers are
    those of the items it recorded (a run still running, or one that failed or was
    cancelled). `runs compare` says it on stderr, the viewer's compare page above its table."""
    if run.status == "completed":
        return None
    status = "is still running" if run.status in ("queued", "running") else run.status
    done = len(store.item_records(run.run_id, detail=False))
    return (
        f"run {run.run_id} {status}: compared on the {counted(done, 'item')} it recorded"
        f" of {run.n_items} (`memgauge runs show {run.run_id}`)"
    )


def unpaired_notes(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    """Why a row of two runs' comparison has no delta (the JSON's `note`), once per subject,
    task and reason: `runs compare`'s table and the viewer's compare page showed n/a and n 0
    without a word; each says these lines under it."""
    said: dict[tuple[str, str, str], int] = {}
    for r in rows:
        if r["delta"] is None and r.get("note"):
            key = (str(r["subject"]), str(r["task"]), str(r["note"]))
            said[key] = said.get(key, 0) + 1
    return [
        f"n/a: {subject}/{task} ({counted(n, 'evaluator')}): {note}"
        for (subject, task, note), n in said.items()
    ]


def _unpaired_note(mean_a: float | None, mean_b: float | None) -> str:
    if mean_a is None and mean_b is None:
        return "neither run scored an item"
    if mean_b is None:
        return "B scored no item (each failed, or the measure is not in B): nothing to pair"
    if mean_a is None:
        return "A scored no item (each failed, or the measure is not in A): nothing to pair"
    return "no item scored in both runs: nothing to pair"


def reported_means(
    rows: Sequence[Mapping[str, Any]], summary_a: RunSummary | None, summary_b: RunSummary | None
) -> list[dict[str, Any]]:
    """`rows` (`compare_runs`') with each run's mean read as the run reports it, where the row
    pairs every item that run scored (none dropped, n its `n_scored`): the row's mean is then
    that number, and the stored items' mean, summed in item-id order (and, for a retrieval
    measure, from the per-item arithmetic), can differ from it in the last bit and print
    otherwise (0.33749999999999997 as 0.337 beside `runs show`'s 0.338)."""

    def measured(summary: RunSummary | None) -> dict[Key, Any]:
        found = summary.measures() if summary is not None else []
        return {(m.subject, m.task, m.name): m for m in found}

    def subjects(summary: RunSummary | None) -> set[str]:
        return {e.subject for e in summary.evaluators} if summary is not None else set()

    values = {"a": measured(summary_a), "b": measured(summary_b)}
    only = {"a": subjects(summary_a), "b": subjects(summary_b)}
    paired = _paired(only["a"], only["b"])
    out = []
    for row in rows:
        row = dict(row)
        for side in ("a", "b"):
            # two single-subject runs under different names pair up as "A / B"
            subject = row["subject"]
            if subject not in only[side] and len(only[side]) == 1:
                (subject,) = only[side]
            m = values[side].get((subject, row["task"], row["evaluator"]))
            mean = row.get(f"mean_{side}")
            if m is not None and not row.get("n_dropped") and m.is_mean(mean, row.get("n", -1)):
                row[f"mean_{side}"] = m.value
        # a run whose one subject scored nothing has no values for `compare_measures` to pair
        # under the other's name: its row is the pair's still
        row["subject"] = paired.get(row["subject"], row["subject"])
        out.append(row)
    extra = _unscored_rows(out, summary_a, summary_b, paired)
    if not extra:
        return out
    return sorted([*out, *extra], key=lambda r: (r["subject"], r["task"], r["evaluator"]))


def _paired(subjects_a: set[str], subjects_b: set[str]) -> dict[str, str]:
    """Two runs of one subject each, under different names, pair up as "A / B" (as
    `compare_suite_systems` pairs them): each name -> that label; none otherwise. From the
    subjects with values (`compare_measures`) or, by `reported_means`, from the runs' reports,
    which name a subject that scored nothing too."""
    if len(subjects_a) != 1 or len(subjects_b) != 1 or subjects_a == subjects_b:
        return {}
    (a,), (b,) = subjects_a, subjects_b
    return {a: f"{a} / {b}", b: f"{a} / {b}"}


def _unscored_rows(
    rows: Sequence[Mapping[str, Any]],
    summary_a: RunSummary | None,
    summary_b: RunSummary | None,
    paired: Mapping[str, str],
) -> list[dict[str, Any]]:
    """A row, with nothing paired, per evaluator the runs report that neither scored an item
    of (a subject whose every item failed in both): the items give it no values to pair, and a
    comparison that left it out read as if the subject had never been run."""
    if not paired and any(" / " in r["subject"] for r in rows):
        return []  # two single subjects paired under one name by their values alone
    shown = {(r["subject"], r["task"], r["evaluator"]) for r in rows}
    found: dict[Key, None] = {}
    for summary in (summary_a, summary_b):
        for e in summary.evaluators if summary is not None else ():
            key = (paired.get(e.subject, e.subject), e.task, e.evaluator)
            if not e.n_scored and key not in shown:
                found[key] = None
    return [
        {
            "subject": subject,
            "task": task,
            "evaluator": evaluator,
            **dict.fromkeys(_UNPAIRED),
            "mark": "",
            "n": 0,
            "n_dropped": 0,
            "note": _unpaired_note(None, None),
        }
        for subject, task, evaluator in sorted(found)
    ]


#: a row's figures when nothing is paired
_UNPAIRED = (
    "mean_a",
    "mean_b",
    "delta",
    "delta_ci_low",
    "delta_ci_high",
    "p_value",
    "p_adjusted",
    "p_holm",
)


def measure_deltas(
    summary_a: RunSummary | None, summary_b: RunSummary | None
) -> list[dict[str, Any]]:
    """The run-level numbers the evaluators' rows do not show (`RunSummary.beyond_evaluators`:
    an audit's rates, tiers' pass rates, pass@k, a cost) of either run, each run's as it
    reports it (`measures()`, what `runs show` and the gate read), with B - A. An aggregate's
    number is not a mean of items, so no paired test: each side keeps its own interval and
    counts. A side without the measure is None. `headline`: the gate decides on it by default
    in either run (a primary measure, or an enforced target's). Two single-subject runs under
    different names pair up, as `compare_runs`' rows do (`A / B`)."""
    sides = [s if s is not None else RunSummary() for s in (summary_a, summary_b)]
    subjects = [sorted({m.subject for m in s.measures()}) for s in sides]
    rename = len(subjects[0]) == len(subjects[1]) == 1 and subjects[0] != subjects[1]

    def key(m: MeasureValue) -> Key:
        return ("" if rename else m.subject, m.task, m.name)

    values = [{key(m): m for m in s.measures()} for s in sides]
    headline = {key(m) for s in sides for m in s.headline(s.beyond_evaluators())}
    keys = list(dict.fromkeys(key(m) for s in sides for m in s.beyond_evaluators()))
    rows = []
    for k in sorted(keys):
        a, b = (v.get(k) for v in values)
        delta = None
        if a is not None and b is not None and a.value is not None and b.value is not None:
            delta = b.value - a.value
        rows.append(
            {
                "subject": f"{subjects[0][0]} / {subjects[1][0]}" if rename else k[0],
                "task": k[1],
                "measure": k[2],
                "a": None if a is None else a.model_dump(mode="json"),
                "b": None if b is None else b.model_dump(mode="json"),
                "delta": delta,
                "headline": k in headline,
            }
        )
    return rows
