"""A command that serves until Ctrl-C, as the docs' tests run it. The page's shell starts it in
the background in its own process group (`set -m; CMD & set +m`); this asks URL until it answers
200, then stops the group as a terminal's Ctrl-C does (SIGINT) and waits for it to end. The
shell then checks the command's exit code (0 or 130).

Usage: python serve.py URL PID.
"""

from __future__ import annotations

import os
import signal
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

WAIT_S = 120.0
STOP_S = 60.0


def _running(pid: int) -> bool:
    """True while `pid` runs (a zombie waiting for its shell to reap it has ended)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def main(url: str, pid: int) -> int:
    deadline = time.monotonic() + WAIT_S
    answer = "nothing yet"
    while time.monotonic() < deadline and _running(pid):
        try:
            with urllib.request.urlopen(url, timeout=5) as r:
                answer = f"HTTP {r.status}"
                if r.status == 200:
                    break
        except (urllib.error.URLError, OSError) as exc:
            answer = str(exc)
        time.sleep(0.2)
    if not _running(pid):
        print(f"serve: the command ended before {url} answered 200 ({answer})", file=sys.stderr)
        return 1
    if answer != "HTTP 200":
        print(f"serve: {url} did not answer 200 in {WAIT_S:.0f} s: {answer}", file=sys.stderr)
        os.killpg(pid, signal.SIGKILL)
        return 1
    print(f"serve: {url} answered 200; Ctrl-C", file=sys.stderr)
    os.killpg(pid, signal.SIGINT)
    deadline = time.monotonic() + STOP_S
    while time.monotonic() < deadline and _running(pid):
        time.sleep(0.1)
    if _running(pid):
        print(f"serve: still running {STOP_S:.0f} s after Ctrl-C", file=sys.stderr)
        os.killpg(pid, signal.SIGKILL)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], int(sys.argv[2])))
