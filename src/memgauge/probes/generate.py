"""Probes from a memaudit conversation dataset (seed 003): recall, conflict, temporal and
hallucination questions with their expected answers, made without an LLM so that the same
dataset always gives the same probes.

- **recall**: one per fact that no other fact supersedes. The question is made from the
  fact's wording (`User's name is Sarah` -> `What is the user's name?`, expected `Sarah`);
  a fact no rule fits is asked about by its opening words.
- **conflict**: one per fact that supersedes another, asked like a recall probe, expected the
  newest value; the superseded values (the whole chain, however long) are kept as `old_values`
  so an answer that gives an old value is marked wrong.
- **temporal**: `Which happened first: A or B?` for facts with different timestamps (each fact
  against the next later one, up to 20), the two events in a seeded random order;
  expected the earlier one.
- **hallucination**: questions about things the conversations never mention. A candidate is
  used only if none of its topic words (a broad family: any pet word rules out every pet
  question) occurs in any turn or fact of the dataset, so it cannot collide with a real fact.
  Expected: that it was never mentioned.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from memgauge.data.models import ConversationDataset, Fact, Memory

__all__ = [
    "HALLUCINATION_TOPICS",
    "NOT_MENTIONED",
    "Probe",
    "conversation_memories",
    "generate_probes",
    "question_for",
]

NOT_MENTIONED = "This was never mentioned in the conversations."

# probe type -> the LongMemEval question type whose judging criteria fit it
QUESTION_TYPES = {
    "recall": "single-session-user",
    "conflict": "knowledge-update",
    "temporal": "temporal-reasoning",
    "hallucination": "abstention",
}


@dataclass(frozen=True)
class Probe:
    """One question for the agent under test."""

    id: str
    type: str
    question: str
    expected: str | list[str]
    related_facts: list[str] = field(default_factory=list)
    corpus: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)

    def item(self) -> dict[str, Any]:
        """The probe as a suite item (`TaskItem` fields)."""
        meta = {
            "probe_type": self.type,
            "question_type": self.metadata.get("longmemeval_type")
            or QUESTION_TYPES.get(self.type, "single-session-user"),
            "related_facts": self.related_facts,
            **self.metadata,
        }
        if self.type == "hallucination":
            meta["abstention"] = True
        out: dict[str, Any] = {
            "id": self.id,
            "input": self.question,
            "expected": self.expected,
            "category": self.type,
            "metadata": meta,
        }
        if self.corpus is not None:
            out["corpus"] = self.corpus
        return out


# --- recall questions from a fact's wording --------------------------------------------------

_POSSESSIVE = re.compile(r"^(?:the )?user's (.+?) (is|are|was|were) (.+)$", re.I)
_COPULA = re.compile(r"^(?:the )?user (is|was) (.+)$", re.I)
_NOW = re.compile(r"^(?:the )?user (?:now |currently |recently )+(.+)$", re.I)
_VERB = re.compile(r"^(?:the )?user ([a-z]+)\b\s*(.*)$", re.I)
_PREPS = ("with", "in", "at", "for", "on", "to", "from", "as", "about", "into", "by")
_IRREGULAR = {"has": "have", "does": "do", "goes": "go", "is": "be", "was": "be"}


def _base(verb: str) -> str:
    v = verb.lower()
    if v in _IRREGULAR:
        return _IRREGULAR[v]
    if v.endswith("ies") and len(v) > 4:
        return v[:-3] + "y"
    if v.endswith(("ches", "shes", "sses", "xes", "zes")):
        return v[:-2]
    if v.endswith("s") and not v.endswith("ss"):
        return v[:-1]
    return v


_PAST = {"went", "had", "made", "got", "took", "began", "bought", "met", "left", "sold", "won"}
_ADVERBS = {"also", "often", "always", "usually", "still", "never", "sometimes", "now"}


_REPLACED = re.compile(r"\s*(?:,\s*)?\b(?:instead of|rather than|in place of|no longer)\b.*$", re.I)


def question_for(content: str, category: str | None = None) -> tuple[str, str]:
    """A question about a fact and the answer the fact gives (a clause naming what it
    replaced, "instead of Python", is not part of the answer)."""
    q, a = _question_for(content, category)
    trimmed = _REPLACED.sub("", a).strip()
    return q, trimmed or a


_TOPICS = {
    "personal": "personal details",
    "preference": "preferences",
    "event": "recent events",
    "relationship": "relationships",
}


def _question_for(content: str, category: str | None) -> tuple[str, str]:
    text = content.strip().rstrip(".")
    m = _POSSESSIVE.match(text)
    if m:
        return f"What {m.group(2).lower()} the user's {m.group(1)}?", m.group(3)
    m = _COPULA.match(text)
    if m:
        return "What do the conversations say the user is?", m.group(2)
    m = _NOW.match(text)
    if m:
        text = "User " + m.group(1)
    m = _VERB.match(text)
    if m and m.group(2):
        verb, rest = m.group(1), m.group(2)
        adverbs = ""
        while verb.lower().endswith("ly") or verb.lower() in _ADVERBS:
            adverbs += verb.lower() + " "
            head, _, rest = rest.partition(" ")
            verb = head
        words = rest.split()
        prep = ""
        if words and words[0].lower() in _PREPS:
            prep, rest = " " + words[0].lower(), " ".join(words[1:])
        if rest and (verb.lower().endswith("ed") or verb.lower() in _PAST):
            # no lexicon for base forms of past tenses ("moved"): keep the verb as said
            return (
                f"What do you remember about when the user {adverbs}{verb.lower()}{prep} ...?",
                rest,
            )
        if rest and verb.lower().endswith("s"):
            return f"What does the user {adverbs}{_base(verb)}{prep}?", rest
    # no rule fits: a neutral question that gives nothing of the fact away
    return f"What do you remember about the user's {_TOPICS.get(category or '', 'life')}?", text


# --- hallucination candidates ----------------------------------------------------------------

# (question, topic words): a candidate is used only when no topic word occurs in the dataset
HALLUCINATION_TOPICS: list[tuple[str, tuple[str, ...]]] = [
    (
        "What is the name of the user's cat?",
        ("cat", "cats", "kitten", "pet", "pets", "dog", "dogs", "puppy", "animal", "animals"),
    ),
    ("What is the name of the user's sister?", ("sister", "sisters", "sibling", "siblings")),
    ("What car does the user drive?", ("car", "cars", "drive", "drives", "driving", "vehicle")),
    ("What is the user's blood type?", ("blood",)),
    ("What is the user allergic to?", ("allergy", "allergic", "allergies")),
    ("When is the user's birthday?", ("birthday", "born", "birth")),
    (
        "Which musical instrument does the user play?",
        ("instrument", "guitar", "piano", "violin", "drums", "cello", "music", "band"),
    ),
    (
        "When is the user's wedding anniversary?",
        ("wedding", "anniversary", "married", "wife", "husband", "spouse", "partner"),
    ),
    ("In which town did the user grow up?", ("grew", "grow", "hometown", "childhood")),
    ("What is the user's favourite dessert?", ("dessert", "desserts", "cake", "sweets")),
    ("What tattoo does the user have?", ("tattoo", "tattoos")),
    ("What is the name of the user's horse?", ("horse", "horses", "riding", "pony")),
    ("What is the user's grandmother's name?", ("grandmother", "grandma", "granny", "nan")),
    ("What is the user's shoe size?", ("shoe", "shoes", "size")),
    ("What is the name of the user's boat?", ("boat", "boats", "sailing", "yacht")),
    ("Which high school did the user attend?", ("school", "highschool", "graduated")),
    ("What was the first concert the user went to?", ("concert", "concerts", "gig", "festival")),
    ("How much did the user win in the lottery?", ("lottery", "jackpot", "won")),
    ("Which belt does the user hold in karate?", ("karate", "judo", "martial", "belt", "dojo")),
    ("What is the user's favourite football club?", ("football", "soccer", "club", "league")),
]

_WORD = re.compile(r"[a-z0-9']+")


def _words(texts: Iterable[str]) -> set[str]:
    """Words and their simple stems: "dog's" and "dogs" also count as "dog"."""
    out: set[str] = set()
    for t in texts:
        for w in _WORD.findall(t.lower()):
            w = w.strip("'")
            out.add(w)
            base = w.removesuffix("'s")
            out.add(base)
            if len(base) > 3 and base.endswith("s"):
                out.add(base[:-1])
    return out


def _timestamp(fact: Fact) -> datetime | None:
    if not fact.timestamp:
        return None
    return _utc(fact.timestamp)


def _utc(text: str) -> datetime | None:
    """An ISO 8601 time; one without a zone is taken as UTC (so all of them compare)."""
    try:
        when = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return when if when.tzinfo is not None else when.replace(tzinfo=UTC)


def _chain(fact: Fact, by_id: dict[str, Fact]) -> list[str]:
    """The values this fact replaced, newest first (validation has ruled out cycles)."""
    old, seen = [], {fact.id}
    cur = fact
    while cur.supersedes and cur.supersedes in by_id and cur.supersedes not in seen:
        seen.add(cur.supersedes)
        cur = by_id[cur.supersedes]
        old.append(cur.content)
    return old


def generate_probes(
    ds: ConversationDataset,
    *,
    n_hallucination: int | None = None,
    seed: int = 0,
) -> list[Probe]:
    """Every probe of `ds` (deterministic for a seed)."""
    rng = random.Random(seed)
    facts = [f for c in ds.conversations for f in c.facts]
    conv_of = {f.id: c.id for c in ds.conversations for f in c.facts}
    by_id = {f.id: f for f in facts}
    superseded = {f.supersedes for f in facts if f.supersedes}
    probes: list[Probe] = []
    recall: dict[str, Probe] = {}
    for f in facts:
        if f.id in superseded:
            continue
        q, a = question_for(f.content, f.category)
        meta = {"conversation": conv_of[f.id], "fact": f.content}
        same = recall.get(q)
        if same is not None:
            # two facts make the same question: one probe, either fact is a right answer
            answers = same.expected if isinstance(same.expected, list) else [same.expected]
            recall[q] = Probe(
                same.id,
                "recall",
                q,
                [*answers, a],
                [*same.related_facts, f.id],
                metadata=same.metadata,
            )
        else:
            recall[q] = Probe(f"recall-{f.id}", "recall", q, a, [f.id], metadata=meta)
        if f.supersedes:
            old = _chain(f, by_id)
            probes.append(
                Probe(
                    f"conflict-{f.id}",
                    "conflict",
                    q,
                    a,
                    [f.id, f.supersedes],
                    metadata={**meta, "old_values": old},
                )
            )
    probes[:0] = list(recall.values())
    timed = sorted(((t, f) for f in facts if (t := _timestamp(f)) is not None), key=lambda x: x[0])
    pairs: list[tuple[Fact, Fact]] = []
    for i, (t, f) in enumerate(timed):
        later = next((g for u, g in timed[i + 1 :] if u > t), None)
        if later is not None:
            pairs.append((f, later))
    if len(pairs) > 20:
        pairs = rng.sample(pairs, 20)
    for first, second in pairs:
        a_, b_ = (first, second) if rng.random() < 0.5 else (second, first)
        probes.append(
            Probe(
                f"temporal-{first.id}-{second.id}",
                "temporal",
                f"Which happened first: {a_.content.rstrip('.')}, or {b_.content.rstrip('.')}?",
                first.content,
                [first.id, second.id],
                metadata={"options": [a_.content, b_.content]},
            )
        )
    used = _words(
        [t.content for c in ds.conversations for t in c.turns] + [f.content for f in facts]
    )
    free = [q for q, topic in HALLUCINATION_TOPICS if not used & set(topic)]
    n = n_hallucination if n_hallucination is not None else max(3, len(facts) // 3)
    for i, q in enumerate(free[:n]):
        probes.append(Probe(f"hallucination-{i + 1}", "hallucination", q, NOT_MENTIONED))
    return probes


def conversation_memories(ds: ConversationDataset) -> list[Memory]:
    """Every turn as a memory, in order, with its conversation and time: what an agent under
    test has seen (a chat agent reads them all; a memory-backed agent ingests them)."""
    out = []
    for c in ds.conversations:
        for i, t in enumerate(c.turns):
            created = _utc(t.timestamp) if t.timestamp else None
            out.append(
                Memory(
                    id=f"{c.id}:{i}",
                    text=t.content,
                    session=c.id,
                    created_at=created,
                    metadata={"role": t.role},
                )
            )
    return out
