"""Proposers of the targets a sampler cannot search: texts (instructions, prompts) and code.

Texts: the optimizer model (any OpenAI-compatible endpoint, through memgauge's LLM client and
its response cache, so a resumed study asks nothing twice) is shown the current text, its
score, and the failing items with their evaluators' reasons, and asked for one rewrite; a
step rewrites one text field (round-robin over `texts`). Its reply is the new text, as JSON
`{"text": ...}` or as plain text (a fenced block is unwrapped); other JSON, or an empty reply,
cannot be used: the step's candidate fails with the reason and the reply is dropped from the
response cache (`reply_text`). Its own calls are metered apart from the
candidates' runs (`usage`, priced by `priced_usage`): the study counts their cost toward its
cost budget and records them, and `close` stops the metering when the study ends.

Code: the hook is a command. It reads one JSON object on stdin, `{"step", "n", "candidate":
{"params", "texts"}, "spec" (the candidate's subject spec), "score", "failures": [{"item_id", "input", "expected", "output",
"value", "reasons"}]}`, and writes the next candidate on stdout: `{"params": {...}, "texts":
{...}}` (either may be left out: unchanged), or a list of them (best-of-n takes n). A hook
that fails (exit status, no JSON) stops the study with its stderr.
"""

from __future__ import annotations

import json
import re
import subprocess
import threading
from collections.abc import Mapping
from typing import Any

from memgauge.errors import UsageError
from memgauge.llm.cache import forget
from memgauge.llm.context import llm_context
from memgauge.llm.scope import CallScope
from memgauge.llm.types import ChatRequest
from memgauge.llm.usage import priced
from memgauge.optimize.config import StudyConfig, subject_params
from memgauge.optimize.objective import Candidate, Evaluation
from memgauge.runs.optspec import apply_params

__all__ = ["REWRITE_PROMPT", "HookProposer", "TextProposer", "default_proposers", "reply_text"]

#: a reply that is one fenced block (```json ... ``` or ``` ... ```)
_FENCED = re.compile(r"```[A-Za-z]*[ \t]*\n(.*?)\n?```", re.DOTALL)

REWRITE_PROMPT = """You improve {what} of a system under evaluation.

The current text of `{field}`:
<<<
{text}
>>>

It scores {score} on {objective} (0-1, higher is better). Items it got wrong, with the
evaluators' reasons:
{failures}

Write an improved version of the whole text that would fix these failures without breaking
what works. Keep every placeholder written in braces, such as {{existing}}, exactly as it is.
Reply with only {{"text": "<the new text>"}}."""


def _failures(evaluation: Evaluation, limit: int = 8) -> str:
    lines = []
    for f in evaluation.failures[:limit]:
        reasons = "; ".join(r for r in f.get("reasons", []) if r) or "no reason given"
        lines.append(
            f"- input: {f.get('input')!s}\n  expected: {f.get('expected')!s}\n"
            f"  output: {f.get('output')!s}\n  why: {reasons}"
        )
    return "\n".join(lines) or "(none recorded)"


def reply_text(reply: str) -> str:
    """The new text in the optimizer model's reply; ValueError saying why there is none.

    A reply that is JSON (bare, or as the one fenced block it is) must be `{"text": "..."}`:
    any other JSON is refused, never used as the text. Anything else is the text itself, a
    fence around it taken off; a prompt that quotes JSON inside its prose is still prose.
    """
    body = reply.strip()
    fenced = _FENCED.fullmatch(body)
    if fenced is not None:
        body = fenced.group(1).strip()
    try:
        value = json.loads(body)
    except ValueError:
        if not body:
            raise ValueError("the reply is empty") from None
        return body
    if not isinstance(value, dict):
        raise ValueError(f'a JSON reply is {{"text": "..."}}, not a {type(value).__name__}')
    text = value.get("text")
    if not isinstance(text, str):
        found = (
            f'"text" is a {type(text).__name__}'
            if "text" in value
            else f"its keys are {', '.join(map(str, value)) or 'none'}"
        )
        raise ValueError(f'a JSON reply without a "text" string ({found})')
    if not text.strip():
        raise ValueError('the reply\'s "text" is empty')
    return text


