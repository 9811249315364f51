"""Versioned prompt templates. Every verdict records its template's name, version and hash, so
a score is always traceable to the exact words that produced it, and a changed prompt is never
mistaken for a changed system.

Placeholders are `{{name}}`; they are filled in one pass, so an output that itself contains
`{{expected}}` is shown as written, never expanded. Values that are not text are shown as JSON.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from memgauge.errors import UsageError
from memgauge.llm.types import Message

__all__ = ["TEMPLATES", "PromptTemplate", "get_template"]

_PLACEHOLDER = re.compile(r"\{\{\s*([a-z_]+)\s*\}\}")


def _show(value: Any) -> str:
    if value is None:
        return "(none)"
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, indent=1, default=str)


def _fill(parts: list[str], values: Mapping[str, Any]) -> str:
    return "".join(
        part if i % 2 == 0 else (_show(values[part]) if part in values else "{{" + part + "}}")
        for i, part in enumerate(parts)
    )


@dataclass(frozen=True)
class PromptTemplate:
    """A system and a user message with `{{placeholders}}`."""

    name: str
    version: str
    system: str
    user: str

    @functools.cached_property
    def hash(self) -> str:
        """First 16 hex digits of the SHA-256 of name, version and both texts."""
        data = json.dumps([self.name, self.version, self.system, self.user])
        return hashlib.sha256(data.encode()).hexdigest()[:16]

    def render(self, values: Mapping[str, Any]) -> tuple[Message, ...]:
        """The messages with every placeholder filled (unknown ones left as written)."""
        system, user = self._parts
        msgs = [Message("system", _fill(system, values))] if self.system else []
        return (*msgs, Message("user", _fill(user, values)))

    @functools.cached_property
    def _parts(self) -> tuple[list[str], list[str]]:
        # split once: even indexes are literal text, odd ones placeholder names
        return _PLACEHOLDER.split(self.system), _PLACEHOLDER.split(self.user)

    def specialize(self, **literal: str) -> PromptTemplate:
        """This template with some placeholders replaced by fixed text (a judge's own prompt,
        its criteria), so the hash covers the exact words. Placeholders inside that text, such
        as `{{output}}` in a seed-004 judge prompt, stay live and are filled per item."""
        if not literal:
            return self
        system, user = self._parts

        def fix(parts: list[str]) -> str:
            return "".join(
                p if i % 2 == 0 else literal.get(p, "{{" + p + "}}") for i, p in enumerate(parts)
            )

        return PromptTemplate(self.name, self.version, fix(system), fix(user))

    def record(self) -> dict[str, str]:
        """What a verdict stores about its prompt."""
        return dict(self._record)

    @functools.cached_property
    def _record(self) -> dict[str, str]:
        return {"template": self.name, "template_version": self.version, "template_hash": self.hash}


_JSON_ONLY = "Reply with only a JSON object, no prose around it."

RUBRIC = PromptTemplate(
    "rubric",
    "1",
    "You are a careful, strict evaluator of an AI system's output. " + _JSON_ONLY,
    """Evaluate the OUTPUT below against the instructions.

INSTRUCTIONS:
{{instructions}}

INPUT:
{{input}}

EXPECTED (reference; may be absent):
{{expected}}

OUTPUT:
{{output}}

{{criteria}}Return {"score": <0-100>, "issues": ["..."], "strengths": ["..."]}{{criteria_json}}.""",
)

MERGE_QUALITY = (
    "You are evaluating a memory merge operation: the INPUT holds the original and the incoming "
    "memory, the OUTPUT is the merged memory. Be harsh: a bad merge loses information."
)
MERGE_CRITERIA = {"completeness": 50.0, "coherence": 30.0, "conciseness": 20.0}

# seed 000's quality assessment: specific, actionable memories high, generic or vague ones low
MEMORY_QUALITY = (
    "You are judging one memory an AI agent stored for later use (the OUTPUT; the INPUT, if "
    "any, is what it was made from). A good memory is specific (names the system, value, "
    "number, file or condition it is about) and actionable (a later agent can act on it without "
    "asking). A generic or vague memory ('be careful with tokens', 'things can go wrong') is "
    "worth little even if true. Be harsh: vague memories waste the context of every later "
    "prompt."
)
MEMORY_QUALITY_CRITERIA = {"specificity": 50.0, "actionability": 30.0, "accuracy": 20.0}

# seed 000's summary quality: does the compacted memory keep the key facts?
SUMMARY_QUALITY = (
    "You are judging a compacted memory (the OUTPUT), made from the memories in the INPUT. "
    "The EXPECTED text, if given, lists the key facts it must keep. Check every key fact: a "
    "summary that drops a fact, a number or a condition, or changes one, has lost information. "
    "Be harsh about lost facts, lenient about wording."
)
SUMMARY_CRITERIA = {"key_facts": 60.0, "accuracy": 25.0, "conciseness": 15.0}

# --- QA correctness presets ---------------------------------------------------------------
# Written in our own words after the criteria of LongMemEval's per-type judge prompts
# (Wu et al. 2024) and Mem0's LoCoMo judge (Chhikara et al. 2025); see docs in the README.

_QA_SYSTEM = "You grade answers to questions about a long conversation. " + _JSON_ONLY
_QA_BODY = """QUESTION:
{{input}}

CORRECT ANSWER:
{{expected}}

MODEL'S RESPONSE:
{{output}}

"""
_YES_NO = 'Return {"reasoning": "<one or two sentences>", "label": "yes" or "no"}.'

QA_PRESETS: dict[str, PromptTemplate] = {
    "longmemeval": PromptTemplate(
        "qa/longmemeval",
        "1",
        _QA_SYSTEM,
        _QA_BODY
        + """Label "yes" if the response contains the correct answer, or says something
