"""Pieces shared by the commands: the console, the results store location.

Every command imports this module, so it imports nothing heavy itself (tests/cli/test_startup.py
lists what a light command must not load): the retrieval conventions' options live in
`cli._conventions`, the report files `evaluate` and `demo` write in `cli._reports`."""

from __future__ import annotations

import os
import stat
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import suppress
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import click
from click.core import ParameterSource

from memgauge import api
from memgauge._util.files import special_file, sqlite_journals, write_refusal

if TYPE_CHECKING:
    from click.decorators import FC
    from rich.console import Console

__all__ = [
    "EXISTING",
    "EXISTING_FILE",
    "FILE",
    "OUT_DIR",
    "OUT_FILE",
    "PATH",
    "Command",
    "DefaultGroup",
    "apply_options",
    "choice_option",
    "console",
    "db_argument",
    "db_required_argument",
    "distinct_outputs",
    "given",
    "json_option",
    "open_suite_store",
    "outputs_not_read",
    "print_markdown",
    "refuse_together",
    "refuse_unwritable",
    "store_option",
    "store_option_with",
]

#: a click command's function, before click makes it a command
Command = Callable[..., None]


class _Path(click.Path):
    """click's Path, refusing an empty one: `Path("")` is the current directory, and click
    lets "" through (os.stat("") fails, so it reads as a path that does not exist yet). An
    input named "" was read as the current directory; an output written over it was
    os.replace onto "." (a traceback), or reports spilled into it."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, str) and not value:
            what = "no directory" if not self.file_okay else "no file" if not self.dir_okay else ""
            here = " (. for the current directory)" if self.dir_okay else ""
            self.fail(f"an empty path names {what or 'nothing'}; give one{here}", param, ctx)
        return super().convert(value, param, ctx)


#: the paths that options and arguments take, each given to the command as a `Path`
PATH = _Path(path_type=Path)
FILE = _Path(dir_okay=False, path_type=Path)
EXISTING = _Path(exists=True, path_type=Path)
EXISTING_FILE = _Path(exists=True, dir_okay=False, path_type=Path)


def _check_writable_under(
    path: Any, what: str, param: click.Parameter | None, ctx: click.Context | None
) -> None:
    """Fail (exit 2) unless the nearest existing ancestor of `path` (of its directory, for a
    `what` that is a file) is a directory one can write in, so that `what` can be made there."""
    probe = Path(os.fsdecode(path)).absolute()
    if what == "file":
        probe = probe.parent
    while not os.path.lexists(probe) and probe != probe.parent:
        probe = probe.parent
    if not probe.is_dir():
        raise click.BadParameter(
            f"{os.fspath(path)!r}: {os.fspath(probe)!r} is not a directory, so no "
            f"{what} can be made under it; give a {what} path",
            ctx,
            param,
        )
    if not os.access(probe, os.W_OK | os.X_OK):
        raise click.BadParameter(
            f"{os.fspath(path)!r}: cannot write in {os.fspath(probe)!r}; give a {what} you"
            " can write",
            ctx,
            param,
        )


class _OutPath(_Path):
    """A directory a command writes into, or a file it writes besides its run (`--junit`,
    `--run-out`): one that exists, or one it can make. Checked when the command line is read,
    so a path under a file or in a directory it cannot write is exit 2 before a run, not after
    it (with the run's other outputs already written)."""

    def __init__(self, what: str) -> None:
        super().__init__(file_okay=what == "file", dir_okay=what == "directory", path_type=Path)
        self.what = what

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        path = super().convert(value, param, ctx)
        _check_writable_under(path, self.what, param, ctx)
        return path


#: a directory the command writes into (made if missing)
OUT_DIR = _OutPath("directory")
#: a file the command writes (its directory made if missing)
OUT_FILE = _OutPath("file")


def distinct_outputs(
    named: Mapping[str, Path | None],
    *,
    store: str | Literal[False] | None = False,
    inputs: Mapping[str, Sequence[Path]] | None = None,
) -> None:
    """Exit 2 when two output options (`{flag: path}`, None for one not given) name the same
    path: the second would overwrite the first's file (or write a file over its directory);
    when one names the results store's file or a journal SQLite keeps beside it (`store`:
    the command's --store; False for none), which it would replace with a report, every run
    in it (or those not yet in the file) lost; or when one names a file the command reads:
    one its arguments name, or `inputs` (`{flag: paths}`). A device (/dev/null) is written,
    never replaced: any number of outputs may name it."""
    outputs_not_read(named.items(), inputs)
    seen: dict[Path, str] = {}
    kept = None if store is False else api.results_store(store).path
    if kept is not None:
        seen[kept.resolve()] = "the results store"
        for journal in sqlite_journals(kept):
            seen[journal.resolve()] = "the results store's journal"
    for flag, path in named.items():
        if path is None or special_file(path):
            continue
        key = path.resolve()
        if key in seen:
            raise click.UsageError(
                f"{seen[key]} and {flag} both name {os.fspath(path)}: give each its own path"
            )
        seen[key] = flag


def outputs_not_read(
    named: Iterable[tuple[str, Path | None]],
    inputs: Mapping[str, Sequence[Path]] | None = None,
    advice: str = "give {flag} a file of its own",
) -> None:
    """Exit 2 when an output (`(flag, path)`, None for one not given) names a file the command
    reads (`distinct_outputs`); `advice` says what to do instead."""
    read = _files_read(inputs or {})
    for flag, path in named:
        with suppress(OSError, ValueError):
            if path is not None and (label := read.get(_file_key(path))) is not None:
                raise click.UsageError(
                    f"{flag} names {os.fspath(path)}, the {label} the command reads: "
                    + advice.format(flag=flag)
                )


def _file_key(path: str | Path) -> tuple[int, int] | None:
    """The device and inode of the regular file `path` names (its links followed), or None."""
    st = os.stat(path)
    return (st.st_dev, st.st_ino) if stat.S_ISREG(st.st_mode) else None


def _files_read(inputs: Mapping[str, Sequence[Path]]) -> dict[tuple[int, int] | None, str]:
    """The regular files the current command reads ({key: what names it}): those its
    arguments name (`run SUITE_FILE`, `evaluate DATASET`), and `inputs`."""
    ctx = click.get_current_context(silent=True)
    named: list[tuple[str, Any]] = list(inputs.items())
    if ctx is not None:
        named += [
            (p.human_readable_name.strip("[]."), ctx.params.get(p.name or ""))
            for p in ctx.command.params
            if isinstance(p, click.Argument)
        ]
    read: dict[tuple[int, int] | None, str] = {}
    for label, value in named:
        for one in value if isinstance(value, tuple | list) else [value]:
            if isinstance(one, str | Path) and one:
                with suppress(OSError, ValueError):
                    if (key := _file_key(one)) is not None:
                        read[key] = label
    return read


def refuse_unwritable(flag: str, given: Path, target: Path | None = None) -> None:
    """A UsageError when the file `target` (default `given`) that `flag given` writes is one
    `atomic_writer` refuses (`write_refusal`: a directory, a read-only file, a SQLite
    database): said before the command's work (a run recorded, a verdict), not after it."""
    target = given if target is None else target
    if (refused := write_refusal(Path(os.path.realpath(target)), target)) is not None:
        raise click.UsageError(
            f"{flag} {given}: cannot write {refused.filename}: {refused.strerror}"
        )


def given(param: str) -> bool:
    """Whether the user gave the click parameter `param` (not its default)."""
    source = click.get_current_context().get_parameter_source(param)
    return source not in (ParameterSource.DEFAULT, None)


def refuse_together(first: str, second: str, why: str) -> None:
    """Two options that contradict each other, both given: a usage error (exit 2) naming both
    and why, rather than one of them silently ignored."""
    raise click.UsageError(f"{first} and {second} cannot go together: {why}")


class DefaultGroup(click.Group):
    """A group whose first argument, when it names none of its commands, goes to its
    `default` command (`bench SUBJECT` is `bench search SUBJECT`)."""

    def __init__(self, *args: Any, default: str, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.default = default

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and args[0] not in ("-h", "--help"):
            args = [self.default, *args]
        return super().parse_args(ctx, args)


def apply_options(fn: Command, options: Sequence[Callable[[Command], Command]]) -> Command:
    """`options` put on `fn` in the order listed (as stacked decorators would be)."""
    for option in reversed(options):
        fn = option(fn)
    return fn


def choice_option(
    *decls: str, choices: Sequence[str], default: str | None = None, **options: Any
) -> Callable[[FC], FC]:
    """An option taking one of `choices`; by default the first, or `default`."""
    return click.option(
        *decls,
        type=click.Choice(list(choices)),
        default=choices[0] if default is None else default,
        **options,
    )


def json_option(about: str | None = None) -> Callable[[FC], FC]:
    """`--json` (the command's `as_json`): print JSON instead of tables; `about` its help."""
    return click.option("--json", "as_json", is_flag=True, help=about)


def console(stderr: bool = False) -> Console:
    """A rich console: the terminal's width, or 160 columns when writing to a file or pipe.

    It reads no markup and no emoji codes: what is printed is data (names, messages, stored
    failures), and `[anthropic]` in `pip install 'memgauge[anthropic]'` is not a style. Words
    that need a colour are `rich.text.Text` (`report.escape.term`)."""
    from rich.console import Console  # rich, only for a command that prints with it
    from rich.table import Table

    class _Folding(Console):
        """A table's cell that does not fit its column folds onto the next line instead of
        being cut with an ellipsis: a run id cut to `20261127-1…` cannot be copied."""

        def print(self, *objects: Any, **kwargs: Any) -> None:
            for obj in objects:
                if isinstance(obj, Table):
                    for column in obj.columns:
                        if column.overflow == "ellipsis":
                            column.overflow = "fold"
            super().print(*objects, **kwargs)

        def on_broken_pipe(self) -> None:
            """`memgauge evaluate ... | head`: the reader went away. What is left to print goes
            to the null device and the command goes on to its end (its reports, its exit
            code), where rich's default ended the process with exit 1 before the reports were
            written."""
            self.quiet = True
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, (sys.stderr if self.stderr else sys.stdout).fileno())
            os.close(devnull)

    stream = sys.stderr if stderr else sys.stdout
    width = None if stream.isatty() else 160
    return _Folding(
        stderr=stderr, highlight=False, soft_wrap=True, width=width, markup=False, emoji=False
    )


def print_markdown(text: str) -> None:
    """Markdown on stdout: drawn (headings, tables, lists) when stdout is a terminal, the text
    itself when it is piped or redirected, where it goes into a file, a pull-request comment or
    a CI job summary. Whether stdout is a terminal is asked of stdout itself, not of
    FORCE_COLOR, which asks for colours and not for a different document."""
    if not sys.stdout.isatty():
        click.echo(text, nl=False)
        return
    from memgauge.report.terminal_markdown import TerminalMarkdown

    console().print(TerminalMarkdown(text), soft_wrap=False)


def store_option_with(about: str) -> Callable[[FC], FC]:
    """`--store STORE` (the command's `store_path`), with `about` as its help: a command that
    reads or writes the store its own way says so."""
    return click.option("--store", "store_path", default=None, metavar="STORE", help=about)


#: `--store`: where runs are recorded and read (precedence: flag > MEMGAUGE_STORE > default)
store_option = store_option_with(
    "Results store: a path, sqlite:///PATH, or postgresql://USER:PASSWORD@HOST:PORT/DB"
    " (default: MEMGAUGE_STORE, else MEMGAUGE_HOME/results.db)."
)


def _existing_store(ctx: click.Context, _param: click.Parameter, value: str | None) -> api.StoreURL:
    # the command takes its store as an argument: a store not there says so, not --store
    ctx.with_resource(api.store_given_as("as the STORE argument"))
    return api.require_store(value, api.SEARCHES)


#: `[STORE]`, the command's `db`: a store that must exist (a path, sqlite:///PATH or
#: postgresql://...), as the query-log commands (`logs`, `watch`) read it; left out, the one
#: every other command reads (MEMGAUGE_STORE, else MEMGAUGE_HOME/results.db)
db_argument = click.argument("db", metavar="[STORE]", required=False, callback=_existing_store)

#: `STORE`, given: for a command whose next argument would be read as the store without it
db_required_argument = click.argument("db", metavar="STORE", callback=_existing_store)


def open_suite_store(where: str | None) -> api.SuiteRunStore:
    """The suite-run store `where` names, for a command that only reads it: opened as it is,
    a UsageError when there is none (nothing is created) or when it is at another schema (see
    `engine.open_read_only`)."""
    return api.SuiteRunStore(api.results_store(where), read_only=True)
