"""LoCoMo's QA scoring (`task_eval/evaluation.py`, `eval_question_answering`) against a
transcription written here from its definition, on thousands of random answers full of Unicode
edge cases: combining marks, zero-width joiners, non-Latin scripts, punctuation, articles.

The transcription, in words:

- normalise: delete commas; lowercase; delete every ASCII punctuation character; replace each
  whole word a / an / the / and by a space, "whole word" as the `regex` module's `\\b` sees it;
  collapse whitespace;
- F1: Porter-stem the normalised words of both sides; overlap = size of the multiset
  intersection; 0 without overlap, else the harmonic mean of overlap / |prediction| and
  overlap / |gold|;
- the gold answer is `str()`-ed; category 1: split both sides on commas (each part
  stripped), and average over gold parts the best F1 against a predicted part; 2 and 4: F1;
  3: F1 against the gold's text before its first `;`, stripped; 5: 1 if the lowercased answer
  contains "no information available" or "not mentioned", else 0.
"""

from __future__ import annotations

import functools
import json
import random
import re
import string
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import regex
from tests.helpers import lazy_import

from memgauge.data.importers import import_locomo
from memgauge.scorers import EvalContext, evaluator_from_spec
from memgauge.scorers.f1 import locomo_f1, locomo_multi_f1, locomo_normalize

ROOT = Path(__file__).resolve().parents[2]
LOCOMO = ROOT.parent / "shared" / "datasets" / "locomo10.json"

_NLTK_STEM = lazy_import("nltk.stem")
_DROP = frozenset(string.punctuation) | {","}
_WORDS = regex.compile(r"\b(?:the|and|an|a)\b")


@functools.cache
def _stemmer() -> Any:
    return _NLTK_STEM.PorterStemmer()


def oracle_normalize(text: str) -> str:
    kept = "".join(ch for ch in text.lower() if ch not in _DROP)
    return " ".join(_WORDS.sub(" ", kept).split())


def oracle_f1(prediction: str, gold: str) -> float:
    stem = _stemmer()
    pred = [stem.stem(w) for w in oracle_normalize(prediction).split()]
    ref = [stem.stem(w) for w in oracle_normalize(gold).split()]
    overlap = sum(min(pred.count(t), ref.count(t)) for t in set(pred))
    if overlap == 0:
        return 0.0
    p, r = overlap / len(pred), overlap / len(ref)
    return 2 * p * r / (p + r)


def oracle_score(category: int, prediction: str, answer: Any) -> float:
    gold = str(answer)
    if category == 5:
        low = prediction.lower()
        return float("no information available" in low or "not mentioned" in low)
    if category == 3:
        gold = gold.split(";", 1)[0].strip()
    if category == 1:
        parts = [p.strip() for p in prediction.split(",")]
        best = [max(oracle_f1(p, g.strip()) for p in parts) for g in gold.split(",")]
        return float(np.mean(best))
    return oracle_f1(prediction, gold)


# --- random text ------------------------------------------------------------------------------

WORDS = [
    "running",
    "runs",
    "ran",
    "cats",
    "caresses",
    "ponies",
    "meeting",
    "happily",
    "dates",
    "May",
    "June",
    "2022",
    "7",
    "1,000",
    "3.5",
    "Caroline",
    "LGBTQ",
    "pottery",
    "Sweden",
    "a",
    "an",
    "the",
    "and",
    "A",
    "An",
    "THE",
    "And",
    "andes",
    "theater",
    "another",
    "bandana",
    "the\u0301",
    "an\u0301",
    "a\u0308",
    "and\u0327",
    "e\u0301te\u0301",
    "\u0301the",
    "the\u200d",
    "\u200dthe",
    "an\u200c",
    "a\u200db",
    "the\u200bcat",
    "Москва",
    "и",
    "καλημέρα",
    "ο",
    "東京",
    "の",
    "مرحبا",
    "ال",
    "नमस्ते",
    "हिन्दी",
    "한국어",
    "สวัสดี",
    "ไทย",
    "İstanbul",
    "ǅemal",
    "straße",
    "ﬁsh",
    "ÅNGSTRÖM",
    "naïve",
    "café",
    "not mentioned",
    "Not Mentioned",
    "no information available",
    "No Information Available",
    "not",
    "mentioned",
    "information",
]
PUNCT = [",", ";", ".", "!", "?", "'s", "-", "—", "«", "»", "“", "”", "’", "(", ")", ":", "/"]
SEPARATORS = [" ", " ", " ", "  ", "\t", "\n", "\u00a0", "\u3000", "\u2009", ", ", "; ", ""]


