"""TREC qrels and run files, read as trec_eval 10 reads them, with every problem reported by
line, and written in trec_eval form.

Both files: gzip-compressed or not (told by the content; ir_measures reads `*.gz` so); columns
are separated by ASCII whitespace (trec_eval's `isspace`); a line whose first non-blank
character is `#` is a comment (trec_eval 10), and so is skipped, as is a blank line. Numbers
are read as trec_eval reads them: ASCII digits only. Python's `int()` /
`float()` would also take `1_0` (as 10, where trec_eval's `atof` reads 1), Arabic-Indic digits
and `nan`; those are refused (`memgauge._util.numbers`).

qrels: `qid iter docid grade` (exactly 4 columns; `iter` ignored). Grades are integers from
-2^31 to 2^31 - 1 (the range memgauge stores); a caller may narrow that (exp gain stops at
1023, memgauge datasets at 0-3). A negative grade is read as trec_eval reads it: the document
is in the judging pool but was not judged (trec_eval's RELVALUE_UNJUDGED): never relevant and
not counted in R, skipped by bpref and infAP, counted as judged by Judged@k. A repeated
(qid, docid) is an error, as in trec_eval.

run: `qid Q0 docid rank score tag`, then anything (trec_eval ignores the rest of the line,
"reserved for future expansion"). trec_eval ignores the rank column and orders by score
descending, then doc id descending; so do we. A score may be infinite (`inf`, `-inf`, `1e999`:
trec_eval's `atof`, pytrec_eval and ir_measures read and order them); a non-numeric or NaN
score, fewer than 6 columns, or a repeated docid within a query is an error. The run's tag, trec_eval's `runid`,
is the tag of its last line (`read_run_tagged`).

JSON: a file whose first non-blank character is `{` is read as the dict ranx (`Qrels.save` /
`Run.save` to `.json`), pytrec_eval and ir_measures take, and `evaluate --run-json` writes:
`{qid: {docid: grade}}` (integer grades) or `{qid: {docid: score}}` (numbers); a TREC file whose
first query id began with `{` would be read as JSON (and refused): no tool known writes one. A
query given `{}` holds no line, as in the TREC file ranx would write of it; a pair repeated in
one object is an error, as a repeated TREC line. A JSON run has no tag: trec_eval's `runid` line reads `None`,
as it does of the TREC file ranx writes of a Run given no name. Problems name the pair (`q1.d1`).
Or JSON lines of one record each, when the first line is one: `{query_id, doc_id, relevance}`
and `{query_id, doc_id, score}` as ir_datasets exports qrels and scoreddocs `--format jsonl`,
`{query_id, memory_id, grade}` as a memgauge dataset's judgments.jsonl holds them; problems
name the line. Or those records as one JSON list (`[{...}, ...]`, which `memgauge validate`
reads as judgments too); problems name the place (`[3].grade`).

Where trec_eval itself reads differently (a blank line in a qrels file, an indented `#` in a
qrels file, a second comment line straight after another in a qrels file, `atof` / `atol`
reading `2x` as 2), the README's conventions table says so.
"""

from __future__ import annotations

import gzip
import json
import math
import re
import zlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, NamedTuple

from memgauge._util.files import atomic_write_text
from memgauge._util.numbers import MAX_GRADE, digits_shown, parse_int, parse_run_score
from memgauge.errors import DataError, Problem

__all__ = [
    "MIN_GRADE",
    "QrelsLine",
    "TaggedRun",
    "check_trec_ids",
    "qrels_lines",
    "read_qrels",
    "read_run",
    "read_run_tagged",
    "write_qrels",
    "write_run",
]

