"""The audit's files: `results.json` (metrics, counts, every probe), `memaudit.json` and
`report.md` (the audit aggregate's shapes: the metrics, then every probe with its question,
expected and actual answer). The agent's
answers, the questions made from the dataset and every name are untrusted: in `report.md` they
go through `escape.md_text` (no raw HTML, no table broken by a `|` or a line break)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from memgauge._util.files import atomic_write_text
from memgauge._util.jsonout import dumps_strict
from memgauge.report.escape import md_text
from memgauge.report.shapes import Section
from memgauge.report.shapes_markdown import sections_markdown

__all__ = [
    "AUDIT_FILES",
    "MEMAUDIT_METRICS",
    "js_timestamp",
    "memaudit_result",
    "source_lines",
    "write_audit",
]

#: memgauge's metric names -> memaudit's `AuditMetrics` keys (seed 003)
MEMAUDIT_METRICS = {
    "recall_accuracy": "recallAccuracy",
    "hallucinated_memory_rate": "hallucinatedMemoryRate",
    "conflict_resolution_accuracy": "conflictResolutionAccuracy",
    "temporal_accuracy": "temporalAccuracy",
}


def memaudit_result(result: Mapping[str, Any]) -> dict[str, Any]:
    """The audit as memaudit writes its `results.json` (its `AuditResult`, src/types.ts):
    `datasetId`, `timestamp` (JavaScript's `toISOString()`: milliseconds and `Z`), `metrics`
    (`recallAccuracy`, `hallucinatedMemoryRate`, `conflictResolutionAccuracy`,
    `temporalAccuracy`) and `probeResults`, each exactly memaudit's `ProbeResult`: `probeId`,
    `type`, `question`, `expectedAnswer`, `actualAnswer`, `isCorrect`, in that order. A program
    that reads memaudit's results reads this file.

    Where memgauge must differ (README, "Agent audits"): a metric whose probe type has no
    scored probe is `null`, never 0; a probe that could not be asked or judged is not a
    `ProbeResult` (memaudit stops at the first failed call, so it has none): such probes are
    listed under `failedProbes` (`probeId`, `type`, `question`, `expectedAnswer`, `error`),
    present only when there are some, so the metrics are memaudit's formulas over
    `probeResults`. Several right answers are one `expectedAnswer` joined by ` | ` (as
    memaudit's MemoryBench adapter joins them). A JSONL dataset's `datasetId` is its path, as
    memaudit names it.
    """
    metrics = result.get("metrics") or {}
    probes = list(result.get("probes", []))
    path = str(result.get("dataset_path") or "")
    scored = [p for p in probes if p.get("correct") is not None]
    failed = [p for p in probes if p.get("correct") is None]
    doc: dict[str, Any] = {
        "datasetId": path
        if result.get("format") == "memaudit" and path.lower().endswith(".jsonl")
        else result["dataset"],
        "timestamp": js_timestamp(str(result["timestamp"])),
        "metrics": {key: metrics.get(name) for name, key in MEMAUDIT_METRICS.items()},
        "probeResults": [
            {
                "probeId": p["id"],
                "type": p["type"],
                "question": p["question"],
                "expectedAnswer": _one_answer(p["expected"]),
                "actualAnswer": "" if p["answer"] is None else str(p["answer"]),
                "isCorrect": bool(p["correct"]),
            }
            for p in scored
        ],
    }
    if failed:
        doc["failedProbes"] = [
            {
                "probeId": p["id"],
                "type": p["type"],
                "question": p["question"],
                "expectedAnswer": _one_answer(p["expected"]),
                "error": str(p.get("reason") or "failed"),
            }
            for p in failed
        ]
    return doc


def _one_answer(expected: Any) -> str:
    if isinstance(expected, list):
        return " | ".join(str(e) for e in expected)
    return "" if expected is None else str(expected)


def js_timestamp(iso: str) -> str:
    """An ISO 8601 time as JavaScript's `Date.prototype.toISOString()` writes it, in UTC:
    `2024-01-15T09:00:00.000Z`."""
    when = datetime.fromisoformat(iso.replace("Z", "+00:00"))
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    when = when.astimezone(UTC)
    return when.strftime("%Y-%m-%dT%H:%M:%S.") + f"{when.microsecond // 1000:03d}Z"


def source_lines(result: Mapping[str, Any]) -> list[str]:
    """What the reader must know about how the dataset was read (LongMemEval's protocol)."""
    protocol = result.get("protocol")
    return [f"dataset read with {protocol}"] if protocol else []


def _markdown(result: Mapping[str, Any], sections: Sequence[Section]) -> str:
    lines = [
        f"# Memory audit: {md_text(result['dataset'])}",
        "",
        f"- agent under test: {md_text(result['agent'])}",
        f"- scoring: {md_text(result['scoring'])}",
        f"- dataset format: {md_text(result['format'])}; probes: {len(result['probes'])}",
        f"- run: {md_text(result['run_id'])} ({md_text(result['status'])}), "
        f"{md_text(result['timestamp'])}",
        *(f"- {md_text(line)}" for line in source_lines(result)),
        "",
    ]
    return "\n".join(lines) + "\n" + sections_markdown(sections)


#: the file `write_audit` writes into the --output directory for each format (the check of
#: the reports before the run reads it too)
AUDIT_FILES = {"json": "results.json", "markdown": "report.md", "memaudit": "memaudit.json"}


def write_audit(
    out_dir: Path, result: Mapping[str, Any], formats: Sequence[str], sections: Sequence[Section]
) -> list[Path]:
    """Write `results.json`, `report.md` (the run's header, then its `sections`) and/or
    `memaudit.json` (memaudit's `AuditResult`), atomically (`AUDIT_FILES`); the paths
    written."""
    out_dir.mkdir(parents=True, exist_ok=True)
    bodies: dict[str, Callable[[], str]] = {
        "memaudit": lambda: dumps_strict(memaudit_result(result), indent=2, default=str) + "\n",
        "json": lambda: dumps_strict(result, indent=2, default=str) + "\n",
        "markdown": lambda: _markdown(result, sections),
    }
    written = []
    for fmt, body in bodies.items():
        if fmt in formats:
            path = out_dir / AUDIT_FILES[fmt]
            atomic_write_text(path, body())
            written.append(path)
    return written
