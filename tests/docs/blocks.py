"""The fenced blocks of README.md and docs/*.md, as the docs' tests read them.

Every fence says what it holds, and the first line of a block may say more:

- `bash`, `sh`, `shell`, `console` (commands after `$ `) and `python` blocks are run, in order,
  one session per page (tests/docs/session.py);
- a block whose first line is a comment naming a file (`# mymemory.py`, `# subject.yaml`) is that
  file: it is written where the reader would save it, and a Python file must be run by a later
  block of its page (by its module or file name), since nothing else would run it;
- a block whose first line is `# not run by the docs' tests: REASON` is shown and not run, with
  the reason in sight of the reader (a Python one must still compile);
- `yaml`, `toml`, `json` and `text` blocks that name no file are excerpts: they must parse, and
  nothing runs them;
- any other fence (no language, an unknown one) is refused: the test cannot tell what to do with
  it, and neither can a reader.
"""

from __future__ import annotations

import json
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]

SHELL = frozenset({"bash", "sh", "shell", "console"})
PYTHON = frozenset({"python", "py"})
DATA = frozenset({"yaml", "yml", "toml", "json", "text"})

NOT_RUN = "# not run by the docs' tests:"
_FENCE = re.compile(r"^(?P<indent> *)(?P<fence>`{3,}|~{3,})(?P<lang>[^`\s]*)[^`]*$")
_FILE = re.compile(r"^#\s+(?P<name>[\w.][\w./-]*\.[A-Za-z]\w*)\s*$")


class DocsError(AssertionError):
    """A block the docs' tests cannot read or run, named by page and line."""


@dataclass(frozen=True)
class Block:
    page: str  # relative to the repository root
    line: int  # of the opening fence, from 1
    lang: str
    text: str  # dedented to the fence, without the fences

    @property
    def where(self) -> str:
        return f"{self.page}:{self.line}"

    @property
    def first_line(self) -> str:
        return self.text.split("\n", 1)[0].strip()

    @property
    def not_run(self) -> str | None:
        """The reason given for not running the block, or None."""
        if self.first_line.startswith(NOT_RUN):
            return self.first_line[len(NOT_RUN) :].strip() or None
        return None

    @property
    def file(self) -> str | None:
        """The file this block is, by its first line (`# mymemory.py`), or None."""
        m = _FILE.match(self.first_line)
        return m.group("name") if m and self.lang not in SHELL else None

    @property
    def kind(self) -> str:
        """`shell`, `python`, `file`, `not-run` or `excerpt`."""
        if self.first_line.startswith(NOT_RUN):
            return "not-run"
        if self.file is not None:
            return "file"
        if self.lang in SHELL:
            return "shell"
        if self.lang in PYTHON:
            return "python"
        return "excerpt"

    def commands(self) -> str:
        """The shell text to run: a `console` block's `$ ` lines (and their continuations),
        any other shell block whole."""
        if self.lang != "console":
            return self.text
        out: list[str] = []
        going = False
        for line in self.text.splitlines():
            if line.startswith("$ ") or going:
                out.append(line[2:] if line.startswith("$ ") and not going else line)
                going = line.rstrip().endswith("\\")
        return "\n".join(out) + "\n"


def pages() -> list[str]:
    """Every page the docs' tests run: the README, then docs/*.md."""
    return ["README.md", *sorted(str(p.relative_to(ROOT)) for p in (ROOT / "docs").glob("*.md"))]


def read_blocks(page: str, text: str | None = None) -> list[Block]:
    """The fenced blocks of `page` in order (`text` instead of the file's, for tests)."""
    source = (ROOT / page).read_text(encoding="utf-8") if text is None else text
    lines = source.splitlines()
    blocks: list[Block] = []
    i = 0
    while i < len(lines):
        m = _FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, fence, lang = len(m["indent"]), m["fence"], m["lang"].lower()
        start = i
        body: list[str] = []
        i += 1
        while i < len(lines) and not (
            lines[i].strip().startswith(fence) and lines[i].strip().strip(fence[0]) == ""
        ):
            body.append(lines[i][indent:] if lines[i][:indent].strip() == "" else lines[i])
            i += 1
        if i == len(lines):
            raise DocsError(f"{page}:{start + 1}: the fence opened here is never closed")
        i += 1
        blocks.append(Block(page, start + 1, lang, "\n".join(body) + "\n"))
    return blocks


def check(blocks: list[Block]) -> None:
    """Refuse, naming page and line, every block the docs' tests cannot deal with: an unknown
    or missing language, a `not run` mark without a reason, an excerpt that does not parse, a
    Python file that no later block runs."""
    for n, b in enumerate(blocks):
        if b.lang not in SHELL | PYTHON | DATA:
            said = f"```{b.lang}" if b.lang else "a bare ```"
            raise DocsError(
                f"{b.where}: {said} block: say what it holds (```bash, ```python, ```yaml, ...)"
                f", or mark it `{NOT_RUN} REASON`"
            )
        if b.first_line.startswith(NOT_RUN) and b.not_run is None:
            raise DocsError(f"{b.where}: `{NOT_RUN}` needs the reason after it")
        if b.kind == "excerpt":
            _parse(b)
        if b.kind == "shell" and re.search(r"\bpython3? -m pip\b", b.text):
            raise DocsError(f"{b.where}: write `pip install`, which the docs' tests stand in for")
        if b.lang in PYTHON and b.kind in ("not-run", "file"):
            try:  # not run, or run later: its syntax at least is checked now
                compile(b.text, b.where, "exec")
            except SyntaxError as exc:
                raise DocsError(f"{b.where}: the python block does not compile: {exc}") from exc
        if b.kind == "file" and b.lang in PYTHON:
            name = b.file or ""
            stem = Path(name).stem
            later = [x.text for x in blocks[n + 1 :] if x.kind in ("shell", "python")]
            if not any(name in t or re.search(rf"\b{re.escape(stem)}\b", t) for t in later):
                raise DocsError(
                    f"{b.where}: the file {name} is never run by a later block of the page:"
                    f" run it, or mark it `{NOT_RUN} REASON`"
                )


def _parse(b: Block) -> None:
    try:
        if b.lang in ("yaml", "yml"):
            yaml.safe_load(b.text)
        elif b.lang == "json":
            json.loads(b.text)
        elif b.lang == "toml":
            tomllib.loads(b.text)
    except (yaml.YAMLError, ValueError) as exc:
        raise DocsError(f"{b.where}: the {b.lang} excerpt does not parse: {exc}") from exc
