"""Entry point: the command group, lazy command loading, and the one place errors become exit codes.

Exit codes (the README's table; evaluating commands return theirs by `memgauge.runs.outcome`):
0 success; 1 a target missed or a gate failed; 2 a user mistake (bad flag, malformed file: the
message names the file, line or field; nothing half-written); 3 something needed is unavailable
(an optional capability, an unreachable endpoint); 4 the subject under test failed; 70 an
internal error (a bug in memgauge: the traceback is shown); 130 interrupted by Ctrl-C, 143 by
`kill PID` (SIGTERM), both resumable (128 + the signal, as shells and CI runners read them).
"""

from __future__ import annotations

import atexit
import errno
import gc
import importlib
import os
import signal
import sys
import threading
import traceback
from typing import Any

import click

from memgauge._util.files import ReplaceRefusedError
from memgauge._util.gcquiet import GC_THRESHOLD, collector_paused
from memgauge._util.interrupts import as_ctrl_c, interrupted_by, reset_interruption
from memgauge._util.listing import counted
from memgauge._util.redact import redact
from memgauge._version import __version__
from memgauge.errors import (
    DataError,
    LLMError,
    MemgaugeError,
    RunInterrupted,
    SubjectError,
    UnavailableError,
    UsageError,
    command_line,
)

__all__ = ["EXIT_DATA", "cli", "main"]

EXIT_DATA = 2
EXIT_UNAVAILABLE = 3
EXIT_SUBJECT = 4
EXIT_INTERNAL = 70
EXIT_INTERRUPTED = 130
#: `kill PID`: the same clean stop as Ctrl-C, told apart by its code (128 + SIGTERM)
EXIT_TERMINATED = 143

