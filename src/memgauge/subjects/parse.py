"""The `-s` / `--system` grammar: a short string (or a spec file) into subject specs.

Forms:
- `lexical`, `dense`, `hybrid`: the reference memory in that mode;
- `NAME:key=value,key=value`: the same with settings (`hybrid:k_rrf=10,candidates=100`);
  `reference:mode=dense,embedder=openai:text-embedding-3-small` for the embedder too;
- `python:package.module:factory` (any Python object with reset/ingest/search);
- `http://host:port` (a service implementing `docs/http-subject.openapi.yaml`);
- `mcp:COMMAND` (an MCP memory server over stdio; knowledge-graph tools by default), or
  `mcp:https://HOST/mcp` (one over Streamable HTTP, through the MCP SDK);
- `subprocess:COMMAND` (any program speaking the JSON-lines protocol of
  `memgauge.subjects.subprocess_jsonl`);
- a `.yaml`/`.yml`/`.json` file holding a spec or a list of specs: `{reference: {mode: hybrid,
  ...}}`, `{python: {target: pkg.mod:factory, kwargs: {...}}}`, `{subprocess: {command: [...],
  timeout: 60}}`;
- any of these followed by `@LABEL` to name the system in reports.

Every spec is checked against its kind's argument model here, before anything is built: an
unknown or misspelt key is a UsageError naming the flag (or a DataError naming the spec file,
its line and the key).
"""

from __future__ import annotations

import difflib
import re
from pathlib import Path
from typing import Any

import yaml

from memgauge._util.builtins import REFERENCE_MODES
from memgauge._util.numbers import parse_finite_float, parse_int
from memgauge._util.registry import SpecProblem
from memgauge.data.jsonio import decode_text, line_of, parse_yaml
from memgauge.data.parsing import ParseError, load_yaml
from memgauge.errors import DataError, MemgaugeError, Problem, UsageError, argument
from memgauge.subjects.registry import SUBJECTS, check_subject

__all__ = ["check_suite_subject", "one_spec", "parse_system", "write_path_spec"]

#: what a `-s` text may start with: a mistyped one is answered with the nearest
_FORMS = (*REFERENCE_MODES, "reference", "python", "http", "https", "mcp", "subprocess")


def _value(text: str) -> Any:
    lowered = text.lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    # strict ASCII numbers: Python's int() would read `1_0` as 10 and float() `nan` as NaN
    for parse in (parse_int, parse_finite_float):
        try:
            return parse(text)
        except ValueError:
            pass
    return text


def _flag_error(option: str, text: str, problems: list[SpecProblem]) -> UsageError:
    return UsageError(f"{option} {text!r}: " + "; ".join(str(p) for p in problems))


def _spec_file(path: Path, label: str | None) -> list[tuple[str, dict[str, Any]]]:
    """The subject specs of a YAML/JSON file; DataError naming its line and key."""
    file = str(path)
    if not path.is_file():
        raise DataError(Problem(file, None, None, "no such subject spec file"))
    # YAML is a superset of JSON: one parser gives both their line numbers
    loaded, node = parse_yaml(decode_text(path.read_bytes(), file), file)
    specs = loaded if isinstance(loaded, list) else [loaded]
    if not specs:
        raise DataError(Problem(file, 1, None, "the file lists no subject; give at least one spec"))
    many = isinstance(loaded, list)
    out: list[tuple[str, dict[str, Any]]] = []
    problems: list[Problem] = []
    for i, spec in enumerate(specs):
        where: tuple[int, ...] = (i,) if many else ()
        if not (isinstance(spec, dict) and len(spec) == 1 and next(iter(spec)) in SUBJECTS):
            kinds = SUBJECTS.names()
            key = next(iter(spec)) if isinstance(spec, dict) and len(spec) == 1 else None
            near = difflib.get_close_matches(str(key), kinds, n=1, cutoff=0.6) if key else []
            problems.append(
                Problem(
                    file,
                    line_of(node, where),
                    None,
                    (f"{key!r} is no subject kind (did you mean {near[0]!r}?); " if near else "")
                    + f"entry {i} must be one of {{reference: {{...}}}}, {{python: {{target: ...}}}}, "
                    f"{{subprocess: {{command: ...}}}}, ... (kinds: {', '.join(kinds)});"
                    f" got {spec!r}",
                )
            )
            continue
        for p in check_subject(spec):
            loc = (*where, *p.loc)
            problems.append(Problem(file, line_of(node, loc), ".".join(map(str, loc)), p.message))
        ((kind, raw),) = spec.items()
        sub_args = dict(raw or {})
        name = label or (
            f"reference-{sub_args.get('mode', 'hybrid')}" if kind == "reference" else kind
        )
        out.append((name if len(specs) == 1 else f"{name}-{i}", {kind: sub_args}))
    if problems:
        raise DataError(problems)
    return out


