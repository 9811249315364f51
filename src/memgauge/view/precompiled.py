"""The templates compiled ahead: Jinja's Python for each template of `memgauge/view/templates`,
shipped in `memgauge/view/compiled/`, so that a page or a report does not parse and generate
code for its templates in every process (about 50 ms of CPU for the seven templates of a
report, against 1 ms to load their bytecode, which Python caches beside them as for any
module).

A template's shipped code is used only while it was compiled from the same source (its SHA-1,
Jinja's own checksum, kept in `compiled/index.json`) by the same Jinja version; any other
template is compiled from its source as before. After a template changes,
`python -m memgauge.view.precompiled` writes them again (`tests/view/test_precompiled.py`
fails until then). The code is what `Environment.compile` makes of the source with the
environment's settings, so a page is the same byte for byte either way.
"""

from __future__ import annotations

import json
from collections.abc import MutableMapping
from importlib.machinery import SourceFileLoader
from pathlib import Path
from typing import TYPE_CHECKING, Any

import jinja2
from jinja2.bccache import Bucket, BytecodeCache

if TYPE_CHECKING:
    from jinja2 import Environment

__all__ = ["COMPILED", "Precompiled", "compiled_sources", "module_file", "write_compiled"]

COMPILED = Path(__file__).with_name("compiled")
_INDEX = "index.json"


def module_file(name: str) -> str:
    """The file of template `name`'s code in `COMPILED`: `run.html` -> `run_html.py`."""
    return name.replace(".", "_").replace("/", "__") + ".py"


class Precompiled(BytecodeCache):
    """Jinja's bytecode cache, answered from the shipped code (never written at run time)."""

    def __init__(self, directory: Path = COMPILED) -> None:
        self.directory = directory
        try:
            index = json.loads((directory / _INDEX).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            index = {}
        same_jinja = index.get("jinja2") == jinja2.__version__
        self.sources: dict[str, str] = dict(index.get("templates") or {}) if same_jinja else {}

    def get_bucket(
        self, environment: Environment, name: str, filename: str | None, source: str
    ) -> Bucket:
        bucket = Bucket(environment, name, self.get_source_checksum(source))
        if self.sources.get(name) == bucket.checksum:
            path = self.directory / module_file(name)
            fullname = f"memgauge.view.compiled.{path.stem}"
            try:
                code = SourceFileLoader(fullname, str(path)).get_code(fullname)
            except OSError:
                code = None
            if code is None:
                return bucket  # not shipped: compiled from its source
            # the template's own file, as a template compiled from its source names it
            # (`Template.filename`, tracebacks)
            bucket.code = code.replace(co_filename=filename) if filename else code
        return bucket

    def set_bucket(self, bucket: Bucket) -> None:
        """Nothing is kept at run time: a template not shipped is compiled in each process."""

    def load_bytecode(self, bucket: Bucket) -> None:
        """Unused: `get_bucket` reads the shipped code."""

    def dump_bytecode(self, bucket: Bucket) -> None:
        """Unused: nothing is written at run time."""


def compiled_sources(env: Environment) -> dict[str, tuple[str, str]]:
    """template name -> (its source's checksum, the Python `env` compiles it to), for every
    template `env`'s loader lists."""
    assert env.loader is not None
    out: dict[str, tuple[str, str]] = {}
    for name in env.list_templates():
        source, filename, _ = env.loader.get_source(env, name)
        python = env.compile(source, name, filename, raw=True)
        out[name] = (BytecodeCache().get_source_checksum(source), str(python))
    return out


def write_compiled(env: Environment, directory: Path = COMPILED) -> list[str]:
    """Write every template's code and the index into `directory` (emptied of older code
    first); the names written."""
    directory.mkdir(parents=True, exist_ok=True)
    for old in directory.glob("*.py"):
        old.unlink()
    found = compiled_sources(env)
    for name, (_, python) in found.items():
        # no header: the code's line numbers are those its `debug_info` maps to the template's
        (directory / module_file(name)).write_text(python + "\n", encoding="utf-8")
    index: MutableMapping[str, Any] = {
        "written by": "python -m memgauge.view.precompiled",
        "jinja2": jinja2.__version__,
        "templates": {name: checksum for name, (checksum, _) in found.items()},
    }
    (directory / _INDEX).write_text(json.dumps(index, indent=2) + "\n", encoding="utf-8")
    return list(found)


if __name__ == "__main__":
    from memgauge.view.render import environment

    for written in write_compiled(environment()):
        print(f"compiled {written}")
