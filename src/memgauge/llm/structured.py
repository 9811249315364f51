"""Structured output: ask for JSON, accept it in the shapes models really send, validate it,
repair once, and say which route produced the value.

Routes (recorded with every verdict as `<request>/<parse>[+repair]`):

- request: `json_schema` (OpenAI structured outputs), `json_object` (JSON mode) or `prompt`
  (the instructions alone). An endpoint that rejects a mode with a 400 is asked again one
  mode down, and the client remembers;
- parse: `direct` (the reply is JSON), `fenced` (inside a ``` block), `extracted` (the first
  JSON object inside surrounding prose);
- `+repair`: the first reply did not validate; the model was shown the error and asked once
  more.

Anything else is a `Structured` with `value=None` and an `error` saying why: the caller records
it as a failure. It is never turned into a number here. Replies that still do not parse after
the repair are marked unusable in the response cache (`cache.forget`): the next run asks the
model again instead of replaying the same failure, and a `--cache-only` replay replays it.
"""

from __future__ import annotations

import contextlib
import functools
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar, cast

from pydantic import BaseModel, ValidationError

from memgauge.errors import LLMError
from memgauge.llm.cache import forget
from memgauge.llm.types import ChatRequest, ChatResponse, LLMClient, Message

__all__ = ["RETRYABLE_KINDS", "Structured", "acomplete_structured", "extract_json"]

#: call failures worth another try in a later run (`memgauge run --resume ID --retry-failed`):
#: the transient ones (429, 5xx, timeouts, dropped connections, unreadable bodies), and those
#: the user fixes between runs (a rejected key, a `--cache-only` replay missing the response).
#: Not `bad_request`: a 400 is cached, so asking again replays it without a request.
RETRYABLE_KINDS = frozenset(
    {"rate_limit", "server", "timeout", "connection", "bad_response", "auth", "cache_miss"}
)

T = TypeVar("T", bound=BaseModel)

_FENCE = re.compile(r"```(?:json|JSON)?\s*\n?(.*?)```", re.DOTALL)
_MODES = ("json_schema", "json_object", "prompt")


@dataclass(frozen=True)
class Structured(Generic[T]):
    """The outcome of one structured call."""

    value: T | None
    route: str
    raw: str = ""
    error: str | None = None
    responses: tuple[ChatResponse, ...] = field(default_factory=tuple)
    #: the `LLMError.kind` when a call failed for good (None: no call failed)
    error_kind: str | None = None

    @property
    def retryable(self) -> bool:
        """Whether asking again later may succeed: a call failed on something that passes
        (see RETRYABLE_KINDS), or the model's replies did not parse (not kept as final by the
        cache, so asking again asks the model)."""
        if self.error_kind is None:
            return self.value is None and bool(self.responses)
        return self.error_kind in RETRYABLE_KINDS

    @property
    def requests(self) -> int:
        """HTTP requests made (0 when every response came from the cache)."""
        return sum(r.attempts for r in self.responses)


def extract_json(text: str) -> tuple[Any, str]:
    """The JSON value in `text` and how it was found (`direct`, `fenced`, `extracted`).

    Raises ValueError when there is none.
    """
    stripped = text.strip()
    try:
        return json.loads(stripped), "direct"
    except ValueError:
        pass
    for block in _FENCE.findall(text):
        try:
            return json.loads(block.strip()), "fenced"
        except ValueError:
            continue
    decoder = json.JSONDecoder()
    for m in re.finditer(r"[{\[]", text):
        try:
            value, _end = decoder.raw_decode(text, m.start())
        except ValueError:
            continue
        if isinstance(value, dict | list):
            return value, "extracted"
    raise ValueError("no JSON object in the reply")


@functools.lru_cache(maxsize=256)
def _schema(model_cls: type[BaseModel]) -> dict[str, Any]:
    # generating a schema costs about half a millisecond: once per class, not per call
    return model_cls.model_json_schema()


@functools.lru_cache(maxsize=256)
def _schema_text(model_cls: type[BaseModel]) -> str:
    return json.dumps(_schema(model_cls))


@functools.lru_cache(maxsize=1024)
def _response_format(mode: str, model_cls: type[BaseModel], name: str) -> dict[str, Any] | None:
    # cached: the same object for every call, which the client serializes once (not mutated)
    if mode == "json_schema":
        return {
            "type": "json_schema",
            "json_schema": {"name": name, "schema": _schema(model_cls), "strict": False},
        }
    if mode == "json_object":
        return {"type": "json_object"}
    return None


def _validate(model_cls: type[T], text: str) -> tuple[T | None, str, str | None]:
    try:
        # fast path: the reply is exactly the JSON asked for (pydantic parses it in Rust)
        return model_cls.model_validate_json(text), "direct", None
    except ValidationError:
        pass
    try:
        data, how = extract_json(text)
    except ValueError as exc:
        return None, "", str(exc)
    try:
        return model_cls.model_validate(data), how, None
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "(root)"
        return None, how, f"JSON does not match the schema: {where}: {first['msg']}"


async def acomplete_structured(
    client: LLMClient,
    messages: Sequence[Message],
    model_cls: type[T],
    *,
    name: str = "verdict",
    model: str | None = None,
    temperature: float = 0.0,
    max_tokens: int | None = None,
    repeat: int = 0,
) -> Structured[T]:
    """Ask `client` for a `model_cls` value.

    LLM errors (after the client's retries) come back as a `Structured` with the error, so one
    bad call never stops a run.
    """
    mode = str(getattr(client, "structured", "json_schema"))
    if mode not in _MODES:
        mode = "json_schema"
    responses: list[ChatResponse] = []
    msgs = tuple(messages)

    def request(conversation: tuple[Message, ...]) -> ChatRequest:
        return ChatRequest(
            messages=conversation,
            model=model,
            temperature=temperature,
            max_tokens=max_tokens,
            response_format=_response_format(mode, model_cls, name),
            repeat=repeat,
        )

    while True:
        try:
            first = await client.acomplete(request(msgs))
        except LLMError as exc:
            if exc.kind == "bad_request" and mode != "prompt" and "response_format" in str(exc):
                mode = _MODES[_MODES.index(mode) + 1]
                with contextlib.suppress(AttributeError):
                    cast(Any, client).structured = mode
                continue
            return Structured(
                None,
                mode,
                error=f"LLM call failed: {exc}",
                responses=tuple(responses),
                error_kind=exc.kind,
            )
        break
    responses.append(first)
    value, how, error = _validate(model_cls, first.content)
    if value is not None:
        return Structured(value, f"{mode}/{how}", first.content, responses=tuple(responses))
    fix = (
        f"Your reply could not be used: {error}. Reply again with only the JSON object, "
        f"matching this JSON schema:\n{_schema_text(model_cls)}"
    )
    repair = request((*msgs, Message("assistant", first.content), Message("user", fix)))
    try:
        second = await client.acomplete(repair)
    except LLMError as exc:
        return Structured(
            None,
            f"{mode}+repair",
            first.content,
            f"{error}; repair call failed: {exc}",
            tuple(responses),
            exc.kind,
        )
    responses.append(second)
    value, how, error2 = _validate(model_cls, second.content)
    if value is not None:
        return Structured(value, f"{mode}/{how}+repair", second.content, responses=tuple(responses))
    # a recorded failure, not a final answer: the next run asks again
    forget(client, request(msgs))
    forget(client, repair)
    return Structured(
        None,
        f"{mode}+repair",
        second.content,
        f"unparsable after one repair: {error2} (first reply: {error})",
        tuple(responses),
    )
