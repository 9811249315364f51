"""Line-aware reading of JSONL, JSON and YAML files into pydantic models.

Every problem is collected with its file, line and field; nothing stops at the first one. A
UTF-8 byte-order mark is accepted and stripped (Windows editors write one); any other
non-UTF-8 byte is reported with its line and byte offset. Lines longer than `max_line_bytes`
are reported and skipped without being held in memory whole. The text itself is parsed by
`memgauge.data.parsing`, the one bounded reader (finite numbers, no repeated keys, bounded
nesting and YAML aliases), whose refusals become Problems with the file and line.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from memgauge._util.files import atomic_write_text
from memgauge._util.gcquiet import kept_unwalked
from memgauge.data.parsing import ParseError, load_yaml, loads_json
from memgauge.errors import DataError, Problem

__all__ = [
    "DEFAULT_MAX_LINE_BYTES",
    "At",
    "Records",
    "decode_text",
    "existing",
    "iter_jsonl",
    "line_of",
    "load_records",
    "load_structured",
    "parse_yaml",
    "problems_from_validation",
    "read_records",
    "records_text",
    "validate_items",
    "write_jsonl",
]

M = TypeVar("M", bound=BaseModel)
DEFAULT_MAX_LINE_BYTES = 16 * 1024 * 1024
_BOM = b"\xef\xbb\xbf"

_HINTS = {
    "grade": "use 0 (not relevant), 1 (marginal), 2 (relevant) or 3 (highly relevant)",
    "tier": "use constitutional, critical, important, normal or temporary",
    "source": "use manual, implicit, bootstrapped or validated",
    "conversation": "give the turns to extract from, [{role: user, content: ...}] (a case "
    "where nothing should be kept has turns and no expected_facts)",
}
#: what to write where a required field is missing (a suite task's evaluators)
_MISSING_HINTS = {
    "evaluators": "list what scores each item, e.g. evaluators: [{retrieval: nDCG@10}] for a "
    "retrieval task, [contains] for expected output, [extraction] for extraction cases, "
    "[operation-checks] for merge decisions (`memgauge schema` lists them)",
}


def problems_from_validation(
    exc: ValidationError, file: str, line: int | None, prefix: str = ""
) -> list[Problem]:
    """One Problem per pydantic error, with the dotted field path and a hint where we have one."""
    out = []
    for err in exc.errors():
        loc = ".".join(str(p) for p in err["loc"])
        field = f"{prefix}.{loc}" if prefix and loc else (prefix or loc or None)
        msg = err["msg"].removeprefix("Value error, ")  # a validator's own words
        if err["type"] == "extra_forbidden":
            msg = "unknown field; remove it or check its spelling"
        elif err["type"] == "missing":
            msg = "required field is missing"
            hint = _MISSING_HINTS.get(str(err["loc"][-1]) if err["loc"] else "")
            if hint:
                msg = f"{msg}; {hint}"
        else:
            given = err.get("input")
            if not isinstance(given, dict | list):
                msg = f"{msg} (got {given!r})"
        last = str(err["loc"][-1]) if err["loc"] else ""
        # a validator's own words say what to write (a blank turn needs no turns' shape)
        if last in _HINTS and err["type"] not in ("missing", "extra_forbidden", "value_error"):
            msg = f"{msg}; {_HINTS[last]}"
        out.append(Problem(file, line, field, msg))
    return out


def existing(path: str | Path, noun: str = "file") -> tuple[Path, str]:
    """`path`, and its name as a problem names it; DataError when there is no such `noun` (or
    the path is a directory, FIFO or device)."""
    p = Path(path)
    if not p.is_file():
        what = f"no such {noun}"
        if p.exists():
            what = f"not a regular file (a directory, FIFO or device); pass a {noun}"
        raise DataError(Problem(str(p), None, None, what))
    return p, str(p)


def decode_text(data: bytes, file: str) -> str:
    """Decode UTF-8 (BOM stripped); raise DataError naming the line of a bad byte, or of a NUL
    byte (valid UTF-8, but no text: a binary or UTF-16 file; PostgreSQL refuses it in text)."""
    if data.startswith(_BOM):
        data = data[len(_BOM) :]
    nul = data.find(b"\x00")
    if nul >= 0:
        raise DataError(
            Problem(
                file,
                data.count(b"\n", 0, nul) + 1,
                None,
                f"a NUL byte at offset {nul}: not a text file (binary, or UTF-16: re-save it as"
                " UTF-8)",
            )
        )
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise DataError(
            Problem(
                file,
                line,
                None,
                f"not UTF-8: byte 0x{data[exc.start]:02x} at offset {exc.start}; "
                "re-save the file as UTF-8 (e.g. iconv -f latin1 -t utf-8)",
            )
        ) from None


def iter_jsonl(
    path: Path, problems: list[Problem], max_line_bytes: int = DEFAULT_MAX_LINE_BYTES
) -> Iterator[tuple[int, Any]]:
    """Yield (line number, parsed JSON) per non-blank line; append problems for bad lines."""
    file = str(path)
    with open(path, "rb") as fh:
        lineno = 0
        while True:
            raw = fh.readline(max_line_bytes + 1)
            if not raw:
                break
            lineno += 1
            if len(raw) > max_line_bytes and not raw.endswith(b"\n"):
                while True:  # skip the rest of the oversized line without keeping it
                    rest = fh.readline(1 << 20)
                    if not rest or rest.endswith(b"\n"):
                        break
                problems.append(
                    Problem(
                        file,
                        lineno,
                        None,
                        f"line is longer than {max_line_bytes:,} bytes, memgauge's limit for"
                        " one record: split the record (e.g. a long conversation into sessions)",
                    )
                )
                continue
            if lineno == 1 and raw.startswith(_BOM):
                raw = raw[len(_BOM) :]
            if not raw.strip():
                continue
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                problems.append(
                    Problem(
                        file,
                        lineno,
                        None,
                        f"not UTF-8: byte 0x{raw[exc.start]:02x} at column {exc.start + 1}; "
                        "re-save the file as UTF-8",
                    )
                )
                continue
            try:
                # without its newline: a line cut off mid-value is refused at its own last
                # column, not at column 1 of a next line it does not have
                yield lineno, loads_json(text.rstrip("\r\n"))
            except ParseError as exc:
                problems.append(Problem(file, lineno, None, f"not valid JSON: {exc.message}"))


def parse_yaml(text: str, file: str) -> tuple[Any, yaml.Node | None]:
    """Parse YAML once into both the value and its node tree (the nodes carry line numbers
    for error messages). Raises DataError with the line of a syntax error or of anything the
    bounded reader refuses (an alias bomb, a repeated key, `.nan`)."""
    try:
        return load_yaml(text)
    except ParseError as exc:
        raise DataError(Problem(file, exc.line, None, exc.message)) from None


def line_of(node: yaml.Node | None, loc: tuple[Any, ...]) -> int | None:
    """The line (1-based) of the deepest node of a parsed YAML document along `loc` (keys and
    list indexes), for error messages; None without a node."""
    line = node.start_mark.line + 1 if node is not None else None
    for part in loc:
        at: yaml.Node | None = None  # where the part is written: a key's line, or an item's
        nxt: yaml.Node | None = None
        if isinstance(node, yaml.MappingNode):
            found = next(
                ((k, v) for k, v in node.value if getattr(k, "value", None) == str(part)), None
            )
            if found is not None:
                at, nxt = found
        elif (
            isinstance(node, yaml.SequenceNode) and isinstance(part, int) and part < len(node.value)
        ):
            at = nxt = node.value[part]
        if at is None or nxt is None:
            break
        node = nxt
        line = at.start_mark.line + 1
    return line


def load_structured(path: Path, *, empty_ok: bool = False) -> tuple[Any, dict[int, int]]:
    """Parse a whole JSON or YAML file; returns the data and, for a top-level YAML list or
    JSON lines, the line of each item. JSON lines (a `.jsonl` name, one line or many, or a
    `.json` file holding them) are read as the list of their records. Raises DataError on a
    missing file, an empty one (unless `empty_ok`: then the data is None) and on syntax errors
    (with line)."""
    path, file = existing(path)
    text = decode_text(path.read_bytes(), file)
    if not text.strip():
        if empty_ok:
            return None, {}
        raise DataError(Problem(file, None, None, "file is empty; it must hold a record or a list"))
    if path.suffix.lower() in (".yaml", ".yml"):
        value, node = parse_yaml(text, file)
        lines: dict[int, int] = {}
        if isinstance(node, yaml.SequenceNode):
            lines = {i: item.start_mark.line + 1 for i, item in enumerate(node.value)}
        return value, lines
    if path.suffix.lower() == ".jsonl":  # one line too: one record, not one document
        return _lines_read(path)
    try:
        return loads_json(text), {}
    except ParseError as exc:
        records = _json_lines(path, text, exc)
        if records is not None:
            return records
        raise DataError(Problem(file, exc.line, None, f"not valid JSON: {exc.message}")) from None


def _json_lines(path: Path, text: str, exc: ParseError) -> tuple[list[Any], dict[int, int]] | None:
    """A `.json` file that holds JSON lines (one object a line, as many tools' exports and an
    earlier memgauge's `review export --out x.json` write them), read as their list with each
    record's line; None when the first record is not one whole line (then the file is JSON
    with an error where `exc` says). A bad line of such a file is a DataError naming its line,
    as in a `.jsonl` file."""
    first = text.lstrip("\ufeff \t\r\n").split("\n", 1)[0]
    if exc.line is None or exc.line < 2 or not first.rstrip().endswith("}"):
        return None
    try:
        loads_json(first)
    except ParseError:
        return None
    return _lines_read(path)


def _lines_read(path: Path) -> tuple[list[Any], dict[int, int]]:
    """The records of JSON lines `path` and the line of each; DataError naming each bad line."""
    problems: list[Problem] = []
    found = list(iter_jsonl(path, problems))
    if problems:
        raise DataError(problems)
    return [record for _, record in found], {i: line for i, (line, _) in enumerate(found)}


@dataclass(frozen=True)
class At:
    """Where a record is: its line (JSONL, a YAML list) or None, and its place in a list
    (`[3]`, `judgments[3]`; empty for a JSONL line, which the line names)."""

    line: int | None
    place: str = ""

    def field(self, key: str | None = None) -> str | None:
        """The Problem field of `key` in this record (`[3].id`, `id`), or the record's place."""
        if key is None:
            return self.place or None
        return f"{self.place}.{key}" if self.place else key

    def name(self) -> str:
        """How a message names the record: `line 4`, `[3]`."""
        return f"line {self.line}" if self.line is not None else self.place or "a record"