# command name -> (module, attribute, the summary `--help` lists). Loaded on demand so
# `memgauge --help` imports no command module; tests/cli/test_startup.py checks that each
# summary is still its command's own.
_COMMANDS: dict[str, tuple[str, str, str]] = {
    "demo": (
        "memgauge.cli.demo",
        "demo",
        "Evaluate the built-in reference memory on a demo dataset, offline.",
    ),
    "evaluate": (
        "memgauge.cli.evaluate",
        "evaluate",
        "Evaluate memory search on DATASET (a dataset directory or bundle, a LoCoMo or"
        " LongMemEval file).",
    ),
    "metrics": (
        "memgauge.cli.metrics",
        "metrics",
        "Score RUN (TREC run: qid Q0 docid rank score tag) against QRELS (qid 0 docid grade).",
    ),
    "validate": (
        "memgauge.cli.validate",
        "validate",
        "Check dataset FILES (or dataset directories) and report every problem.",
    ),
    "import": (
        "memgauge.cli.importer",
        "import_",
        "Convert SRC (a LoCoMo, LongMemEval or memaudit file, a BEIR directory, or a CSV sheet"
        " of task items) into native files under --out.",
    ),
    "sample-size": (
        "memgauge.cli.samplesize",
        "sample_size",
        "Queries needed for a paired comparison to detect --delta at --sigma.",
    ),
    "schema": (
        "memgauge.cli.schema",
        "schema",
        "Write the JSON Schema of KIND files (default: suite files).",
    ),
    "run": (
        "memgauge.cli.run",
        "run",
        "Run SUITE_FILE: every subject on every task, each item recorded as it finishes.",
    ),
    "synth": (
        "memgauge.cli.synth",
        "synth",
        "Write synthetic evaluation data from MEMORIES (memories JSONL, a memaudit file, LoCoMo,"
        " LongMemEval, a dataset, or a subject's store through its dump) into --out: queries of"
        " seed 002's eight categories with graded judgments (0-3), expected answers and hard"
        " negatives, near-duplicates removed, a critic's rejects dropped, every rejection"
        " counted by reason in DATASET/synth_report.json. The dataset loads as any other and"
        " every report of it says it is synthetic.",
    ),
    "bench": (
        "memgauge.cli.bench",
        "bench",
        "Benchmark memory systems: `bench SUBJECT`, search latency under concurrent clients; `bench systems`, every installed system ranked on LoCoMo / LongMemEval with CIs, tokens and latency.",
    ),
    "runs": (
        "memgauge.cli.runs",
        "runs",
        "Suite runs in the results store: list, show, watch, export, compare, upgrade.",
    ),
    "judge": (
        "memgauge.cli.judge",
        "judge",
        "Check an LLM judge: calibrate it against people, or re-judge to measure its noise.",
    ),
    "audit": (
        "memgauge.cli.audit",
        "audit",
        "Audit an agent's memory on DATASET (memaudit JSON/JSONL, LoCoMo, LongMemEval): recall, hallucinated memories, conflict resolution, temporal order, each with n and a Wilson 95% interval.",
    ),
    "extraction": (
        "memgauge.cli.extraction",
        "extraction",
        "Score fact extraction on CASES (memgauge cases JSON/JSONL, or LoCoMo: its sessions' observations as silver facts), and on the unlabelled lines of a production trace (--outputs, with or without CASES; --tag, --sample), which the fact-enumeration judge scores from their conversation, existing memory and output alone (--judge-model or MEMGAUGE_MODEL): per case TP / FP / FN with the matched pairs; precision, recall, F1 micro and macro with 95% CIs; conflict resolution; minimalism; seed 001's targets beside them (P > 0.95, R > 0.85, F1 > 0.90, conflict and minimalism 100%).",
    ),
    "operations": (
        "memgauge.cli.operations",
        "operations",
        "Score merge decisions on CASES: heuristic tier (target 95%), operation tier (80%), LLM-judge tier (70%), each check's pass rate with a Wilson 95% interval.",
    ),
    "gate": (
        "memgauge.cli.gate",
        "gate",
        "Gate a run (an id, or a suite file: its run that completed last) against the rolling baseline of the suite's earlier runs (those that failed the gate left out).",
    ),
    "history": (
        "memgauge.cli.gate",
        "history",
        "A suite's completed runs over time (SUITE: its name or its file): per metric a sparkline of the last runs, the latest value and the rolling baseline before it.",
    ),
    "ab": (
        "memgauge.cli.ab",
        "ab",
        "Sequential A/B tests: create one, feed it paired results, read its decision.",
    ),
    "learnings": (
        "memgauge.cli.gate",
        "learnings",
        "Failure memories stored by `memgauge gate` (eval-to-learning).",
    ),
    "shadow": (
        "memgauge.cli.shadow",
        "shadow",
        "Shadow runs recorded by `memgauge.online.shadow.ShadowRunner`.",
    ),
    "flags": (
        "memgauge.cli.flags",
        "flags",
        "Feature flags: rollout share, shadowing, and the A/B test that graduates them.",
    ),
    "health": (
        "memgauge.cli.health",
        "health",
        "The latest evaluation of each kind (evaluate, demo, audit, ...) with its metrics and"
        " their 95% CIs and its drift against its suite's baseline, logging volume, open A/B"
        " tests, and the golden set's coverage of seed 002's category targets (280 queries, at"
        " least 15 per category), with a warning for each shortfall.",
    ),
    "logs": (
        "memgauge.cli.logs",
        "logs",
        "Production query logs written by `memgauge.online.querylog.QueryLog`.",
    ),
    "optimize": (
        "memgauge.cli.optimize",
        "optimize",
        "Tune a suite subject (its configuration, texts, tools or code) for one task's objective.",
    ),
    "watch": (
        "memgauge.cli.watch",
        "watch",
        "Evaluate the searches logged into STORE's query log since the last pass, and alert"
        " through a webhook when the gate's rule fires.",
    ),
    "view": (
        "memgauge.cli.view",
        "view",
        "Browse the results store in a web browser: runs, a run's grid, its items (filters, search, judge reasoning), comparisons, trends, A/B tests and shadow runs.",
    ),
    "review": (
        "memgauge.cli.review",
        "review",
        "People's labels from `memgauge view --review`: list them, export graded hits, fill an"
        " annotation pool's grades, store overrides as learnings.",
    ),
    "report": (
        "memgauge.cli.view",
        "report",
        "Write run RUN_ID (or the first characters of its id) as one self-contained HTML file: the viewer's run page and its items, no script, nothing loaded from the network (for CI artifacts and pull-request links); or, to a `.md` file, its measures and each aggregate's tables in Markdown.",
    ),
}


