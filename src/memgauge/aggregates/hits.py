"""Recorded search hits as the aggregates read them.

A retrieval item's output is its list of hit records, stored compactly (`runs.work.hit_record`):
a record may leave out its rank (its 1-based position), its score (None), its text (the
dataset's) and its channels (the names of its channel ranks).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

__all__ = ["Found", "hit_channels", "hits_of"]


def hits_of(output: Any) -> list[dict[str, Any]] | None:
    """The hit records of a retrieval item's output (`{"hits": [...]}` or a bare list; a bare
    id stands for `{"id": id}`). A record may leave out its rank (its 1-based position), its
    score (None), its text (the dataset's) and its channels (the names of its channel ranks):
    see `hit_channels`."""
    if isinstance(output, Mapping):
        output = output.get("hits")
    if not isinstance(output, list):
        return None
    # a dict is the recorded form: its type checked first, an ABC's isinstance for the rest
    # (30,000 hits of a LoCoMo run, read by the ir and the cost aggregates)
    return [
        h
        if type(h) is dict
        else cast(dict[str, Any], h)
        if isinstance(h, Mapping)
        else {"id": str(h)}
        for h in output
    ]


class Found:
    """One recorded search as the aggregate reads it: the ranked ids, and the hit records
    for what else a metric needs (channels, channel ranks, text)."""

    __slots__ = ("_channels", "filtered", "hits", "ids", "latency_ms")

    def __init__(
        self,
        hits: list[dict[str, Any]],
        latency_ms: Mapping[str, float],
        filtered: list[dict[str, Any]] | None = None,
    ) -> None:
        self.hits = hits
        self.ids = [str(h["id"]) for h in hits]
        self.latency_ms = latency_ms
        #: the results the system's session dedup filtered out (`SearchResult.dedup_filtered`)
        self.filtered = filtered
        self._channels: list[list[str]] | None = None

    @property
    def channels(self) -> list[list[str]]:
        """`hit_channels` of each hit, in rank order: read once, by the query's row and the
        agent metrics' top k (30,000 hits of a LoCoMo run)."""
        if self._channels is None:
            self._channels = [hit_channels(h) for h in self.hits]
        return self._channels


def hit_channels(hit: Mapping[str, Any]) -> list[str]:
    """The retrieval channels that found a recorded hit."""
    channels = hit.get("channels")
    if channels is not None:
        return [str(c) for c in channels]
    ranks = hit.get("channel_ranks") or ()
    # one channel's hit (every hit of a one-channel memory): nothing to sort
    return list(ranks) if len(ranks) == 1 else sorted(ranks)
