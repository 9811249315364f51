"""Readers of a task's dataset that take several kinds of file, each read by its kind: the one
named (`--kind`, a task's `dataset_kind`) or else the one its content shows (`data.detect`)."""

from __future__ import annotations

from pathlib import Path
from typing import NoReturn

from memgauge.data.detect import also_fits, detect_kind, read_as
from memgauge.data.io import load_retrieval_dataset
from memgauge.data.models import RetrievalDataset
from memgauge.errors import DataError, Problem

__all__ = ["load_retrieval_source"]

_PART = "one file of a dataset: give the directory that holds memories.jsonl, queries.jsonl and judgments.jsonl"
#: what to do with a file of another kind than a retrieval dataset
_ELSEWHERE = {
    "memories": _PART,
    "queries": _PART,
    "judgments": _PART,
    "equivalence": _PART,
    "chains": _PART,
    "qrels": "score TREC files with `memgauge metrics QRELS RUN`",
    "run": "score TREC files with `memgauge metrics QRELS RUN`",
    "conversations": "audit conversations with `memgauge audit FILE`",
    "suite": "run a suite with `memgauge run FILE`",
    "subject": "a subject spec file goes to `-s FILE`",
}


def load_retrieval_source(
    path: Path, kind: str | None = None, *, judged: bool = True
) -> RetrievalDataset:
    """A retrieval dataset: a dataset directory or bundle, or a LoCoMo or LongMemEval file read
    as `memgauge import` reads it by default (its import report is what `import` writes).
    `judged`: a LoCoMo or LongMemEval file that leaves no memory or no judgment is refused
    (`require_evaluable`); False for a reader of its memories alone (`memgauge synth`)."""
    found = read_as(path, kind, "retrieval")
    if found is None and kind is None and path.is_file():
        # read as a bundle, a file of another kind fails confusingly (at its second line)
        other = detect_kind(path)
        if other is not None:
            what = _ELSEWHERE.get(other, "`memgauge validate FILE` checks it as what it is")
            kinds = " or ".join((other, *also_fits(path, other)))
            _not_a_dataset(path, f"a {kinds} file (by its content)", what)
        if path.suffix.lower() == ".jsonl":  # a bundle is one JSON or YAML document
            _not_a_dataset(path, "a JSON-lines file", "a bundle is one JSON or YAML document")
    if found == "locomo":
        from memgauge.data.importers.locomo import import_locomo

        ds, report = import_locomo(path)
    elif found == "longmemeval":
        from memgauge.data.importers.longmemeval import import_longmemeval

        ds, report = import_longmemeval(path)
    else:
        return load_retrieval_dataset(path)
    if judged:
        from memgauge.data.importers.common import require_evaluable

        require_evaluable(ds, report, str(path))
    return ds


def _not_a_dataset(path: Path, what: str, hint: str) -> NoReturn:
    raise DataError(
        Problem(
            str(path),
            None,
            None,
            f"{what}, not a retrieval dataset: {hint}; a retrieval dataset is a dataset "
            "directory, a bundle (YAML or JSON), a LoCoMo or a LongMemEval file",
        )
    )