#: set by `run` (the console script) only: `main` called in process leaves the collector and
#: the SIGINT handler alone
_as_process = False


class _LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(_COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        target = _COMMANDS.get(cmd_name)
        if target is None:
            return None
        if _as_process and gc.isenabled() and target[0] not in sys.modules:
            # the console script's one command: its modules (a second of imports for
            # `evaluate`) are made with the cyclic collector paused, then frozen out of its
            # sight (see `run`)
            with collector_paused():
                try:
                    module = importlib.import_module(target[0])
                finally:
                    gc.freeze()
        else:
            module = importlib.import_module(target[0])
        command = getattr(module, target[1])
        assert isinstance(command, click.Command)
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        # click's own version loads every command to read its docstring: a second of imports
        # for one screen of text. The summaries kept in _COMMANDS are cut to width by click's
        # own rule (a stand-in command's short help).
        limit = formatter.width - 6 - max(len(name) for name in _COMMANDS)
        rows = [
            (name, click.Command(name, help=summary).get_short_help_str(limit))
            for name, (_, _, summary) in sorted(_COMMANDS.items())
        ]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


# every option's default is shown in its --help (click reads `show_default` from the parent
# context): said here once, not on each option; an option that hides its default says False
@click.group(
    cls=_LazyGroup,
    context_settings={"help_option_names": ["-h", "--help"], "show_default": True},
)
@click.version_option(__version__, prog_name="memgauge")
def cli() -> None:
    """memgauge: measure whether an LLM agent's memory works.

    Start with `memgauge demo`. Environment: MEMGAUGE_HOME (results store, caches; default
    ~/.memgauge).
    """


def _echo_err(message: str) -> None:
    # an error may quote an endpoint that echoed the request's key: never shown
    click.echo(redact(message), err=True)


#: how a memgauge error other than a DataError is said, and its exit code: the first that matches
_SAID: tuple[tuple[type[MemgaugeError], str, int], ...] = (
    (UsageError, "error", EXIT_DATA),
    (UnavailableError, "unavailable", EXIT_UNAVAILABLE),
    (LLMError, "LLM unavailable", EXIT_UNAVAILABLE),
    (SubjectError, "subject failed", EXIT_SUBJECT),
    (MemgaugeError, "error", EXIT_DATA),
)


def _interrupted(exc: BaseException | None) -> str | None:
    """What an interrupted run says: its id, and how to finish it (None: not a run's)."""
    if not isinstance(exc, RunInterrupted):
        return None
    if not exc.resumable:
        return (
            f"interrupted: run {exc.run_id} was kept in memory only (--no-store): nothing to resume"
        )
    return (
        f"interrupted: run {exc.run_id} is kept as cancelled; finish it with the same command and"
        f" `--resume {exc.run_id}` (`memgauge runs show {exc.run_id}` shows what is done)"
    )


def _say_interrupted(text: str) -> None:
    """Say that the command was interrupted. In the process (`run`), a Ctrl-C (or SIGTERM)
    from here on ends it at once with the same code: one sent as soon as the message shows (the
    user pressing again) would otherwise raise KeyboardInterrupt wherever the exit stands."""
    if _as_process and threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, _exit_interrupted)
        signal.signal(signal.SIGTERM, _exit_interrupted)
    _echo_err(text)


def main(argv: list[str] | None = None) -> int:
    """Run the CLI and map every memgauge error to its exit code, without a traceback; an
    interrupted command exits 128 + the signal that stopped it (`_interrupted_code`)."""
    if not _as_process:  # `run` forgot earlier signals before it set the handlers
        reset_interruption()
    code = _main(argv)
    return _interrupted_code() if code == EXIT_INTERRUPTED else code