@dataclass
class Records(Generic[M]):
    """A list of records read whole, valid or not: each valid record where it is, the id of
    every record that names one (valid or not: a cross-reference to it is not dangling), the
    problems, and whether every record was read far enough to tell its id (when not, a check
    that an id exists cannot be made)."""

    file: str
    valid: list[tuple[At, M]] = field(default_factory=list)
    ids: list[tuple[At, str]] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    complete: bool = True

    @property
    def records(self) -> list[M]:
        """The valid records, in file order."""
        return [r for _, r in self.valid]

    def duplicate_ids(self, what: str = "") -> list[Problem]:
        """A problem at each repeat of an id (every record's, valid or not), naming where it
        first appeared: `duplicate id 'm1' (first at line 1)`."""
        first: dict[str, At] = {}
        out = []
        for at, rid in self.ids:
            if rid in first:
                msg = f"duplicate {what + ' ' if what else ''}id {rid!r} (first at "
                out.append(
                    Problem(self.file, at.line, at.field("id"), f"{msg}{first[rid].name()})")
                )
            else:
                first[rid] = at
        return out


def validate_items(
    items: Iterable[tuple[At, Any]], model: type[M], file: str, records: Records[M] | None = None
) -> Records[M]:
    """Validate each item on its own into `records` (a new one by default): a bad record is a
    problem where it is, and the others are still read."""
    out = records if records is not None else Records[M](file)
    keyed = "id" in model.model_fields
    for at, item in items:
        if not isinstance(item, dict):
            out.problems.append(
                Problem(
                    file,
                    at.line,
                    at.field(),
                    f"expected an object with fields, got {type(item).__name__}",
                )
            )
            out.complete = False
            continue
        rid = item.get("id")
        if isinstance(rid, str):
            out.ids.append((at, rid))
        elif keyed:
            out.complete = False
        try:
            out.valid.append((at, model.model_validate(item)))
        except ValidationError as exc:
            out.problems.extend(problems_from_validation(exc, file, at.line, at.place))
    return out


