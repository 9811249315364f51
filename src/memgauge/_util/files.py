"""File helpers: atomic writes so that nothing is ever half-written."""

from __future__ import annotations

import hashlib
import os
import secrets
import stat
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import BinaryIO

__all__ = ["atomic_write_bytes", "atomic_write_text", "atomic_writer", "sha256_file"]


def _create_temp(target: Path) -> tuple[int, Path]:
    """A new, empty file beside `target`, open for writing. Created with mode 0o666 so that the
    kernel applies the user's umask, as `open(path, "w")` does; `tempfile.mkstemp` would make it
    0o600 and every report, export and result file would become private to its author."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
    while True:
        tmp = target.parent / f".{target.name}.{secrets.token_hex(6)}.tmp"
        try:
            return os.open(tmp, flags, 0o666), tmp
        except FileExistsError:  # pragma: no cover - 48 random bits collided
            continue


def _special(path: Path) -> bool:
    """Whether `path` (its links followed) is there and is neither a regular file nor a
    directory."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


@contextmanager
def atomic_writer(path: str | Path) -> Iterator[BinaryIO]:
    """Write `path` through a temporary file in its directory and a rename, so that a reader
    never sees it half-written and a failure leaves the old file (or none) in place.

    A new file gets the mode the user's umask gives (0o644 under umask 022); a file rewritten
    keeps its mode, as it would with `open(path, "w")`.

    A path that names no regular file or directory (a device such as /dev/stdout, a FIFO) is
    written as `open(path, "w")` writes it: a rename would put a regular file in its place (as
    root, /dev/stdout or /dev/full replaced for every process). A symbolic link is followed:
    the file it names is rewritten, the link kept.
    """
    target = Path(path)
    if _special(target):
        try:
            with open(target, "wb") as fh:
                yield fh
        except OSError as exc:
            if exc.filename is None:  # a write's error names no file: it is this one
                exc.filename = os.fspath(path)
            raise
        return
    if target.is_symlink():
        target = Path(os.path.realpath(target))
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = _create_temp(target)
    try:
        with os.fdopen(fd, "wb") as fh:
            yield fh
        with suppress(FileNotFoundError):  # a new file keeps what the umask gave it
            os.chmod(tmp, stat.S_IMODE(os.stat(target).st_mode))
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def atomic_write_bytes(path: str | Path, data: bytes) -> None:
    """Write `data` to `path` atomically (see `atomic_writer`)."""
    with atomic_writer(path) as fh:
        fh.write(data)


def atomic_write_text(path: str | Path, text: str) -> None:
    """Write UTF-8 `text` to `path` atomically (see `atomic_writer`)."""
    atomic_write_bytes(path, text.encode("utf-8"))


def sha256_file(path: str | Path, chunk: int = 1 << 20) -> str:
    """Hex sha256 of a file, read in chunks."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(chunk):
            h.update(block)
    return h.hexdigest()
