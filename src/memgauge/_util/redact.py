"""Secrets out of every error text: the one place that knows what a credential looks like.

Error bodies are written by someone else: a provider or a memory service may echo the request's
`Authorization` header or the key itself ("Incorrect API key provided: ..."), and an error's
text travels on to stderr, to the results store (failures, score errors) and to the LLM
response cache (a 400 is cached so that a replay takes the same path). Every place where such
text enters memgauge (the LLM clients, the embedder, the HTTP subject) and every place that
shows or keeps it passes it through `redact` first.

What is removed, each replaced by `[REDACTED]`:

- the configured keys themselves, wherever they appear (registered with `register_secret` by
  whoever holds one: `LLMConfig`, `OpenAIEmbedder`, `HttpSubject`), and the values of
  credential-named environment variables (`*_API_KEY`, `*_TOKEN`, `*_SECRET`, `*_PASSWORD`);
- anything shaped like a credential: `Authorization: <anything>`, `Bearer <token>`,
  `api_key=...` / `"api_key": "..."` (and token, access_token, secret, password, x-api-key...), and
  provider key shapes (`sk-...`, `sk-ant-...`, `sk-proj-...`), and a URL's password
  (`https://user:PASSWORD@host`).

Values shorter than 8 characters are not treated as secrets (a test key `k` must not blank
every letter k). Redaction runs before truncation (`limit`), so a cut can never leave a
recognisable prefix of a key behind.
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Callable

__all__ = ["REDACTED", "redact", "redactor", "register_secret"]

REDACTED = "[REDACTED]"
_MIN_SECRET = 8

_known: set[str] = set()
_lock = threading.Lock()

_SECRET_ENV = re.compile(r"(?:^|_)(?:API_?KEY|TOKEN|SECRET|PASSWORD)$", re.IGNORECASE)

_FIELD = (
    r"(?:x-)?api[_-]?key|(?:access|refresh|auth|id)[_-]?token|client[_-]?secret"
    r"|secret[_-]?key|secret|password|passwd|token"
)

# (pattern, replacement): group 1 is what stays (the field's name and its separator)
_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = (
    # the whole value of an Authorization header, whatever its scheme
    (
        re.compile(
            r"""\b((?:proxy-)?authorization["']?\s*[:=]\s*["']?)"""
            r"""(?:(?:bearer|basic|token|digest)\s+)?[^\s"',;}&]+""",
            re.IGNORECASE,
        ),
        rf"\1{REDACTED}",
    ),
    (re.compile(r"\b(bearer\s+)[A-Za-z0-9._~+/=-]{4,}", re.IGNORECASE), rf"\1{REDACTED}"),
    # credential-named fields: `name=value` and JSON's `"name": "value"` with any value; a bare
    # `name: value` only when the value looks like a token (8+ characters, a digit), so that
    # "password: expected a string" keeps its words
    (
        re.compile(rf"""\b({_FIELD})(\s*=\s*["']?|["']\s*:\s*["']?)[^\s"',;}}&]+""", re.IGNORECASE),
        rf"\1\2{REDACTED}",
    ),
    (
        re.compile(rf"\b({_FIELD})(\s*:\s*)(?=\S*\d)[A-Za-z0-9._~+/=-]{{8,}}", re.IGNORECASE),
        rf"\1\2{REDACTED}",
    ),
    (re.compile(r"\bsk-[A-Za-z0-9_-]{8,}"), REDACTED),
    # a URL's password (`https://user:hunter22@host/v1`, as a proxy's base URL may carry);
    # one already masked (`***`) or a placeholder (`USER:PASSWORD@HOST`) stays as it is
    (re.compile(r"(://[^/\s:@]*:)(?![A-Z_]+@|\*+@)[^/\s@]+@"), rf"\1{REDACTED}@"),
)


def register_secret(value: str | None) -> None:
    """Remember a configured key, so that `redact` removes it wherever it is echoed."""
    global _registered
    if value and len(value) >= _MIN_SECRET:
        with _lock:
            _known.add(value)
            _registered += 1


#: the environment last seen (a copy of its table) and its secrets; `register_secret`'s count
_env_last: tuple[dict[object, object], frozenset[str]] | None = None
_ordered_last: tuple[frozenset[str], int, list[str]] | None = None
_registered = 0


def _env_secrets() -> frozenset[str]:
    """Values of credential-named environment variables, computed again only when the
    environment changed (compared in C with the copy last seen: redact runs on every stored
    reason and message, and `redactor` once per item)."""
    global _env_last
    raw = getattr(os.environ, "_data", None)
    table = raw if isinstance(raw, dict) else dict(os.environ)
    last = _env_last
    if last is not None and last[0] == table:
        return last[1]
    found = frozenset(
        v for k, v in os.environ.items() if len(v) >= _MIN_SECRET and _SECRET_ENV.search(k)
    )
    _env_last = (dict(table), found)
    return found


def _secrets() -> list[str]:
    global _ordered_last
    env = _env_secrets()
    last = _ordered_last
    if last is not None and last[0] is env and last[1] == _registered:
        return last[2]
    with _lock:
        found, registered = set(_known), _registered
    # longest first: a key that contains another is removed whole
    ordered = sorted(frozenset(found | env), key=len, reverse=True)
    _ordered_last = (env, registered, ordered)
    return ordered


# every pattern above needs one of these words: a text with none of them (most reasons) skips
# the patterns
_CUE_WORDS = r"authorization|bearer|key|token|secret|passw|sk-|://[^/\s@]*@"
_CUE = re.compile(_CUE_WORDS, re.IGNORECASE)
#: `_CUE` on an ASCII text lowered: the same answer, without IGNORECASE's Unicode matching
#: (7x slower on the short reasons every verdict has)
_CUE_LOWER = re.compile(_CUE_WORDS)


def _cued(text: str) -> bool:
    if text.isascii():
        return _CUE_LOWER.search(text.lower()) is not None
    return _CUE.search(text) is not None


def redactor() -> Callable[[str], str]:
    """`redact` with the secrets looked up once: for redacting many texts in a row (a batch
    of stored verdicts)."""
    secrets = _secrets()
    return lambda text: redact(text, secrets=secrets)


def redact(text: str, *, limit: int | None = None, secrets: list[str] | None = None) -> str:
    """`text` without secrets (see the module's docstring), then cut to `limit` characters."""
    for secret in _secrets() if secrets is None else secrets:
        if secret in text:
            text = text.replace(secret, REDACTED)
    if _cued(text):
        for pattern, replacement in _PATTERNS:
            text = pattern.sub(replacement, text)
    return text if limit is None else text[:limit]
