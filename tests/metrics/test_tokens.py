"""Token counts in the OpenAI encodings (`metrics.tokens`), checked against published ids.

Where the expected ids come from:
- cl100k_base: openai/tiktoken, tests/test_encoding.py (`test_simple`, `test_simple_regex`,
  `test_basic_encode`, `test_encode_surrogate_pairs`) and tests/test_simple_public.py.
- both encodings: the OpenAI Cookbook, examples/How_to_count_tokens_with_tiktoken.ipynb
  ("tiktoken is great!" in cl100k_base; its encoding comparison of
  "antidisestablishmentarianism", whose o200k_base row is in the notebook's later revision).
- o200k_base "hello world" -> [24912, 2375]: the smoke test of tiktoken-derived tokenizers
  (the same ids the Cookbook's o200k_base row implies for the two words).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from memgauge.errors import UsageError
from memgauge.metrics import tokens
from memgauge.metrics.tokens import count_tokens, encode, token_counts

TIKTOKEN_CL100K = [
    ("hello world", [15339, 1917]),
    ("rer", [38149]),
    ("'rer", [2351, 81]),
    ("today\n ", [31213, 198, 220]),
    ("today\n \n", [31213, 27907]),
    ("today\n  \n", [31213, 14211]),
    (" \x850", [220, 126, 227, 15]),
    ("👍", [9468, 239, 235]),
    ("tiktoken is great!", [83, 1609, 5963, 374, 2294, 0]),
    ("antidisestablishmentarianism", [519, 85342, 34500, 479, 8997, 2191]),
    ("2 + 2 = 4", [17, 489, 220, 17, 284, 220, 19]),
]

COOKBOOK_O200K = [
    ("hello world", [24912, 2375]),
    ("antidisestablishmentarianism", [493, 129901, 376, 160388, 21203, 2367]),
]


@pytest.mark.parametrize(("text", "ids"), TIKTOKEN_CL100K)
def test_cl100k_ids_are_tiktokens(text: str, ids: list[int]) -> None:
    assert encode(text, "cl100k_base") == ids
    assert count_tokens(text, "cl100k_base") == len(ids)


@pytest.mark.parametrize(("text", "ids"), COOKBOOK_O200K)
def test_o200k_ids_are_the_published_ones(text: str, ids: list[int]) -> None:
    assert encode(text, "o200k_base") == ids
    assert count_tokens(text) == len(ids)  # o200k_base is the default


def test_special_token_text_is_counted_as_ordinary_text() -> None:
    """tiktoken encodes "hello <|endoftext|>" to [15339, 220, 100257] only when the special
    token is allowed; in a memory it is text, and counted as such (never refused)."""
    ids = encode("hello <|endoftext|>", "cl100k_base")
    assert 100257 not in ids
    assert ids[:1] == [15339]
    assert len(ids) > 3


def test_long_text_is_counted_in_pieces_exactly(monkeypatch: pytest.MonkeyPatch) -> None:
    """Cut into pieces before a space that follows a non-space character, the sum is the
    count of the whole."""
    text = "The quick brown fox, jumps  over the lazy dog.\n" * 40
    whole = count_tokens(text, "cl100k_base")
    monkeypatch.setattr(tokens, "_PIECE", 17)
    assert len(list(tokens._pieces(text))) > 40
    assert "".join(tokens._pieces(text)) == text
    assert count_tokens(text, "cl100k_base") == whole


# ordinary text, special-token text, a lone surrogate, non-Latin scripts, emoji, long runs
VARIED = [
    "hello <|endoftext|> world <|fim_prefix|>",
    "a\ud800b \udfff",
    "Caroline went to the LGBTQ support group on 7 May 2023.",
    "日本語のテキスト、そして한국어 and Ελληνικά",
    "👍🏽👩‍👩‍👧 x" * 7,
    "   \n\n\t  spaces" + "9" * 50 + "!!!?",
    "",
]


@pytest.mark.parametrize("encoding", ["o200k_base", "cl100k_base"])
def test_the_rust_tokenizer_alone_gives_the_packages_ids(
    encoding: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The counts load only the package's extension module (its `__init__` decodes every
    vocabulary in Python); the ids are those of the package's own `encode_ordinary`, and the
    package's path is taken when the extension module is not found."""
    codec = tokens._rust_codec(encoding)
    assert codec is not None
    fast = codec.encode
    package = tokens._package_encoder(encoding)
    for text in VARIED:
        assert fast(text) == package(text), text
    monkeypatch.setattr(tokens, "_loaded", {})
    monkeypatch.setattr(tokens, "_bindings", lambda: None)
    assert encode(VARIED[0], encoding) == package(VARIED[0])  # type: ignore[arg-type]


