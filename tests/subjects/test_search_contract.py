"""A search that returns the wrong shape fails each query with a message that quotes the
contract (what `search` must return), never a bare type name."""

from __future__ import annotations

from typing import Any

import pytest

from memgauge import api
from memgauge.data.models import EvalQuery, Judgment, Memory, RetrievalDataset
from memgauge.errors import SubjectError
from memgauge.subjects.python_import import SEARCH_CONTRACT, normalise_hits


class PairsMemory:
    """What many retrieval libraries return: (id, score) pairs."""

    def __init__(self) -> None:
        self.memories: list[Memory] = []

    def reset(self) -> None:
        self.memories = []

    def ingest(self, memories: list[Memory]) -> None:
        self.memories.extend(memories)

    def search(self, query: str, k: int) -> list[tuple[str, float]]:
        return [(m.id, 1.0) for m in self.memories[:k]]


def test_id_score_pairs_fail_every_query_naming_the_contract() -> None:
    ds = RetrievalDataset(
        name="pairs",
        memories=[Memory(id="a", text="tax rounding")],
        queries=[EvalQuery(id="q1", text="tax"), EvalQuery(id="q2", text="rounding")],
        judgments=[Judgment(query_id=q, memory_id="a", grade=3) for q in ("q1", "q2")],
    )
    report = api.evaluate(
        ds, {"pairs": PairsMemory()}, measures=("nDCG@10",), resamples=100, store=False
    )
    failures = [f for it in report.items for f in it.failures]
    assert len(failures) == 2  # recorded failures, never scores
    for failure in failures:
        assert "search hit 1 is a tuple (('a', 1.0))" in failure.message
        assert "return {'id': id, 'score': score} instead" in failure.message
        assert SEARCH_CONTRACT in failure.message


@pytest.mark.parametrize(
    ("raw", "says"),
    [
        ({"hits": ["a"]}, "search returned dict ({'hits': ['a']})"),
        ("a b", "search returned str ('a b')"),
        ([{"memory_id": "a"}], "search hit 1 has no 'id' ({'memory_id': 'a'})"),
        ([1.5], "search hit 1 is a float (1.5)"),
    ],
)
def test_every_wrong_shape_names_what_came_back_and_the_contract(raw: Any, says: str) -> None:
    with pytest.raises(SubjectError) as info:
        normalise_hits(raw, 5)
    assert says in str(info.value)
    assert str(info.value).endswith(SEARCH_CONTRACT)
