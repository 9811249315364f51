"""The docs' tests' fork server: a page's `memgauge` commands (tests/docs/fork_client.py) are
forked from this process, which imported memgauge's CLI and what its commands import once for
the page. Each command is still its own process with the documented argv, working directory,
environment and stdio; only the interpreter's start and the imports are shared.

Nothing here starts a thread, opens a store or runs a command before forking. A request whose
PYTHON* or locale variables differ from the server's (an interpreter reads them once, at its
start: its path, hash seed, warnings, stdio's encoding) is answered with nothing, and the client
runs the real executable. Shared with the server rather than the shell's: the process group
and resource limits; and, the same in every command of a page, the hash seed of str.

Usage: python -P fork_server.py SOCKET [MODULE:FUNCTION]   (the command's main, memgauge's by
default; SIGTERM stops it and the commands it runs, at once in every phase)
"""

from __future__ import annotations

import atexit
import contextlib
import gc
import io
import json
import os
import selectors
import signal
import socket
import struct
import sys
import traceback
from typing import Any

#: what the commands of the docs import, beyond the CLI's modules (measured on the pages: the
#: engine, stores, subjects, statistics); ONNX runtime and tokenizers are left to the command
PRELOAD = (
    "numpy",
    "scipy.stats",
    "sqlalchemy",
    "alembic.command",
    "pydantic",
    "jinja2",
    "memgauge.api",
    "memgauge.runs.engine",
    "memgauge.store.migrations",
    "memgauge.store.lexical",
    "memgauge.store.memory_index",
    "memgauge.store.llm_cache",
    "memgauge.subjects.specs",
    "memgauge.subjects.reference",
    "memgauge.subjects.agents",
    "memgauge.subjects.extractors",
    "memgauge.subjects.fusion",
    "memgauge.embed.minilm",
    "memgauge.data.demo",
    "optuna",  # the README's and docs/commands.md's studies
    "memgauge.optimize.run",
    "memgauge.runs.run_comparison",
    "memgauge.api._llm",
)


#: -u or PYTHONUNBUFFERED, as this interpreter started (sys.flags does not say it)
BUFFERED = not isinstance(getattr(sys.stdout, "buffer", None), io.FileIO)


def _python_vars(env: dict[str, str]) -> dict[str, str]:
    """What an interpreter reads once, at its start: PYTHON* and the locale (stdio's encoding)."""
    return {k: v for k, v in env.items() if k.startswith(("PYTHON", "LC_", "LANG"))}


def preload(target: str) -> None:
    import importlib

    if not target.startswith("memgauge."):  # a test's probe: its own module is enough
        importlib.import_module(target.partition(":")[0])
        return
    import click

    from memgauge.cli.main import cli

    def walk(group: click.Group, ctx: click.Context) -> None:
        for name in group.list_commands(ctx):
            sub = group.get_command(ctx, name)
            if isinstance(sub, click.Group):
                walk(sub, click.Context(sub, parent=ctx))

    walk(cli, click.Context(cli))
    for name in PRELOAD:
        try:
            importlib.import_module(name)
        except Exception as exc:  # a missing extra: the command imports (and reports) it
            print(f"fork server: not preloaded: {name}: {exc}", file=sys.stderr)
    importlib.import_module(target.partition(":")[0])


def _stdio(fd: int, buffered: bool) -> io.TextIOWrapper:
    """sys.stdin/stdout/stderr as the interpreter makes them at start for `fd`."""
    old = (sys.stdin, sys.stdout, sys.stderr)[fd]
    if fd == 0:  # read buffered even with PYTHONUNBUFFERED
        raw: Any = io.FileIO(fd, "rb", closefd=False)
        binary: Any = io.BufferedReader(raw)
    else:
        raw = io.FileIO(fd, "wb", closefd=False)
        binary = io.BufferedWriter(raw) if buffered else raw
    tty = os.isatty(fd)
    return io.TextIOWrapper(
        binary,
        encoding=old.encoding,
        errors=old.errors,
        newline="\n",
        line_buffering=buffered and (tty or fd == 2),
        write_through=not buffered,
    )


def _exit_code(value: object) -> int:
    """What `sys.exit(value)` makes the process's exit code."""
    if value is None:
        return 0
    if isinstance(value, int):
        return value & 0xFF
    print(value, file=sys.stderr)
    return 1


def command(target: str, request: dict[str, Any], fds: list[int]) -> int:
    """In the forked child: become the command's process and run it; its exit code."""
    ignored = set(request["ignored"])
    for s in signal.valid_signals():
        if s in (signal.SIGKILL, signal.SIGSTOP):
            continue
        if s in ignored:
            signal.signal(s, signal.SIG_IGN)
        elif s == signal.SIGINT:
            signal.signal(s, signal.default_int_handler)
        elif s not in (signal.SIGPIPE, signal.SIGXFSZ):  # the interpreter ignores these two
            signal.signal(s, signal.SIG_DFL)
    os.chdir(request["cwd"])
    os.umask(request["umask"])
    os.environ.clear()
    os.environ.update(request["env"])
    for std, fd in enumerate(fds):
        os.dup2(fd, std)
        os.close(fd)
    buffered = BUFFERED
    sys.stdin, sys.stdout, sys.stderr = (_stdio(fd, buffered) for fd in (0, 1, 2))
    sys.__stdin__, sys.__stdout__, sys.__stderr__ = sys.stdin, sys.stdout, sys.stderr
    sys.argv = [request["argv0"], *request["argv"]]
    try:
        module, _, name = target.partition(":")
        code = _exit_code(getattr(sys.modules[module], name)(request["argv"]))
    except SystemExit as exc:
        code = _exit_code(exc.code)
    except BaseException as exc:
        traceback.print_exc()
        code = 1
        if isinstance(exc, KeyboardInterrupt):  # the interpreter ends killed by SIGINT, then
            code = -signal.SIGINT
    # what the interpreter does at its end: wait for threads, run atexit, flush
    import threading

    shutdown = getattr(threading, "_shutdown", None)
    if shutdown is not None:
        shutdown()
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            code = code or 120
    if code == -signal.SIGINT:
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)
    return code


