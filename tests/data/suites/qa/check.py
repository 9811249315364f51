"""Script evaluator for the qa suite: passes when the output (stdin) mentions the expected text
(environment), prints a score 0-100 on the last line."""

import os
import sys

output = sys.stdin.read()
expected = os.environ.get("MEMGAUGE_EXPECTED", "")
print("checking", file=sys.stderr)
ok = any(
    e.strip().lower() in output.lower() for e in expected.strip("[]").replace('"', "").split(",")
)
print(100 if ok else 0)
sys.exit(0 if ok else 1)
