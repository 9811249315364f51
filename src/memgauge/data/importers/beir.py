"""BEIR datasets (Thakur et al., NeurIPS 2021 Datasets and Benchmarks) into a retrieval dataset.

A BEIR dataset is a directory as `beir.datasets.data_loader.GenericDataLoader` reads it:

- `corpus.jsonl`: `{"_id", "title", "text", "metadata"?}` per line;
- `queries.jsonl`: `{"_id", "text", "metadata"?}` per line;
- `qrels/<split>.tsv`: a header line (`query-id corpus-id score`), then one tab-separated
  judgment per line; `--split` picks the file (default `test`).

Mapping, and what is normalised (each counted in the report):

- a document becomes a memory: its text is `title + " " + text` when it has a title (BEIR's own
  dense and sparse models join them so), the title also kept in `metadata.title`; BEIR's
  `metadata` is kept beside it. Numeric ids become text;
- grades: BEIR is scored with trec_eval, where grade >= 1 is relevant; memgauge counts
  grade >= 2. With `grades="shift"` (the default) a grade g >= 1 becomes min(g + 1, 3), so the
  same documents are relevant, and on the binary datasets (most of BEIR) nDCG is BEIR's too
  (every relevant gain is equal, whatever it is). `grades="keep"` keeps the file's grades
  (0-3) for `--rel-threshold 1 --gain linear`, which gives BEIR's numbers on graded ones too
  (TREC-COVID, ...). A negative grade (Touché's -2 "spam") is judged 0;
- queries: only those judged in the split are evaluated, as GenericDataLoader keeps them; the
  rest are left out and counted;
- a judgment naming a query or document that does not exist cannot be retrieved and is
  dropped, counted and listed (memgauge datasets refuse unknown ids).

Malformed files are `DataError`s naming the file, line and field: a line that is not JSON or
not an object, a missing or empty `_id`, a non-text `title` / `text`, a repeated id, a qrels
line without three columns or with a non-integer score, a pair judged twice, a missing file.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any, Literal

from memgauge._util.numbers import parse_int
from memgauge.data.importers.common import ImportReport, json_type
from memgauge.data.jsonio import decode_text, iter_jsonl
from memgauge.data.models import DatasetProtocol, EvalQuery, Judgment, Memory, RetrievalDataset
from memgauge.errors import DataError, Problem

__all__ = ["BeirGrades", "beir_parent", "import_beir"]

BeirGrades = Literal["shift", "keep"]
_MAX_LISTED = 50  # dropped judgments listed one by one in the report; the rest are counted


def _records(
    path: Path, kind: str, problems: list[Problem], report: ImportReport
) -> dict[str, tuple[int, dict[str, Any]]]:
    """id -> (line, record) of a BEIR corpus or queries file."""
    file = str(path)
    if not path.is_file():
        problems.append(Problem(file, None, None, f"no {path.name}: a BEIR dataset has one"))
        return {}
    out: dict[str, tuple[int, dict[str, Any]]] = {}
    for line, record in iter_jsonl(path, problems):
        if not isinstance(record, dict):
            problems.append(
                Problem(file, line, None, f"must be an object, got {json_type(record)}")
            )
            continue
        raw_id = record.get("_id")
        if isinstance(raw_id, int) and not isinstance(raw_id, bool):
            report.add(f"{kind}_numeric_ids_as_text")
            raw_id = str(raw_id)
        if not isinstance(raw_id, str) or not raw_id:
            got = "missing" if raw_id is None else f"{json_type(raw_id)} {raw_id!r}"
            problems.append(Problem(file, line, "_id", f"needs a non-empty string id ({got})"))
            continue
        for key in ("title", "text") if kind == "corpus" else ("text",):
            value = record.get(key, "")
            if not isinstance(value, str) and not (key == "title" and value is None):
                problems.append(
                    Problem(file, line, key, f"must be a string, got {json_type(value)}")
                )
        if "metadata" in record and not isinstance(record["metadata"], dict | None):
            got = json_type(record["metadata"])
            problems.append(Problem(file, line, "metadata", f"must be an object, got {got}"))
        if raw_id in out:
            first = out[raw_id][0]
            problems.append(Problem(file, line, "_id", f"id {raw_id!r} repeats line {first}"))
            continue
        out[raw_id] = (line, record)
    if not out and not any(p.file == file for p in problems):
        problems.append(Problem(file, None, None, f"no records: {path.name} is empty"))
    return out


def _is_int(text: str) -> bool:
    try:
        parse_int(text)
    except ValueError:
        return False
    return True


def _qrels(
    path: Path, problems: list[Problem], report: ImportReport
) -> list[tuple[int, str, str, int]]:
    """(line, query id, document id, grade) per judgment of a BEIR qrels TSV."""
    file = str(path)
    text = decode_text(path.read_bytes(), file)
    rows: list[tuple[int, str, str, int]] = []
    seen: dict[tuple[str, str], int] = {}
    for line, raw in enumerate(text.splitlines(), 1):
        if not raw.strip():
            continue
        cols = raw.rstrip("\r\n").split("\t")
        if line == 1 and len(cols) == 3 and not _is_int(cols[2].strip()):
            continue  # the header (`query-id corpus-id score`), which GenericDataLoader skips
        if line == 1:
            report.add("qrels_without_header")  # GenericDataLoader would lose this judgment
        if len(cols) != 3:
            problems.append(
                Problem(
                    file,
                    line,
                    None,
                    f"expected 3 tab-separated columns 'query-id corpus-id score', got {len(cols)}",
                )
            )
            continue
        qid, did, score = (c.strip() for c in cols)
        try:
            grade = parse_int(score)
        except ValueError as exc:
            problems.append(Problem(file, line, "score", f"{exc}; BEIR grades are integers"))
            continue
        if (qid, did) in seen:
            problems.append(
                Problem(
                    file,
                    line,
                    "corpus-id",
                    f"({qid}, {did}) is judged again (line "
                    f"{seen[qid, did]}); keep one judgment per pair",
                )
            )
            continue
        seen[qid, did] = line
        rows.append((line, qid, did, grade))
    if not rows and not any(p.file == file for p in problems):
        problems.append(Problem(file, None, None, "no judgments after the header"))
    return rows


def _grade(raw: int, grades: BeirGrades, report: ImportReport) -> int | None:
    """memgauge's grade for a BEIR score, or None when `keep` cannot keep it (above 3)."""
    if raw < 0:
        report.add("negative_grades_judged_0")
        return 0
    if grades == "keep":
        return raw if raw <= 3 else None
    if raw == 0:
        return 0
    if raw + 1 > 3:
        report.add("grades_capped_at_3")
    report.add("grades_shifted")
    return min(raw + 1, 3)


