"""`memgauge` as a page's shell runs it in the docs' tests: one real process per command, whose
interpreter start and imports are shared (tests/docs/fork_server.py forks it from a process that
has memgauge's CLI imported already). Standard library only, run as `python -S -I`: it starts in
a few milliseconds, where memgauge's own start takes most of a second of CPU.

This hands the server its stdin, stdout and stderr (the fds themselves: pipes, redirections and
`| head` are the command's), its argv, working directory, umask, environment and ignored signals; it
forwards the signals a command gets (Ctrl-C of a serving line) to the command, and ends as the
command ended (its exit code, or killed by the same signal). With no server to answer, it
becomes the real executable.

Usage: python -S -I fork_client.py SOCKET REAL_MEMGAUGE ARGS...
"""

import contextlib
import json
import os
import signal
import socket
import sys

#: what a shell's command is told by signals; the rest (SIGKILL aside) is not a command's own
FORWARDED = (
    signal.SIGINT,
    signal.SIGTERM,
    signal.SIGHUP,
    signal.SIGQUIT,
    signal.SIGUSR1,
    signal.SIGUSR2,
)
_child = 0
_pending = []


def _forward(signum, _frame):
    if _child:
        with contextlib.suppress(ProcessLookupError):
            os.kill(_child, signum)
    else:
        _pending.append(signum)


def _real(real, args):
    os.execv(real, [real, *args])


def _umask():
    mask = os.umask(0o22)
    os.umask(mask)
    return mask


def _ignored():
    return [
        int(s)
        for s in signal.valid_signals()
        if s not in (signal.SIGKILL, signal.SIGSTOP) and signal.getsignal(s) == signal.SIG_IGN
    ]


def main(path, real, args):
    global _child
    ignored = _ignored()
    for s in FORWARDED:
        if s not in ignored:
            signal.signal(s, _forward)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(path)
    except OSError:  # no server (yet, or any more): the real executable
        sock.close()
        _real(real, args)
    request = json.dumps(
        {
            "argv": args,
            "cwd": os.getcwd(),
            "umask": _umask(),
            "env": dict(os.environ),
            "ignored": ignored,
            "argv0": real,
        }
    ).encode()
    data = len(request).to_bytes(8, "big") + request
    try:
        sent = socket.send_fds(sock, [data], [0, 1, 2])
        if sent < len(data):
            # only what is left: with the whole request sent, the server may have run the
            # command and closed the connection already (a command that ends at once, this
            # process descheduled), and a send, even of nothing, would then fail with EPIPE
            # and run the command a second time, as the real executable
            sock.sendall(data[sent:])
    except OSError:  # a closed stdin, say: the interpreter has its own ways with it
        sock.close()
        _real(real, args)
    answer = sock.makefile("rb")
    while True:
        try:
            line = answer.readline()
        except InterruptedError:  # pragma: no cover - PEP 475 retries
            continue
        if not line:
            if not _child:  # the server went before the command started: run it ourselves
                _real(real, args)
            sys.stderr.write("memgauge (docs' fork server): the server ended mid-command\n")
            return 70
        what, _, value = line.decode().partition(" ")
        if what == "pid":
            _child = int(value)
            while _pending:
                _forward(_pending.pop(0), None)
        elif what == "exit":
            return int(value)
        elif what == "signal":
            signum = int(value)
            sys.stdout.flush()
            signal.signal(signum, signal.SIG_DFL)
            os.kill(os.getpid(), signum)
            return 128 + signum


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2], sys.argv[3:]))
