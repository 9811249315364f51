"""The one place JSON and YAML text becomes Python values, with bounds on what it may hold.

Every file memgauge reads goes through `loads_json` or `load_yaml`, so a hostile or broken file
is refused here, with its line, before anything downstream sees it:

- numbers are finite: JSON's `NaN` / `Infinity`, YAML's `.nan` / `.inf`, and numbers that
  overflow a double (`1e999`) are refused; integers must fit in 64 bits (what SQLite stores);
- keys are unique: a mapping or object that repeats a key is refused (both parsers would
  silently keep the later value);
- nesting is at most `MAX_DEPTH` levels (Python's JSON parser recurses, and a file nested
  200,000 deep would otherwise end in RecursionError);
- strings are text: a lone UTF-16 surrogate (`"\\ud800"`) is refused, since it cannot be
  written back as UTF-8, and so is a NUL character (JSON's `"\\u0000"`, YAML's `"\\0"`), which
  PostgreSQL refuses in any text (a run id, a query id, a name) and no file means as text;
- YAML aliases are bounded: at most `MAX_ALIASES` of them, a document whose expansion (each
  alias counted as a copy of what it names) exceeds `MAX_EXPANDED_BYTES`, and a recursive alias
  are refused. A 160-byte "billion laughs" document expands to gigabytes in anything that walks
  it (pydantic, `str()`, `json.dumps`); its node graph is measured here without expanding it.

`ParseError` carries the 1-based line (None when unknown) and a message that says what to fix.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

import yaml

from memgauge._util.numbers import INT64_MAX, INT64_MIN, digits_shown

__all__ = [
    "MAX_ALIASES",
    "MAX_DEPTH",
    "MAX_EXPANDED_BYTES",
    "ParseError",
    "load_yaml",
    "loads_json",
]

MAX_DEPTH = 100
MAX_ALIASES = 100
MAX_EXPANDED_BYTES = 10 * 1024 * 1024


class ParseError(ValueError):
    """Text that is not acceptable JSON or YAML; `line` is 1-based, None when unknown."""

    def __init__(self, message: str, line: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.line = line


# --- JSON ----------------------------------------------------------------------------------


class _RefusedError(ValueError):
    """Raised inside the JSON decoder's hooks; `kind` tells `_locate` what to look for."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message


def _reject_constant(name: str) -> Any:
    raise _RefusedError("constant", f"{name} is not valid JSON; write a number or null")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _RefusedError("number", f"{text} overflows to infinity; write a finite number")
    return value


def _int64(text: str) -> int:
    try:
        value = int(text)
    except ValueError:  # more digits than Python converts (4300)
        value = INT64_MAX + 1
    if not INT64_MIN <= value <= INT64_MAX:
        shown = digits_shown(text)
        raise _RefusedError("number", f"{shown} is out of range: integers must fit in 64 bits")
    return value


def _unique_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _RefusedError(
                    "key", f"duplicate key {key!r}; a key may appear once per object"
                )
            seen.add(key)
    return obj


# One JSON token of interest to `_locate`: a string, a bracket, or a number. Strings are matched
# whole, so brackets and digits inside them are skipped.
_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[{}\[\]]|-?[0-9][0-9.eE+-]*|NaN|-?Infinity')
_COLON = re.compile(r"\s*:")


def _line(text: str, pos: int) -> int:
    return text.count("\n", 0, pos) + 1


def _locate(text: str, kind: str) -> int | None:
    """The line of the first offending token of `kind` in JSON `text`. Only called once a
    problem is known (it is a slow, Python-level scan): the decoder's hooks do not see
    positions."""
    stack: list[set[str] | None] = []
    for m in _TOKEN.finditer(text):
        tok = m.group()
        first = tok[0]
        if first in "{[":
            stack.append(set() if first == "{" else None)
            if kind == "depth" and len(stack) > MAX_DEPTH:
                return _line(text, m.start())
        elif first in "}]":
            if stack:
                stack.pop()
        elif first == '"':
            keys = stack[-1] if stack else None
            if kind == "key" and keys is not None and _COLON.match(text, m.end()):
                key = json.loads(tok)
                if key in keys:
                    return _line(text, m.start())
                keys.add(key)
            elif kind == "string":
                try:
                    json.loads(tok).encode("utf-8")
                except UnicodeEncodeError:
                    return _line(text, m.start())
            elif kind == "nul" and "\x00" in json.loads(tok):
                return _line(text, m.start())
        elif tok[-1] in "Ny":  # NaN, Infinity
            if kind == "constant":
                return _line(text, m.start())
        elif kind == "number":
            try:
                value = float(tok) if any(c in tok for c in ".eE") else int(tok)
            except ValueError:
                return _line(text, m.start())
            if isinstance(value, float) and not math.isfinite(value):
                return _line(text, m.start())
            if isinstance(value, int) and not INT64_MIN <= value <= INT64_MAX:
                return _line(text, m.start())
    return None


