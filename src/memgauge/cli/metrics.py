"""`memgauge metrics`: IR measures of a TREC run against TREC qrels (trec_eval-style).

Under `--conventions trec_eval` the report is trec_eval's: with no measure named, its default
(`official`) set, and in its layout (`name<TAB>qid|all<TAB>value`, trec_eval's measure names,
counts as integers, values to 4 places), so it diffs clean against trec_eval's own output; the
conventions and query accounting go to stderr there. `-m` reads trec_eval's own arguments too
(`-m P.5,10`, `-m iprec_at_recall..10,.50`, `-m recall`, `-m official`, `-m all_trec`:
`metrics.trec_args`), and under these conventions the measures are printed in trec_eval's order.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from memgauge import api
from memgauge._util.jsonout import dumps_strict
from memgauge.cli._common import EXISTING_FILE, choice_option, given, json_option
from memgauge.cli._compare import compare_options, show_trec_comparison
from memgauge.cli._conventions import gain_option, no_relevant_option, rel_threshold_option
from memgauge.cli._numbers import integer
from memgauge.cli._shared_options import measures_option
from memgauge.errors import UsageError

if TYPE_CHECKING:
    from memgauge.api import MetricConfig

__all__ = ["metrics"]

DEFAULT = ("nDCG@10", "RR@10", "Recall@10", "P@5", "AP@100")


_TIES = "score desc, then doc id desc (trec_eval)"


def _config(preset: MetricConfig, **flags: Any) -> MetricConfig:
    """The preset, with every option the user gave on the command line in its place (flag >
    preset > default)."""
    chosen = {name: value for name, value in flags.items() if given(_PARAM.get(name, name))}
    return dataclasses.replace(preset, **chosen)


# MetricConfig field -> the click parameter that sets it, where the two names differ
_PARAM = {"missing_from_run": "missing"}


def _named(given: Sequence[str]) -> list[str]:
    """The measures `-m` names, trec_eval's way of naming them read too (`P.5,10`,
    `iprec_at_recall..10,.50`, `recall`, `official`, `all_trec`: `metrics.trec_args`)."""
    out: list[str] = []
    for text in given:
        expanded = api.trec_eval_measures(text)
        out.extend([text] if expanded is None else expanded)
    return out


def _num(v: float) -> float | None:
    return None if math.isnan(v) else float(v)


@click.command()
@click.argument("qrels", type=EXISTING_FILE)
@click.argument("run", type=EXISTING_FILE)
@click.argument("more_runs", nargs=-1, type=EXISTING_FILE)
@measures_option(
    f"A measure, repeatable: nDCG@10, RR@10, Recall@5, P@5, AP@100, R-prec, Hit@5, "
    "recall_any@5, recall_all@5, ndcg_any@5, Bpref, infAP, IPrec@0.1, gm_map, RBP(p=0.8)[@K], "
    "RBP_resid(p=0.8), Judged@10, SetP, SetR, SetF, NumQ, NumRet, NumRel, NumRelRet; "
    "trec_eval's and ir_measures' names are read too (ndcg_cut_10, num_rel_ret, ...), with "
    "ir_measures' parameters (P(rel=2)@5, AP(judged_only=True), nDCG(gains={0:0,1:1,2:3})@10), "
    "and "
    "trec_eval's -m arguments (P.5,10, iprec_at_recall..10,.50, recall, official, all_trec) "
    f"(default: {' '.join(DEFAULT)}; under --conventions trec_eval, trec_eval's official set)."
)
@choice_option(
    "--conventions",
    "preset",
    choices=["memgauge", "trec_eval"],
    help="Start from a named set of conventions: memgauge (relevant = grade >= 2, exp gain, "
    "every judged query scored) or trec_eval (grade >= 1, linear gain, queries absent from the "
    "run left out: equal to trec_eval and pytrec_eval; ir_measures scores them 0, --missing "
    "zero). A flag given beside it "
    "wins.",
)
@rel_threshold_option("-l")
@gain_option
@no_relevant_option
@choice_option(
    "--missing",
    choices=["zero", "skip"],
    default=api.MetricConfig().missing_from_run,
    help="A judged query absent from the run: score 0, or leave it out (always counted).",
)
@click.option(
    "-M",
    "--depth",
    type=integer(1),
    default=None,
    help="Keep each query's top N documents only (trec_eval's -M).",
)
@click.option(
    "-c",
    "complete",
    is_flag=True,
    help="Score a judged query absent from the run 0 (trec_eval's -c: --missing zero).",
)
@click.option("-q", "--per-query", is_flag=True, help="Also give each query's values (as -q).")
@json_option("One JSON object on stdout.")
@compare_options
def metrics(
    qrels: Path,
    run: Path,
    more_runs: tuple[Path, ...],
    measures: tuple[str, ...],
    preset: str,
    rel_threshold: int,
    gain: str,
    no_relevant: str,
    missing: str,
    depth: int | None,
    complete: bool,
    per_query: bool,
    as_json: bool,
    **compare: Any,
) -> None:
    """Score RUN (TREC run: qid Q0 docid rank score tag) against QRELS (qid 0 docid grade).

    Either file may be JSON instead, {qid: {docid: score}} and {qid: {docid: grade}}, as ranx
    saves them, pytrec_eval takes them and evaluate --run-json writes them; or JSON lines of
    {query_id, doc_id, relevance | score} (ir_datasets' export) or a dataset's judgments.jsonl,
    or those records as one JSON list.

    Documents are ranked by score descending, ties by doc id descending (trec_eval's order);
    the rank column is ignored. With --json the output is {"aggregate": {...}, "per_query":
    {...} (with --per-query), "counts": {...}, "config": {...}}.

    With --conventions trec_eval and no measure named, it prints trec_eval's default report
    (runid, num_q, num_ret, num_rel, num_rel_ret, map, gm_map, Rprec, bpref, recip_rank,
    iprec_at_recall_0.00 ... 1.00, P_5 ... P_1000) in trec_eval's layout.

    With several runs (the first is the baseline of --pairs baseline), or --format markdown or
    latex, a table of every run's means with superscripts naming the runs each is
    significantly better than (--test, --correction, --family); queries pair by id.
    """
    trec = preset == "trec_eval"
    official = trec and (not measures or api.prints_runid(measures))
    names = _named(measures) if measures else (api.TREC_OFFICIAL if trec else DEFAULT)
    try:
        parsed = list(dict.fromkeys(api.parse_measure(m) for m in names))  # repeats once
    except UsageError:
        raise  # it names the measure and the forms there are
    except ValueError as exc:
        raise UsageError(f"--measure: {exc}") from None
    if not parsed:
        raise UsageError("-m runid names no measure: add one, e.g. -m map")
    if trec:
        parsed = api.trec_order(parsed)  # trec_eval prints in its table's order, not -m's
    if complete and missing == "skip" and given("missing"):
        raise UsageError("-c scores a query absent from the run 0; --missing skip leaves it out")
    cfg = _config(
        api.CONVENTIONS[preset],
        rel_threshold=rel_threshold,
        gain=gain,
        no_relevant=no_relevant,
        missing_from_run=missing,
    )
    if complete:  # trec_eval's -c: --missing zero, whatever the preset
        cfg = dataclasses.replace(cfg, missing_from_run="zero")
    # one text in every output: the lines, --json's config and the comparison's
    own = api.own_conventions(parsed)
    conventions = (
        f"{cfg.conventions}, ties: {_TIES}"
        + ("" if depth is None else f", depth: {depth}")
        + ("" if own is None else f"; {own}")
    )
    if more_runs or compare["fmt"] != "table":
        show_trec_comparison(
            qrels,
            (run, *more_runs),
            parsed,
            cfg,
            conventions=conventions,
            per_query=per_query,
            as_json=as_json,
            given=compare,
            depth=depth,
        )
        return
    ev = api.score_trec_run(qrels, run, parsed, cfg, depth=depth)
    agg = ev.aggregate()
    counts = ev.counts.as_dict()
    if as_json:
        payload: dict[str, object] = {"aggregate": agg}
        if per_query:
            payload["per_query"] = {
                qid: {m: _num(v[i]) for m, v in ev.per_query.items()}
                for i, qid in enumerate(ev.query_ids)
            }
        payload["counts"] = counts
        payload["config"] = {
            "preset": preset,
            "rel_threshold": cfg.rel_threshold,
            "gain": cfg.gain,
            "no_relevant": cfg.no_relevant,
            "missing_from_run": cfg.missing_from_run,
            "depth": depth,
            "ties": _TIES,
            "conventions": conventions,
        }
        click.echo(dumps_strict(payload, indent=2))
        return
    notes = [
        f"conventions: {conventions}",
        f"queries: {counts['n_judged']} judged, {counts['n_scored']} scored, "
        f"{counts['n_no_relevant']} with no relevant document, {counts['n_missing_from_run']} "
        f"absent from the run, {counts['n_run_only']} in the run but not judged (ignored)",
    ]
    if "all_trec" in measures:
        left_out = ", ".join(api.TREC_ALL_LEFT_OUT)
        notes.insert(0, f"-m all_trec: memgauge does not compute trec_eval's {left_out}")
    if trec:
        click.echo(api.trec_eval_report(ev, parsed, per_query=per_query, runid=official))
        for line in notes:  # beside, not inside, the report a user diffs against trec_eval's
            click.echo(line, err=True)
        return
    # plain lines (click, not rich: a report that diffs, and one import less at start-up)
    width = max(len(m) for m in agg)
    if per_query:
        for i, qid in enumerate(ev.query_ids):
            for m, column in ev.per_query.items():
                click.echo(f"{m:<{width}}  {qid}  {api.format_value(m, _num(column[i]))}")
    for m, mean in agg.items():
        click.echo(f"{m:<{width}}  all  {api.format_value(m, mean)}")
    for line in notes:
        click.echo(line)
