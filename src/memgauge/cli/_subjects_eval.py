"""What `extraction` and `operations` share: a live subject from a spec, or outputs recorded
in production, one output per case."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import click

from memgauge.data.io import load_recorded
from memgauge.data.parsing import ParseError, load_yaml
from memgauge.errors import UsageError
from memgauge.report._fmt import fmt_pct as pct

__all__ = ["outputs_for", "pct", "report_options"]

C = TypeVar("C")
F = TypeVar("F", bound=Callable[..., Any])


def report_options(fn: F) -> F:
    """`--outputs TRACE`, `--output DIR`, `--concurrency N`, `--json`."""
    for option in reversed(
        [
            click.option(
                "--outputs",
                "outputs_path",
                type=click.Path(path_type=Path),
                default=None,
                help="Outputs recorded in production: JSONL of {case_id, output}.",
            ),
            click.option(
                "--output",
                "out_dir",
                type=click.Path(path_type=Path),
                default=None,
                help="Write the JSON report (every case) into this directory.",
            ),
            click.option(
                "--concurrency", type=click.IntRange(1, 256), default=4, show_default=True
            ),
            click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON."),
        ]
    ):
        fn = option(fn)
    return fn


def outputs_for(
    cases: Sequence[C],
    *,
    flag: str,
    spec_text: str | None,
    recorded: Path | None,
    build: Callable[[dict[str, Any]], Any],
    call: Callable[[Any, C], Any],
    case_id: Callable[[C], str],
) -> tuple[dict[str, Any], str]:
    """Each case's output and where they came from: `recorded` (JSONL of {case_id, output}),
    or `call(subject, case)` for the subject `build(spec)` made from `--FLAG SPEC`."""
    if (spec_text is None) == (recorded is None):
        raise UsageError(f"give --{flag} SPEC (a live {flag}) or --outputs TRACE.jsonl, not both")
    if recorded is not None:
        return load_recorded(recorded), f"recorded outputs {recorded.name}"
    try:
        spec = load_yaml(str(spec_text))[0]
    except ParseError as exc:
        raise UsageError(f"--{flag}: not a spec ({exc.message})") from None
    if not isinstance(spec, dict):
        raise UsageError(f"--{flag}: give {{kind: {{args}}}}, e.g. '{{llm: {{model: m}}}}'")
    subject = build(spec)
    outputs = {case_id(c): call(subject, c) for c in cases}
    return outputs, str(getattr(subject, "name", next(iter(spec))))
