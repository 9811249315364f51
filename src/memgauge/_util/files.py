"""File helpers: atomic writes so that nothing is ever half-written."""

from __future__ import annotations

import errno
import hashlib
import json
import os
import re
import secrets
import shutil
import stat
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import BinaryIO

from memgauge._util.process import host_name, is_alive, this_process

__all__ = [
    "ReplaceRefusedError",
    "atomic_write_bytes",
    "atomic_write_text",
    "atomic_writer",
    "exclusive_lock",
    "sha256_file",
    "special_file",
    "sqlite_journals",
    "temp_dir_beside",
    "write_refusal",
]

#: in a temporary directory of `temp_dir_beside`, who writes it (pid, host, start)
_OWNER = "owner.json"
#: a temporary directory whose owner is not recorded (its writer died the instant after making
#: it) is stale once this old
_UNOWNED_STALE_S = 3600.0
#: all such a directory may hold: the owner file's temporary file, half written
_OWNER_TEMP = re.compile(rf"\.{re.escape(_OWNER)}\.[0-9a-f]+\.tmp")


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


def special_file(path: str | Path) -> bool:
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

    A file that holds a SQLite database (a results store), or is named as one of the files
    SQLite keeps beside one (`r.db-wal`, `-shm`, `-journal`), is never replaced:
    `ReplaceRefusedError`.
    """
    target = Path(path)
    if special_file(target):
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
    if (refused := write_refusal(target, path)) is not None:
        raise refused
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


class ReplaceRefusedError(OSError):
    """A file `atomic_writer` does not replace (`write_refusal`); its `strerror` says why and
    what to do."""


#: the first bytes of every SQLite database file
_SQLITE_HEADER = b"SQLite format 3\x00"


def write_refusal(target: Path, path: str | Path | None = None) -> ReplaceRefusedError | None:
    """Why `atomic_writer` will not write `target` (its links followed; `path` as the user
    named it, for the message), or None: a directory, a SQLite database or a file SQLite keeps
    beside one, a read-only file. A command checks its outputs with it before its run."""
    named = os.fspath(target if path is None else path)
    if target.is_dir():
        # the rename's error named the temporary file: `.report.html.1a2b.tmp -> report.html`
        return ReplaceRefusedError(
            errno.EISDIR, "it is a directory: move it or give another path", named
        )
    if _holds_sqlite(target):
        # `runs export ID --out r.db --store r.db`: the store it read, every run in it, gone
        return ReplaceRefusedError(
            errno.EEXIST,
            "it holds a SQLite database (a results store?), which nothing memgauge writes "
            "replaces: give another file",
            named,
        )
    if (db := _sqlite_sidecar(target)) is not None:
        # `--out r.db-wal`: the runs committed since the last checkpoint, gone; a writer's
        # open journal replaced under it
        return ReplaceRefusedError(
            errno.EEXIST,
            f"it is the journal of the SQLite database {db} (a results store?), which nothing"
            " memgauge writes replaces: give another file",
            named,
        )
    if _read_only(target):
        # a rename replaces a file `open(path, "w")` may not write (and root's open would)
        return ReplaceRefusedError(
            errno.EACCES,
            "it is read-only, which nothing memgauge writes replaces: make it writable"
            " (chmod u+w) or give another file",
            named,
        )
    return None


def _read_only(path: Path) -> bool:
    """Whether `path` is a regular file that nobody may write by its mode, or this process may
    not write."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return stat.S_ISREG(mode) and (not mode & 0o222 or not os.access(path, os.W_OK))


#: the files SQLite keeps beside a database `X`: `X-wal`, `X-shm`, `X-journal`
_SQLITE_SIDECARS = ("-wal", "-shm", "-journal")


def _sqlite_sidecar(path: Path) -> Path | None:
    """The SQLite database `path` is the write-ahead log, shared memory or rollback journal of
    (there or not yet), or None."""
    for suffix in _SQLITE_SIDECARS:
        if path.name.endswith(suffix) and len(path.name) > len(suffix):
            db = path.with_name(path.name[: -len(suffix)])
            if _holds_sqlite(db):
                return db
    return None


def _holds_sqlite(path: Path) -> bool:
    """Whether `path` is a file that starts as a SQLite database does."""
    try:
        with open(path, "rb") as fh:
            return fh.read(len(_SQLITE_HEADER)) == _SQLITE_HEADER
    except OSError:  # none there (or unreadable: the write names the problem)
        return False


def sqlite_journals(database: Path) -> list[Path]:
    """The files SQLite keeps beside `database` while it is open or mid-write."""
    return [database.with_name(database.name + end) for end in _SQLITE_SIDECARS]


@contextmanager
def exclusive_lock(path: str | Path) -> Iterator[bool]:
    """Hold an exclusive advisory lock on the file `path` (made if missing, left in place) for
    the block, waiting while another process holds it; yields whether it had to wait. The
    system releases it when the holder ends, however it ends (`kill -9` included). Where
    there is no `fcntl` (Windows), nothing is locked."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - POSIX has it
        yield False
        return
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(target, os.O_RDWR | os.O_CREAT, 0o666)
    try:
        waited = False
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            waited = True
            fcntl.flock(fd, fcntl.LOCK_EX)
        yield waited
    finally:
        os.close(fd)


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


@contextmanager
def temp_dir_beside(out: Path) -> Iterator[Path]:
    """An empty directory to write `out`'s files in before they are moved into place, made
    beside `out` (`.<name>.XXXXXXXX/`, so the move is a rename) and removed on the way out.

    A writer killed with `kill -9` cannot remove its own: each records its owner (pid, host,
    start), and the next write to the same `out` first sweeps those whose owner is gone. It
    never sweeps one whose owner lives (a concurrent writer), nor another host's; one with no
    owner recorded only once it is an hour old, and only when it holds nothing else (a
    directory of the user's named like one is kept)."""
    _sweep_stale(out)
    top = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    try:
        me = this_process()
        owner = {"pid": me.pid, "host": me.host, "start": me.start}
        atomic_write_text(top / _OWNER, json.dumps(owner))
        files = top / "files"
        files.mkdir()
        yield files
    finally:
        shutil.rmtree(top, ignore_errors=True)


def _sweep_stale(out: Path) -> None:
    """Remove the temporary directories beside `out` that `temp_dir_beside` made for a writer
    that is gone (see there)."""
    named = re.compile(rf"\.{re.escape(out.name)}\.[a-z0-9_]{{8}}")
    try:
        found = [p for p in out.parent.iterdir() if named.fullmatch(p.name)]
    except OSError:
        return
    for top in found:
        if top.is_symlink() or not top.is_dir():
            continue
        try:
            owner = json.loads((top / _OWNER).read_text(encoding="utf-8"))
            pid, host, start = int(owner["pid"]), str(owner["host"]), owner.get("start")
        except (OSError, ValueError, TypeError, KeyError):
            with suppress(OSError):
                if time.time() - top.stat().st_mtime > _UNOWNED_STALE_S and _unowned_empty(top):
                    shutil.rmtree(top, ignore_errors=True)
            continue
        if host == host_name() and not is_alive(pid, start if isinstance(start, str) else None):
            shutil.rmtree(top, ignore_errors=True)


def _unowned_empty(top: Path) -> bool:
    """Whether `top` holds nothing but what a writer that died making its owner file left: a
    directory of another's (`.out.original`, a user's copy) is named as a temporary one may
    be, and is never swept."""
    return all(_OWNER_TEMP.fullmatch(p.name) for p in top.iterdir())
