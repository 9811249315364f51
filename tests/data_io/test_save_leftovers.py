"""A dataset write killed with `kill -9` leaves its temporary directory (`.<out>.XXXXXXXX`)
beside the output; the next write to the same output sweeps it, and never sweeps the
temporary directory of a writer still at work."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from memgauge._util.process import host_name
from memgauge.data import io
from memgauge.data.io import load_retrieval_dataset, save_retrieval_dataset

BUNDLE = Path(__file__).resolve().parents[1] / "data" / "good" / "bundle.yaml"

_KILLED_MID_WRITE = """
import os, signal, sys
from memgauge._util.process import host_name
from memgauge.data import io
def die(*args, **kwargs):
    os.kill(os.getpid(), signal.SIGKILL)
io.write_jsonl = die
io.save_retrieval_dataset(io.load_retrieval_dataset(sys.argv[1]), sys.argv[2])
"""


def _temps(out: Path) -> list[Path]:
    return sorted(p for p in out.parent.iterdir() if p.name.startswith(f".{out.name}."))


def test_a_killed_writers_temporary_directory_is_swept_by_the_next_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "ds"
    env = {**os.environ, "PYTHONPATH": str(Path(io.__file__).parents[2])}
    killed = subprocess.run(
        [sys.executable, "-c", _KILLED_MID_WRITE, str(BUNDLE), str(out)], env=env, check=False
    )
    assert killed.returncode == -9
    (left,) = _temps(out)
    assert any(left.rglob("dataset.yaml"))  # killed mid-write
    ds = load_retrieval_dataset(BUNDLE)

    # a live writer (a thread of this process, held mid-write) keeps its own
    writing, release = threading.Event(), threading.Event()
    real = io.write_jsonl

    def held(*args: object, **kwargs: object) -> None:
        writing.set()
        release.wait(10)
        real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(io, "write_jsonl", held)
    other = threading.Thread(target=save_retrieval_dataset, args=(ds, out))
    other.start()
    assert writing.wait(10)
    monkeypatch.setattr(io, "write_jsonl", real)
    save_retrieval_dataset(ds, out)
    (live,) = _temps(out)  # the killed one is gone, the live one is not
    assert live != left
    release.set()
    other.join(10)
    assert _temps(out) == []
    assert load_retrieval_dataset(out).queries == ds.queries


def test_what_the_sweep_cannot_tell_is_dead_is_kept(tmp_path: Path) -> None:
    """Another host's writer (its pid means nothing here) is kept; one with no owner recorded
    (its writer died making it) is swept only once an hour old, and only empty; another
    output's is not looked at."""
    out = tmp_path / "ds"
    dead = {"pid": 2**22 + 1, "start": None}
    made = {
        ".ds.otherhst": {**dead, "host": "elsewhere"},
        ".ds.unowned1": None,
        ".ds.unowned2": None,
        ".ds.x.deadpid1": {**dead, "host": host_name()},
    }
    for name, owner in made.items():
        (tmp_path / name).mkdir()
        if owner is not None:
            (tmp_path / name / "owner.json").write_text(json.dumps(owner))
    hours_ago = time.time() - 7200
    os.utime(tmp_path / ".ds.unowned1", (hours_ago, hours_ago))
    save_retrieval_dataset(load_retrieval_dataset(BUNDLE), out)
    assert [p.name for p in _temps(out)] == [".ds.otherhst", ".ds.unowned2", ".ds.x.deadpid1"]


def test_a_users_directory_named_like_a_temporary_one_is_never_swept(tmp_path: Path) -> None:
    """`.ds.original` beside `ds` (a user's copy, 8 letters after the dot like mkdtemp's) with
    no owner file, an hour old: the sweep took it for a temporary directory and deleted it
    with the user's files. Only an empty one (its writer died making it) is memgauge's."""
    out = tmp_path / "ds"
    mine = tmp_path / ".ds.original"
    mine.mkdir()
    (mine / "notes.txt").write_text("mine")
    hours_ago = time.time() - 7200
    os.utime(mine, (hours_ago, hours_ago))
    save_retrieval_dataset(load_retrieval_dataset(BUNDLE), out)
    assert (mine / "notes.txt").read_text() == "mine"