equivalent to it, or reaches it through correct intermediate steps. Label "no" if the
response gives a different answer, or only a part of a multi-part answer. """
        + _YES_NO,
    ),
    "longmemeval/temporal-reasoning": PromptTemplate(
        "qa/longmemeval/temporal-reasoning",
        "1",
        _QA_SYSTEM,
        _QA_BODY
        + """Label "yes" if the response contains the correct answer or an equivalent one. Do not
count an off-by-one difference in a number of days, weeks or months as an error (for example
18 days against 19 days is still "yes"). Label "no" otherwise. """
        + _YES_NO,
    ),
    "longmemeval/knowledge-update": PromptTemplate(
        "qa/longmemeval/knowledge-update",
        "1",
        _QA_SYSTEM,
        _QA_BODY
        + """The correct answer is the user's most recent information, which replaced older
information. Label "yes" if the response gives the updated answer as the current one, even if
it also mentions the older value. Label "no" if it gives only the old value, presents the old
value as current, or gives something else. """
        + _YES_NO,
    ),
    "longmemeval/single-session-preference": PromptTemplate(
        "qa/longmemeval/single-session-preference",
        "1",
        _QA_SYSTEM,
        """QUESTION:
{{input}}

RUBRIC (what a personalised response should do):
{{expected}}

MODEL'S RESPONSE:
{{output}}

Label "yes" if the response recalls and correctly uses the user's personal information or
preferences described by the rubric; it need not cover every point of the rubric. Label "no"
if it ignores or misuses them. """
        + _YES_NO,
    ),
    "longmemeval/abstention": PromptTemplate(
        "qa/longmemeval/abstention",
        "1",
        _QA_SYSTEM,
        """QUESTION (it cannot be answered from the conversation):
{{input}}

WHY IT CANNOT BE ANSWERED:
{{expected}}

MODEL'S RESPONSE:
{{output}}

Label "yes" if the response recognises that the question cannot be answered, for example by
saying the information is missing, incomplete or was never mentioned. Label "no" if it
answers as though the information were known. """
        + _YES_NO,
    ),
    "mem0-locomo": PromptTemplate(
        "qa/mem0-locomo-lenient",
        "1",
        _QA_SYSTEM,
        _QA_BODY
        + """This grading is deliberately lenient. Label "CORRECT" if the response refers to the
same thing as the correct answer, even if it is longer or phrased differently; for dates and
times, label "CORRECT" if it points to the same date or period in any format (a relative
phrase such as "last Tuesday" counts when it resolves to it). Label "WRONG" otherwise.
Return {"reasoning": "<one sentence>", "label": "CORRECT" or "WRONG"}.""",
    ),
    "strict": PromptTemplate(
        "qa/strict",
        "1",
        _QA_SYSTEM,
        _QA_BODY
        + """Label "yes" only if the response states the correct answer (or an exact equivalent)
and states nothing that contradicts it. Label "no" otherwise. """
        + _YES_NO,
    ),
}

FACTS = PromptTemplate(
    "facts",
    "1",
    "You are a fact extraction auditor. " + _JSON_ONLY,
    """INPUT 1, CONVERSATION:
{{input}}

INPUT 2, EXISTING MEMORY:
{{existing}}

INPUT 3, EXTRACTED OUTPUT:
{{output}}

Step 1: list every fact the USER explicitly stated or agreed to in the conversation, each as
"category: fact".
Step 2: list every fact in the EXTRACTED OUTPUT that is new (not already in EXISTING MEMORY).
Step 3: missed facts are facts of step 1 absent from step 2; hallucinated facts are facts of
step 2 absent from step 1.

Return {"conversation_facts": [...], "extracted_facts": [...], "missed_facts": [...],
"hallucinated_facts": [...]}.""",
)

PAIRWISE = PromptTemplate(
    "pairwise",
    "1",
    "You compare two responses to the same input and pick the better one. " + _JSON_ONLY,
    """INSTRUCTIONS:
{{instructions}}

INPUT:
{{input}}

RESPONSE A:
{{first}}

RESPONSE B:
{{second}}

Which response is better? Return {"reasoning": "<one or two sentences>", "winner": "A", "B"
or "tie"}.""",
)

PEERS = PromptTemplate(
    "panel/peers",
    "1",
    "",
    """Other judges on the panel gave these verdicts in the previous round:

{{peers}}

Consider their reasoning, then give your own final verdict in the same JSON format as before.""",
)

# seed 000's relevance scoring, graded as TREC qrels (and the store's judgments) are: 0-3
RELEVANCE = PromptTemplate(
    "relevance",
    "1",
    "You judge whether a stored memory helps answer a search query. " + _JSON_ONLY,
    """QUERY:
{{input}}

MEMORY:
{{output}}

Grade how well the memory answers the query:
3 = it answers the query directly and completely;
2 = it answers part of it, or answers it with something missing;
1 = it is on the topic but does not answer it;
0 = it is about something else (shared words do not make it relevant).
Return {"reasoning": "<one sentence>", "grade": <0, 1, 2 or 3>}.""",
)

TEMPLATES: dict[str, PromptTemplate] = {
    t.name: t for t in (RUBRIC, FACTS, PAIRWISE, PEERS, RELEVANCE, *QA_PRESETS.values())
}


def get_template(name: str) -> PromptTemplate:
    """A built-in template by name."""
    try:
        return TEMPLATES[name]
    except KeyError:
        raise UsageError(
            f"unknown prompt template {name!r}; known: {', '.join(sorted(TEMPLATES))}"
        ) from None
