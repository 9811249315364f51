"""Merge deciders under test (seed 000): given the stored memories and an incoming one, decide
CREATE, UPDATE (with the merged text), NOOP or DELETE.

Specs: `{python: {target: pkg.mod:factory, kwargs: {...}}}` (an object with
`decide(existing, incoming)` or such a function; `existing` is a list of `{id, content}`,
`incoming` a `{content}`), `{llm: {model: ...}}` (the built-in LLM decider, asked in the style
of mem0's update prompt) and `{heuristic: {threshold: 0.8}}` (no LLM: identical -> NOOP,
MiniLM cosine at or above the threshold -> UPDATE with the incoming text, else CREATE; a
baseline, labelled so).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from pydantic import ConfigDict, Field

from memgauge._util.model import Model
from memgauge.embed import Embedder, load_embedder
from memgauge.subjects.events import Capabilities
from memgauge.subjects.prompted import PromptedLLM

__all__ = ["HeuristicDecider", "LLMDecider"]

DECIDE_PROMPT = """You manage a memory store. Decide what to do with a new memory.

STORED MEMORIES (id: content):
{existing}

NEW MEMORY:
{incoming}

Choose one action:
- NOOP: the new memory says nothing the stored ones do not already say;
- UPDATE: it is about the same thing as a stored memory: give that memory's id and the merged
  content, keeping every fact of both (the newer one wins where they disagree);
- DELETE: it makes a stored memory wrong and nothing should replace it: give that id;
- CREATE: it is about something else: give its content.
Give the memory a few short topic tags.
Reply with only {{"action": "...", "id": "...", "content": "...", "tags": ["..."], "reason": "..."}}."""


class Decision(Model):
    """The LLM decider's reply."""

    model_config = ConfigDict(extra="ignore")

    action: str = Field(description="CREATE, UPDATE, NOOP or DELETE")
    id: str | None = Field(default=None, description="target memory id")
    content: str | None = Field(default=None, description="new or merged content")
    tags: list[str] = Field(default_factory=list, description="topic tags of the memory")
    reason: str = Field(default="", description="why")


@dataclass(eq=False)
class LLMDecider(PromptedLLM):
    """One structured LLM call per decision. `prompt`: the template of the one call, with
    {existing} and {incoming} (literal braces doubled); `memgauge optimize` rewrites it (a
    `prompts` target).

    Args:
        prompt: the template of the one call, with {existing} and {incoming}.
    """

    role: ClassVar[str] = "decider"
    replies: ClassVar[str] = "decision"

    prompt: str = DECIDE_PROMPT

    def decide(self, existing: list[dict[str, str]], incoming: dict[str, Any]) -> dict[str, Any]:
        """The decision; SubjectError when the model gives none."""
        stored = "\n".join(f"{m['id']}: {m['content']}" for m in existing) or "(none)"
        return self.ask(
            Decision, existing=stored, incoming=incoming.get("content", "")
        ).model_dump()


class HeuristicDecider:
    """No LLM: identical -> NOOP, similar (MiniLM cosine >= threshold) -> UPDATE, else CREATE.

    Args:
        threshold: the least cosine to an existing memory that makes an UPDATE of it.
        embedder: the embedder of the cosine (`minilm`, `openai:MODEL`, `st:MODEL`).
    """

    name = "heuristic-decider (no LLM)"

    #: one call per case, safe from many threads; nothing to ingest
    capabilities = Capabilities(concurrent=True)
    is_memory = False

    def __init__(self, threshold: float = 0.6, embedder: str = "minilm") -> None:
        self.threshold = threshold
        self._spec = embedder
        self._model: Embedder | None = None

    def decide(self, existing: list[dict[str, str]], incoming: dict[str, Any]) -> dict[str, Any]:
        """See the class docstring."""
        text = str(incoming.get("content", ""))
        for m in existing:
            if " ".join(m["content"].lower().split()) == " ".join(text.lower().split()):
                return {"action": "NOOP", "id": m["id"], "reason": "identical content"}
        if existing:
            if self._model is None:
                self._model = load_embedder(self._spec)
            vecs = self._model.embed([text, *(m["content"] for m in existing)])
            sims = vecs[1:] @ vecs[0]
            best = int(sims.argmax())
            if float(sims[best]) >= self.threshold:
                return {
                    "action": "UPDATE",
                    "id": existing[best]["id"],
                    "content": text,
                    "reason": f"cosine {float(sims[best]):.2f}",
                }
        return {"action": "CREATE", "content": text, "reason": "nothing similar stored"}
