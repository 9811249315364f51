"""Token counts of text in the OpenAI encodings, offline.

`o200k_base` (GPT-4o, GPT-4.1, o-series) and `cl100k_base` (GPT-4, GPT-3.5, the
text-embedding-3 models) from the `bpe-openai` package, which ships both vocabularies and
tokenizes in Rust without a network call (tiktoken downloads its vocabularies on first use).
Its ids equal tiktoken's (tests/metrics/test_tokens.py checks them against the ids tiktoken's
own tests and the OpenAI Cookbook publish). Importing the package decodes every vocabulary it
ships in Python (about half a CPU-second, three times what counting LoCoMo's hits costs) though
its Rust tokenizer, which does the encoding, carries its own: a count loads that extension
module alone (`_rust_codec`), and falls back to the package's `get_encoding` when the
extension is not where the package keeps it.

A count is `len(encode_ordinary(text))`: special-token text such as `<|endoftext|>` is counted
as the ordinary text it is, as a model's API counts it in a message. Text longer than the
package accepts in one call is counted in pieces cut before a space that follows a non-space
character, a place where both encodings' pre-tokenizers always split, so the sum is exact; a
stretch of 40,000 characters with no such space (no real memory has one) is cut where it
stands, which can move the count by a token at the cut.

`token_counts` keeps the counts it made in the home (`MEMGAUGE_HOME/tokens`, by a 128-bit hash
of each text), so a later run whose texts were all counted before builds no tokenizer (its
Rust build is a tenth of a CPU-second, a LoCoMo run's counts a third of that). The file's name
carries the extension module's size and time (another build of the package counts anew); a
file that cannot be read or written is passed over.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.machinery
import importlib.util
import marshal
import os
import sys
import threading
import warnings
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, Literal, NamedTuple, get_args

import numpy as np
import numpy.typing as npt

from memgauge._util.files import atomic_write_bytes
from memgauge.data.environment import memgauge_home
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
_loaded: dict[str, _Codec] = {}

#: the package's Rust extension module, as its `tokenizer` module imports it
_BINDINGS = "bpe_openai._bindings"
#: the most counts kept in the home (about 26 bytes each); past it, a count keeps its own alone
_KEEP = 500_000


def _bindings() -> Any:
    """The package's extension module, loaded without running the package's `__init__` (which
    decodes every vocabulary in Python); None when it is not found where the package keeps it.
    Registered under its own name, so an import of the package later reuses it."""
    found = sys.modules.get(_BINDINGS)
    if found is not None:
        return found
    package = importlib.util.find_spec("bpe_openai")
    if package is None or not package.submodule_search_locations:
        return None
    for folder in package.submodule_search_locations:
        finder = importlib.machinery.FileFinder(
            folder,
            (importlib.machinery.ExtensionFileLoader, importlib.machinery.EXTENSION_SUFFIXES),
        )
        spec = finder.find_spec(_BINDINGS)
        if spec is not None and spec.loader is not None:
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            sys.modules[_BINDINGS] = module
            return module
    return None


class _Codec(NamedTuple):
    """An encoding's `encode_ordinary`, and its count (the length of those ids)."""

    encode: Callable[[str], list[int]]
    count: Callable[[str], int]


def _rust_codec(name: str) -> _Codec | None:
    """`encode_ordinary` of the package's encoding `name`, done as it does it: the Rust
    tokenizer's ids, the text's lone surrogates replaced first when UTF-8 cannot hold them (no
    piece reaches the package's 200,000-token or 1,000,000-character limits); its count is the
    tokenizer's own, which builds no list of ids (a third of a count's time)."""
    module = _bindings()
    make = getattr(module, "tokenizer_for_encoding", None)
    if make is None:
        return None
    tokenizer = make(name)

    def encode_ordinary(text: str) -> list[int]:
        try:
            return list(tokenizer.encode(text))
        except UnicodeEncodeError:
            return list(tokenizer.encode(_replaced(text)))

    def count(text: str) -> int:
        try:
            return int(tokenizer.count(text))
        except UnicodeEncodeError:
            return int(tokenizer.count(_replaced(text)))

    return _Codec(encode_ordinary, count)