def _interrupted_code(default: int = signal.SIGINT) -> int:
    """130 for a command Ctrl-C stopped, 143 for one `kill PID` (SIGTERM) stopped: the same
    clean stop (a run kept as cancelled, nothing half-written), told apart as a shell tells
    the signals apart."""
    return EXIT_TERMINATED if interrupted_by(default) == signal.SIGTERM else EXIT_INTERRUPTED


def _main(argv: list[str] | None) -> int:
    # a command is one short process that builds large structures (datasets, reports): the
    # cyclic collector runs in larger batches (see `_util.gcquiet`)
    gc.set_threshold(max(gc.get_threshold()[0], GC_THRESHOLD), *gc.get_threshold()[1:])
    try:
        # with standalone_mode=False click returns a command's exit code (click.exceptions.Exit)
        # instead of raising it
        with command_line():  # messages name the command's flags, not the API's keywords
            code = cli.main(args=argv, prog_name="memgauge", standalone_mode=False)
        if isinstance(code, int) and code:
            return code
    except click.exceptions.Abort as exc:
        _say_interrupted(_interrupted(exc.__cause__) or "aborted")
        return EXIT_INTERRUPTED
    except click.exceptions.Exit as exc:
        return int(exc.exit_code)
    except click.ClickException as exc:
        exc.show()
        return EXIT_DATA
    except DataError as exc:
        _show_problems(exc)
        return EXIT_DATA
    except MemgaugeError as exc:
        said, code = next((s, c) for kind, s, c in _SAID if isinstance(exc, kind))
        _echo_err(f"{said}: {exc}")
        return code
    except KeyboardInterrupt as exc:
        _say_interrupted(_interrupted(exc) or "interrupted")
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # `memgauge metrics ... | head`: the reader went away; not an error of ours.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    except OSError as exc:
        code = _os_error_code(exc)
        if code is None:
            return _internal_error()
        _echo_err(f"{'error' if code == EXIT_DATA else 'unavailable'}: {_os_error_text(exc)}")
        return code
    except Exception as exc:
        if _ctrl_c_under(exc):
            # Ctrl-C inside a library that wraps what it catches (pydantic's serializers turn
            # it into a PydanticSerializationError): an interruption, not a bug
            _say_interrupted("interrupted")
            return EXIT_INTERRUPTED
        return _internal_error()
    return 0


def _ctrl_c_under(exc: BaseException) -> bool:
    """Whether `exc` is a Ctrl-C a library wrapped: pydantic-core's serialization error for the
    KeyboardInterrupt its serializer met (chained to it by `model_dump`, named in its message
    only by `model_dump_json`: "Error calling function `_stored`: KeyboardInterrupt: "), here
    or as the cause of what was raised from it. Any other error raised while a Ctrl-C was
    being handled is a bug in that handling: exit 70 with its traceback, not hidden."""
    seen: set[int] = set()
    at: BaseException | None = exc
    while at is not None and id(at) not in seen:
        if type(at).__name__ == "PydanticSerializationError" and (
            isinstance(at.__cause__ or at.__context__, KeyboardInterrupt)
            or "KeyboardInterrupt" in str(at)
        ):
            return True
        seen.add(id(at))
        at = at.__cause__
    return False


#: problems listed at most: enough to fix a file in one pass, short enough to read
MAX_LISTED = 50


def _show_problems(exc: DataError) -> None:
    """Every problem of a bad input in one pass, by file and line (`DataError` keeps them in
    that order), the first MAX_LISTED of them listed, and how many there are."""
    for problem in exc.problems[:MAX_LISTED]:
        _echo_err(f"error: {problem}")
    more = exc.count - min(len(exc.problems), MAX_LISTED)
    if more:
        _echo_err(f"... and {counted(more, 'more problem')}, not listed")
    n = exc.count
    _echo_err(f"{counted(n, 'problem')} found; nothing was written.")


# a path the user gave that cannot be used (an output directory under a file, no permission, a
# read-only disk): their input, exit 2; a full disk: something needed is unavailable, exit 3
_PATH_ERRNOS = frozenset(
    {
        errno.ENOENT,
        errno.ENOTDIR,
        errno.EEXIST,
        errno.EISDIR,
        errno.EACCES,
        errno.EPERM,
        errno.EROFS,
        errno.ENAMETOOLONG,
        errno.ELOOP,
    }
)
_SPACE_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG})


