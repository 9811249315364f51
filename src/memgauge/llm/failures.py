"""A call that failed for good, as every client says it: what went wrong, at which endpoint
and model, and what to do about it (`_HINTS`, naming the client's own variables), counted by
its meter."""

from __future__ import annotations

from memgauge._util.redact import redact
from memgauge.errors import LLMError
from memgauge.llm.config import LLMConfig
from memgauge.llm.types import ChatResponse
from memgauge.llm.usage import UsageMeter

__all__ = ["NamesFailures"]

#: what to do about a call that failed for good, by its kind (`model`: a 404, an unknown model)
_HINTS = {
    "auth": "check {key_env} (or the spec's api_key)",
    "model": "check the model id (--model, MEMGAUGE_MODEL, a spec's `model`) and {url_env}",
    "connection": "is the endpoint up? check {url_env}",
    "timeout": "raise MEMGAUGE_LLM_TIMEOUT, or check that the endpoint is up",
    "rate_limit": "lower MEMGAUGE_LLM_CONCURRENCY or set MEMGAUGE_LLM_RPM",
    "truncated": "raise max_tokens (a spec's `max_tokens`) or ask for a shorter reply",
    "server": "the endpoint failed: try again later (a call it answered replays from the LLM cache)",
}


class NamesFailures:
    """What a client shares to fail a call (its configuration, meter and variables)."""

    config: LLMConfig
    meter: UsageMeter | None
    base_url_env: str
    api_key_env: str

    def _give_up(self, model: str, kind: str, message: str, attempts: int) -> LLMError:
        """The call's failure, counted: what went wrong, at which endpoint and model, and what
        to do about it."""
        if self.meter is not None:  # its requests were counted as they were sent
            self.meter.record_failure(model)
        where = f"{redact(self.config.base_url)}, model {model}"
        kind, hint = (
            ("bad_request", _HINTS["model"]) if kind == "model" else (kind, _HINTS.get(kind))
        )
        text = f"{message} ({where})"
        if hint:  # the provider's own variables (a plug-in's subclass may name others)
            text += ": " + hint.format(key_env=self.api_key_env, url_env=self.base_url_env)
        return LLMError(kind, text, attempts=attempts)

    def _cut_off(self, response: ChatResponse, said: str, max_tokens: int | None) -> LLMError:
        """The failure of a reply cut off at the token limit (the provider `said` so): billed,
        and not an answer; asking again would cut it off again."""
        if self.meter is not None:
            self.meter.billed(response.model, response.usage)
        budget = f", max_tokens {max_tokens}" if max_tokens else ""
        message = f"the reply was cut off at the token limit ({said}{budget})"
        return self._give_up(response.model, "truncated", message, response.attempts)
