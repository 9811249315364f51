"""LoCoMo (Maharana et al., 2024) as a retrieval dataset: dialog turns are the memories.

- memories: every dialog turn, id `<sample_id>:<dia_id>` (e.g. `conv-26:D1:3`), text
  `Speaker: text` plus ` [shares a photo: <caption>]` when the turn shares an image, session
  `<sample_id>:S<n>`, `created_at` from the session's date, `corpus` = the sample id (each
  question is searched only among its own conversation's turns).
- queries: every QA item, id `<sample_id>:q<index>`, category by the JSON's numbers: 1 multi-hop,
  2 temporal, 3 open-domain, 4 single-hop, 5 adversarial (the paper's prose orders them
  differently). The gold answer (or adversarial answer) is kept in metadata.
- judgments: grade 3 for each evidence turn. Adversarial items are unanswerable by design and
  are excluded from judgments but counted.
- evidence ids are normalised: `'D8:6; D9:17'` and `'D9:1 D4:4'` are split, `'D:11:26'` becomes
  `D11:26`; ids that stay malformed (`'D'`) or point to turns that do not exist are dropped and
  listed in the report.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from dataclasses import asdict, dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import Any

from memgauge.data.importers.common import ImportReport, json_type, wrong_type
from memgauge.data.jsonio import load_structured
from memgauge.data.models import (
    EvalQuery,
    ExpectedFact,
    ExtractionCase,
    Judgment,
    Memory,
    RetrievalDataset,
    Turn,
    blank,
    fact_key,
)
from memgauge.errors import DataError, Problem

__all__ = [
    "LOCOMO_CATEGORIES",
    "EvidenceStep",
    "import_locomo",
    "locomo_extraction_cases",
    "reconcile_evidence",
]

LOCOMO_CATEGORIES = {
    1: "multi-hop",
    2: "temporal",
    3: "open-domain",
    4: "single-hop",
    5: "adversarial",
}
_EVIDENCE = re.compile(r"D:?(\d+):(\d+)")
# step kind -> the count it adds to (a split adds the ids it made beyond the first)
_STEP_COUNTS = {
    "split": "evidence_split",
    "reformatted": "evidence_reformatted",
    "duplicate": "evidence_duplicates_removed",
    "malformed": "evidence_malformed_dropped",
    "dangling": "evidence_dangling_dropped",
}
_SESSION = re.compile(r"session_(\d+)$")


@dataclass(frozen=True)
class EvidenceStep:
    """One change the import made to a question's evidence list.

    Attributes:
        kind: split (one string held several ids), reformatted (an id written otherwise than
            `D<session>:<turn>`: `D:11:26`, `D30:05`), duplicate (an id listed again), malformed
            (no id in it, or text besides its ids), dangling (no turn has the id).
        before: the evidence string (or id) as LoCoMo has it.
        after: what it became (empty: dropped).
        why: the change in words.
    """

    kind: str
    before: str
    after: list[str]
    why: str


def reconcile_evidence(
    raw: Sequence[Any], turns: Collection[str]
) -> tuple[list[str], list[EvidenceStep]]:
    """A question's evidence as memgauge judges it (canonical `D<session>:<turn>` ids of turns
    that exist, each once, in LoCoMo's order) and every step from LoCoMo's list to it."""
    kept: list[str] = []
    seen: set[str] = set()
    steps: list[EvidenceStep] = []
    for item in raw:
        text = str(item)
        matches = list(_EVIDENCE.finditer(text))
        ids = [f"D{int(m.group(1))}:{int(m.group(2))}" for m in matches]
        leftover = _EVIDENCE.sub("", text).strip(" ;,")
        if not ids:
            steps.append(EvidenceStep("malformed", text, [], "not a dialog id: dropped"))
            continue
        if leftover:
            steps.append(
                EvidenceStep("malformed", text, ids, f"text besides its ids ({leftover!r}) ignored")
            )
        if len(ids) > 1:
            steps.append(EvidenceStep("split", text, ids, f"one string holds {len(ids)} ids"))
            pieces = [m.group(0) for m in matches]
        else:
            pieces = [text if not leftover else matches[0].group(0)]
        for piece, canonical in zip(pieces, ids, strict=True):
            if piece != canonical:
                steps.append(
                    EvidenceStep("reformatted", piece, [canonical], "written as D<session>:<turn>")
                )
        for canonical in ids:
            if canonical in seen:
                steps.append(EvidenceStep("duplicate", canonical, [], "listed again: counted once"))
                continue
            seen.add(canonical)
            if canonical not in turns:
                steps.append(
                    EvidenceStep("dangling", canonical, [], "no turn has this id: dropped")
                )
                continue
            kept.append(canonical)
    return kept, steps


def _step_count(step: EvidenceStep) -> int:
    """What a step adds to its count: the ids a split made beyond the first, else one."""
    return len(step.after) - 1 if step.kind == "split" else 1


def _session_date(text: Any) -> datetime | None:
    if not isinstance(text, str):
        return None
    for fmt in ("%I:%M %p on %d %B, %Y", "%I:%M %p on %d %b, %Y"):
        try:
            return datetime.strptime(text.strip(), fmt)
        except ValueError:
            continue
    return None


def _turn_problems(file: str, where: str, turn: Any) -> list[Problem]:
    if not isinstance(turn, dict):
        return [Problem(file, None, where, f"a turn is an object, got {json_type(turn)}")]
    checks = [
        wrong_type(file, f"{where}.{key}", turn.get(key), str, "a string")
        for key in ("dia_id", "speaker", "text")
    ]
    if "blip_caption" in turn:
        checks.append(
            wrong_type(
                file, f"{where}.blip_caption", turn["blip_caption"], (str, type(None)), "a string"
            )
        )
    return [c for c in checks if c is not None]


def _qa_problems(file: str, where: str, qa: Any) -> list[Problem]:
    if not isinstance(qa, dict):
        return [Problem(file, None, where, f"a QA item is an object, got {json_type(qa)}")]
    category = qa.get("category")
    checks = [
        wrong_type(file, f"{where}.question", qa.get("question"), str, "a string"),
        wrong_type(file, f"{where}.category", category, int, "an integer 1-5"),
        wrong_type(file, f"{where}.evidence", qa.get("evidence", []), list, "a list of ids"),
    ]
    for key in ("answer", "adversarial_answer"):
        if key in qa:
            checks.append(
                wrong_type(file, f"{where}.{key}", qa[key], (str, int, float), "a string or number")
            )
    if category in (1, 2, 3, 4) and "answer" not in qa:
        checks.append(
            Problem(file, None, f"{where}.answer", f"category {category} needs an answer")
        )
    problems = [c for c in checks if c is not None]
    # the type first: a list or an object cannot even be looked up among the categories
    if not any(p.field == f"{where}.category" for p in problems) and (
        category not in LOCOMO_CATEGORIES
    ):
        problems.append(Problem(file, None, f"{where}.category", "not one of 1-5"))
    return problems


def _observation_problems(file: str, where: str, observation: Any) -> list[Problem]:
    """Wrong types in a sample's `observation` (per session, per speaker, `[text, evidence]`
    entries), which `locomo_extraction_cases` reads as silver facts."""
    if observation is None:
        return []
    if not isinstance(observation, dict):
        return [Problem(file, None, where, f"must be an object, got {json_type(observation)}")]
    problems: list[Problem] = []
    for key, speakers in observation.items():
        at = f"{where}.{key}"
        if not isinstance(speakers, dict):
            problems.append(
                Problem(file, None, at, f"must be an object, got {json_type(speakers)}")
            )
            continue
        for speaker, entries in speakers.items():
            if not isinstance(entries, list):
                problems.append(
                    Problem(
                        file, None, f"{at}.{speaker}", f"must be a list, got {json_type(entries)}"
                    )
                )
                continue
            problems += [
                Problem(
                    file,
                    None,
                    f"{at}.{speaker}[{ei}]",
                    "must be [text, evidence] with a string text, got"
                    f" {json_type(entry[0] if isinstance(entry, list) and entry else entry)}",
                )
                for ei, entry in enumerate(entries)
                if not (isinstance(entry, list) and entry and isinstance(entry[0], str))
            ]
    return problems


def _sample_problems(file: str, where: str, sample: Any) -> list[Problem]:
    """Every wrong-typed field of one sample (LoCoMo's own scripts would crash on them)."""
    if not isinstance(sample, dict) or not isinstance(sample.get("conversation"), dict):
        return [Problem(file, None, where, "a sample needs a 'conversation' object")]
    problems: list[Problem] = []
    if "sample_id" in sample and (
        p := wrong_type(file, f"{where}.sample_id", sample["sample_id"], str, "a string")
    ):
        problems.append(p)
    for key, turns in sample["conversation"].items():
        if not _SESSION.match(key):
            continue
        if not isinstance(turns, list):
            problems.append(
                Problem(
                    file,
                    None,
                    f"{where}.conversation.{key}",
                    f"a session is a list of turns, got {json_type(turns)}",
                )
            )
            continue
        for ti, turn in enumerate(turns):
            problems += _turn_problems(file, f"{where}.conversation.{key}[{ti}]", turn)
    problems += _observation_problems(file, f"{where}.observation", sample.get("observation"))
    qas = sample.get("qa", [])
    if not isinstance(qas, list):
        return [
            *problems,
            Problem(file, None, f"{where}.qa", f"must be a list, got {json_type(qas)}"),
        ]
    for qi, qa in enumerate(qas):
        problems += _qa_problems(file, f"{where}.qa[{qi}]", qa)
        evidence = qa.get("evidence") if isinstance(qa, dict) else None
        if isinstance(evidence, list):
            problems += [
                Problem(
                    file,
                    None,
                    f"{where}.qa[{qi}].evidence[{ei}]",
                    f"must be a string, got {json_type(e)}",
                )
                for ei, e in enumerate(evidence)
                if not isinstance(e, str)
            ]
    return problems


def _read(path: str | Path) -> list[Any]:
    """The samples of a LoCoMo file, every wrong-typed field refused at once (a DataError
    naming the file and each field; LoCoMo's own scripts would crash on them)."""
    raw, lines = load_structured(Path(path))
    file = str(path)
    if not isinstance(raw, list):
        raise DataError(Problem(file, None, None, "LoCoMo is a JSON list of samples"))
    problems = [
        replace(p, line=lines.get(si))  # a sample's line in JSON lines; None in a JSON list
        for si, sample in enumerate(raw)
        for p in _sample_problems(file, f"[{si}]", sample)
    ]
    if problems:
        raise DataError(problems)
    return raw


def import_locomo(path: str | Path) -> tuple[RetrievalDataset, ImportReport]:
    """Read `locomo10.json` (or any file in its format) into a RetrievalDataset.

    A wrong-typed field (a category that is not an integer, a turn's text that is not a
    string, ...) is a DataError naming the file and the field; nothing is imported.
    """
    raw = _read(path)
    file = str(path)
    report = ImportReport(source=file, format="locomo")
    memories: list[Memory] = []
    queries: list[EvalQuery] = []
    judgments: list[Judgment] = []
    for si, sample in enumerate(raw):
        sid = str(sample.get("sample_id") or f"sample-{si}")
        conv = sample["conversation"]
        turn_ids: set[str] = set()
        for key, turns in conv.items():
            m = _SESSION.match(key)
            if not m:
                continue
            n = int(m.group(1))
            when = _session_date(conv.get(f"{key}_date_time"))
            if when is None:
                report.add("sessions_without_date")
            report.add("sessions")
            for turn in turns:
                dia = turn["dia_id"]
                if not dia or dia in turn_ids:
                    report.add("turns_dropped_bad_id")
                    report.dropped.append({"sample": sid, "turn": dia, "reason": "bad id"})
                    continue
                turn_ids.add(dia)
                text = f"{turn['speaker']}: {turn['text']}"
                if turn.get("blip_caption"):
                    text += f" [shares a photo: {turn['blip_caption']}]"
                memories.append(
                    Memory(
                        id=f"{sid}:{dia}",
                        text=text,
                        session=f"{sid}:S{n}",
                        corpus=sid,
                        created_at=when,
                        metadata={"speaker": turn["speaker"], "dia_id": dia},
                    )
                )
        report.add("samples")
        for qi, qa in enumerate(sample.get("qa", [])):
            qid = f"{sid}:q{qi}"
            cat = LOCOMO_CATEGORIES[qa["category"]]
            # LoCoMo's answers under LoCoMo's names: a category-5 question has no `answer`
            # (its `adversarial_answer` is the trap, not a right answer)
            answers = {k: qa[k] for k in ("answer", "adversarial_answer") if k in qa}
            queries.append(
                EvalQuery(
                    id=qid,
                    text=qa["question"],
                    category=cat,
                    corpus=sid,
                    metadata={**answers, "locomo_category": qa["category"]},
                )
            )
            report.add(f"questions_{cat}")
            if cat == "adversarial":
                report.add("adversarial_not_judged")
                continue
            raw_evidence = list(qa.get("evidence") or [])
            kept, steps = reconcile_evidence(raw_evidence, turn_ids)
            if steps:
                report.add("questions_evidence_normalised")
                for step in steps:
                    report.add(_STEP_COUNTS[step.kind], _step_count(step))
                report.changed.append(
                    {
                        "conversation": sid,
                        "question": qi,
                        "query": qid,
                        "field": "evidence",
                        "before": raw_evidence,
                        "after": kept,
                        "changes": [asdict(step) for step in steps],
                    }
                )
            if not kept:
                report.add("answerable_without_evidence")
                report.dropped.append(
                    {"query": qid, "reason": "answerable but no valid evidence: not judged"}
                )
                continue
            report.add("answerable_judged")
            judgments.extend(
                Judgment(query_id=qid, memory_id=f"{sid}:{e}", grade=3, source="manual")
                for e in kept
            )
    report.counts["memories"] = len(memories)
    report.counts["queries"] = len(queries)
    report.counts["judgments"] = len(judgments)
    report.notes.append(
        "adversarial questions are unanswerable by design: imported as queries, not judged"
    )
    ds = RetrievalDataset(
        name=Path(path).stem, memories=memories, queries=queries, judgments=judgments
    )
    return ds, report


def locomo_extraction_cases(path: str | Path) -> list[ExtractionCase]:
    """LoCoMo sessions as extraction cases: the session's turns, and its `observation`
    entries (facts tied to dialog ids) as silver expected facts, for extraction recall on real
    conversations (silver: they were written by a model, not checked line by line)."""
    data = _read(path)
    cases = []
    for sample in data:
        sid = str(sample.get("sample_id", "?"))
        conv = sample.get("conversation", {})
        for key, obs in (sample.get("observation") or {}).items():
            m = re.match(r"session_(\d+)_observation$", key)
            turns = conv.get(f"session_{m.group(1)}") if m else None
            if not turns or not isinstance(obs, dict):
                continue
            facts: dict[str, ExpectedFact] = {}  # an observation written twice is one fact
            for speaker, entries in obs.items():
                for entry in entries:
                    if isinstance(entry, list) and entry and blank(str(entry[0])) is None:
                        fact = ExpectedFact(content=str(entry[0]), category=str(speaker))
                        facts.setdefault(fact_key(fact.content), fact)
            cases.append(
                ExtractionCase(
                    id=f"{sid}:S{m.group(1) if m else '?'}",
                    scenario="locomo session (silver observations)",
                    conversation=[
                        Turn(role="user", content=f"{t.get('speaker', '?')}: {t.get('text', '')}")
                        for t in turns
                    ],
                    expected_facts=list(facts.values()),
                )
            )
    return cases
