"""Files memgauge writes (reports, exports, bundles, JUnit, datasets, caches) get the mode the
user's umask gives, as `open(path, "w")` would: never the 0600 of a temporary file."""

from __future__ import annotations

import os
import stat
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np
import pytest

from memgauge import api
from memgauge._types import FloatArray
from memgauge._util.files import atomic_write_text
from memgauge.cli.main import main
from memgauge.data.demo import demo_dataset
from memgauge.data.io import save_retrieval_dataset
from memgauge.embed.cache import CachedEmbedder


@pytest.fixture(params=[0o022, 0o027])
def umask(request: pytest.FixtureRequest) -> Iterator[int]:
    # the umask is per process; tests in one worker run one at a time, so setting it here is
    # safe under pytest-xdist
    old = os.umask(request.param)
    try:
        yield request.param
    finally:
        os.umask(old)


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_every_output_file_follows_the_umask(
    tmp_path: Path, umask: int, capsys: pytest.CaptureFixture[str]
) -> None:
    dataset = tmp_path / "dataset"
    save_retrieval_dataset(demo_dataset(), dataset)
    db = tmp_path / "r.db"
    out = tmp_path / "out"
    argv = ["evaluate", str(dataset), "-s", "lexical", "--quiet", "--store", str(db)]
    assert main([*argv, "--out", str(out), "--junit", str(tmp_path / "j.xml")]) == 0
    with api.open_store(str(db)) as store:
        run_id = store.list_runs()[0]["run_id"]
    for fmt in ("bundle", "csv", "json"):
        assert (
            main(
                [
                    "runs",
                    "export",
                    run_id,
                    "--store",
                    str(db),
                    "--format",
                    fmt,
                    "--out",
                    str(tmp_path / f"export.{fmt}"),
                ]
            )
            == 0
        )
    capsys.readouterr()
    written = [
        *sorted(dataset.iterdir()),
        *sorted(out.iterdir()),
        tmp_path / "j.xml",
        *sorted(tmp_path.glob("export.*")),
    ]
    assert len(written) >= 10
    expected = 0o666 & ~umask
    assert {p.name: oct(_mode(p)) for p in written} == {p.name: oct(expected) for p in written}


def test_the_embedding_cache_follows_the_umask(tmp_path: Path, umask: int) -> None:
    class Ones:
        name = "ones"
        dim = 3

        def embed(self, texts: Sequence[str]) -> FloatArray:
            return np.ones((len(texts), 3), dtype=np.float32)

    CachedEmbedder(Ones(), tmp_path / "cache").embed(["a", "b"])
    shards = list((tmp_path / "cache").rglob("*.npz"))
    assert shards
    assert {oct(_mode(p)) for p in shards} == {oct(0o666 & ~umask)}
    assert not list((tmp_path / "cache").rglob("*.tmp"))


def test_a_rewritten_file_keeps_its_mode(tmp_path: Path, umask: int) -> None:
    path = tmp_path / "shared.md"
    atomic_write_text(path, "one")
    os.chmod(path, 0o604)
    atomic_write_text(path, "two")
    assert path.read_text() == "two"
    assert _mode(path) == 0o604
    assert [p.name for p in tmp_path.iterdir()] == ["shared.md"]


def test_a_fifo_is_written_into_and_a_link_followed_not_replaced(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The atomic write renamed a regular file over whatever the path named: `--out` a FIFO
    (or, as root, /dev/stdout or /dev/full) put a regular file in the node's place, and `--out`
    a symbolic link replaced the link instead of the file it names."""
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()), daemon=True)
    reader.start()
    assert main(["schema", "--out", str(fifo)]) == 0
    reader.join(timeout=30)
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert b'"title": "memgauge suite"' in got[0]
    real, link = tmp_path / "real.json", tmp_path / "link.json"
    real.write_text("old")
    link.symlink_to(real.name)
    atomic_write_text(link, "new")
    assert link.is_symlink()
    assert real.read_text() == "new"


def test_a_read_only_file_is_never_replaced(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`import memaudit S --out d` over a d/conversations.json the user made read-only (chmod
    444) replaced it, exit 0 (a rename needs only the directory writable, and root's open
    writes it too): exit 2 naming the file and what to do, the file kept."""
    kept = tmp_path / "conversations.json"
    kept.write_text("mine")
    os.chmod(kept, 0o444)
    sample = Path(__file__).parents[1] / "data" / "memaudit" / "sample.jsonl"
    assert main(["import", "memaudit", str(sample), "--out", str(tmp_path)]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert f"cannot use {kept}: it is read-only" in err, err
    assert "make it writable (chmod u+w) or give another file" in err, err
    assert kept.read_text() == "mine"
    assert [p.name for p in tmp_path.iterdir()] == ["conversations.json"]