class TextProposer:
    """Rewrites of one text field per step by the optimizer model (see the module docstring)."""

    def __init__(self, config: StudyConfig) -> None:
        self.config = config
        self.scope = CallScope("optimizer")
        self.usage: dict[str, dict[str, int]] = {}
        self._lock = threading.Lock()
        self._stop_listening = llm_context().meter.listen(self._count, scope=self.scope)

    def close(self) -> None:
        """Stop counting (the listener would otherwise outlive the study, and a later
        study in the same process would pay for it on every LLM call)."""
        self._stop_listening()

    def priced_usage(self) -> dict[str, dict[str, Any]]:
        """The optimizer model's usage so far, per model, with `cost_usd` (None: no price)."""
        with self._lock:
            rows = {m: dict(r) for m, r in self.usage.items()}
        return priced(rows, llm_context().meter.prices)

    def _count(self, model: str, delta: Mapping[str, int]) -> None:
        with self._lock:
            row = self.usage.setdefault(model, {})
            for k, v in delta.items():
                row[k] = row.get(k, 0) + v

    def propose(
        self, target: str, current: Candidate, evaluation: Evaluation, n: int, step: int
    ) -> list[Candidate]:
        """`n` rewrites of the step's text field (`repeat` tells the cache they differ)."""
        field = self.config.texts[(step - 1) % len(self.config.texts)]
        what = "the instructions" if target == "instructions" else "a prompt"
        score = "n/a" if evaluation.score is None else f"{evaluation.score:.3f}"
        prompt = REWRITE_PROMPT.format(
            what=what,
            field=field,
            text=current.texts.get(field, ""),
            score=score,
            objective=self.config.objective,
            failures=_failures(evaluation),
        )
        opt = self.config.optimizer
        client = llm_context().client(
            **{
                k: v
                for k, v in {
                    "model": opt.model if opt else None,
                    "base_url": opt.base_url if opt else None,
                    "provider": opt.provider if opt else None,
                }.items()
                if v is not None
            }
        )
        out = []
        for i in range(n):
            request = ChatRequest.of(
                [{"role": "user", "content": prompt}],
                model=opt.model if opt else None,
                temperature=0.0 if n == 1 else 0.7,
                repeat=step * 1000 + i,
            )
            reply = self.scope.bind(client.complete)(request)
            try:
                text = reply_text(reply.content)
            except ValueError as exc:
                # a failed candidate; the reply is not kept as the cache's final answer, so a
                # later ask (a resumed study, another study) goes to the model again
                forget(client, request)
                why = (
                    f"the optimizer model's reply could not be used: {exc}: {reply.content!r:.300}"
                )
                out.append(Candidate(dict(current.params), dict(current.texts), unusable=why))
                continue
            out.append(Candidate(dict(current.params), {**current.texts, field: text}))
        return out


class HookProposer:
    """The `code` target's command (see the module docstring)."""

    def __init__(self, command: list[str], config: StudyConfig, timeout: float = 600.0) -> None:
        self.command, self.config, self.timeout = command, config, timeout

    def propose(
        self, target: str, current: Candidate, evaluation: Evaluation, n: int, step: int
    ) -> list[Candidate]:
        """The hook's next candidate(s)."""
        payload = {
            "step": step,
            "n": n,
            "candidate": {"params": current.params, "texts": current.texts},
            "spec": apply_params(
                self.config.base_spec,
                {**subject_params(self.config, current.params), **current.texts},
            ),
            "score": evaluation.score,
            "failures": evaluation.failures,
        }
        try:
            done = subprocess.run(
                self.command,
                input=json.dumps(payload, default=str),
                capture_output=True,
                text=True,
                timeout=self.timeout,
                check=False,
            )
        except (OSError, subprocess.SubprocessError) as exc:
            raise UsageError(f"hook {' '.join(self.command)}: could not run it ({exc})") from None
        if done.returncode != 0:
            raise UsageError(
                f"hook {' '.join(self.command)} exited {done.returncode}: "
                f"{done.stderr.strip()[-500:] or 'no message'}"
            )
        try:
            made: Any = json.loads(done.stdout)
        except json.JSONDecodeError:
            raise UsageError(
                f"hook {' '.join(self.command)} wrote no JSON candidate on stdout "
                f'(got {done.stdout[:200]!r}); write {{"params": {{...}}}}'
            ) from None
        proposals = made if isinstance(made, list) else [made]
        out = []
        for p in proposals[:n]:
            if not isinstance(p, dict) or not set(p) <= {"params", "texts"}:
                raise UsageError(
                    f'hook {" ".join(self.command)}: a candidate is {{"params": {{...}}, '
                    f'"texts": {{...}}}}; got {p!r:.200}'
                )
            out.append(
                Candidate(
                    {**current.params, **(p.get("params") or {})},
                    {**current.texts, **(p.get("texts") or {})},
                )
            )
        return out


def default_proposers(config: StudyConfig) -> dict[str, Any]:
    """The proposers a study's targets need."""
    out: dict[str, Any] = {}
    if {"instructions", "prompts"} & set(config.targets):
        text = TextProposer(config)
        out["instructions"] = out["prompts"] = text
    if "code" in config.targets and config.hook:
        out["code"] = HookProposer(list(config.hook), config)
    return out
