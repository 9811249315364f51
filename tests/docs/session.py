"""A page's blocks run as a reader runs them: in order, in one fresh directory, one shell session
(bash, `set -e -o pipefail`: later blocks see earlier blocks' files, variables and `cd`) and one
Python interpreter (one namespace for every python block of the page, started where the shell
is, with what it exported, as `python` typed there would be).

What a reader brings, the test brings, and says so in any failure:
- `pip` is tests/docs/pip_stand_in.py: it checks what an install line names and installs
  nothing;
- stand-ins: text of the page naming the reader's own server (a documented address) is replaced,
  in the blocks run, by the test's server of the same kind (`Session.stand_ins`);
- a line ending `# serves URL until Ctrl-C` is started in the background, asked URL until it
  answers 200, and stopped with Ctrl-C's signal (tests/docs/serve.py); the port it names is
  replaced by a free one.

`memgauge` itself is the real command, started faster: each run of it is its own process with
the shell's argv, directory, environment, stdio and signals, forked from a server that imported
memgauge once for the page (tests/docs/fork_server.py, fork_client.py); the interpreter's start
and the imports, most of a second of CPU a command, are paid once a page.
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import select
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from tests.docs.blocks import ROOT, Block, DocsError

HERE = Path(__file__).resolve().parent
BLOCK_TIMEOUT_S = 900.0
_SERVES = re.compile(r"^(?P<cmd>.*?)\s+#\s*serves (?P<url>https?://[^\s]+) until Ctrl-C\s*$")
_OUTPUT_TAIL = 6000


_SERVE_FUNCTION = """
__docs_serve() {  # URL PID: asked until it answers, then Ctrl-C; it must end with 0 or 130
  local asked=0 code=0
  "$__DOCS_PYTHON" "$__DOCS_SERVE" "$1" "$2" || asked=$?
  wait "$2" || code=$?
  [ "$asked" = 0 ] || return 1
  case "$code" in
    0|130) return 0 ;;
    *) echo "serve: after Ctrl-C the command ended with exit $code" >&2; return 1 ;;
  esac
}
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


#: words after which the shell's next word is a command, as at a line's start
_LEADS = {
    "!",
    "{",
    "if",
    "then",
    "else",
    "elif",
    "do",
    "while",
    "until",
    "time",
    "exec",
    "env",
    "nohup",
    "command",
}


def runs_memgauge(shell: str) -> bool:
    """Whether a shell text runs `memgauge` as a command (not `pip install memgauge`, not an
    `echo memgauge`): only then is a fork server worth its preload's 2 s of CPU. A line the
    lexer cannot read counts if it names memgauge at all (a server too many costs only time)."""
    for line in shell.replace("\\\n", " ").splitlines():
        lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        try:
            words = list(lexer)
        except ValueError:  # a quote open past the line
            if re.search(r"\bmemgauge\b", line):
                return True
            continue
        first = True
        for word in words:
            if first and word == "memgauge":
                return True
            first = (
                all(c in "();<>|&" for c in word)
                or word in _LEADS
                or (first and re.match(r"\w+=", word) is not None)
            )
    return False


@dataclass
class _Channel:
    """A long-lived child (bash or the Python driver) taking one block at a time."""

    proc: subprocess.Popen[bytes]
    send: IO[bytes]
    replies: int  # read end of the reply pipe
    reply_fd: int  # its write end, as the child numbers it
    log: Path

    def ask(self, command: str, where: str) -> tuple[str | None, str]:
        """Send `command`; the reply line (None if the child ended) and what it printed."""
        start = self.log.stat().st_size
        try:
            self.send.write(command.encode())
            self.send.flush()
        except BrokenPipeError:
            pass
        reply = b""
        deadline = time.monotonic() + BLOCK_TIMEOUT_S
        while not reply.endswith(b"\n"):
            left = deadline - time.monotonic()
            if left <= 0:
                _kill(self.proc)
                raise DocsError(f"{where}: still running after {BLOCK_TIMEOUT_S:.0f} s")
            # poll, not select: select() refuses a descriptor numbered past 1,023, which a
            # worker that has opened many files and sockets reaches
            poller = select.poll()
            poller.register(self.replies, select.POLLIN | select.POLLHUP)
            if poller.poll(int(min(left, 0.5) * 1000)):
                chunk = os.read(self.replies, 4096)
                if not chunk:
                    break
                reply += chunk
            elif self.proc.poll() is not None:
                break
        with self.log.open("rb") as f:
            f.seek(start)
            printed = f.read().decode("utf-8", "replace")
        return (reply.decode().strip() if reply.endswith(b"\n") else None), printed

    def close(self, goodbye: str) -> tuple[int, str]:
        start = self.log.stat().st_size
        try:
            self.send.write(goodbye.encode())
            self.send.close()
        except BrokenPipeError:
            pass
        try:
            code = self.proc.wait(timeout=120)
        except subprocess.TimeoutExpired:
            code = -9
        _kill(self.proc)
        os.close(self.replies)
        with self.log.open("rb") as f:
            f.seek(start)
            return code, f.read().decode("utf-8", "replace")


