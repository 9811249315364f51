"""A hit is stored without what its reader can tell (rank = position, channels = names of its
channel ranks, the dataset's own text), and read back whole."""

from __future__ import annotations

from memgauge.aggregates.hits import hit_channels, hits_of
from memgauge.runs.kinds.base import hit_record
from memgauge.subjects.protocol import Hit


def test_a_fused_hit_keeps_what_cannot_be_told_and_reads_back_whole() -> None:
    known = {"m1": "the dataset's text"}
    hits = [
        Hit("m1", "the dataset's text", 0.9, 1, ("dense", "lexical"), {"lexical": 2, "dense": 1}),
        Hit("m2", "said otherwise", None, 5, ("lexical",), {"lexical": 1}),  # rank != position
        Hit("m3", "", 0.1, 3, ("graph",), {}),  # channels that no rank names
    ]
    stored = [hit_record(h, i, known) for i, h in enumerate(hits, 1)]
    assert stored[0] == {"id": "m1", "score": 0.9, "channel_ranks": {"lexical": 2, "dense": 1}}
    assert stored[1] == {
        "id": "m2",
        "rank": 5,
        "text": "said otherwise",
        "channel_ranks": {"lexical": 1},
    }
    assert stored[2] == {"id": "m3", "score": 0.1, "text": "", "channels": ["graph"]}
    read = hits_of({"hits": stored})
    assert read is not None
    assert [hit_channels(h) for h in read] == [["dense", "lexical"], ["lexical"], ["graph"]]


def test_hits_recorded_whole_or_as_bare_ids_read_the_same() -> None:
    whole = [{"id": "a", "rank": 1, "channels": ["lexical"], "channel_ranks": {"lexical": 1}}]
    assert [hit_channels(h) for h in hits_of(whole) or []] == [["lexical"]]
    assert hits_of(["a", 7]) == [{"id": "a"}, {"id": "7"}]
    assert [hit_channels(h) for h in hits_of(["a"]) or []] == [[]]
    assert hits_of("not hits") is None
