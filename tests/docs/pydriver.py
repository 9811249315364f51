"""One Python interpreter for a page's python blocks, as a reader's session: every block runs in
the same namespace (`__name__ == "__main__"`), with the current directory first on sys.path as
in `python` typed at a prompt.

Usage: python pydriver.py COMMAND_FD REPLY_FD. Each command line is `PATH FIRST_LINE PAGE`: the
block's code in PATH, run so that a traceback names PAGE and the line in it; the reply is `ok`
or `error`, the traceback on stderr. An empty line ends the session.
"""

from __future__ import annotations

import linecache
import os
import sys
import traceback


def main(commands: int, replies: int) -> int:
    sys.path[0] = os.getcwd()  # the reader's directory, not this file's
    namespace: dict[str, object] = {"__name__": "__main__", "__builtins__": __builtins__}
    with os.fdopen(commands, encoding="utf-8") as inbox, os.fdopen(replies, "w") as outbox:
        for line in inbox:
            if not line.strip():
                break
            path, first, page = line.rstrip("\n").split(" ", 2)
            with open(path, encoding="utf-8") as f:
                code = f.read()
            # the page's own line numbers in a traceback, and its text beside them
            padded = "\n" * (int(first) - 1) + code
            linecache.cache[page] = (len(padded), None, padded.splitlines(True), page)
            try:
                exec(compile(padded, page, "exec"), namespace)
                ok = True
            except SystemExit as exc:  # sys.exit() in a block: its code says
                ok = exc.code in (0, None)
                if not ok:
                    print(f"SystemExit: {exc.code}", file=sys.stderr)
            except BaseException:  # a block's SystemExit or KeyboardInterrupt is its failure
                traceback.print_exc()
                ok = False
            sys.stdout.flush()
            sys.stderr.flush()
            outbox.write("ok\n" if ok else "error\n")
            outbox.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(int(sys.argv[1]), int(sys.argv[2])))
