"""A real PostgreSQL server for the tests: initdb and pg_ctl in a temporary directory, listening
on 127.0.0.1 on a free port, stopped and removed at the end.

PostgreSQL refuses to run as root, and CI runs as root: the server then runs as the `postgres`
user (through `runuser`), in a directory that user owns. This is why the tests do not use
pytest-postgresql. The binaries come from `MEMGAUGE_TEST_PG_BIN`, else the newest
/usr/lib/postgresql/*/bin (Debian's `postgresql` package; scripts/test-tools.sh installs it).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import tempfile
import uuid
from pathlib import Path
from typing import Any

__all__ = ["PGServer", "find_bin", "rows"]


def find_bin() -> Path | None:
    """The directory holding initdb and pg_ctl, or None."""
    env = os.environ.get("MEMGAUGE_TEST_PG_BIN")
    candidates = [Path(env)] if env else []
    candidates += sorted(
        Path("/usr/lib/postgresql").glob("*/bin"),
        key=lambda p: int(p.parent.name) if p.parent.name.isdigit() else 0,
        reverse=True,
    )
    for found in (shutil.which("initdb"),):
        if found:
            candidates.append(Path(found).parent)
    return next(
        (c for c in candidates if (c / "initdb").exists() and (c / "pg_ctl").exists()), None
    )


def rows(url: str, sql: str) -> list[Any]:
    """The rows `sql` reads from the database at `url` (a `postgresql://` URL)."""
    import sqlalchemy as sa

    engine = sa.create_engine(url.replace("postgresql://", "postgresql+psycopg://"))
    try:
        with engine.connect() as conn:
            return list(conn.exec_driver_sql(sql).all())
    finally:
        engine.dispose()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class PGServer:
    """One server; `url(db)` gives a database's URL, `new_database()` a fresh one."""

    def __init__(self, bindir: Path) -> None:
        self.bindir = bindir
        self.root = Path(tempfile.mkdtemp(prefix="memgauge-pg-"))
        self.data = self.root / "data"
        self.port = _free_port()
        self._as_postgres = os.geteuid() == 0
        if self._as_postgres:
            shutil.chown(self.root, "postgres", "postgres")
        self._run(
            "initdb", "-D", str(self.data), "-U", "postgres", "-A", "trust", "-E", "UTF8",
            "--locale=C", "--no-sync",
        )  # fmt: skip

    def _run(self, tool: str, *args: str) -> subprocess.CompletedProcess[str]:
        cmd = [str(self.bindir / tool), *args]
        if self._as_postgres:
            cmd = ["runuser", "-u", "postgres", "--", *cmd]
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=120, cwd=self.root)
        if done.returncode != 0:
            raise RuntimeError(f"{tool} failed ({done.returncode}): {done.stderr or done.stdout}")
        return done

    def start(self) -> None:
        """Start (or start again, on the same port and data)."""
        options = f"-p {self.port} -h 127.0.0.1 -k {self.root} -F -c max_connections=200"
        self._run(
            "pg_ctl", "-D", str(self.data), "-o", options, "-l", str(self.root / "log"), "-w",
            "start",
        )  # fmt: skip

    def stop(self) -> None:
        """Stop at once (connections are cut), keeping the data."""
        self._run("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop")

    def url(self, database: str = "postgres") -> str:
        """The URL of `database` on this server."""
        return f"postgresql://postgres@127.0.0.1:{self.port}/{database}"

    def new_database(self) -> str:
        """Create an empty database; its URL."""
        import psycopg

        name = f"t_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def close(self) -> None:
        """Stop the server (if running) and remove its directory."""
        with contextlib.suppress(RuntimeError):  # already stopped
            self._run("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop")
        shutil.rmtree(self.root, ignore_errors=True)
