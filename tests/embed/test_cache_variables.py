"""The environment variables that point memgauge at a cache: a value that cannot be one is
refused naming the variable and the value as given, with what to write (as MEMGAUGE_STORE is),
not skipped or failed far from the cause."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from memgauge import api
from memgauge.data.environment import embeddings_cache
from memgauge.embed import load_embedder
from memgauge.errors import UsageError


def _file(tmp: Path) -> Path:
    (tmp / "notes.txt").write_text("not a cache\n", encoding="utf-8")
    return tmp / "notes.txt"


def _directory(tmp: Path) -> Path:
    (tmp / "dir").mkdir()
    return tmp / "dir"


def _fifo(tmp: Path) -> Path:
    os.mkfifo(tmp / "pipe")
    return tmp / "pipe"


@pytest.mark.parametrize(
    ("variable", "make", "use", "says"),
    [
        # a file or FIFO as the embeddings' directory: every shard a miss, every write lost
        ("MEMGAUGE_EMBEDDINGS", _file, embeddings_cache, "is a regular file; point it at a dir"),
        ("MEMGAUGE_EMBEDDINGS", _fifo, embeddings_cache, "is no regular file (a FIFO, socket"),
        # a directory or FIFO as the LLM cache: named by its path, not by the variable
        ("MEMGAUGE_LLM_CACHE", _directory, api.configure_llm, "is a directory; point it at a file"),
        ("MEMGAUGE_LLM_CACHE", _fifo, api.configure_llm, "is no regular file (a FIFO, socket"),
    ],
)
def test_a_cache_variable_on_what_cannot_be_the_cache_is_named(
    variable: str,
    make: Callable[[Path], Path],
    use: Callable[[], object],
    says: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    where = make(tmp_path)
    given = f"{where}/"[:-1]  # as given
    monkeypatch.setenv(variable, given)
    with pytest.raises(UsageError) as raised:
        use()
    message = str(raised.value)
    assert message.startswith(f"{variable}={given}: {says}"), message
    assert "(made if missing), or unset it for MEMGAUGE_HOME/" in message


def test_a_cache_variable_on_what_can_be_the_cache_is_taken(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMGAUGE_EMBEDDINGS", str(tmp_path / "new"))
    assert embeddings_cache() == tmp_path / "new"
    monkeypatch.setenv("MEMGAUGE_EMBEDDINGS", str(_directory(tmp_path)))
    assert embeddings_cache() == tmp_path / "dir"


def test_minilm_names_its_variable_as_given(monkeypatch: pytest.MonkeyPatch) -> None:
    """The value was shown lower-cased and stripped: not what the user wrote."""
    monkeypatch.setenv("MEMGAUGE_MINILM", " GPU")
    with pytest.raises(UsageError) as raised:
        load_embedder("minilm")
    assert str(raised.value) == "MEMGAUGE_MINILM= GPU: use onnx, numpy, int8 or auto"