_MAX_PROBLEMS = 200
# columns are separated by ASCII blanks, as trec_eval splits them; str.split() would also split
# on a no-break space and other Unicode spaces
_FIELDS = re.compile(r"[^ \t\r\n\f\v]+")
_GZIP_MAGIC = b"\x1f\x8b"
_SMALL_INT = re.compile(r"-?[0-9]{1,2}", re.ASCII)
#: the binary files ranx writes beside its JSON and TREC ones, told by their first bytes
_BINARY = {
    b"\x04\x22\x4d\x18": "an LZ4 frame (ranx's Run.save to a .lz4 path: CBOR, compressed)",
    b"PAR1": "a Parquet file (ranx's Qrels.save / Run.save to a .parquet path)",
}
_SAVE = "save it to a .json or .trec path instead (ranx's JSON and TREC files are read)"
#: what to do with a 3-column qrels or run line: the files of BEIR, MS MARCO and ir_datasets'
#: TSV export, which neither trec_eval nor ir_measures reads either
_BEIR_QRELS = (
    "; a BEIR qrels TSV ('query-id corpus-id score')? import the BEIR directory with "
    "'memgauge import beir DIR --out OUT', or write each line 'qid 0 docid grade'"
)
_MSMARCO_RUN = (
    "; an MS MARCO run ('qid docid rank')? convert it with 'python -m "
    "pyserini.eval.convert_msmarco_run_to_trec_run --input RUN --output RUN.trec'; "
    "ir_datasets' scoreddocs exported --format tsv ('query_id doc_id score')? export them "
    "with --format trec, its default"
)
#: the lowest grade read from a qrels file (int32, as the highest)
MIN_GRADE = -(2**31)


class TaggedRun(NamedTuple):
    """A run file's scores `{qid: {docid: score}}` and its tag (trec_eval's `runid`: the tag
    column of the last line; None for a file with no line)."""

    scores: dict[str, dict[str, float]]
    tag: str | None


def _fields(line: str) -> list[str] | None:
    """A line's columns; None for a blank or comment line (first non-blank character `#`)."""
    parts = _FIELDS.findall(line)
    if not parts or parts[0].startswith("#"):
        return None
    return parts


def _text(path: Path) -> str:
    """The file's text: gunzipped where gzip-compressed, a UTF-8 BOM dropped."""
    file = str(path)
    if not path.is_file():
        # as `jsonio.existing` says it, without importing pydantic into `metrics`
        what = "no such file"
        if path.exists():
            what = "not a regular file (a directory, FIFO or device); pass a file"
        raise DataError(Problem(file, None, None, what))
    data = path.read_bytes()
    if data.startswith(_GZIP_MAGIC):
        # ir_measures reads `run.gz` / `qrels.gz` (TREC's runs are published so); a gzip header
        # cannot begin a UTF-8 text file, so the content says it, whatever the name
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError, zlib.error) as exc:
            raise DataError(Problem(file, None, None, f"not a readable gzip file: {exc}")) from None
    for magic, what in _BINARY.items():
        if data.startswith(magic):
            raise DataError(
                Problem(file, None, None, f"{what}, which memgauge does not read; {_SAVE}")
            )
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
    return text


def _lines(text: str) -> list[str]:
    # lines end at "\n" alone, as in trec_eval: str.splitlines() would also end one at a form
    # feed, U+0085 or U+2028 inside a document id
    return text.split("\n")


def _is_json(text: str) -> bool:
    """Whether `text` is JSON this reads: an object, or a list (no TREC line starts with `{`,
    nor with `[` then `{`, `[` or `]`; a list of anything else is JSON when it all parses, so
    `[]` or `[1, {...}]` is refused as a JSON list, not as TREC columns)."""
    head = text.lstrip(" \t\r\n")
    if head.startswith("{"):
        return True
    if not head.startswith("["):
        return False
    if head[1:].lstrip()[:1] in ("{", "[", "]"):
        return True
    try:
        return isinstance(json.loads(head), list)
    except (ValueError, RecursionError):
        return False


class _Pairs(list[tuple[str, Any]]):
    """A JSON object as its (key, value) pairs, in order."""


_JSON_TYPES = {_Pairs: "an object", list: "a list", str: "a string", bool: "a boolean"}


def _json_type(value: object) -> str:
    return "null" if value is None else _JSON_TYPES.get(type(value), "a number")


class _Entry(NamedTuple):
    """One judgment or result of a JSON file: its line (JSON lines; None in one document),
    query, document, value, and the Problem field that names it."""

    line: int | None
    qid: str
    doc: str
    value: Any
    where: str


#: a JSON-lines record's document id and value keys: ir_datasets' `export ... --format jsonl`
#: (`doc_id`; qrels' `relevance`, scoreddocs' `score`), memgauge's judgments.jsonl (`memory_id`,
#: `grade`)
_DOC_KEYS = ("doc_id", "memory_id")
_QRELS_VALUES = ("relevance", "grade")
_RUN_VALUES = ("score",)