@kept_unwalked()
def load_records(path: str | Path, model: type[M], *, key: str | None = None) -> Records[M]:
    """Read records of `model` from a JSONL, JSON (list, or object with the list under `key`)
    or YAML file, every record on its own: see `Records`. A file that cannot be read at all
    (missing, not UTF-8 JSON or YAML, not a list) raises DataError. The records live on (a
    dataset's): made with the cyclic collector paused, none of them is walked by it on the way
    (a LoCoMo dataset: 3-4 collections of the first generation, about 0.01-0.02 CPU-s)."""
    p, file = existing(path)
    out = Records[M](file)
    if p.suffix.lower() == ".jsonl":
        items = [(At(line), obj) for line, obj in iter_jsonl(p, out.problems)]
        if out.problems:  # a line that is not JSON: its record, and its id, are unknown
            out.complete = False
        elif not items:
            out.problems.append(Problem(file, None, None, "file has no records; add one per line"))
    else:
        value, lines = load_structured(p)
        if key is not None and isinstance(value, dict) and key in value:
            value = value[key]
        if not isinstance(value, list):
            raise DataError(
                Problem(file, None, key, f"expected a list of records, got {type(value).__name__}")
            )
        if not value:
            out.problems.append(Problem(file, None, key, "no records; add at least one"))
        items = [(At(lines.get(i), f"[{i}]"), obj) for i, obj in enumerate(value)]
    return validate_items(items, model, file, out)


def read_records(path: str | Path, model: type[M], *, key: str | None = None) -> list[M]:
    """Read records of `model` from a JSONL, JSON (list, or object with list under `key`) or
    YAML file. Raises DataError listing every problem."""
    loaded = load_records(path, model, key=key)
    if loaded.problems:
        raise DataError(loaded.problems)
    return loaded.records


def records_text(path: str | Path, lines: Sequence[str]) -> str:
    """The JSON texts `lines` (one record each) as a file named `path` is read back by
    `read_records`: JSON lines for `.jsonl`, else a JSON list, a record a line (YAML reads it
    too). JSON lines under another name would not read back."""
    if Path(path).suffix.lower() == ".jsonl":
        return "".join(line + "\n" for line in lines)
    return "[\n" + ",\n".join(lines) + "\n]\n" if lines else "[]\n"


def write_jsonl(path: str | Path, records: Iterable[BaseModel]) -> None:
    """Write records one per line (fields at their defaults left out), atomically."""
    lines = [r.model_dump_json(exclude_defaults=True) for r in records]
    atomic_write_text(path, "".join(line + "\n" for line in lines))
