"""Token counts of text in the OpenAI encodings, offline.

`o200k_base` (GPT-4o, GPT-4.1, o-series) and `cl100k_base` (GPT-4, GPT-3.5, the
text-embedding-3 models) from the `bpe-openai` package, which ships both vocabularies and
tokenizes in Rust without a network call (tiktoken downloads its vocabularies on first use).
Its ids equal tiktoken's (tests/metrics/test_tokens.py checks them against the ids tiktoken's
own tests and the OpenAI Cookbook publish). Importing it loads every vocabulary it ships (about
half a CPU-second), so it is imported on the first count, never with this module.

A count is `len(encode_ordinary(text))`: special-token text such as `<|endoftext|>` is counted
as the ordinary text it is, as a model's API counts it in a message. Text longer than the
package accepts in one call is counted in pieces cut before a space that follows a non-space
character, a place where both encodings' pre-tokenizers always split, so the sum is exact; a
stretch of 40,000 characters with no such space (no real memory has one) is cut where it
stands, which can move the count by a token at the cut.
"""

from __future__ import annotations

import threading
import warnings
from collections.abc import Iterable, Sequence
from typing import Any, Literal, get_args

import numpy as np
import numpy.typing as npt

from memgauge.errors import UnavailableError, UsageError

__all__ = [
    "DEFAULT_ENCODING",
    "ENCODINGS",
    "PRESSURE_LEVELS",
    "Encoding",
    "count_tokens",
    "encode",
    "pressure_level",
    "token_counts",
]

Encoding = Literal["o200k_base", "cl100k_base"]
#: the encodings memgauge counts in
ENCODINGS: tuple[str, ...] = get_args(Encoding)
#: what the models memory systems now feed are tokenized with (GPT-4o and later)
DEFAULT_ENCODING: Encoding = "o200k_base"

#: the longest piece sent to the tokenizer at once: the package refuses 1,000,000 characters
#: or 200,000 tokens in one call, and a character (4 UTF-8 bytes at most) is at most 4 tokens
_PIECE = 40_000

_lock = threading.Lock()
_loaded: dict[str, Any] = {}


def _encoding(name: str) -> Any:
    """The package's encoding `name`, loaded once per process."""
    if name not in ENCODINGS:
        raise UsageError(f"encoding {name!r}: use one of {', '.join(ENCODINGS)}")
    with _lock:
        found = _loaded.get(name)
        if found is None:
            # bpe-openai 0.1.4 reads its vocabularies with importlib.resources' legacy
            # open_binary, deprecated since Python 3.11: its warning, not ours to act on
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", DeprecationWarning)
                try:
                    import bpe_openai
                except ImportError:
                    raise UnavailableError(
                        "counting tokens needs the bpe-openai package (a memgauge dependency): "
                        "pip install 'bpe-openai>=0.1.4'"
                    ) from None
                found = _loaded[name] = bpe_openai.get_encoding(name)
        return found


def _pieces(text: str) -> Iterable[str]:
    """`text` cut into pieces of at most about `_PIECE` characters at pre-tokenizer splits."""
    start = 0
    while len(text) - start > _PIECE:
        cut = text.rfind(" ", start + 1, start + _PIECE)
        while cut > start and text[cut - 1].isspace():
            cut = text.rfind(" ", start + 1, cut)
        if cut <= start:  # no such space: a run of one token class, cut where it stands
            cut = start + _PIECE
        yield text[start:cut]
        start = cut
    yield text[start:]


def encode(text: str, encoding: Encoding = DEFAULT_ENCODING) -> list[int]:
    """The token ids of `text` (special-token text as ordinary text)."""
    enc = _encoding(encoding)
    out: list[int] = []
    for piece in _pieces(text):
        out.extend(enc.encode_ordinary(piece))
    return out


def count_tokens(text: str, encoding: Encoding = DEFAULT_ENCODING) -> int:
    """How many tokens `text` is in `encoding` (0 for the empty text)."""
    return len(encode(text, encoding)) if text else 0


def token_counts(
    texts: Sequence[str], encoding: Encoding = DEFAULT_ENCODING
) -> npt.NDArray[np.int64]:
    """`count_tokens` of each text, as an array; a text repeated is counted once."""
    seen: dict[str, int] = {}
    out = np.empty(len(texts), dtype=np.int64)
    for i, text in enumerate(texts):
        n = seen.get(text)
        if n is None:
            n = seen[text] = count_tokens(text, encoding)
        out[i] = n
    return out


#: seed 002's `pressureLevel` ("token pressure state") names the state and not its bounds:
#: these are memgauge's, by the share of the token budget a context uses (`tokenUsageRatio`):
#: below 0.5 low, below 0.8 moderate, up to the whole budget high, past it over (the budget
#: cuts memories from the context)
PRESSURE_LEVELS: tuple[tuple[str, float], ...] = (
    ("low", 0.5),
    ("moderate", 0.8),
    ("high", 1.0),
    ("over", float("inf")),
)


def pressure_level(ratio: float) -> str:
    """The token pressure state of a context that uses `ratio` of its budget (see
    `PRESSURE_LEVELS`; `high` includes exactly 1.0)."""
    for name, bound in PRESSURE_LEVELS:
        if ratio < bound or (bound == 1.0 and ratio == 1.0):
            return name
    return PRESSURE_LEVELS[-1][0]