def _first_line(text: str) -> Any:
    """The JSON object the first line holds alone, else None."""
    try:
        first = json.loads(text.lstrip().split("\n", 1)[0])
    except (ValueError, RecursionError):
        return None
    return first if isinstance(first, dict) else None


def _first_line_record(text: str) -> bool:
    """Whether the first line holds a JSON record of one judgment or result (`query_id` and a
    document id), as ir_datasets' JSON-lines export and memgauge's judgments.jsonl are."""
    first = _first_line(text)
    return first is not None and "query_id" in first and any(k in first for k in _DOC_KEYS)


#: what `_loads` returns for text that is not JSON (its problem said)
_UNREAD = object()


def _loads(
    file: str, line: int | None, text: str, problems: list[Problem], *, pairs: bool = False
) -> Any:
    """`text` (a JSON line: `line`; a whole document: None) parsed, objects as `_Pairs` when
    `pairs`; `_UNREAD`, with the problem added, when it is not JSON this reads."""
    try:
        return json.loads(text, object_pairs_hook=_Pairs if pairs else None)
    except json.JSONDecodeError as exc:
        said = exc.msg
        line = exc.lineno if line is None else line
    except ValueError:  # int(): Python reads no integer of more than 4300 digits
        said = "a number of more than 4300 digits"
    except RecursionError:
        said = "nested too deep"
    problems.append(Problem(file, line, None, f"not valid JSON: {said}"))
    return _UNREAD


def _record_entries(
    file: str, text: str, values: tuple[str, ...], problems: list[Problem]
) -> list[_Entry]:
    """The entries of JSON lines of one `{query_id, doc_id | memory_id, VALUE}` record each."""
    out: list[_Entry] = []
    for lineno, line in enumerate(_lines(text), 1):
        if not line.strip():
            continue
        record = _loads(file, lineno, line, problems)
        if record is not _UNREAD:
            out += _record_entry(file, lineno, "", record, values, problems)
    return out


def _list_entries(
    file: str, text: str, values: tuple[str, ...], problems: list[Problem]
) -> list[_Entry]:
    """The entries of one JSON list of `{query_id, doc_id | memory_id, VALUE}` records (the
    records of judgments.jsonl as one document)."""
    top = _loads(file, None, text, problems)
    if top is _UNREAD:
        return []
    if not top:
        problems.append(Problem(file, None, None, "an empty list: give at least one record"))
    return [
        entry
        for i, record in enumerate(top)
        for entry in _record_entry(file, None, f"[{i}]", record, values, problems)
    ]


def _record_entry(
    file: str,
    line: int | None,
    place: str,
    record: Any,
    values: tuple[str, ...],
    problems: list[Problem],
) -> list[_Entry]:
    """The entry of one record (at `line` of JSON lines, or `place` in a list), or none with
    its problems added."""
    if not isinstance(record, dict):
        problems.append(
            Problem(file, line, place or None, f"must be an object, got {_json_type(record)}")
        )
        return []
    doc_key = next((k for k in _DOC_KEYS if k in record), _DOC_KEYS[0])
    value_key = next((k for k in values if k in record), values[0])
    named = f"{place}." if place else ""
    ids = [(k, record.get(k)) for k in ("query_id", doc_key)]
    bad = [(k, v) for k, v in ids if not isinstance(v, str) or not v]
    for key, value in bad:
        got = "missing" if value is None else _json_type(value)
        problems.append(Problem(file, line, named + key, f"needs a non-empty string id ({got})"))
    if value_key not in record:
        problems.append(Problem(file, line, named + value_key, "missing"))
    if bad or value_key not in record:
        return []
    return [_Entry(line, record["query_id"], record[doc_key], record[value_key], named + value_key)]


def _pair_entries(file: str, text: str, problems: list[Problem]) -> list[_Entry]:
    """The entries of one JSON document `{qid: {docid: value}}`, in the file's order."""
    # an object read as its pairs keeps a repeated key, which a dict would merge unseen
    top = _loads(file, None, text, problems, pairs=True)
    if top is _UNREAD:
        return []
    if not isinstance(top, _Pairs):
        problems.append(Problem(file, None, None, "must be an object {qid: {docid: value}}"))
        return []
    out: list[_Entry] = []
    for qid, docs in top:
        if not isinstance(docs, _Pairs):
            got = _json_type(docs)
            problems.append(
                Problem(file, None, qid, f"must be an object {{docid: value}}, got {got}")
            )
            continue
        out.extend(_Entry(None, qid, doc, value, f"{qid}.{doc}") for doc, value in docs)
    return out


