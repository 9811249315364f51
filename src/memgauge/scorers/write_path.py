"""The write path's per-item evaluators, for extraction and operations tasks: each reads the case
back from the item (its input and expected value) and gives one verdict with the detail the
task's aggregate sums (TP / FP / FN, conflict, minimalism; every tier's check).

- `extraction` (seed 001): the extractor's output (the memory after the conversation) against
  the case's expected facts, matched `exact`, `semantic` (MiniLM cosine, one-to-one) or by the
  fact-enumeration `judge`. Value: F1; passed: F1 >= `pass_f1`.
- `operation-checks` (seed 000): the decider's decision through the heuristic, operation and,
  with `judge`, merge-quality tiers. Value: the share of checks passed; passed: all passed. A
  decision that cannot be read is a failure, never a pass or a fail.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

from memgauge.data.models import ExtractionCase, OperationCase
from memgauge.llm._loop import run_sync
from memgauge.scorers.base import EvalContext, Score, prepare_evaluator
from memgauge.scorers.extraction import (
    CaseScore,
    ExactMatcher,
    FactMatcher,
    SemanticMatcher,
    facts_of,
    prf,
    score_case,
    unmatched_notes,
)
from memgauge.scorers.judges import FactsJudge, RubricJudge
from memgauge.scorers.judges.base import Verdict
from memgauge.scorers.operations import (
    decision_of,
    heuristic_checks,
    operation_check,
    similarity_check,
)
from memgauge.subjects.learnings import Learnings

__all__ = ["ExtractionFacts", "OperationChecks", "extraction_case", "operation_case"]

_ACTIONS = ("CREATE", "UPDATE", "DELETE", "NOOP")


def _case_parts(ctx: EvalContext) -> tuple[Mapping[str, Any], Mapping[str, Any], dict[str, Any]]:
    """An item's input and expected value (as mappings), and what every case takes of them."""
    inp = ctx.input if isinstance(ctx.input, Mapping) else {}
    exp = ctx.expected if isinstance(ctx.expected, Mapping) else {}
    return (
        inp,
        exp,
        {"id": str(ctx.metadata.get("item_id") or "case"), "scenario": exp.get("scenario")},
    )


def extraction_case(ctx: EvalContext) -> ExtractionCase:
    """The extraction case an item was made from (its input and expected value)."""
    inp, exp, case = _case_parts(ctx)
    return ExtractionCase(
        **case,
        existing_memory=list(inp.get("existing_memory") or []),
        conversation=list(inp.get("conversation") or []),
        expected_facts=list(exp.get("expected_facts") or []),
        expected_output=exp.get("expected_output"),
    )


def operation_case(ctx: EvalContext) -> OperationCase:
    """The memory-operation case an item was made from."""
    inp, exp, case = _case_parts(ctx)
    return OperationCase(
        **case,
        quality=exp.get("quality"),
        existing=list(inp.get("existing") or []),
        incoming=inp.get("incoming") or {},
        expect_similar=exp.get("expect_similar"),
        expected=exp.get("expected") or {},
    )