def _replaced(text: str) -> str:
    """`text` with its lone surrogates replaced, as the package's Python side does."""
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def _package_encoder(name: str) -> Callable[[str], list[int]]:
    """`encode_ordinary` of the package's encoding `name`, through its public API."""
    # bpe-openai 0.1.4 reads its vocabularies with importlib.resources' legacy
    # open_binary, deprecated since Python 3.11: its warning, not ours to act on
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        import bpe_openai

        encoder: Callable[[str], list[int]] = bpe_openai.get_encoding(name).encode_ordinary
        return encoder


def _codec(name: str) -> _Codec:
    """The encoding `name`'s encode and count, loaded once per process."""
    if name not in ENCODINGS:
        raise UsageError(f"encoding {name!r}: use one of {', '.join(ENCODINGS)}")
    with _lock:
        found = _loaded.get(name)
        if found is None:
            try:
                found = _rust_codec(name)
                if found is None:
                    encoder = _package_encoder(name)
                    found = _Codec(encoder, lambda text: len(encoder(text)))
            except ImportError:
                raise UnavailableError(
                    "counting tokens needs the bpe-openai package (a memgauge dependency): "
                    "pip install 'bpe-openai>=0.1.4'"
                ) from None
            _loaded[name] = found
        return found


def _encoding(name: str) -> Callable[[str], list[int]]:
    """`encode_ordinary` of the package's encoding `name`, loaded once per process."""
    return _codec(name).encode


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
    encode_ordinary = _encoding(encoding)
    out: list[int] = []
    for piece in _pieces(text):
        out.extend(encode_ordinary(piece))
    return out


def count_tokens(text: str, encoding: Encoding = DEFAULT_ENCODING) -> int:
    """How many tokens `text` is in `encoding` (0 for the empty text)."""
    return _counted(text, _codec(encoding).count) if text else 0


def _counted(text: str, count: Callable[[str], int]) -> int:
    if len(text) <= _PIECE:
        return count(text)
    return sum(count(piece) for piece in _pieces(text))


def token_counts(
    texts: Sequence[str], encoding: Encoding = DEFAULT_ENCODING
) -> npt.NDArray[np.int64]:
    """`count_tokens` of each text, as an array; a text repeated is counted once."""
    seen: dict[str, int] = dict.fromkeys(texts, -1)
    seen[""] = 0
    # each distinct text counted once (a memory a search of every query returns: LoCoMo's
    # 30,637 hits hold 5,348 texts); the codec loaded only when one is not in the kept counts
    if len(seen) > 1:
        _kept_or_counted(seen, encoding)
    return np.fromiter(map(seen.__getitem__, texts), dtype=np.int64, count=len(texts))


def _kept_or_counted(seen: dict[str, int], encoding: Encoding) -> None:
    """`seen`'s texts not yet counted (-1) from the counts kept in the home, the others
    counted and added to them (see the module docstring)."""
    if encoding not in ENCODINGS:
        _codec(encoding)  # its usage error
    path = _kept_path(encoding)
    try:
        kept = marshal.loads(path.read_bytes()) if path is not None else {}
    except (OSError, EOFError, ValueError, TypeError):
        kept = {}
    kept = kept if isinstance(kept, dict) else {}
    new: dict[bytes, int] = {}
    count: Callable[[str], int] | None = None
    for text, n in seen.items():
        if n < 0:
            key = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()
            found = kept.get(key)
            if found is None:
                count = count or _codec(encoding).count
                found = new[key] = _counted(text, count)
            seen[text] = found
    if new and path is not None:
        with contextlib.suppress(OSError):
            path.parent.mkdir(parents=True, exist_ok=True)
            atomic_write_bytes(path, marshal.dumps(kept | new if len(kept) < _KEEP else new))


def _kept_path(encoding: str) -> Path | None:
    """Where the Rust tokenizer's counts are kept; None without it (AttributeError) or a home."""
    try:
        made = os.stat(_bindings().__file__)
        return memgauge_home() / "tokens" / f"{encoding}-{made.st_size}-{made.st_mtime_ns}.counts"
    except (AttributeError, ImportError, OSError, RuntimeError, UsageError):
        return None  # RuntimeError: no home; UsageError: a home that is a file (a kept count
        # is only saved work: the command that needs the home says so)


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