def parse_system(text: str, option: str = "--system") -> list[tuple[str, dict[str, Any]]]:
    """Turn one `--system` value into (label, spec) pairs, each checked against its kind's
    arguments; UsageError naming `option` if malformed (DataError for a spec file)."""
    specs = _parse(text, option)
    for _, spec in specs:
        problems = check_subject(spec)
        if problems:
            raise _flag_error(option, text, problems)
    return specs


def _python_arguments(target: str) -> str:
    """What to write instead of arguments after a `python:` target (`mod:Factory:key=value`)."""
    found = re.match(r"[^:]+:[\w.]+", target)
    factory = found.group(0) if found else target.partition("=")[0]
    args: dict[str, Any] = {}
    for pair in re.split(r"[,:]", target[len(factory) :]):
        key, eq, value = pair.partition("=")
        if eq and key.strip():
            args[key.strip()] = _value(value.strip())
    flow = _flow({"python": {"target": factory, "kwargs": args}})
    return (
        "a python: target takes no arguments on the command line; write its spec in a file "
        f"and give the file to -s: {flow}"
    )


def _parse(text: str, option: str) -> list[tuple[str, dict[str, Any]]]:
    label = None
    if text.endswith("@"):
        raise UsageError(f"{option} {text}: the label after @ is empty")
    body, at, after = text.rpartition("@")
    # in a command (mcp:, subprocess:) `@LABEL` ends the text, right after it, and names no
    # path: the @ of an npm scope (`mcp:npx -y @modelcontextprotocol/server-memory`) follows a
    # space and has a "/". Elsewhere the last @ starts the label, whatever it holds.
    command = text.startswith(("mcp:", "subprocess:"))
    if at and body and (not command or not (body[-1].isspace() or re.search(r"[\s/]", after))):
        text, label = body, after
    path = Path(text)
    if path.suffix.lower() in (".yaml", ".yml", ".json"):
        return _spec_file(path, label)
    if text.startswith("python:"):
        target = text.removeprefix("python:")
        if "=" in target:
            raise UsageError(f"{option} {text!r}: {_python_arguments(target)}")
        return [(label or text, {"python": {"target": target}})]
    if text.startswith(("http://", "https://")):
        return [(label or "http", {"http": {"base_url": text}})]
    if text.startswith("mcp:"):
        target = text.removeprefix("mcp:")
        if target.startswith(("http://", "https://")):  # a Streamable HTTP server
            return [(label or "mcp", {"mcp": {"url": target}})]
        return [(label or "mcp", {"mcp": {"command": target}})]
    if text.startswith("subprocess:"):
        return [
            (label or "subprocess", {"subprocess": {"command": text.removeprefix("subprocess:")}})
        ]
    name, _, settings = text.partition(":")
    args: dict[str, Any] = {}
    if name in REFERENCE_MODES:
        args["mode"] = name
    elif name != "reference":
        near = difflib.get_close_matches(name.lower(), _FORMS, n=1, cutoff=0.6)
        raise UsageError(
            f"{option} {text!r}: unknown system {name!r}"
            + (f" (did you mean {near[0]!r}?)" if near else "")
            + "; use lexical, dense, hybrid, reference:KEY=VALUE,..., python:MODULE:FACTORY, "
            "http://HOST:PORT, mcp:COMMAND, subprocess:COMMAND or a YAML/JSON spec file"
        )
    if settings:
        for pair in settings.split(","):
            key, eq, value = pair.partition("=")
            if not eq or not key.strip():
                raise UsageError(f"{option} {text!r}: {pair!r} is not KEY=VALUE")
            args[key.strip()] = _value(value.strip())
    default_label = name if not settings else f"{name}({settings})"
    return [(label or default_label, {"reference": args})]