@dataclass(frozen=True)
class ExtractionFacts:
    """Seed 001's fact matching of one case: TP / FP / FN with the matched pairs.

    Attributes:
        match: `exact`, `semantic` (MiniLM cosine >= `threshold`) or `judge` (the
            fact-enumeration judge counts; the matcher still decides conflict and minimalism).
        threshold: cosine of a semantic match.
        judge_model: the judge's model (default: MEMGAUGE_MODEL).
        pass_f1: F1 at or above which the case passes.
    """

    match: Literal["exact", "semantic", "judge"] = "semantic"
    threshold: float = 0.75
    judge_model: str | None = None
    pass_f1: float = 0.9
    name: ClassVar[str] = "extraction"
    # the matcher, built once: a semantic one holds its embedding model
    _matchers: list[FactMatcher] = field(
        default_factory=list, init=False, repr=False, compare=False
    )

    @property
    def uses_llm(self) -> bool:
        """A judge call per case when matching by judge."""
        return self.match == "judge"

    def prepare(self) -> None:
        """Build the matcher (a semantic one loads its embedding model) and, matching by
        judge, the judge's client: UnavailableError, with the install line, when one is
        missing."""
        prepare_evaluator(self._matcher())
        if self.match == "judge":
            FactsJudge(model=self.judge_model).prepare()

    def _matcher(self) -> FactMatcher:
        if not self._matchers:
            exact = self.match == "exact"
            self._matchers.append(ExactMatcher() if exact else SemanticMatcher(self.threshold))
        return self._matchers[0]

    def evaluate(self, ctx: EvalContext) -> Score:
        if isinstance(ctx.output, Mapping) and "error" in ctx.output:
            # a production trace that recorded a failed extraction: not "extracted nothing"
            return Score.failure(f"recorded error: {ctx.output['error']}")
        case = extraction_case(ctx)
        facts = facts_of(ctx.output)
        matcher = self._matcher()
        unlabelled = isinstance(ctx.expected, Mapping) and bool(ctx.expected.get("unlabelled"))
        if unlabelled and self.match != "judge":
            # nobody said what it should have extracted: matching against nothing would call
            # every fact invented and the memory "changed"
            return Score.failure(
                "an unlabelled trace line is scored only by the fact-enumeration judge "
                "(match: judge)"
            )
        if self.match != "judge":
            return self._score(score_case(case, facts, matcher))
        judge = FactsJudge(model=self.judge_model)
        jctx = EvalContext(
            output="\n".join(f"- {o}" for o in facts) or "(empty)",
            input="\n".join(f"{t.role}: {t.content}" for t in case.conversation),
            metadata={
                "existing_memory": "\n".join(f"- {m}" for m in case.existing_memory) or "(empty)"
            },
        )
        verdict = run_sync(judge.averdict(jctx))
        if not isinstance(verdict, Verdict):
            return Score.failure(f"judge failed: {verdict[0]}", **verdict[1])
        d = verdict.detail
        counts = (int(d["tp"]), int(d["fp"]), int(d["fn"]))
        if unlabelled:
            return self._score(_judged_only(case, counts, d), judge=d)
        scored = score_case(
            case, facts, matcher, counts=counts, method=f"facts judge (+{matcher.name})"
        )
        return self._score(scored, judge=d)

    def _score(self, scored: CaseScore, judge: Mapping[str, Any] | None = None) -> Score:
        notes = []
        if scored.conflict_ok is not None:
            notes.append("conflict " + ("ok" if scored.conflict_ok else "WRONG"))
        if scored.minimal_ok is not None:
            notes.append("unchanged " + ("ok" if scored.minimal_ok else "WRONG"))
        notes += [f"{how}: {x}" for how, x in unmatched_notes(scored.as_dict())[:2]]
        notes += [f"missed: {x}" for x in scored.missed[:2]]
        detail: dict[str, Any] = {"case": scored.as_dict()}
        if judge is not None:
            detail["judge"] = {k: v for k, v in judge.items() if k != "raw_reply"}
            detail["raw_reply"] = judge.get("raw_reply")
        return Score(
            value=scored.f1,
            passed=scored.f1 >= self.pass_f1,
            reason=f"TP {scored.tp} FP {scored.fp} FN {scored.fn}; F1 {scored.f1:.2f}"
            + (f"; {'; '.join(notes)}" if notes else ""),
            detail=detail,
        )


def _judged_only(
    case: ExtractionCase, counts: tuple[int, int, int], judge: Mapping[str, Any]
) -> CaseScore:
    """An unlabelled line's verdict: the judge's counts and lists, and no conflict or
    minimalism verdict (only labels can say a conversation should have changed nothing)."""
    p, r, f1 = prf(*counts)
    return CaseScore(
        id=case.id,
        scenario="unlabelled",
        tp=counts[0],
        fp=counts[1],
        fn=counts[2],
        precision=p,
        recall=r,
        f1=f1,
        matched=[],
        false_positives=[str(x) for x in judge.get("hallucinated_facts", [])],
        missed=[str(x) for x in judge.get("missed_facts", [])],
        stale=[],
        lost=[],
        conflict_ok=None,
        minimal_ok=None,
        method="facts judge (unlabelled)",
    )


