"""People's labels of stored runs (`memgauge view --review`), table `review_labels` (revision
0019): added, never updated or deleted, so no reviewer's label overwrites another's and each
reviewer's history stays; a reviewer's current label on a target is their latest."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

import sqlalchemy as sa

from memgauge.data.review import ReviewLabel
from memgauge.store.base import Store
from memgauge.store.item_rows import KEY as _ITEM
from memgauge.store.tables import review_labels as labels_t
from memgauge.store.tables import suite_run_items as items_t

__all__ = ["ReviewStore", "current_labels"]

_FIELDS = tuple(c.name for c in labels_t.columns if c.name != "id")
#: the labelled item's repeat (`repeat: N`), read from the run's item
_REPEAT = (
    sa.select(items_t.c.repeat_index)
    .where(*(items_t.c[k] == labels_t.c[k] for k in _ITEM))
    .scalar_subquery()
)
#: what one reviewer labels once: a later label on it supersedes theirs
_TARGET = (*_ITEM, "kind", "target", "reviewer")


def current_labels(labels: Sequence[ReviewLabel]) -> list[ReviewLabel]:
    """Each reviewer's latest label per target, of `labels` (oldest first), in the order those
    latest ones were given."""
    latest: dict[tuple[str, ...], ReviewLabel] = {}
    for label in labels:
        key = tuple(str(getattr(label, f)) for f in _TARGET)
        latest.pop(key, None)  # re-inserted: at the place of its latest label
        latest[key] = label
    return list(latest.values())


class ReviewStore(Store):
    """The labels in the results store at `where` (`read_only`: the viewer's own connection)."""

    def add(self, label: ReviewLabel) -> ReviewLabel:
        """Record `label` now (its `created_at` set, UTC); returns it as stored."""
        stored = label.model_copy(update={"created_at": datetime.now(UTC).isoformat()})
        row = stored.model_dump(include=set(_FIELDS))
        with self._write_tx() as c:
            c.execute(sa.insert(labels_t).values(**row))
        return stored

    def labels(
        self,
        *,
        run_ids: Sequence[str] | None = None,
        item: tuple[str, str, str, str] | None = None,
        kind: str | None = None,
        reviewer: str | None = None,
    ) -> list[ReviewLabel]:
        """Every label given (history included), oldest first; of the runs `run_ids`, the item
        (run, subject, task, item id), the `kind` and the `reviewer` when given."""
        query = sa.select(*(labels_t.c[f] for f in _FIELDS), _REPEAT).order_by(labels_t.c.id)
        if run_ids is not None:
            query = query.where(labels_t.c.run_id.in_(list(run_ids)))
        if item is not None:
            for name, value in zip(_ITEM, item, strict=True):
                query = query.where(labels_t.c[name] == value)
        if kind is not None:
            query = query.where(labels_t.c.kind == kind)
        if reviewer is not None:
            query = query.where(labels_t.c.reviewer == reviewer)
        with self._read() as c:
            rows = c.execute(query).all()
        return [
            ReviewLabel(**dict(zip(_FIELDS, r[:-1], strict=True)), repeat=r[-1] or 0) for r in rows
        ]