def _json_entries(
    file: str, text: str, values: tuple[str, ...], problems: list[Problem]
) -> list[_Entry]:
    """The judgments or results of a JSON file: one document `{qid: {docid: value}}` (ranx,
    pytrec_eval), or JSON lines of one record each (ir_datasets' export, memgauge's
    judgments.jsonl: `values` are the keys the value may have); a problem for each entry
    given twice, and for a file with none."""
    if text.lstrip(" \t\r\n").startswith("["):
        entries = _list_entries(file, text, values, problems)
    elif _first_line_record(text):
        entries = _record_entries(file, text, values, problems)
    else:
        entries = _pair_entries(file, text, problems)
        first = _first_line(text)
        if first is not None and problems and problems[-1].message.endswith("Extra data"):
            # JSON lines of records named otherwise (PyTerrier's qid, docno, label)
            keys = ", ".join(list(first)[:4])
            said = (
                f"a second JSON value: JSON lines are read as one record a line with query_id,"
                f" doc_id (or memory_id) and {' or '.join(values)}; the first line has {keys}."
                " Rename those keys, or write one object {qid: {docid: value}}"
            )
            problems[-1] = Problem(file, problems[-1].line, None, said)
    out: list[_Entry] = []
    seen: set[tuple[str, str]] = set()
    for entry in entries:
        pair = (entry.qid, entry.doc)
        if pair in seen:  # named by its pair in one document, by its line in JSON lines
            where, said = entry.where, "is given twice"
            if entry.line is not None or entry.where.startswith("["):
                where = (
                    entry.where.split(".")[0] + ".query_id" if entry.line is None else "query_id"
                )
                said = f"({pair[0]}, {pair[1]}) is given twice"
            problems.append(Problem(file, entry.line, where, said))
            continue
        seen.add(pair)
        out.append(entry)
    if not out and not problems:  # said here: `_finish` would speak of comments
        problems.append(Problem(file, None, None, "no document: every query's object is empty"))
    return out


def _grade_problem(grade: int, max_grade: int, why: str, min_grade: int) -> str | None:
    if grade < min_grade:
        return _below(grade, min_grade)
    if grade > max_grade:
        return f"grade {digits_shown(grade)} is above {max_grade}, {why}"
    return None


def _finish(problems: list[Problem], file: str, read: int, what: str) -> None:
    if not problems and not read:
        problems = [Problem(file, None, None, f"no {what} line: the file holds only comments")]
    if problems:  # a file of a million bad lines keeps the first few hundred, and their count
        raise DataError(problems[:_MAX_PROBLEMS], unlisted=max(0, len(problems) - _MAX_PROBLEMS))


class QrelsLine(NamedTuple):
    """One judgment of a qrels file, with its line (None in a JSON file)."""

    line: int | None
    qid: str
    docid: str
    grade: int


