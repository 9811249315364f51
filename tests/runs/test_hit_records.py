"""A hit is stored without what its reader can tell (rank = position, channels = names of its
channel ranks, the dataset's own text), and read back whole."""

from __future__ import annotations

from memgauge.aggregates.hits import Found, hit_channels, hits_of
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


class _Counted(dict):  # type: ignore[type-arg]
    """A hit record that counts how often its channels are looked up."""

    reads = 0

    def get(self, key: str, default: object = None) -> object:
        if key in ("channels", "channel_ranks"):
            _Counted.reads += 1
        return super().get(key, default)


def test_a_searchs_channels_are_read_once_for_its_row_and_its_top_k() -> None:
    """The ir aggregate's query row and the agent metrics' top k read the same channels: each
    hit's are read once per search, and are `hit_channels` of each hit."""
    hits = [
        _Counted(id="a", channel_ranks={"lexical": 2, "dense": 1}),
        _Counted(id="b", channels=["graph"]),
        _Counted(id="c", channel_ranks={"lexical": 3}),
    ]
    found = Found(hits, {"total": 1.0})
    _Counted.reads = 0
    assert found.channels == [["dense", "lexical"], ["graph"], ["lexical"]]
    assert found.channels[:2] == [["dense", "lexical"], ["graph"]]
    assert _Counted.reads == 5  # a, c: channels then channel_ranks; b: channels
    assert found.channels == [hit_channels(h) for h in hits]