@pytest.mark.parametrize("encoding", ["o200k_base", "cl100k_base"])
def test_a_count_is_the_rust_tokenizers_own_and_the_length_of_the_ids(encoding: str) -> None:
    """A count asks the Rust tokenizer for the count (it builds no list of ids): the length of
    the package's ids, lone surrogates and a text cut in pieces included."""
    codec = tokens._rust_codec(encoding)
    assert codec is not None
    package = tokens._package_encoder(encoding)
    long = "word " * 9_000 + "x" * 45_000  # past one piece: counted piece by piece
    for text in [*VARIED, "lone \ud800 surrogate", long]:
        assert codec.count(text) == len(package(text)), text[:40]
        assert count_tokens(text, encoding) == len(encode(text, encoding))  # type: ignore[arg-type]
    n = len(encode(long, encoding))  # type: ignore[arg-type]
    assert token_counts([long, "", long], encoding).tolist() == [n, 0, n]  # type: ignore[arg-type]


def test_counts_of_many_texts_and_the_empty_text() -> None:
    got = token_counts(["hello world", "", "hello world", "rer"], "cl100k_base")
    assert got.tolist() == [2, 0, 2, 1]


def test_each_distinct_text_is_counted_once_in_order(monkeypatch: pytest.MonkeyPatch) -> None:
    """A memory every query's search returns is counted once (the tokenizer's own count,
    wrapped to record what it was asked); the counts come back in the texts' order, and a list
    of empty texts loads no tokenizer."""
    real = tokens._codec("cl100k_base")
    asked: list[str] = []

    def count(text: str) -> int:
        asked.append(text)
        return real.count(text)

    monkeypatch.setattr(tokens, "_loaded", {"cl100k_base": tokens._Codec(real.encode, count)})
    texts = ["hello world", "", "rer", "hello world", "rer", "hello world"]
    got = token_counts(texts, "cl100k_base")
    assert got.dtype == np.int64
    assert got.tolist() == [2, 0, 1, 2, 1, 2]
    assert sorted(asked) == ["hello world", "rer"]
    monkeypatch.setattr(tokens, "_loaded", {})
    assert token_counts(["", ""], "cl100k_base").tolist() == [0, 0]
    assert token_counts([], "cl100k_base").tolist() == []
    assert tokens._loaded == {}


def test_an_unknown_encoding_is_a_usage_error() -> None:
    with pytest.raises(
        UsageError, match="encoding 'p50k_base': use one of o200k_base, cl100k_base"
    ):
        count_tokens("x", "p50k_base")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("ratio", "level"),
    [(0.0, "low"), (0.49, "low"), (0.5, "moderate"), (0.79, "moderate"), (0.8, "high"),
     (1.0, "high"), (1.0001, "over"), (3.0, "over")],
)  # fmt: skip
def test_pressure_levels_by_share_of_the_budget(ratio: float, level: str) -> None:
    assert tokens.pressure_level(ratio) == level


_COUNT_IN_A_NEW_PROCESS = """
import json, sys
from memgauge.metrics import tokens
print(tokens.token_counts(json.loads(sys.argv[1]), "o200k_base").tolist(), sorted(tokens._loaded))
"""


def test_counts_kept_in_the_home_build_no_tokenizer_in_the_next_process(
    tmp_path: Path,
) -> None:
    """A process whose texts were all counted before (by another, the same home) reads their
    counts and builds no tokenizer; one new text builds it, and is added; a kept file that
    cannot be read is passed over, the counts the same."""
    env = {**os.environ, "MEMGAUGE_HOME": str(tmp_path / "home")}

    def counted(*texts: str) -> str:
        run = [sys.executable, "-c", _COUNT_IN_A_NEW_PROCESS, json.dumps(texts)]
        return subprocess.run(run, env=env, capture_output=True, text=True, check=True).stdout

    texts = ["Caroline went to the LGBTQ support group.", "", "a\ud800b", "日本語 x", "new"]
    exact = token_counts(texts, "o200k_base").tolist()
    assert counted(*texts[:4]) == f"{exact[:4]} ['o200k_base']\n"
    assert counted(*texts[3::-1]) == f"{exact[3::-1]} []\n"  # kept: no tokenizer
    assert counted(texts[4], texts[0]) == f"{[exact[4], exact[0]]} ['o200k_base']\n"
    assert counted(texts[4], texts[2]) == f"{[exact[4], exact[2]]} []\n"
    (kept,) = (tmp_path / "home" / "tokens").iterdir()
    kept.write_bytes(b"\x00cut short")
    assert counted(*texts) == f"{exact} ['o200k_base']\n"
    assert counted(*texts) == f"{exact} []\n"