def _check_tree(value: Any, *, nul: bool) -> str | None:
    """Walk a parsed value once: too deep ('depth'), a lone surrogate ('string'), or (only
    looked for when `nul`: the text holds the escape) a NUL character ('nul')."""
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, str):
            if nul and "\x00" in item:
                return "nul"
            if not item.isascii():
                try:
                    item.encode("utf-8")
                except UnicodeEncodeError:
                    return "string"
            continue
        if isinstance(item, dict):
            children: list[Any] = [*item.keys(), *item.values()]
        elif isinstance(item, list):
            children = item
        else:
            continue
        if depth + 1 > MAX_DEPTH:
            return "depth"
        stack.extend((c, depth + 1) for c in children if isinstance(c, str | dict | list))
    return None


_TREE_MESSAGES = {
    "depth": f"nested deeper than {MAX_DEPTH} levels; flatten the data",
    "string": "a string holds a lone UTF-16 surrogate (\\ud800-\\udfff), which is not text; "
    "escape the full surrogate pair or write the character itself",
    "nul": "a string holds a NUL character (\\u0000), which is not text (PostgreSQL cannot"
    " store it); remove it",
}


# Only the parsers turn MemoryError and RecursionError into input errors: there they come from
# the file's size or shape. Anywhere else they are bugs, and stay tracebacks.
_TOO_BIG = "too large to parse in the memory available; split the file"


# made once: `json.loads` with these hooks builds a decoder and its scanner per call, a third
# of the parse of a dataset's short lines (LoCoMo's 10,228: 0.047 to 0.030 CPU-s)
_DECODER = json.JSONDecoder(
    parse_constant=_reject_constant,
    parse_float=_finite_float,
    parse_int=_int64,
    object_pairs_hook=_unique_object,
)


def loads_json(text: str | bytes) -> Any:
    """Parse JSON strictly (see the module docstring); ParseError with the line otherwise."""
    if isinstance(text, bytes):
        text = text.decode("utf-8")
    try:
        if text.startswith("\ufeff"):  # as `json.loads` refuses it
            raise json.JSONDecodeError("Unexpected UTF-8 BOM (decode using utf-8-sig)", text, 0)
        value = _DECODER.decode(text)
    except _RefusedError as exc:
        raise ParseError(exc.message, _locate(text, exc.kind)) from None
    except json.JSONDecodeError as exc:
        # two of json's messages end in "at" ("Unterminated string starting at"): once is enough
        where = exc.msg.removesuffix(" at")
        raise ParseError(f"{where} at column {exc.colno}", exc.lineno) from None
    except RecursionError:
        raise ParseError(_TREE_MESSAGES["depth"], _locate(text, "depth")) from None
    except MemoryError:
        raise ParseError(_TOO_BIG) from None
    # a NUL can only come from its escape (JSON refuses the raw control character): the cheap
    # scan of the text spares the walk a check of every string
    nul = "\\u0000" in text
    if nul or not _plainly_fine(text):
        problem = _check_tree(value, nul=nul)
        if problem is not None:
            raise ParseError(_TREE_MESSAGES[problem], _locate(text, problem))
    return value


def _plainly_fine(text: str) -> bool:
    """True when scans of the text alone show that its parsed value passes `_check_tree`
    (a dataset's lines nearly always do, and the walk cost a tenth of a CPU-second on LoCoMo):
    fewer brackets than the depth limit, and no lone surrogate, which can only come from a
    `\\ud800`-`\\udfff` escape or from the text itself (that then fails to encode)."""
    if text.count("{") + text.count("[") > MAX_DEPTH:
        return False
    if "\\ud" in text or "\\uD" in text:
        return False
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            return False
    return True


# --- YAML ----------------------------------------------------------------------------------


class _YamlRefusedError(yaml.YAMLError):
    def __init__(self, message: str, mark: yaml.Mark | None) -> None:
        super().__init__(message)
        self.message = message
        self.line = mark.line + 1 if mark is not None else None


_MERGE_TAG = "tag:yaml.org,2002:merge"