def qrels_lines(
    path: str | Path,
    *,
    max_grade: int = MAX_GRADE,
    why: str = "the largest grade memgauge stores; rescale the judgments",
    min_grade: int = MIN_GRADE,
) -> tuple[list[QrelsLine], list[Problem]]:
    """Every judgment of a TREC qrels file that reads, with its line, and a problem for each
    line that does not (see `read_qrels`); raises DataError only when the file cannot be read."""
    p = Path(path)
    file = str(p)
    out: list[QrelsLine] = []
    seen: set[tuple[str, str]] = set()
    problems: list[Problem] = []
    text = _text(p)
    if _is_json(text):
        for e in _json_entries(file, text, _QRELS_VALUES, problems):
            if not isinstance(e.value, int) or isinstance(e.value, bool):
                got = _json_type(e.value) + (f" {e.value!r}" if isinstance(e.value, float) else "")
                problems.append(
                    Problem(file, e.line, e.where, f"grade must be an integer, got {got}")
                )
            elif said := _grade_problem(e.value, max_grade, why, min_grade):
                problems.append(Problem(file, e.line, e.where, said))
            else:
                out.append(QrelsLine(e.line, e.qid, e.doc, e.value))
        return out, problems
    middle: list[tuple[str, str]] = []  # each line's (iter, docid)
    for lineno, line in enumerate(_lines(text), 1):
        parts = _fields(line)
        if parts is None:
            continue
        if len(parts) != 4:
            problems.append(
                Problem(
                    file,
                    lineno,
                    None,
                    f"expected 4 columns 'qid iter docid grade', got {len(parts)}"
                    + (_BEIR_QRELS if len(parts) == 3 else ""),
                )
            )
            continue
        qid, iteration, doc, grade_text = parts
        middle.append((iteration, doc))
        try:
            grade = parse_int(grade_text)
        except ValueError as exc:
            problems.append(Problem(file, lineno, "grade", str(exc)))
            continue
        if said := _grade_problem(grade, max_grade, why, min_grade):
            problems.append(Problem(file, lineno, "grade", said))
            continue
        if (qid, doc) in seen:
            problems.append(Problem(file, lineno, "docid", f"({qid}, {doc}) is judged twice"))
            continue
        seen.add((qid, doc))
        out.append(QrelsLine(lineno, qid, doc, grade))
    if said := _ir_datasets_tsv(middle):  # every line misread: its problems say nothing more
        return [], [Problem(file, None, None, said)]
    return out, problems


def _ir_datasets_tsv(middle: list[tuple[str, str]]) -> str | None:
    """What to do when the lines are ir_datasets' `export DATASET qrels --format tsv`
    (`query_id doc_id relevance iteration`) read as TREC's `qid iter docid grade`: the docid
    column then holds a few small integers (the grades) and the iteration column the documents,
    where a TREC file's iteration takes a value or two. Else None."""
    docs = {doc for _, doc in middle}
    iterations = {iteration for iteration, _ in middle}
    if len(middle) < 10 or len(docs) > 5 or len(iterations) <= len(middle) // 2:
        return None
    if not all(_SMALL_INT.fullmatch(doc) for doc in docs):
        return None
    return (
        f"the docid column holds only {', '.join(sorted(docs))} over {len(middle)} lines and "
        f"the iteration column {len(iterations)} values: these look like ir_datasets' "
        "'export DATASET qrels --format tsv' lines (query_id doc_id relevance iteration); "
        "export with --format trec (its default), which writes 'qid iter docid grade'"
    )


def read_qrels(
    path: str | Path,
    *,
    max_grade: int = MAX_GRADE,
    why: str = "the largest grade memgauge stores; rescale the judgments",
    min_grade: int = MIN_GRADE,
) -> dict[str, dict[str, int]]:
    """Read a TREC qrels file into `{qid: {docid: grade}}`; a grade above `max_grade` is a
    problem on its line, explained by `why`, and so is one below `min_grade` (memgauge datasets
    pass 0)."""
    rows, problems = qrels_lines(path, max_grade=max_grade, why=why, min_grade=min_grade)
    out: dict[str, dict[str, int]] = {}
    for row in rows:
        out.setdefault(row.qid, {})[row.docid] = row.grade
    _finish(problems, str(path), len(out), "judgment")
    return out


def _below(grade: int, min_grade: int) -> str:
    if min_grade == 0:
        return f"grade {digits_shown(grade)} is negative; use 0-3"
    return f"grade {digits_shown(grade)} is below {min_grade}, the lowest grade memgauge stores"


def read_run(path: str | Path) -> dict[str, dict[str, float]]:
    """Read a TREC run file into `{qid: {docid: score}}`."""
    return read_run_tagged(path).scores