def random_text(rng: random.Random, n_max: int = 8) -> str:
    parts: list[str] = []
    for _ in range(rng.randint(0, n_max)):
        piece = rng.choice(WORDS)
        if rng.random() < 0.25:
            piece = rng.choice(PUNCT) + piece if rng.random() < 0.5 else piece + rng.choice(PUNCT)
        parts.append(piece)
        parts.append(rng.choice(SEPARATORS))
    return "".join(parts).rstrip(" ") if rng.random() < 0.8 else "".join(parts)


def random_answer(rng: random.Random, category: int) -> Any:
    if rng.random() < 0.1:
        return rng.choice([2022, 7, 1.5])  # LoCoMo has a few numeric answers
    text = random_text(rng)
    if category == 3 and rng.random() < 0.6:
        text += rng.choice([";", "; ", " ;"]) + random_text(rng)
    return text


def random_prediction(rng: random.Random, gold: Any) -> str:
    roll = rng.random()
    if roll < 0.3:
        return random_text(rng, 12)
    gold_text = str(gold)
    if roll < 0.6:  # a paraphrase-ish: gold words shuffled with noise
        words = gold_text.replace(";", " ").split() + random_text(rng, 3).split()
        rng.shuffle(words)
        return rng.choice([" ", ", "]).join(words)
    if roll < 0.8:
        return gold_text
    return random_text(rng, 4) + rng.choice([" not mentioned", " No information available"])


# --- the tests --------------------------------------------------------------------------------


def test_regex_word_boundaries_are_locomos() -> None:
    """The case from issue 12: `re` saw `the` / `an` in these words and stripped them."""
    assert locomo_f1("the\u0301", "an\u0301") == 0.0
    assert oracle_f1("the\u0301", "an\u0301") == 0.0
    assert locomo_normalize("the\u200d cat") == "the\u200d cat"
    assert locomo_normalize("The cat, and a dog.") == "cat dog"
    # `re` would have made these equal (both reduce to the bare combining mark)
    assert re.sub(r"\b(a|an|the|and)\b", " ", "the\u0301").strip() == "\u0301"


def test_normalisation_and_f1_match_the_transcription(rng: random.Random) -> None:
    for _ in range(3000):
        a, b = random_text(rng, 10), random_text(rng, 10)
        assert locomo_normalize(a) == oracle_normalize(a), (a,)
        assert locomo_f1(a, b) == pytest.approx(oracle_f1(a, b), abs=1e-12), (a, b)
        # multi-answer F1 is the category-1 rule
        assert locomo_multi_f1(a, b) == pytest.approx(oracle_score(1, a, b), abs=1e-12), (a, b)


@pytest.mark.parametrize("category", [1, 2, 3, 4, 5])
def test_locomo_qa_matches_eval_question_answering(rng: random.Random, category: int) -> None:
    scorer = evaluator_from_spec("locomo-qa")
    for _ in range(800):
        gold = random_answer(rng, category)
        prediction = random_prediction(rng, gold)
        ctx = EvalContext(output=prediction, expected=gold, metadata={"locomo_category": category})
        score = scorer.evaluate(ctx)
        expected = oracle_score(category, prediction, gold)
        assert score.error is None, score.reason
        assert score.value == pytest.approx(expected, abs=1e-12), (category, prediction, gold)


def test_category_3_scores_only_the_text_before_the_semicolon() -> None:
    scorer = evaluator_from_spec("locomo-qa")
    gold = "Beach; the user also likes mountains"
    ctx = EvalContext(output="beach", expected=gold, metadata={"locomo_category": 3})
    assert scorer.evaluate(ctx).value == 1.0
    plain = evaluator_from_spec({"token_f1": {"variant": "locomo"}})
    assert plain.evaluate(ctx).value is not None
    assert (plain.evaluate(ctx).value or 0) < 1.0


