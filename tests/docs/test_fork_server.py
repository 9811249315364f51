"""A page's `memgauge` commands run through the fork server (tests/docs/fork_server.py,
fork_client.py): each is its own process with the shell's argv, directory, environment, stdio
and signals, ends as it ended, and nothing of the server outlives the page. The server runs
tests/docs/fork_probe.py's `main` here in memgauge's place, to show what a command was given."""

from __future__ import annotations

import json
import os
import re
import signal
import time
from pathlib import Path

import pytest
from tests.docs.blocks import ROOT, DocsError, read_blocks
from tests.docs.session import (
    ForkPool,
    Session,
    runs_memgauge,
    start_fork_server,
    stop_fork_server,
)
from tests.docs.test_docs_run import reader_env


def _session(tmp_path: Path) -> Session:
    env = reader_env(tmp_path, tmp_path / "embeddings")
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    session = Session.fresh("p.md", tmp_path, env)
    session.fork_target = "tests.docs.fork_probe:main"
    return session


def _served(session: Session) -> list[str]:
    """The commands the server forked, as its log names them."""
    log = (session.internal / "fork-server.log").read_text()
    return re.findall(r"^fork server: \d+: (.*)$", log, re.MULTILINE)


def _run(tmp_path: Path, shell: str) -> Session:
    session = _session(tmp_path)
    session.run(read_blocks("p.md", f"```bash\n{shell}```\n"))
    return session


def test_a_command_sees_the_shells_argv_directory_and_environment(tmp_path: Path) -> None:
    session = _run(
        tmp_path,
        "mkdir sub && cd sub && export EXPORTED=yes && UNEXPORTED=no\n"
        "umask 027\nONCE=1 memgauge show one 'two words' > ../seen.json\n"
        "ONCE=1 env -0 > ../shell.env\n",
    )
    seen = json.loads((session.work / "seen.json").read_text())
    shell = dict(
        item.split("=", 1) for item in (session.work / "shell.env").read_text().split("\0") if item
    )
    assert _served(session) == ["show one two words"]
    assert seen["argv"] == ["show", "one", "two words"]
    assert (seen["cwd"], seen["umask"]) == (str(session.work / "sub"), 0o027)
    # bash sets `_` to the path of what it runs: env's there, memgauge's here
    assert seen["env"].pop("_").endswith("/memgauge")
    shell.pop("_")
    assert seen["env"] == shell
    assert (seen["env"]["EXPORTED"], seen["env"]["ONCE"]) == ("yes", "1")
    assert "UNEXPORTED" not in seen["env"]
    assert seen["env"]["MEMGAUGE_HOME"] == str(tmp_path / "home" / ".memgauge")


def test_exit_codes_pipes_and_signals_are_the_commands(tmp_path: Path) -> None:
    session = _run(
        tmp_path,
        "memgauge exit 3 || echo $? > exit.txt\n"
        "printf 'a\\nb\\n' | memgauge cat | tail -1 > piped.txt\n"
        "memgauge kill || echo $? > killed.txt\n"
        "memgauge interrupt 2> /dev/null || echo $? > interrupted.txt\n"
        "(trap '' INT; memgauge show > ignoring.json)\n",
    )
    read = lambda name: (session.work / name).read_text()  # noqa: E731
    assert read("exit.txt") == "3\n"
    assert read("piped.txt") == "B\n"
    assert read("killed.txt") == f"{128 + signal.SIGTERM}\n"
    assert signal.SIGINT in json.loads(read("ignoring.json"))["ignored"]
    assert read("interrupted.txt") == f"{128 + signal.SIGINT}\n"
    assert len(_served(session)) == 5


def test_a_failing_command_fails_its_block_by_line(tmp_path: Path) -> None:
    session = _session(tmp_path)
    blocks = read_blocks("p.md", "# p\n\n```bash\ntrue\nmemgauge exit 5\ntouch never\n```\n")
    with pytest.raises(DocsError, match=re.escape("p.md:3: the shell block failed (exit 5)")):
        session.run(blocks)
    assert not (session.work / "never").exists()


def test_ctrl_c_of_a_serving_line_reaches_the_command(tmp_path: Path) -> None:
    session = _run(
        tmp_path,
        "memgauge serve 8765   # serves http://127.0.0.1:8765/ until Ctrl-C\n"
        "echo after > after.txt\n",
    )
    assert (session.work / "after.txt").read_text() == "after\n"
    assert [c.split()[0] for c in _served(session)] == ["serve"]
    assert "interrupted" in (session.internal / "shell.log").read_text()


def _naming(text: str) -> list[int]:
    """The processes whose command line holds `text`."""
    out = []
    for proc in Path("/proc").iterdir():
        try:
            if proc.name.isdigit() and text.encode() in (proc / "cmdline").read_bytes():
                out.append(int(proc.name))
        except OSError:
            continue
    return out


