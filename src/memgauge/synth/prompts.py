"""The prompts of `memgauge synth`, versioned: a change to any text here is a new
`PROMPT_VERSION`, and each item records the hash of the template that wrote it, so two datasets
made with different prompts are never mistaken for each other (and the LLM cache, keyed by the
request, never replays an old prompt's answer for a new one)."""

from __future__ import annotations

import hashlib

from memgauge.data.models import SEED_CATEGORIES

__all__ = [
    "CATEGORY_HELP",
    "CRITIC_SYSTEM",
    "CRITIC_USER",
    "GENERATE_SYSTEM",
    "GENERATE_USER",
    "PROMPT_VERSION",
    "prompt_hashes",
]

PROMPT_VERSION = "synth-v1"

#: seed 002 section 2.2: what a query of each category tests, as the generator is told
CATEGORY_HELP: dict[str, str] = {
    "trigger-match": "an exact trigger phrase taken from a memory (near-verbatim words)",
    "semantic-search": "a natural-language description of what a memory says, in other words",
    "causal-query": "why something was decided or happened: the decision's lineage",
    "cross-folder": "a question whose answer spans memories of different folders or topics",
    "intent-specific": "a request with a clear intent (find a decision, debug, add a feature, "
    "audit security, ...)",
    "cold-start": "what a new session with no context would ask first",
    "multi-concept": "an AND query combining 2-5 concepts that must all match",
    "edge-case": "a robustness case: very long, special characters, or nothing relevant",
}
assert tuple(CATEGORY_HELP) == SEED_CATEGORIES

GENERATE_SYSTEM = (
    "You write evaluation queries for an AI agent's memory search. You are shown memories, "
    "each with its id. For each category asked, write one query a user of that memory would "
    "send, and judge every memory shown for that query on a graded scale: 3 highly relevant "
    "(answers it), 2 relevant, 1 marginal, 0 not relevant. Use only the memory ids shown. "
    "List as hard_negatives the ids of memories that look related to the query (shared words "
    "or topic) but are not relevant to it (grade 0). When the query is a question a memory "
    "answers, give the answer in expected_answer (short, taken from the memories); otherwise "
    "null. Reply with only JSON."
)

GENERATE_USER = """Memories:
{memories}

Categories, one query each:
{categories}

Reply as JSON: {{"items": [{{"category": "<category>", "query": "<query text>", \
"judgments": [{{"memory_id": "<id>", "grade": <0-3>}}], "expected_answer": "<answer or null>", \
"hard_negatives": ["<id>"]}}]}}"""

CRITIC_SYSTEM = (
    "You check generated evaluation items for an AI agent's memory search. An item is a query, "
    "graded relevance judgments of memories (3 highly relevant ... 0 not relevant) and perhaps "
    "an expected answer. Reject it when it is ungrounded (the memories graded relevant do not "
    "support the query or the expected answer, or a grade is clearly wrong) or ambiguous (the "
    "query could mean several things, or several unjudged answers fit). Reply with only JSON."
)

CRITIC_USER = """Memories:
{memories}

Item ({category}):
query: {query}
judgments: {judgments}
expected answer: {answer}

Reply as JSON: {{"verdict": "keep" or "reject", "problem": "none", "ungrounded" or \
"ambiguous", "reason": "<one sentence>"}}"""


def _hash(*parts: str) -> str:
    return hashlib.sha256("\x00".join(parts).encode("utf-8")).hexdigest()[:16]


def prompt_hashes() -> dict[str, str]:
    """`{generate, critic}`: the sha256 prefix of each prompt's templates."""
    return {
        "generate": _hash(PROMPT_VERSION, GENERATE_SYSTEM, GENERATE_USER),
        "critic": _hash(PROMPT_VERSION, CRITIC_SYSTEM, CRITIC_USER),
    }
