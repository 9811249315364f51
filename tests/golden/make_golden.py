"""Write the golden files from the code as it stands: run once, before a refactor, and commit
the files in a commit of their own (`python tests/golden/make_golden.py`)."""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parents[0] / "data" / "subjects")]

from golden_pin import PINS  # noqa: E402


def main() -> None:
    for name, pin in PINS.items():
        with tempfile.TemporaryDirectory() as tmp:
            values = pin(Path(tmp))
        path = HERE / f"{name}.json"
        path.write_text(json.dumps(values, indent=1, sort_keys=True) + "\n")
        print(f"{path}: {len(values)} values")


if __name__ == "__main__":
    main()
