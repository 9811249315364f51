"""Seed 004's script evaluator, done safely.

The command is an argument vector, never shell text: a string is split with `shlex` and run
without a shell, so nothing in a model's output can become a command. The output reaches the
script by one of three routes:

- `stdin` (default): written to the script's standard input;
- `file`: written to a temporary file whose path is in `MEMGAUGE_OUTPUT_FILE` and replaces the
  placeholder `{output_file}` in the arguments;
- `env`: in the environment variable `MEMGAUGE_OUTPUT`.

`MEMGAUGE_EXPECTED` and `MEMGAUGE_INPUT` carry the item's expected value and input (JSON when not
text). Exit code 0 = pass. If the last non-empty line of stdout is a number in [0, `scale`] it
is the score, divided by `scale` (seed 004's scripts print 0-100: use `scale: 100`); otherwise
the score is 1 for a pass and 0 for a fail. A timeout, a command that cannot start, or a score
outside the scale is a recorded failure, not a score. stderr is kept. A program that cannot be
found at all is refused before a run starts (`prepare`: exit 2, nothing written).
"""

from __future__ import annotations

import json
import math
import os
import shlex
import shutil
import signal
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Literal

from memgauge.errors import UsageError
from memgauge.scorers.base import EvalContext, Score

__all__ = ["ScriptEvaluator"]

_KEEP = 4000  # characters of stdout / stderr kept per item


def _text(value: Any) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


@dataclass(frozen=True)
class ScriptEvaluator:
    """Run a script on the output; see the module docstring for the contract.

    Args:
        command: the script to run (an argument list, or a string split as a POSIX shell
            would; no shell ever runs); `{output_file}` is replaced when `via` is `file`.
        via: how the output reaches the script: `stdin`, `file` (a temporary file named in
            MEMGAUGE_OUTPUT_FILE) or `env` (MEMGAUGE_OUTPUT).
        timeout: seconds the script may run on one item before it is killed (a recorded
            failure).
        cwd: the script's working directory; default: the suite file's directory.
        scale: the top of the score the script prints, which is divided by it (100 for a
            script that prints 0-100).
    """

    command: str | tuple[str, ...] | list[str] = ()
    via: Literal["stdin", "file", "env"] = "stdin"
    timeout: float = 30.0
    cwd: str | None = None
    scale: float = 1.0
    name: ClassVar[str] = "script"

    def __post_init__(self) -> None:
        if self.via not in ("stdin", "file", "env"):
            raise UsageError(f"script: via is stdin, file or env, got {self.via!r}")
        if not self.argv():
            raise UsageError("script: command is empty")
        if self.timeout <= 0:
            raise UsageError("script: timeout must be positive")
        if not (math.isfinite(self.scale) and self.scale > 0):
            raise UsageError("script: scale must be a positive number (1, or 100 for 0-100)")

    def prepare(self) -> None:
        """Before a run (`runs.plan.prepare_evaluators`): a program that cannot be found is a
        mistake in the suite, exit 2 before anything is written, not a failure on every item.
        A name with no slash is looked up on PATH; a path is read from `cwd` (a suite's
        directory), as the run reads it."""
        program = self.argv()[0]
        if "{output_file}" in program:
            return  # made per item
        if os.sep in program or (os.altsep is not None and os.altsep in program):
            where = Path(self.cwd or ".") / program
            if not (where.is_file() and os.access(where, os.X_OK)):
                raise UsageError(
                    f"script: cannot run {program!r}: no executable file at {where}; a relative"
                    " path is read from the suite's directory"
                )
        elif shutil.which(program) is None:
            raise UsageError(
                f"script: cannot run {program!r}: no such program on PATH; give its path, or"
                " install it"
            )

    def argv(self) -> list[str]:
        """The argument vector (a string command is split like a POSIX shell would, but no
        shell ever runs)."""
        if isinstance(self.command, str):
            return shlex.split(self.command)
        return [str(a) for a in self.command]

    def evaluate(self, ctx: EvalContext) -> Score:
        output = _text(ctx.output)
        env = {
            **os.environ,
            "MEMGAUGE_EXPECTED": _text(ctx.expected),
            "MEMGAUGE_INPUT": _text(ctx.input),
        }
        argv = self.argv()
        stdin_data: str | None = None
        tmp: Path | None = None
        try:
            if self.via == "stdin":
                stdin_data = output
            elif self.via == "env":
                env["MEMGAUGE_OUTPUT"] = output
            else:
                fd, name = tempfile.mkstemp(prefix="memgauge-output-", suffix=".txt")
                tmp = Path(name)
                with os.fdopen(fd, "w", encoding="utf-8") as fh:
                    fh.write(output)
                env["MEMGAUGE_OUTPUT_FILE"] = name
                argv = [a.replace("{output_file}", name) for a in argv]
            return self._run(argv, env, stdin_data)
        finally:
            if tmp is not None:
                tmp.unlink(missing_ok=True)

    def _run(self, argv: list[str], env: dict[str, str], stdin_data: str | None) -> Score:
        try:
            proc = subprocess.Popen(
                argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=env,
                cwd=self.cwd,
                text=True,
                encoding="utf-8",
                errors="replace",
                start_new_session=True,  # its own process group: a timeout kills its children too
            )
        except OSError as exc:
            return Score.failure(f"script: cannot run {argv[0]!r}: {exc.strerror or exc}")
        try:
            out, err = proc.communicate(stdin_data, timeout=self.timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            out, err = proc.communicate()
            return Score.failure(
                f"script: timed out after {self.timeout:g} s",
                stdout=out[-_KEEP:],
                stderr=err[-_KEEP:],
            )
        except BrokenPipeError:
            out, err = proc.communicate()
        detail = {"exit_code": proc.returncode, "stdout": out[-_KEEP:], "stderr": err[-_KEEP:]}
        passed = proc.returncode == 0
        lines = [ln.strip() for ln in out.splitlines() if ln.strip()]
        value = 1.0 if passed else 0.0
        how = "exit code"
        if lines:
            try:
                parsed = float(lines[-1])
            except ValueError:
                parsed = None
            if parsed is not None:
                if not math.isfinite(parsed) or not 0.0 <= parsed <= self.scale:
                    hint = "; set scale: 100 for scripts that print 0-100" if parsed <= 100 else ""
                    return Score.failure(
                        f"script: score {lines[-1]!r} on the last line is outside "
                        f"[0, {self.scale:g}]{hint}",
                        **detail,
                    )
                value, how = parsed / self.scale, "last line of stdout"
        reason = f"exit code {proc.returncode}; score {value:g} from the {how}"
        if err.strip():
            reason += f"; stderr: {err.strip().splitlines()[-1][:200]}"
        return Score(value=value, passed=passed, reason=reason, detail=detail)