@dataclass(frozen=True)
class OperationChecks:
    """Seed 000's tiers on one merge decision.

    Attributes:
        judge: also score an UPDATE's merged text with the merge-quality rubric judge.
        judge_model: the judge's model (default: MEMGAUGE_MODEL).
        learnings: past evaluation failures added to the merge judge's system prompt
            (`{query, k, budget}`, as every judge takes them).
    """

    judge: bool = False
    judge_model: str | None = None
    learnings: Learnings | None = None
    name: ClassVar[str] = "operation-checks"

    @property
    def uses_llm(self) -> bool:
        """A judge call per UPDATE when judging merges."""
        return self.judge

    def evaluate(self, ctx: EvalContext) -> Score:
        case = operation_case(ctx)
        decision = decision_of(ctx.output)
        if decision["action"] not in _ACTIONS:
            return Score.failure(f"no decision could be read from {str(ctx.output)[:200]!r}")
        checks: dict[str, Any] = {}
        for name, verdict in heuristic_checks(case, decision).items():
            if verdict is not None:
                checks[name] = {"passed": verdict[0], "reason": verdict[1]}
        ok, why = operation_check(case, decision)
        checks["action"] = {"passed": ok, "reason": why}
        similar = similarity_check(case, decision)
        confusion: dict[str, int] = {}
        if similar is not None:
            checks["similarity"] = {"passed": similar[0], "reason": similar[1]}
            if not similar[0]:  # seed 000's counts: a false match, or a missed paraphrase
                confusion = {"fn": 1} if case.expect_similar else {"fp": 1}
        raw, llm_error = None, None
        if self.judge:
            judged = self._judge(case, decision)
            if judged is not None:
                raw = judged.pop("raw_reply", None)
                llm_error = judged.pop("llm_error_kind", None)
                checks["merge-quality"] = judged
        decided = [bool(v["passed"]) for v in checks.values() if v.get("passed") is not None]
        failed = [n for n, v in checks.items() if v.get("passed") is False]
        return Score(
            value=sum(decided) / len(decided) if decided else None,
            passed=not failed if decided else None,
            reason=(
                f"{decision['action']}: "
                + ("every check passed" if not failed else f"failed {', '.join(failed)}")
            ),
            detail={
                "decision": {k: v for k, v in decision.items() if k != "raw"},
                "checks": checks,
                **({"confusion": confusion} if confusion else {}),
                **({"raw_reply": raw} if raw is not None else {}),
                # an unreachable judge endpoint makes the run exit 3
                **({"llm_error_kind": llm_error} if llm_error is not None else {}),
            },
        )

    def _merge_judge(self) -> RubricJudge:
        """One judge per evaluator, so its learnings are looked up once per run, not per
        case (the section is memoized on the judge)."""
        judge = self.__dict__.get("_judge_memo")
        if judge is None:
            judge = RubricJudge(
                preset="merge-quality", model=self.judge_model, learnings=self.learnings
            )
            judge = self.__dict__.setdefault("_judge_memo", judge)
        assert isinstance(judge, RubricJudge)
        return judge

    def _judge(self, case: OperationCase, decision: dict[str, Any]) -> dict[str, Any] | None:
        if decision["action"] != "UPDATE" or not decision.get("content"):
            return None
        original = next((m.content for m in case.existing if m.id == decision.get("id")), None)
        if original is None:
            original = "\n".join(m.content for m in case.existing)
        inc = case.incoming
        incoming = inc.content if hasattr(inc, "content") else str(dict(inc).get("content", ""))
        score = self._merge_judge().evaluate(
            EvalContext(
                output=str(decision["content"]),
                input=f"ORIGINAL MEMORY:\n{original}\n\nINCOMING MEMORY:\n{incoming}",
                expected=case.expected.merged,
            )
        )
        if score.error is not None or score.value is None:
            return {
                "passed": None,
                "error": score.error or "no verdict",
                "llm_error_kind": score.detail.get("llm_error_kind"),
            }
        return {
            "passed": bool(score.passed),
            "value": score.value,
            "reason": score.reason,
            "raw_reply": score.detail.get("raw_reply"),
            **(
                {"learnings_hash": score.detail["learnings_hash"]}
                if score.detail.get("learnings_hash")
                else {}
            ),
        }
