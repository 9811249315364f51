"""Prompt templates of the built-in LLM subjects (extractor, decider), which an optimization may
rewrite: a template is filled with `str.format`, so a rewrite that breaks a placeholder fails
every item it is used for, as a recorded failure with the reason, never a crash."""

from __future__ import annotations

from typing import Any

from memgauge.errors import SubjectError

__all__ = ["fill_template"]


def fill_template(template: str, **values: Any) -> str:
    """`template.format(**values)`; SubjectError saying how to write a template when it does
    not fill (an unknown placeholder, an unmatched brace)."""
    try:
        return template.format(**values)
    except (KeyError, IndexError, ValueError) as exc:
        names = ", ".join("{" + k + "}" for k in values)
        raise SubjectError(
            f"the prompt template does not fill ({type(exc).__name__}: {exc}); its placeholders "
            f"are {names}, and literal braces are written doubled: {{{{ }}}}"
        ) from None