def one_spec(text: str, option: str) -> dict[str, Any]:
    """The spec of the single subject `text` names (a `--system` value), for an option that
    takes exactly one; UsageError otherwise."""
    specs = parse_system(text, option)
    if len(specs) != 1:
        raise UsageError(f"{option} {text}: give one memory subject, not {len(specs)}")
    return specs[0][1]


#: the short kinds of `--extractor` / `--decider` -> subject kinds
_WRITE_KINDS = {
    "extractor": {"llm": "llm-extractor", "memory": "memory-extractor"},
    "decider": {"llm": "llm-decider", "heuristic": "heuristic-decider"},
}


def write_path_spec(role: str, text: str, keyword: str = "spec") -> dict[str, Any]:
    """The subject spec of `--extractor SPEC` or `--decider SPEC` (YAML flow text such as
    `{llm: {model: m}}`, `{heuristic: {}}`, `{python: {target: pkg.mod:make}}`; a memory
    extractor is `{memory: {mem0: {...}}}`); UsageError naming the flag in a command, else
    the Python `keyword` the text was given as (`errors.argument`)."""
    flag = argument(keyword, flag=f"--{role}")
    try:
        spec = load_yaml(text)[0]
    except ParseError as exc:
        raise UsageError(f"{flag}: not a spec ({exc.message})") from None
    if not isinstance(spec, dict) or len(spec) != 1:
        raise UsageError(f"{flag}: give {{kind: {{args}}}}, e.g. '{{llm: {{model: m}}}}'")
    ((kind, args),) = spec.items()
    short = _WRITE_KINDS[role]
    if kind == "memory" and role == "extractor":
        kind, args = "memory-extractor", {"memory": args}
    kind = short.get(str(kind), str(kind))
    allowed = {*short.values(), "python"}  # memory-extractor is among the values
    if kind not in allowed:
        names = ", ".join(sorted({*short, "python"}))
        raise UsageError(f"{flag}: unknown kind {next(iter(spec))!r}; use {names}")
    built = {kind: dict(args or {})}
    problems = check_subject(built)
    if problems:
        raise _flag_error(flag, text, problems)
    return built


def check_suite_subject(spec: Any) -> list[SpecProblem]:
    """`check_subject` for a suite's `subjects:` entry: a `--system` string where a spec belongs
    (`lexical`) is refused with the spec it stands for."""
    problems = check_subject(spec)
    if problems and isinstance(spec, str):
        meant = _spec_of_flag(spec)
        if meant is not None:
            return [
                SpecProblem(p.loc, f"{p.message}, which as a spec is {meant}") for p in problems
            ]
    return problems


def _spec_of_flag(text: str) -> str | None:
    """The spec a `--system` value names, in YAML flow style; None if it names none or several."""
    try:
        specs = parse_system(text)
    except MemgaugeError:
        return None
    if len(specs) != 1:
        return None
    return _flow(specs[0][1])


def _flow(spec: dict[str, Any]) -> str:
    """A spec in YAML's flow style on one line, as a user writes it in a suite file."""
    return yaml.safe_dump(spec, default_flow_style=True, width=1000, sort_keys=False).strip()
