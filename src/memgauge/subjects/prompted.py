"""What memgauge's single-prompt LLM subjects (the decider, the extractor) share: where the
model is, the learnings their prompt takes, the prompt itself (`memgauge optimize` rewrites it:
a `prompts` target), and the one structured call per case."""

from __future__ import annotations

from dataclasses import KW_ONLY, dataclass
from typing import ClassVar, TypeVar

from pydantic import BaseModel

from memgauge.errors import SubjectError
from memgauge.llm._loop import run_sync
from memgauge.llm.context import llm_context
from memgauge.llm.structured import acomplete_structured
from memgauge.llm.types import Message
from memgauge.subjects.events import Capabilities
from memgauge.subjects.learnings import Learnings, LearningsSection
from memgauge.subjects.templates import fill_template

__all__ = ["PromptedLLM"]

R = TypeVar("R", bound=BaseModel)


@dataclass(eq=False)
class PromptedLLM:
    """One structured LLM call per case, with a prompt template a subclass gives its default.

    Args:
        model: model id (default: MEMGAUGE_MODEL).
        base_url: endpoint (default: OPENAI_BASE_URL).
        learnings: past evaluation failures to add to the prompt (`{query, k, budget}`).
    """

    #: one call per case, safe from many threads; nothing to ingest
    capabilities: ClassVar[Capabilities] = Capabilities(concurrent=True)
    is_memory: ClassVar[bool] = False
    #: what it is (its name is `llm-<role>:<model>`), and what its model replies with
    role: ClassVar[str] = "prompted"
    replies: ClassVar[str] = "reply"

    model: str | None = None
    _: KW_ONLY
    base_url: str | None = None
    learnings: Learnings | None = None
    prompt: str = ""

    def __post_init__(self) -> None:
        from memgauge.llm.config import LLMConfig

        self.section = LearningsSection(self.learnings)
        # settings that cannot work are bad input (UsageError) when the subject is built,
        # before a run is written, not a failure of every case
        LLMConfig.from_env(model=self.model, base_url=self.base_url)

    @property
    def name(self) -> str:
        """`llm-<role>:<model>`."""
        return f"llm-{self.role}:{self.model or 'default'}"

    def ask(self, reply: type[R], **fields: str) -> R:
        """The model's reply to the prompt filled with `fields` (and the learnings);
        SubjectError when it gives none that parses as `reply`."""
        prompt = self.section.apply(fill_template(self.prompt, **fields))
        client = llm_context().client(model=self.model, base_url=self.base_url)
        out = run_sync(
            acomplete_structured(client, [Message("user", prompt)], reply, model=self.model)
        )
        if out.value is None:
            raise SubjectError(f"the {self.role} gave no usable {self.replies}: {out.error}")
        return out.value