def read_run_tagged(path: str | Path) -> TaggedRun:
    """Read a TREC run file into its scores and its tag (see `TaggedRun`)."""
    p = Path(path)
    file = str(p)
    out: dict[str, dict[str, float]] = {}
    problems: list[Problem] = []
    tag: str | None = None
    text = _text(p)
    if _is_json(text):
        for e in _json_entries(file, text, _RUN_VALUES, problems):
            per = out.setdefault(e.qid, {})
            if not isinstance(e.value, int | float) or isinstance(e.value, bool):
                said = f"score must be a number, got {_json_type(e.value)}"
                problems.append(Problem(file, e.line, e.where, said))
            elif math.isnan(score := _as_float(e.value)):
                said = "NaN is not a number: NaN has no place in a ranking"
                problems.append(Problem(file, e.line, e.where, said))
            else:
                per[e.doc] = score
        out = {qid: docs for qid, docs in out.items() if docs}
        _finish(problems, file, len(out), "result")
        return TaggedRun(out, None)
    firsts: dict[tuple[str, str], int] = {}  # each (qid, docid)'s line
    for lineno, line in enumerate(_lines(text), 1):
        parts = _fields(line)
        if parts is None:
            continue
        if len(parts) < 6:
            problems.append(
                Problem(
                    file,
                    lineno,
                    None,
                    f"expected 6 columns 'qid Q0 docid rank score tag', got {len(parts)}"
                    + (_MSMARCO_RUN if len(parts) == 3 else ""),
                )
            )
            continue
        qid, _, doc, _, score_text, tag = parts[:6]
        try:
            score = parse_run_score(score_text)
        except ValueError as exc:
            problems.append(Problem(file, lineno, "score", str(exc)))
            continue
        per = out.setdefault(qid, {})
        if doc in per:
            first = firsts[qid, doc]
            problems.append(Problem(file, lineno, "docid", _twice(doc, qid, first)))
            continue
        per[doc] = score
        firsts[qid, doc] = lineno
    _finish(problems, file, len(out), "result")
    return TaggedRun(out, tag)


def _as_float(value: float) -> float:
    """A JSON number as a float: one past the largest double is an infinity of its sign (as
    `parse_run_score` reads `1e999`; float() raises OverflowError on an int)."""
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf


def _twice(doc: str, qid: str, first: int) -> str:
    return (
        f"document {doc} appears twice for query {qid} (first on line {first}); trec_eval "
        "and pytrec_eval refuse such a run too (ir_measures keeps one line unsaid): keep one "
        "line per document, e.g. its best score (as MaxP keeps a document's best passage)"
    )


def check_trec_ids(path: str | Path, ids: Mapping[str, Mapping[str, object]]) -> None:
    """Refuse ids a TREC file cannot hold: trec_eval, pytrec_eval's and ir_measures' readers
    (and ours) split a line at blanks, so `doc one` shifts every later column, and a line whose
    query id starts with `#` is a comment; an empty id is no column at all."""
    problems: list[Problem] = []
    for qid, docs in ids.items():
        bad = [("query id", qid)] if not _FIELDS.fullmatch(qid) or qid.startswith("#") else []
        bad += [("document id", d) for d in docs if not _FIELDS.fullmatch(d)]
        problems += [
            Problem(
                str(path),
                None,
                None,
                f"{what} {value!r} cannot be written to a TREC file (columns are split at "
                "blanks, a line starting with '#' is a comment); the JSON run keeps it",
            )
            for what, value in bad
        ]
    if problems:
        raise DataError(problems[:_MAX_PROBLEMS], unlisted=max(0, len(problems) - _MAX_PROBLEMS))


def write_qrels(path: str | Path, qrels: Mapping[str, Mapping[str, int]]) -> None:
    """Write `{qid: {docid: grade}}` as a TREC qrels file, sorted, atomically; an id the file
    cannot hold (a blank in it, a query id starting with `#`) is a DataError, nothing written."""
    check_trec_ids(path, qrels)
    lines = [f"{q} 0 {d} {g}\n" for q in sorted(qrels) for d, g in sorted(qrels[q].items())]
    atomic_write_text(path, "".join(lines))


def write_run(
    path: str | Path, run: Mapping[str, Mapping[str, float]], tag: str = "memgauge"
) -> None:
    """Write `{qid: {docid: score}}` as a TREC run with ranks in trec_eval order; an id the
    file cannot hold is a DataError, as in `write_qrels`."""
    check_trec_ids(path, run)
    lines: list[str] = []
    for q in sorted(run):
        ranked = sorted(run[q].items(), key=lambda kv: (kv[1], kv[0]), reverse=True)
        lines.extend(f"{q} Q0 {d} {r} {s!r} {tag}\n" for r, (d, s) in enumerate(ranked, 1))
    atomic_write_text(path, "".join(lines))