class _BoundedLoader(yaml.SafeLoader):
    """PyYAML's safe loader with alias, depth, duplicate-key and number checks."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self.n_aliases = 0
        self.depth = 0

    def _mark(self) -> yaml.Mark | None:
        event = self.peek_event()  # type: ignore[no-untyped-call]
        return getattr(event, "start_mark", None)

    def compose_node(self, parent: yaml.Node | None, index: Any) -> yaml.Node | None:
        if self.check_event(yaml.AliasEvent):
            self.n_aliases += 1
            if self.n_aliases > MAX_ALIASES:
                raise _YamlRefusedError(
                    f"more than {MAX_ALIASES} aliases (*name); write the values out",
                    self._mark(),
                )
            return super().compose_node(parent, index)
        self.depth += 1
        try:
            if self.depth > MAX_DEPTH:
                raise _YamlRefusedError(
                    f"nested deeper than {MAX_DEPTH} levels; flatten the data",
                    self._mark(),
                )
            return super().compose_node(parent, index)
        finally:
            self.depth -= 1

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            if not isinstance(key_node, yaml.ScalarNode) or key_node.tag == _MERGE_TAG:
                continue
            key = self.construct_object(key_node)
            if key in seen:
                raise _YamlRefusedError(
                    f"duplicate key {key!r}; a key may appear once per mapping",
                    key_node.start_mark,
                )
            seen.add(key)
        return super().construct_mapping(node, deep)


def _construct_float(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> float:
    value = float(loader.construct_yaml_float(node))
    if not math.isfinite(value):
        raise _YamlRefusedError(
            f"{node.value} is not a finite number (YAML's .nan / .inf, or an overflow); "
            "write a finite number or null",
            node.start_mark,
        )
    return value


def _construct_int(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> int:
    value = int(loader.construct_yaml_int(node))
    if not INT64_MIN <= value <= INT64_MAX:
        raise _YamlRefusedError(
            f"{node.value} is out of range: integers must fit in 64 bits", node.start_mark
        )
    return value


_BoundedLoader.add_constructor("tag:yaml.org,2002:float", _construct_float)
_BoundedLoader.add_constructor("tag:yaml.org,2002:int", _construct_int)


def _expanded_size(root: yaml.Node) -> None:
    """Measure what the node graph becomes once every alias is copied out, without copying:
    each node's size is computed once and reused wherever an alias points to it. Refuses a
    recursive alias, a lone surrogate, and an expansion past MAX_EXPANDED_BYTES."""
    sizes: dict[int, int] = {}
    open_: set[int] = set()
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        key = id(node)
        if isinstance(node, yaml.ScalarNode):
            text = str(node.value)
            if not text.isascii():
                try:
                    text.encode("utf-8")
                except UnicodeEncodeError:
                    raise _YamlRefusedError(_TREE_MESSAGES["string"], node.start_mark) from None
            if "\x00" in text:  # the reader refuses a raw NUL, but not the escapes "\0", "\x00"
                raise _YamlRefusedError(_TREE_MESSAGES["nul"], node.start_mark)
            sizes[key] = len(text) + 1
            continue
        children: list[yaml.Node] = (
            [n for pair in node.value for n in pair]
            if isinstance(node, yaml.MappingNode)
            else list(node.value)
        )
        if done:
            open_.discard(key)
            size = 1 + sum(sizes[id(c)] for c in children)
            if size > MAX_EXPANDED_BYTES:
                raise _YamlRefusedError(
                    f"expands to more than {MAX_EXPANDED_BYTES // (1024 * 1024)} MB through its "
                    "aliases (*name); write the values out",
                    node.start_mark,
                )
            sizes[key] = size
            continue
        if key in sizes:
            continue
        open_.add(key)
        stack.append((node, True))
        for child in children:
            if id(child) in open_:
                raise _YamlRefusedError(
                    "an alias refers to a mapping or list that contains it (a recursive alias)",
                    child.start_mark,
                )
            if id(child) not in sizes:
                stack.append((child, False))


def _yaml_line(exc: yaml.YAMLError, text: str) -> int | None:
    # where the broken construct began (e.g. an unclosed '['), else where it was noticed
    mark = getattr(exc, "context_mark", None) or getattr(exc, "problem_mark", None)
    if mark is not None:
        return int(mark.line) + 1
    if isinstance(exc, yaml.reader.ReaderError):  # a position in the text, not a mark
        return text.count("\n", 0, exc.position) + 1
    return None


def load_yaml(text: str) -> tuple[Any, yaml.Node | None]:
    """Parse one YAML document into its value and its node tree (the nodes carry line numbers
    for later error messages); ParseError with the line otherwise."""
    try:
        loader = _BoundedLoader(text)  # the reader refuses control characters (NUL) at once
    except yaml.YAMLError as exc:
        raise ParseError(f"not valid YAML: {exc}", _yaml_line(exc, text)) from None
    try:
        node = loader.get_single_node()
        if node is None:
            return None, None
        _expanded_size(node)
        value = loader.construct_document(node)
    except _YamlRefusedError as exc:
        raise ParseError(exc.message, exc.line) from None
    except MemoryError:
        raise ParseError(_TOO_BIG) from None
    except yaml.YAMLError as exc:
        raise ParseError(f"not valid YAML: {exc}", _yaml_line(exc, text)) from None
    finally:
        loader.dispose()
    return value, node
