"""Readers of a task's dataset that take several kinds of file, each read by its kind: the one
named (`--kind`, a task's `dataset_kind`) or else the one its content shows (`data.detect`)."""

from __future__ import annotations

from pathlib import Path

from memgauge.data.detect import read_as
from memgauge.data.io import load_retrieval_dataset
from memgauge.data.models import RetrievalDataset

__all__ = ["load_retrieval_source"]


def load_retrieval_source(path: Path, kind: str | None = None) -> RetrievalDataset:
    """A retrieval dataset: a dataset directory or bundle, or a LoCoMo or LongMemEval file read
    as `memgauge import` reads it by default (its import report is what `import` writes)."""
    found = read_as(path, kind, "retrieval")
    # the importers (regex, NLTK) only when one is needed
    if found == "locomo":
        from memgauge.data.importers.locomo import import_locomo

        ds, report = import_locomo(path)
    elif found == "longmemeval":
        from memgauge.data.importers.longmemeval import import_longmemeval

        ds, report = import_longmemeval(path)
    else:
        return load_retrieval_dataset(path)
    from memgauge.data.importers.common import require_evaluable

    require_evaluable(ds, report, str(path))
    return ds
