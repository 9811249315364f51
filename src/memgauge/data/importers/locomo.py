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
)
from memgauge.errors import DataError, Problem

__all__ = ["LOCOMO_CATEGORIES", "import_locomo", "locomo_extraction_cases", "normalise_evidence"]

LOCOMO_CATEGORIES = {
    1: "multi-hop",
    2: "temporal",
    3: "open-domain",
    4: "single-hop",
    5: "adversarial",
}
_EVIDENCE = re.compile(r"D:?(\d+):(\d+)")
_SESSION = re.compile(r"session_(\d+)$")


def normalise_evidence(raw: list[Any]) -> tuple[list[str], list[str]]:
    """Evidence ids in canonical `D<session>:<turn>` form, and the pieces that were malformed."""
    good: list[str] = []
    bad: list[str] = []
    for item in raw:
        text = str(item)
        found = _EVIDENCE.findall(text)
        leftover = _EVIDENCE.sub("", text).strip(" ;,")
        good.extend(f"D{int(s)}:{int(t)}" for s, t in found)
        if leftover or not found:
            bad.append(text)
    return list(dict.fromkeys(good)), bad


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
    raw = load_structured(Path(path))[0]
    file = str(path)
    if not isinstance(raw, list):
        raise DataError(Problem(file, None, None, "LoCoMo is a JSON list of samples"))
    problems = [
        p for si, sample in enumerate(raw) for p in _sample_problems(file, f"[{si}]", sample)
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
            answer = qa.get("answer", qa.get("adversarial_answer"))
            queries.append(
                EvalQuery(
                    id=qid,
                    text=qa["question"],
                    category=cat,
                    corpus=sid,
                    metadata={"answer": answer, "locomo_category": qa["category"]},
                )
            )
            report.add(f"questions_{cat}")
            if cat == "adversarial":
                report.add("adversarial_not_judged")
                continue
            evidence, malformed = normalise_evidence(list(qa.get("evidence") or []))
            if malformed:
                report.add("evidence_malformed_dropped", len(malformed))
                for piece in malformed:
                    report.dropped.append({"query": qid, "evidence": piece, "reason": "malformed"})
            raw_count = len(qa.get("evidence") or [])
            if len(evidence) > raw_count - len(malformed):
                report.add("evidence_split", len(evidence) - (raw_count - len(malformed)))
            kept = []
            for e in evidence:
                if e in turn_ids:
                    kept.append(e)
                else:
                    report.add("evidence_dangling_dropped")
                    report.dropped.append({"query": qid, "evidence": e, "reason": "no such turn"})
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
            facts = [
                ExpectedFact(content=str(entry[0]), category=str(speaker))
                for speaker, entries in obs.items()
                for entry in entries
                if isinstance(entry, list) and entry and str(entry[0]).strip()
            ]
            cases.append(
                ExtractionCase(
                    id=f"{sid}:S{m.group(1) if m else '?'}",
                    scenario="locomo session (silver observations)",
                    conversation=[
                        Turn(role="user", content=f"{t.get('speaker', '?')}: {t.get('text', '')}")
                        for t in turns
                    ],
                    expected_facts=facts,
                )
            )
    return cases