def _ended(proc: subprocess.Popen[bytes]) -> int | None:
    try:
        return proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        return None


def _kill(proc: subprocess.Popen[bytes]) -> None:
    """The child and whatever it left running in its process group."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()


@dataclass
class Timing:
    where: str
    kind: str
    seconds: float


@dataclass
class ForkPool:
    """One fork server for the pages of a test session (each xdist worker's): started by the
    first page that runs a shell block, in that page's environment, and stopped by `close()`.
    What it shares across pages is only what it imported before forking: a command gets its
    argv, directory, environment and stdio from its client, and a page's commands end with the
    page (killing its shell's process group kills their clients, and a client's end ends its
    command). A preload is about 2 s of CPU; a page that gives the server other PYTHON* or
    locale variables has its commands run by the real executable, as with a page's own."""

    forks: Path = field(
        default_factory=lambda: (
            Path(tempfile.gettempdir()) / f"memgauge-docs-{os.getuid()}-{secrets.token_hex(6)}"
        )
    )
    server: subprocess.Popen[bytes] | None = None

    def start(self, target: str, cwd: Path, env: dict[str, str], log: Path) -> None:
        if self.server is None:
            self.server = start_fork_server(self.forks, target, cwd, env, log)

    def close(self) -> None:
        if self.server is not None:
            stop_fork_server(self.server, self.forks)
            self.server = None


@dataclass
class Session:
    """One page's run. `work` is the reader's directory; the test's own files go to `internal`."""

    page: str
    work: Path
    internal: Path
    env: dict[str, str]
    stand_ins: dict[str, str] = field(default_factory=dict)
    timings: list[Timing] = field(default_factory=list)
    _shell: _Channel | None = None
    _python: _Channel | None = None
    _n: int = 0
    #: the fork server's directory (its socket in it), private to this user
    forks: Path | None = None
    #: what the fork server runs as a command (its tests give it a probe)
    fork_target: str = "memgauge.cli.main:main"
    _forks: subprocess.Popen[bytes] | None = None
    #: the session's fork server, when pages share one (else the page starts its own)
    pool: ForkPool | None = None

    @classmethod
    def fresh(
        cls,
        page: str,
        tmp: Path,
        env: dict[str, str],
        *,
        clone: bool = False,
        stand_ins: dict[str, str] | None = None,
        pool: ForkPool | None = None,
    ) -> Session:
        """A fresh directory (a copy of the repository's files, as a clone has them, when
        `clone`), with `env` as the environment (MEMGAUGE_HOME and the like already in it);
        its `memgauge` commands forked from `pool`'s server when given, else its own."""
        work, internal, bindir = tmp / "work", tmp / "internal", tmp / "internal" / "bin"
        for d in (work, internal, bindir):
            d.mkdir(parents=True)
        if clone:
            _clone(work)
        pip = bindir / "pip"
        stand_in = shlex.join(
            [sys.executable, str(HERE / "pip_stand_in.py"), str(ROOT), str(internal / "pip-state")]
        )
        pip.write_text(f'#!/bin/sh\nexec {stand_in} "$@"\n')
        pip.chmod(0o755)
        (bindir / "pip3").symlink_to(pip)
        scripts = Path(sys.executable).parent
        real = scripts / "memgauge"
        if not real.exists():  # not installed: the package from PYTHONPATH
            real = internal / "memgauge"
            real.write_text(
                f'#!/bin/sh\nexec {shlex.quote(sys.executable)} -P -c "import sys;'
                f' from memgauge.cli.main import run; sys.argv[0] = \'memgauge\'; run()" "$@"\n'
            )
            real.chmod(0o755)
        # `memgauge` on PATH: the page's fork server's client (tests/docs/fork_client.py), which
        # is the real executable while no server answers
        forks = (
            pool.forks
            if pool is not None
            else Path(tempfile.gettempdir()) / f"memgauge-docs-{os.getuid()}-{secrets.token_hex(6)}"
        )
        client = [sys.executable, "-S", "-I", str(HERE / "fork_client.py")]
        exe = bindir / "memgauge"
        exe.write_text(
            f'#!/bin/sh\nexec {shlex.join([*client, str(forks / "sock"), str(real)])} "$@"\n'
        )
        exe.chmod(0o755)
        env = {
            **env,
            "PATH": os.pathsep.join([str(bindir), str(scripts), env.get("PATH", "")]),
            "PYTHONUNBUFFERED": "1",
            "__DOCS_PYTHON": sys.executable,
            "__DOCS_SERVE": str(HERE / "serve.py"),
        }
        return cls(page, work, internal, env, dict(stand_ins or {}), forks=forks, pool=pool)

    # --- running ----------------------------------------------------------------------------

    def run(self, blocks: list[Block]) -> None:
        """Every block of the page in order; a failure raises DocsError naming the block."""
        try:
            if any(b.kind == "shell" and runs_memgauge(b.commands()) for b in blocks):
                self._start_fork_server()
            for b in blocks:
                t0 = time.monotonic()
                if b.kind == "file":
                    path = self.work / (b.file or "")
                    path.parent.mkdir(parents=True, exist_ok=True)
                    path.write_text(self._stand_in(b.text), encoding="utf-8")
                elif b.kind == "shell":
                    self._run_shell(b)
                elif b.kind == "python":
                    self._run_python(b)
                self.timings.append(Timing(b.where, b.kind, time.monotonic() - t0))
        except BaseException:
            self.close(check=False)  # the block's failure is the one to report
            raise
        self.close()

    def _start_fork_server(self) -> None:
        """The page's `memgauge` commands forked from one process that imported memgauge once
        (tests/docs/fork_server.py); started in the page's first environment, it serves a
        command only if the interpreter's PYTHON* variables are still those."""
        if self.pool is not None:
            self.pool.start(
                self.fork_target, self.work, self.env, self.internal / "fork-server.log"
            )
        elif self.forks is not None:
            self._forks = start_fork_server(
                self.forks, self.fork_target, self.work, self.env, self.internal / "fork-server.log"
            )

    def _stand_in(self, text: str) -> str:
        for documented, actual in self.stand_ins.items():
            text = text.replace(documented, actual)
        return text

    def _fail(self, b: Block, why: str, printed: str, ran: str) -> DocsError:
        shown = printed if len(printed) <= _OUTPUT_TAIL else "...\n" + printed[-_OUTPUT_TAIL:]
        stand = "".join(f"\n  {k} -> {v}" for k, v in self.stand_ins.items() if k in b.text)
        return DocsError(
            f"{b.where}: {why}\n--- the block as run (in {self.work}){stand and ', with stand-ins:'}"
            f"{stand}\n{ran}--- its output\n{shown}"
        )

    def _run_shell(self, b: Block) -> None:
        text = self._stand_in(b.commands())
        lines = []
        for line in text.splitlines():
            m = _SERVES.match(line)
            if m:
                line = self._serving(b, m["cmd"], m["url"])
            lines.append(line)
        self._n += 1
        script = self.internal / f"block-{self._n}.sh"
        script.write_text("\n".join(lines) + "\n")
        if self._shell is None:
            self._shell = self._start(
                ["bash", "--noprofile", "--norc"], "shell", stdin_commands=True
            )
            prelude = "set -e -o pipefail\n" + _SERVE_FUNCTION
            self._shell.send.write(prelude.encode())
        reply, printed = self._shell.ask(
            f'source {shlex.quote(str(script))} < /dev/null\necho "$?" >&{self._shell.reply_fd}\n',
            b.where,
        )
        if reply != "0":
            code = _ended(self._shell.proc) if reply is None else reply
            raise self._fail(b, f"the shell block failed (exit {code})", printed, text)

    def _serving(self, b: Block, cmd: str, url: str) -> str:
        m = re.match(r"https?://[^/:]+:(\d+)", url)
        if not m or not re.search(rf"\b{m[1]}\b", cmd):
            raise DocsError(
                f"{b.where}: a serving line names its port in the command (`--port 8765`), so"
                " that the test can give it a free one"
            )
        port = str(free_port())
        cmd, url = re.sub(rf"\b{m[1]}\b", port, cmd), url.replace(f":{m[1]}", f":{port}", 1)
        # its own process group (job control), so that Ctrl-C's SIGINT reaches it as from a
        # terminal; the shell's variables are the command's
        return f"set -m; {cmd} & set +m; __docs_serve {shlex.quote(url)} $!"

    def _run_python(self, b: Block) -> None:
        self._n += 1
        code = self.internal / f"block-{self._n}.py"
        code.write_text(self._stand_in(b.text), encoding="utf-8")
        if self._python is None:
            cwd, env = self._shell_state(b)
            self._python = self._start(
                [sys.executable, str(HERE / "pydriver.py")],
                "python",
                stdin_commands=False,
                cwd=cwd,
                env=env,
            )
        reply, printed = self._python.ask(f"{code} {b.line + 1} {b.page}\n", b.where)
        if reply != "ok":
            if reply is None:
                printed += f"\n(the interpreter ended: exit {_ended(self._python.proc)})"
            raise self._fail(b, "the python block failed", printed, code.read_text())

    def _shell_state(self, b: Block) -> tuple[Path, dict[str, str]]:
        """Where the reader's shell is and what it exported: a Python session started now
        starts there, with that environment (the page's own before any shell block ran)."""
        if self._shell is None:
            return self.work, self.env
        where, env = self.internal / "shell-pwd", self.internal / "shell-env"
        reply, printed = self._shell.ask(
            f"pwd > {shlex.quote(str(where))}; env -0 > {shlex.quote(str(env))}\n"
            f'echo "$?" >&{self._shell.reply_fd}\n',
            b.where,
        )
        if reply != "0":
            raise self._fail(b, "the shell's state could not be read", printed, "")
        pairs = (item.split("=", 1) for item in env.read_text().split("\0") if "=" in item)
        return Path(where.read_text().strip()), dict(pairs)

    def _start(
        self,
        argv: list[str],
        name: str,
        *,
        stdin_commands: bool,
        cwd: Path | None = None,
        env: dict[str, str] | None = None,
    ) -> _Channel:
        log = self.internal / f"{name}.log"
        log.touch()
        reply_r, reply_w = os.pipe()
        pass_fds = [reply_w]
        if stdin_commands:
            stdin: int = subprocess.PIPE
        else:
            cmd_r, cmd_w = os.pipe()
            pass_fds.append(cmd_r)
            argv = [*argv, str(cmd_r), str(reply_w)]
            stdin = subprocess.DEVNULL
        with log.open("ab") as out:
            proc = subprocess.Popen(
                argv,
                cwd=cwd or self.work,
                env=env or self.env,
                stdin=stdin,
                stdout=out,
                stderr=subprocess.STDOUT,
                pass_fds=pass_fds,
                start_new_session=True,
            )
        os.close(reply_w)
        if stdin_commands:
            assert proc.stdin is not None
            send: IO[bytes] = proc.stdin
        else:
            os.close(cmd_r)
            send = os.fdopen(cmd_w, "wb")
        return _Channel(proc, send, reply_r, reply_w, log)

    def close(self, *, check: bool = True) -> None:
        """End the sessions as a reader's end: the interpreter's exit must be clean too."""
        problems = []
        if self._python is not None:
            code, printed = self._python.close("\n")
            self._python = None
            if code != 0:
                problems.append(
                    f"{self.page}: the python session ended with exit {code}\n{printed}"
                )
        if self._shell is not None:
            self._shell.close("exit 0\n")
            self._shell = None
        if self._forks is not None:  # with any command still running
            stop_fork_server(self._forks, self.forks)
            self._forks = None
        if problems and check:
            raise DocsError("\n".join(problems))


def start_fork_server(
    forks: Path, target: str, cwd: Path, env: dict[str, str], log: Path
) -> subprocess.Popen[bytes] | None:
    """tests/docs/fork_server.py serving `target` on `forks`/sock (a new directory, private to
    this user), in `env`: the server for fork_client.py's commands, whose PYTHON* variables
    must be `env`'s; None when the directory exists already (someone else's)."""
    try:
        forks.mkdir(mode=0o700)
    except OSError:
        return None
    with log.open("ab") as out:
        server = subprocess.Popen(
            [sys.executable, "-P", str(HERE / "fork_server.py"), str(forks / "sock"), target],
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    deadline = time.monotonic() + 30
    while not (forks / "sock").exists() and server.poll() is None:
        if time.monotonic() > deadline:
            break
        time.sleep(0.01)
    return server


def stop_fork_server(server: subprocess.Popen[bytes], forks: Path | None) -> None:
    """The server and any command it still runs; its directory goes."""
    server.terminate()
    _ended(server)
    _kill(server)
    shutil.rmtree(forks or "", ignore_errors=True)


def _clone(into: Path) -> None:
    """The repository's files as a fresh clone has them (the working tree's text, so that
    uncommitted edits of the docs are what runs), copied: a page may write anywhere in it."""
    try:
        out = subprocess.run(
            ["git", "-C", str(ROOT), "ls-files", "-z"], capture_output=True, check=True
        ).stdout.decode()
    except (OSError, subprocess.CalledProcessError):  # not a git checkout: its files
        junk = shutil.ignore_patterns(".*", "__pycache__", "site", "*.egg-info")
        shutil.copytree(ROOT, into, ignore=junk, dirs_exist_ok=True)
        return
    for name in filter(None, out.split("\0")):
        source = ROOT / name
        if source.is_file():  # a tracked file deleted in the working tree is not cloned
            (into / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, into / name)