def test_nothing_outlives_the_page(tmp_path: Path) -> None:
    session = _session(tmp_path)
    assert session.forks is not None
    shell = (
        "memgauge sleep 600 > pid.txt &\nuntil [ -s pid.txt ]; do sleep 0.1; done\n"
        "tr '\\0' ' ' < /proc/$(cat pid.txt)/cmdline > cmdline.txt\n"
    )
    session.run(read_blocks("p.md", f"```bash\n{shell}```\n"))
    pid = int((session.work / "pid.txt").read_text())
    # the server, its clients and its commands (forks of the server) all name the socket
    assert str(session.forks) in (session.work / "cmdline.txt").read_text()
    assert not session.forks.exists()
    assert not Path(f"/proc/{pid}").exists()
    assert _naming(str(session.forks)) == []


def test_a_changed_interpreter_or_locale_setting_runs_the_real_executable(tmp_path: Path) -> None:
    session = _run(
        tmp_path,
        "memgauge exit 0\nPYTHONWARNINGS=ignore memgauge --version > version.txt\n"
        "LC_ALL=C memgauge --version > c.txt\n",
    )
    assert _served(session) == ["exit 0"]
    for name in ("version.txt", "c.txt"):
        assert (session.work / name).read_text().startswith("memgauge, version ")


def test_pages_sharing_a_pool_share_only_its_server(tmp_path: Path) -> None:
    """A ForkPool's server, started by the first page, forks the next page's commands too, each
    in its own page's directory and environment; a page's command still running at its end
    goes with it; the server goes with the pool."""
    pool = ForkPool()
    shell = (
        "memgauge show > seen.json\n"
        "memgauge sleep 600 > pid.txt &\nuntil [ -s pid.txt ]; do sleep 0.1; done\n"
    )
    try:
        pids, servers = [], []
        for name in ("one", "two"):
            env = reader_env(tmp_path / name, tmp_path / "embeddings")
            env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
            session = Session.fresh("p.md", tmp_path / name, env, pool=pool)
            session.fork_target = "tests.docs.fork_probe:main"
            session.run(read_blocks("p.md", f"```bash\n{shell}```\n"))
            assert session.forks == pool.forks
            assert pool.server is not None
            seen = json.loads((session.work / "seen.json").read_text())
            assert seen["cwd"] == str(session.work)
            assert seen["env"]["MEMGAUGE_HOME"] == str(tmp_path / name / "home" / ".memgauge")
            pids.append(int((session.work / "pid.txt").read_text()))
            servers.append(pool.server.pid)
            deadline = time.monotonic() + 30  # the server kills it once its client is gone
            while Path(f"/proc/{pids[-1]}").exists() and time.monotonic() < deadline:
                time.sleep(0.05)
            assert not Path(f"/proc/{pids[-1]}").exists()
        assert servers[0] == servers[1]
        assert pids[0] != pids[1]
        assert pool.server.poll() is None
    finally:
        pool.close()
    assert not pool.forks.exists()
    assert _naming(str(pool.forks)) == []


def test_sigterm_ends_a_server_still_importing_its_preload(tmp_path: Path) -> None:
    """A page that ends before its server is ready (a failing `pip` line, a page of no
    `memgauge`) stops a server mid-import: SIGTERM ends it there, whatever the imported code
    does with an exception raised in it, not the SIGKILL stop_fork_server sends 30 s later."""
    importing = tmp_path / "importing"
    env = reader_env(tmp_path, tmp_path / "embeddings")
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    env["FORK_PROBE_IMPORTING"] = str(importing)
    forks = tmp_path / "forks"
    server = start_fork_server(
        forks, "tests.docs.fork_probe_busy:main", tmp_path, env, tmp_path / "server.log"
    )
    assert server is not None
    deadline = time.monotonic() + 60
    while not importing.exists() and server.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    assert importing.exists()
    stop_fork_server(server, forks)
    assert server.returncode == -signal.SIGTERM
    assert not forks.exists()


def test_a_page_that_runs_no_memgauge_starts_no_server(tmp_path: Path) -> None:
    """Its preload, 2 s of CPU, would serve nothing (the pip tests' pages, say); a `memgauge`
    anywhere a command stands starts one."""
    quiet = _run(tmp_path / "quiet", "pip --version > /dev/null\necho memgauge > said.txt\n")
    assert (quiet.work / "said.txt").read_text() == "memgauge\n"
    assert not (quiet.internal / "fork-server.log").exists()
    served = _run(tmp_path / "served", "X=$(memgauge exit 0) && echo ran > ran.txt\n")
    assert _served(served) == ["exit 0"]
    assert runs_memgauge("A=1 memgauge demo")
    assert runs_memgauge("for r in a b; do memgauge runs show $r; done")
    assert runs_memgauge("pip install -e . && memgauge demo  # then")
    assert runs_memgauge("time memgauge demo")
    assert runs_memgauge("python -c 'x = \"\n'memgauge demo")
    assert not runs_memgauge("pip install memgauge\necho memgauge # memgauge demo")
    assert not runs_memgauge("RUN=$(run_id memgauge-demo)\ncd memgauge")
