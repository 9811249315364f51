"""Past evaluation failures in prompts: the last step of seed 000's eval-to-learning loop.

`memgauge gate` stores each regression as a failure memory (`track.learning.failure_memory`) in
the learnings memory: by default the reference memory (lexical) in
`$MEMGAUGE_HOME/learnings.db`, or any memory subject (`--learn-into`). Here they come back:

- `relevant_learnings(memory, text, k=, token_budget=)` finds the failures most relevant to
  `text` and formats them as a prompt section within a token budget (about 4 characters a
  token), '' when none is relevant: the SDK function for users' own prompts (also
  `memgauge.relevant_learnings`);
- `Learnings` (`learnings: {query, k, budget, memory, path}` in a spec) is how memgauge's own LLM
  decider, extractor, judges and agents take them: the section is fetched once per component
  (the learnings are fixed for a run) and appended to the prompt, as the seed's
  `${basePrompt}\\n\\nPast failure patterns:\\n${context}`.

This lives with the subjects, not in `track`, because the components that read learnings
(subjects and scorers) sit below `track` in the layers.
"""

from __future__ import annotations

import contextlib
import hashlib
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic import ConfigDict, Field

from memgauge._util.args import SpecArgs
from memgauge.data.environment import memgauge_home
from memgauge.store.connection import check_file_path
from memgauge.subjects.parse import one_spec
from memgauge.subjects.protocol import close_subject
from memgauge.subjects.registry import build_subject

__all__ = [
    "Learnings",
    "LearningsSection",
    "as_learnings",
    "learnings_memory",
    "learnings_path",
    "learnings_stored",
    "opened_learnings",
    "relevant_learnings",
    "section_hash",
    "with_learnings",
]

HEADER = "Past evaluation failures relevant to this task (avoid repeating them):"


def learnings_path(path: Path | None = None) -> Path:
    """Where failure memories go by default: `MEMGAUGE_HOME/learnings.db`."""
    return path or memgauge_home() / "learnings.db"


def learnings_stored(path: Path | None = None) -> bool:
    """Whether the learnings file `path` (default MEMGAUGE_HOME/learnings.db) holds anything
    to read. A reader asks this first, so that reading creates and changes nothing: False when
    it does not exist or is empty (0 bytes, SQLite's empty database: opening it would write a
    schema into it); a UsageError when it is something no store can be (a FIFO, a device, a
    directory), which would otherwise read as nothing stored."""
    where = learnings_path(path)
    if not where.exists():
        return False
    check_file_path(where)
    return where.stat().st_size > 0


def learnings_memory(path: Path | None = None, into: str | None = None) -> Any:
    """The memory that holds failure memories: the subject `into` names (any `memgauge
    evaluate -s` value: a spec file, http://..., mcp:..., python:...), else the reference
    memory (lexical) in `path` (default MEMGAUGE_HOME/learnings.db)."""
    if into is not None:
        return build_subject(one_spec(into, "--learn-into"))
    where = learnings_path(path)
    where.parent.mkdir(parents=True, exist_ok=True)
    return build_subject(
        {"reference": {"mode": "lexical", "path": str(where), "namespace": "learnings"}}
    )


@contextlib.contextmanager
def opened_learnings(path: Path | None = None, into: str | None = None) -> Iterator[Any]:
    """`learnings_memory(path, into)`, closed on the way out where it can be (a `python:`
    subject has no `close`)."""
    memory = learnings_memory(path, into)
    try:
        yield memory
    finally:
        close_subject(memory)


def relevant_learnings(
    memory: Any = None, text: str = "", *, k: int = 5, token_budget: int = 500
) -> str:
    """The past failures a learnings memory finds for `text`, as a prompt section within
    `token_budget` tokens (about 4 characters each); '' when there are none.

    Args:
        memory: a memory subject (anything with `search(text, k)`); None: the default
            learnings memory (`MEMGAUGE_HOME/learnings.db`; '' when nothing was ever stored);
            a string: a `--learn-into` value (a spec file, http://..., python:...).
        text: what the prompt is about (e.g. "memory merge decision").
        k: at most this many failures.
        token_budget: the section's size limit; the last failure that does not fit is cut
            (kept only if at least 80 characters of it fit).

    Example:
        >>> prompt = base_prompt + "\\n\\n" + relevant_learnings(None, "merge decision", k=3)
    """
    if memory is None or isinstance(memory, str):
        if memory is None and not learnings_stored():
            return ""
        with opened_learnings(None, memory) as opened:
            return relevant_learnings(opened, text, k=k, token_budget=token_budget)
    hits = memory.search(text, k).hits
    if not hits:
        return ""
    budget = token_budget * 4
    out, used = [HEADER], len(HEADER)
    for h in hits:
        block = f"\n---\n{h.text}"
        if used + len(block) > budget:
            room = budget - used - len("\n---\n") - 3
            if room > 80:
                out.append(f"\n---\n{h.text[:room]}...")
            break
        out.append(block)
        used += len(block)
    return "".join(out)


class Learnings(SpecArgs):
    """`learnings:` on an LLM component: past failures added to its prompt."""

    model_config = ConfigDict(frozen=True)

    query: str = Field(
        min_length=1,
        description="What to look up in the learnings memory, e.g. 'memory merge decision'.",
    )
    k: int = Field(default=3, ge=1, le=50, description="At most this many past failures.")
    budget: int = Field(
        default=500, ge=20, description="Token budget of the section (about 4 characters each)."
    )
    memory: str | None = Field(
        default=None,
        description="The learnings memory, as `gate --learn-into` takes it (a spec file, "
        "http://..., mcp:..., python:...); default: the reference memory in `path`.",
    )
    path: str | None = Field(
        default=None, description="The learnings file (default MEMGAUGE_HOME/learnings.db)."
    )

    def fetch(self) -> str:
        """The prompt section ('' when no stored failure is relevant, or none was stored)."""
        where = None
        if self.memory is None:
            where = learnings_path(Path(self.path) if self.path else None)
            if not learnings_stored(where):
                return ""  # nothing stored yet: read nothing, create nothing
        with opened_learnings(where, self.memory) as memory:
            return relevant_learnings(memory, self.query, k=self.k, token_budget=self.budget)


def as_learnings(value: Learnings | dict[str, Any] | None) -> Learnings | None:
    """A `learnings` argument given in code as a dict, or as the model."""
    if value is None or isinstance(value, Learnings):
        return value
    return Learnings.model_validate(value)


class LearningsSection:
    """A component's learnings, fetched on first use and kept (one lookup per component, not
    one per item: the learnings are fixed for a run, and a prompt that changed mid-run would
    make its items incomparable)."""

    def __init__(self, learnings: Learnings | dict[str, Any] | None) -> None:
        self.learnings = as_learnings(learnings)
        self._text: str | None = None
        self._lock = threading.Lock()

    def text(self) -> str:
        """The section ('' when there are no learnings, or none relevant)."""
        if self.learnings is None:
            return ""
        with self._lock:
            if self._text is None:
                self._text = self.learnings.fetch()
            return self._text

    def apply(self, prompt: str) -> str:
        """`prompt` with the section appended."""
        return with_learnings(prompt, self.text())


def with_learnings(prompt: str, section: str) -> str:
    """`prompt` with the learnings section appended (unchanged when there is none)."""
    return f"{prompt}\n\n{section}" if section else prompt


def section_hash(section: str) -> str | None:
    """A short hash of the section a prompt carried (provenance), None when it carried none."""
    return hashlib.sha256(section.encode()).hexdigest()[:16] if section else None
