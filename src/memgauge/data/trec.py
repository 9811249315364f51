"""TREC qrels and run files, read with every problem reported by line, written in trec_eval form.

qrels: `qid iter docid grade` (whitespace separated; `iter` ignored). Grades are integers; memgauge
judges on 0-3 but TREC collections may use other non-negative levels, so any integer from 0 to
2^31 - 1 (the largest grade memgauge stores) is accepted; a caller may lower that bound (exp gain
stops at 1023, memgauge datasets at 3). A negative or larger grade is an error naming the line.
A repeated (qid, docid) is an error.

Numbers are read as trec_eval reads them: ASCII digits only. Python's `int()` / `float()` would
also take `1_0` (as 10, where trec_eval's `atof` reads 1), Arabic-Indic digits and `nan`;
those are refused (`memgauge._util.numbers`).

run: `qid Q0 docid rank score tag`. trec_eval ignores the rank column and orders by score
descending, then doc id descending; so do we. A non-numeric or non-finite score, a wrong column
count, or a repeated docid within a query is an error.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path

from memgauge._util.files import atomic_write_text
from memgauge._util.numbers import MAX_GRADE, parse_finite_float, parse_int
from memgauge.errors import DataError, Problem

__all__ = ["read_qrels", "read_run", "write_qrels", "write_run"]

_MAX_PROBLEMS = 200
# columns are separated by ASCII blanks, as trec_eval splits them; str.split() would also split
# on a no-break space and other Unicode spaces
_FIELDS = re.compile(r"[^ \t\r\n\f\v]+")


def _lines(path: Path) -> list[str]:
    file = str(path)
    if not path.is_file():
        raise DataError(Problem(file, None, None, "no such file"))
    data = path.read_bytes()
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise DataError(
            Problem(file, line, None, f"not UTF-8 (byte offset {exc.start}); re-save as UTF-8")
        ) from None
    if not text.strip():
        raise DataError(Problem(file, None, None, "file is empty"))
    return text.splitlines()


def _finish(problems: list[Problem], file: str) -> None:
    if problems:
        if len(problems) > _MAX_PROBLEMS:
            extra = len(problems) - _MAX_PROBLEMS
            problems = [*problems[:_MAX_PROBLEMS], Problem(file, None, None, f"... {extra} more")]
        raise DataError(problems)


def read_qrels(
    path: str | Path,
    *,
    max_grade: int = MAX_GRADE,
    why: str = "the largest grade memgauge stores; rescale the judgments",
) -> dict[str, dict[str, int]]:
    """Read a TREC qrels file into `{qid: {docid: grade}}`; a grade above `max_grade` is a
    problem on its line, explained by `why`."""
    p = Path(path)
    file = str(p)
    out: dict[str, dict[str, int]] = {}
    problems: list[Problem] = []
    for lineno, line in enumerate(_lines(p), 1):
        parts = _FIELDS.findall(line)
        if not parts:
            continue
        if len(parts) != 4:
            problems.append(
                Problem(
                    file,
                    lineno,
                    None,
                    f"expected 4 columns 'qid iter docid grade', got {len(parts)}",
                )
            )
            continue
        qid, _, doc, grade_text = parts
        try:
            grade = parse_int(grade_text)
        except ValueError as exc:
            problems.append(Problem(file, lineno, "grade", str(exc)))
            continue
        if grade < 0:
            problems.append(Problem(file, lineno, "grade", f"grade {grade} is negative; use 0-3"))
            continue
        if grade > max_grade:
            problems.append(
                Problem(file, lineno, "grade", f"grade {grade} is above {max_grade}, {why}")
            )
            continue
        per = out.setdefault(qid, {})
        if doc in per:
            problems.append(Problem(file, lineno, "docid", f"({qid}, {doc}) is judged twice"))
            continue
        per[doc] = grade
    _finish(problems, file)
    return out


def read_run(path: str | Path) -> dict[str, dict[str, float]]:
    """Read a TREC run file into `{qid: {docid: score}}`."""
    p = Path(path)
    file = str(p)
    out: dict[str, dict[str, float]] = {}
    problems: list[Problem] = []
    for lineno, line in enumerate(_lines(p), 1):
        parts = _FIELDS.findall(line)
        if not parts:
            continue
        if len(parts) != 6:
            problems.append(
                Problem(
                    file,
                    lineno,
                    None,
                    f"expected 6 columns 'qid Q0 docid rank score tag', got {len(parts)}",
                )
            )
            continue
        qid, _, doc, _, score_text, _ = parts
        try:
            score = parse_finite_float(score_text)
        except ValueError as exc:
            problems.append(Problem(file, lineno, "score", str(exc)))
            continue
        per = out.setdefault(qid, {})
        if doc in per:
            problems.append(
                Problem(file, lineno, "docid", f"document {doc} appears twice for query {qid}")
            )
            continue
        per[doc] = score
    _finish(problems, file)
    return out


def write_qrels(path: str | Path, qrels: Mapping[str, Mapping[str, int]]) -> None:
    """Write `{qid: {docid: grade}}` as a TREC qrels file, sorted, atomically."""
    lines = [f"{q} 0 {d} {g}\n" for q in sorted(qrels) for d, g in sorted(qrels[q].items())]
    atomic_write_text(path, "".join(lines))


def write_run(
    path: str | Path, run: Mapping[str, Mapping[str, float]], tag: str = "memgauge"
) -> None:
    """Write `{qid: {docid: score}}` as a TREC run with ranks in trec_eval order."""
    lines: list[str] = []
    for q in sorted(run):
        ranked = sorted(run[q].items(), key=lambda kv: (kv[1], kv[0]), reverse=True)
        lines.extend(f"{q} Q0 {d} {r} {s!r} {tag}\n" for r, (d, s) in enumerate(ranked, 1))
    atomic_write_text(path, "".join(lines))