def beir_parent(path: Path) -> str | None:
    """What to do with a directory of BEIR datasets (CQADupStack as BEIR ships it: one per
    forum, `android/corpus.jsonl`, ...), or None when `path` holds none."""
    try:
        subsets = sorted(d.name for d in path.iterdir() if (d / "corpus.jsonl").is_file())
    except OSError:
        return None
    if not subsets:
        return None
    listed = ", ".join(subsets[:5]) + (f" and {len(subsets) - 5} more" if len(subsets) > 5 else "")
    return (
        f"a directory of BEIR datasets ({listed}), not one: import each "
        f"(`memgauge import beir {path / subsets[0]} --out DIR`); BEIR scores CQADupStack's "
        "forums one by one and averages them"
    )


def import_beir(
    src: str | Path, *, split: str = "test", grades: BeirGrades = "shift"
) -> tuple[RetrievalDataset, ImportReport]:
    """Read the BEIR dataset directory `src`, judged by `qrels/<split>.tsv` (module docstring
    for the mapping); the dataset and its import report."""
    root = Path(src)
    report = ImportReport(source=str(root), format="beir", protocol=f"beir-{split}")
    if not root.is_dir():
        raise DataError(Problem(str(root), None, None, "a BEIR dataset is a directory"))
    if not (root / "corpus.jsonl").exists() and (said := beir_parent(root)):
        raise DataError(Problem(str(root), None, None, said))
    qrels_path = root / "qrels" / f"{split}.tsv"
    if not qrels_path.is_file():
        found = sorted(p.stem for p in (root / "qrels").glob("*.tsv"))
        have = f"it has {', '.join(found)}" if found else "there is no qrels/*.tsv"
        raise DataError(
            Problem(
                str(qrels_path), None, None, f"no split {split!r}: {have}; pick one with --split"
            )
        )
    problems: list[Problem] = []
    corpus = _records(root / "corpus.jsonl", "corpus", problems, report)
    queries = _records(root / "queries.jsonl", "queries", problems, report)
    judged = _qrels(qrels_path, problems, report)
    # grades `keep` cannot keep, on the lines that are not dropped, with the problems above
    # (a line whose query or document did not read is left to the next pass)
    problems += [
        Problem(
            str(qrels_path),
            line,
            "score",
            f"grade {raw} is above 3; memgauge "
            "datasets grade 0-3: import with --grades shift, or rescale",
        )
        for line, qid, did, raw in judged
        if grades == "keep" and raw > 3 and qid in queries and did in corpus
    ]
    if problems:
        raise DataError(problems)

    memories = []
    for doc_id, (_line, rec) in corpus.items():
        title, text = rec.get("title") or "", rec.get("text") or ""
        if title:
            report.add("titles_joined_to_text")
        if not title and not text:
            report.add("empty_documents")
        meta = dict(rec.get("metadata") or {})
        if title:
            meta["title"] = title
        memories.append(
            Memory(id=doc_id, text=f"{title} {text}".strip() if title else text, metadata=meta)
        )

    judgments: list[Judgment] = []
    dropped = Counter[str]()
    for line, qid, did, raw in judged:
        reason = (
            "query not in queries.jsonl"
            if qid not in queries
            else "document not in corpus.jsonl"
            if did not in corpus
            else None
        )
        if reason is not None:
            dropped[reason] += 1
            if sum(dropped.values()) <= _MAX_LISTED:
                report.dropped.append({"line": line, "query": qid, "document": did, "why": reason})
            continue
        grade = _grade(raw, grades, report)
        assert grade is not None  # refused above
        judgments.append(Judgment(query_id=qid, memory_id=did, grade=grade))
    in_split = {j.query_id for j in judgments}
    kept = [
        EvalQuery(id=qid, text=rec.get("text") or "", metadata=dict(rec.get("metadata") or {}))
        for qid, (_line, rec) in queries.items()
        if qid in in_split
    ]
    report.counts.update(
        {
            "documents": len(memories),
            "queries_in_file": len(queries),
            "queries": len(kept),
            "queries_not_in_split": len(queries) - len(kept),
            "judgments": len(judgments),
            "judgments_in_file": len(judged),
            "relevant_judgments": sum(j.grade >= 2 for j in judgments),
        }
    )
    for why, n in sorted(dropped.items()):
        report.add("judgments_dropped_" + why.split(" ")[0], n)
    if sum(dropped.values()) > _MAX_LISTED:
        report.notes.append(f"only the first {_MAX_LISTED} dropped judgments are listed")
    report.notes.append(
        f"grades {grades}: "
        + (
            "a BEIR grade g >= 1 is judged min(g + 1, 3), so memgauge's relevant (grade >= 2) "
            "is BEIR's (trec_eval's grade >= 1)"
            if grades == "shift"
            else "BEIR's grades as they are: evaluate with --rel-threshold 1 --gain linear "
            "for BEIR's own numbers"
        )
    )
    dataset = RetrievalDataset(
        name=root.name,
        memories=memories,
        queries=kept,
        judgments=judgments,
        protocol=DatasetProtocol(name=f"beir-{split}"),
    )
    return dataset, report
