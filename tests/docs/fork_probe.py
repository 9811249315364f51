"""A command for the fork server's tests (tests/docs/test_fork_server.py), run in its place of
memgauge's main: it shows what the forked process was given."""

from __future__ import annotations

import http.server
import json
import os
import signal
import sys
import time


def main(argv: list[str]) -> int:
    what, *rest = argv
    if what == "show":  # what a process sees of itself
        json.dump(
            {
                "argv": sys.argv[1:],
                "cwd": os.getcwd(),
                "env": dict(os.environ),
                "ignored": sorted(
                    int(s) for s in signal.valid_signals() if signal.getsignal(s) == signal.SIG_IGN
                ),
                "pid": os.getpid(),
                "umask": _umask(),
            },
            sys.stdout,
        )
        return 0
    if what == "exit":
        return int(rest[0])
    if what == "cat":
        sys.stdout.write(sys.stdin.read().upper())
        return 0
    if what == "kill":  # ended by a signal, not an exit code
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(60)
    if what == "interrupt":  # uncaught: the interpreter ends killed by SIGINT
        raise KeyboardInterrupt
    if what == "sleep":
        print(os.getpid(), flush=True)
        time.sleep(float(rest[0]))
        return 0
    if what == "serve":  # until Ctrl-C, as `memgauge view` does
        server = http.server.HTTPServer(("127.0.0.1", int(rest[0])), _Hello)
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            print("interrupted", file=sys.stderr)
            return 130
        finally:
            server.server_close()
    return 99


def _umask() -> int:
    mask = os.umask(0o22)
    os.umask(mask)
    return mask


class _Hello(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(200)
        self.end_headers()
        self.wfile.write(b"hello")