def _os_error_code(exc: OSError) -> int | None:
    if exc.errno in _SPACE_ERRNOS:
        return EXIT_UNAVAILABLE
    if exc.errno in _PATH_ERRNOS and exc.filename is not None:
        return EXIT_DATA
    return None  # not about a path the user named: a bug until shown otherwise


def _os_error_text(exc: OSError) -> str:
    where = f"{exc.filename}" + (f" -> {exc.filename2}" if exc.filename2 else "")
    if exc.errno in _SPACE_ERRNOS:
        return f"cannot write {where}: {exc.strerror}; free some space and run again"
    if isinstance(exc, ReplaceRefusedError):
        return f"cannot use {where}: {exc.strerror}"  # which says what to do
    return (
        f"cannot use {where}: {exc.strerror}; check the path (an output path must be a "
        "directory you can write, or not exist yet)"
    )


def _internal_error() -> int:
    # a bug in memgauge, never a user mistake: the traceback is for the bug report, and the exit
    # code can never be confused with a missed target (1) or bad input (2)
    _echo_err(traceback.format_exc())
    _echo_err(
        f"internal error in memgauge {__version__} (a bug, not your input): please report it"
        " with the traceback above"
    )
    return EXIT_INTERNAL


def run(argv: list[str] | None = None) -> Any:
    """Console-script shim: the command, then the process's exit.

    What the command built and still holds goes out of the cyclic collector's sight first
    (`gc.freeze`): the interpreter's shutdown collects it again and again as it tears the
    modules down, and frees cycles nobody reads (a report's template context, 136,000 objects
    after a LoCoMo evaluate), 0.4 CPU-s of a 4 s `evaluate`; the memory is the system's again
    at exit either way. Files, the store and the logs are closed by the command and by the
    exit handlers, which still run. And the command's modules are imported with the collector
    paused, then frozen (`_LazyGroup.get_command`): the collections it made while `evaluate`'s
    modules loaded walked every class and schema made so far again and again, about 0.05
    CPU-s, and found almost nothing to free. Only here: `main` called in process (tests,
    notebooks) leaves the collector alone."""
    global _as_process
    _as_process = True
    # `kill PID` stops any command as Ctrl-C does: what it was writing removed (a dataset's
    # temporary directory, an output's temporary file), a run kept as cancelled, and exit 143
    # (Ctrl-C: 130). SIGTERM's default action ended the process where it stood (also 143, as
    # the shell reports a process killed by it), leaving them.
    reset_interruption()
    signal.signal(signal.SIGTERM, as_ctrl_c)
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:  # not SIG_IGN (nohup)
        signal.signal(signal.SIGINT, as_ctrl_c)  # as Python's own, remembering the signal
    try:
        code = main(argv)
    except KeyboardInterrupt:
        # a Ctrl-C after the command handled its own (a second one just as the first one's
        # message was given): said already
        code = _interrupted_code()
    finally:
        _as_process = False
    # an interrupted command's exit may still wait for a subject's call in a worker thread: a
    # Ctrl-C then ends the process at once (`_say_interrupted` set that up), not with the
    # KeyboardInterrupt traceback of the interpreter's thread join
    gc.freeze()
    if code in (EXIT_INTERRUPTED, EXIT_TERMINATED):
        # the threads joined, the exit handlers run (registered last, this one runs first),
        # then the interpreter's finalization puts a handler of Python's back to SIG_DFL: a
        # Ctrl-C landing there killed the process by the signal (-2, not 130) on a busy
        # machine. Ignored from here on (finalization leaves SIG_IGN as it is): the exit code
        # is decided, and nothing is left that a Ctrl-C should stop
        atexit.register(_deaf_to_signals)
    sys.exit(code)


def _deaf_to_signals() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)


def _exit_interrupted(signum: int, _frame: Any) -> None:
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(_interrupted_code(signum))  # the code of the signal that stopped the command


if __name__ == "__main__":  # pragma: no cover
    run()