def test_category_5_is_the_phrase_rule_and_the_answer_is_ignored() -> None:
    scorer = evaluator_from_spec("locomo-qa")
    for text, value in [
        ("That is NOT MENTIONED in the conversation.", 1.0),
        ("No information available.", 1.0),
        ("It was never mentioned.", 0.0),  # LoCoMo's rule wants "not mentioned"
        ("Melanie's dog", 0.0),
    ]:
        ctx = EvalContext(output=text, expected=None, metadata={"locomo_category": 5})
        assert scorer.evaluate(ctx).value == value, text


def test_an_item_without_a_category_or_a_gold_is_a_failure_not_a_zero() -> None:
    scorer = evaluator_from_spec("locomo-qa")
    no_cat = scorer.evaluate(EvalContext(output="x", expected="x"))
    assert no_cat.value is None
    assert no_cat.error is not None
    assert "locomo_category" in no_cat.error
    no_gold = scorer.evaluate(EvalContext(output="x", metadata={"locomo_category": 2}))
    assert no_gold.value is None
    fixed = evaluator_from_spec({"locomo-qa": {"category": 4}})
    assert fixed.evaluate(EvalContext(output="Sweden", expected="sweden")).value == 1.0


def test_locomo_qa_in_a_suite(
    run_suite_json: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.syspath_prepend(str(ROOT / "tests" / "data" / "subjects"))
    items = [
        {
            "id": "m",
            "input": "multi",
            "expected": "Paris, Rome",
            "metadata": {"locomo_category": 1},
        },
        {"id": "o", "input": "open", "expected": "beach; sun", "metadata": {"locomo_category": 3}},
        {"id": "a", "input": "adv", "expected": "Boston", "metadata": {"locomo_category": 5}},
    ]
    answers = {"multi": "Rome", "open": "the beach", "adv": "not mentioned"}
    suite = {
        "name": "locomo",
        "subjects": {
            "agent": {
                "python": {"target": "lookup_agents:LookupAgent", "kwargs": {"answers": answers}}
            }
        },
        "tasks": [
            {"name": "qa", "kind": "expected-output", "items": items, "evaluators": ["locomo-qa"]}
        ],
    }
    code, doc = run_suite_json(suite)
    assert code == 0, doc
    (row,) = doc["results"]
    assert row["evaluator"] == "locomo-qa"
    assert row["mean"] == pytest.approx((0.5 + 1.0 + 1.0) / 3)


@pytest.mark.locomo
@pytest.mark.skipif(not LOCOMO.is_file(), reason="../shared/datasets/locomo10.json not present")
def test_every_locomo10_question_scores_as_evaluation_py(rng: random.Random) -> None:
    """All 1,986 questions of locomo10.json, each with perturbed predictions, through the
    importer and `memgauge audit`'s probes, scored by `locomo-qa` and by the transcription."""
    from memgauge.probes.sources import load_audit_source

    raw = json.loads(LOCOMO.read_text())
    source = load_audit_source(LOCOMO)
    ds, _ = import_locomo(LOCOMO)
    official = {f"{s['sample_id']}:q{i}": qa for s in raw for i, qa in enumerate(s["qa"])}
    assert {q.id for q in ds.queries} == set(official)
    scorer = evaluator_from_spec("locomo-qa")
    differ_without_semicolon_rule = 0
    for probe in source.probes:
        qa = official[probe.id]
        item = probe.item()
        gold = qa.get("answer", qa.get("adversarial_answer"))
        for prediction in (random_prediction(rng, gold), str(gold), random_text(rng)):
            ctx = EvalContext(
                output=prediction, expected=item["expected"], metadata=item["metadata"]
            )
            got = scorer.evaluate(ctx).value
            want = oracle_score(qa["category"], prediction, qa.get("answer"))
            assert got == pytest.approx(want, abs=1e-12), (probe.id, prediction)
            if qa["category"] == 3 and oracle_f1(prediction, str(gold)) != want:
                differ_without_semicolon_rule += 1
    assert len(source.probes) == 1986
    assert differ_without_semicolon_rule > 0  # the ';' rule changes real scores


def test_regex_is_a_declared_dependency() -> None:
    text = (ROOT / "pyproject.toml").read_text()
    deps = text.split("dependencies = [", 1)[1].split("]", 1)[0]
    assert '"regex' in deps
    assert "regex" in sys.modules