class Server:
    def __init__(self, path: str, target: str) -> None:
        self.target = target
        self.pid = os.getpid()
        self.sel = selectors.DefaultSelector()
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(path)
        # listening before the imports: a command asked meanwhile waits in the backlog
        self.listener.listen(64)
        self.python = _python_vars(dict(os.environ))
        self.running: dict[int, tuple[int, socket.socket]] = {}  # pidfd: (pid, connection)

    def serve(self) -> None:
        # SIGTERM's default action while importing: nothing runs yet that needs reaping, and a
        # Python handler's exception is raised wherever the imports are, where their code may
        # lose it (a `__set_name__` wraps it in a RuntimeError, a finalizer drops it)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        preload(self.target)
        gc.collect()
        gc.freeze()  # the imported objects stay shared pages in every child
        signal.signal(signal.SIGTERM, self.stop)
        self.sel.register(self.listener, selectors.EVENT_READ, "accept")
        while True:
            for key, _ in self.sel.select():
                if key.data == "accept":
                    self.accept()
                elif key.data == "exit":
                    self.ended(int(key.fd))
                else:
                    self.client_said(key.data, key.fileobj)

    def stop(self, signum: int, _frame: object) -> None:
        """The page is over: its commands still running end, reaped here, and so does this,
        by `os._exit`: no exception that code running under the handler could catch."""
        if os.getpid() != self.pid:  # a command forked before it set its own signals
            signal.signal(signum, signal.SIG_DFL)
            os.kill(os.getpid(), signum)
        for pid, _ in self.running.values():
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        for pid, _ in self.running.values():
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, 0)
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(OSError, ValueError):
                stream.flush()
        os._exit(0)

    def accept(self) -> None:
        conn, _ = self.listener.accept()
        creds = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
        if struct.unpack("3i", creds)[1] != os.getuid():
            conn.close()
            return
        conn.settimeout(30)
        try:
            request, fds = self.receive(conn)
        except (OSError, ValueError) as exc:
            print(f"fork server: a request was not read: {exc}", file=sys.stderr)
            conn.close()
            return
        if _python_vars(request["env"]) != self.python:
            for fd in fds:
                os.close(fd)
            conn.close()  # the client runs the real executable
            return
        for stream in (sys.stdout, sys.stderr):  # nothing of the server's for the command
            stream.flush()
        pid = os.fork()
        if pid == 0:
            code = 70
            try:
                self.sel.close()
                self.listener.close()
                for pidfd, (_, other) in self.running.items():
                    os.close(pidfd)
                    other.close()
                conn.close()
                code = command(self.target, request, fds)
            except BaseException:
                traceback.print_exc()
            finally:
                os._exit(code)
        for fd in fds:
            os.close(fd)
        pidfd = os.pidfd_open(pid)
        self.running[pidfd] = (pid, conn)
        self.sel.register(pidfd, selectors.EVENT_READ, "exit")
        self.sel.register(conn, selectors.EVENT_READ, pidfd)
        print(f"fork server: {pid}: {' '.join(request['argv'])}", file=sys.stderr)
        try:
            conn.sendall(f"pid {pid}\n".encode())
        except OSError:
            os.kill(pid, signal.SIGKILL)

    @staticmethod
    def receive(conn: socket.socket) -> tuple[dict[str, Any], list[int]]:
        data, fds, _, _ = socket.recv_fds(conn, 1 << 16, 3)
        if len(fds) != 3:
            for fd in fds:
                os.close(fd)
            raise ValueError(f"{len(fds)} file descriptors, not 3")
        while len(data) < 8 or len(data) < 8 + int.from_bytes(data[:8], "big"):
            more = conn.recv(1 << 16)
            if not more:
                raise ValueError("the request ended early")
            data += more
        return json.loads(data[8:]), list(fds)

    def client_said(self, pidfd: int, conn: object) -> None:
        """The client's end closed (it was killed): its command goes with it. Its command may
        have ended in the same `select` (reaped just before, its pidfd's number free again for
        another command): then there is nothing to do."""
        pid, running = self.running.get(pidfd, (0, None))
        if running is None or running is not conn:
            return
        try:
            gone = not running.recv(1)
        except OSError:
            gone = True
        if gone:
            self.sel.unregister(running)
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)

    def ended(self, pidfd: int) -> None:
        pid, conn = self.running.pop(pidfd)
        self.sel.unregister(pidfd)
        os.close(pidfd)
        _, status = os.waitpid(pid, 0)
        if os.WIFSIGNALED(status):
            said = f"signal {os.WTERMSIG(status)}\n"
        else:
            said = f"exit {os.waitstatus_to_exitcode(status)}\n"
        with contextlib.suppress(OSError):
            conn.sendall(said.encode())
        with contextlib.suppress(KeyError):  # unless its client went before
            self.sel.unregister(conn)
        conn.close()


if __name__ == "__main__":
    if not hasattr(os, "pidfd_open"):  # Linux 5.3: without it the clients run memgauge itself
        sys.exit("fork server: no os.pidfd_open here")
    Server(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else "memgauge.cli.main:main").serve()
