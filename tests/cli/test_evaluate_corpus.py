"""`memgauge evaluate --corpus ID --limit N`: a first run on one LoCoMo conversation (or one
LongMemEval question) instead of the whole file, as `bench systems` and a suite's `only:` /
`limit:` already allowed; the reports say the run asked a part of the dataset."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import pytest
from tests.helpers import ScriptedSystem

from memgauge import api
from memgauge.cli.main import main
from memgauge.data.models import Memory

ROOT = Path(__file__).resolve().parents[2]
MINI = ROOT / "examples" / "data" / "longmemeval-mini.json"


def _evaluate(tmp: Path, *args: str) -> int:
    out = ["--no-store", "--quiet", "--out", str(tmp / "out"), "-m", "RR@5"]
    return main(["evaluate", str(MINI), "-s", "lexical", *args, *out])


def _rr5(tmp: Path) -> tuple[float, int]:
    doc = json.loads((tmp / "out" / "result.json").read_text())
    (system,) = doc["systems"]
    m = system["metrics"]["RR@5"]
    return m["value"], m["n_scored"]


class _Recording(ScriptedSystem):
    """Remembers which corpora's memories it was given."""

    def __init__(self) -> None:
        super().__init__("recording", {})
        self.corpora: set[str | None] = set()

    def ingest(self, memories: Sequence[Memory]) -> None:
        self.corpora |= {m.corpus for m in memories}
        super().ingest(memories)


def test_corpus_asks_only_its_queries_and_ingests_only_its_memories(tmp_path: Path) -> None:
    """Two of the six questions: their values equal the whole run's rows for them, n is 2, the
    other corpora's memories are never ingested, and the reports say 2 of 6 were planned."""
    whole = api.evaluate(MINI, ["lexical"], measures=["RR@5"], options=api.RunConfig(store=False))
    rows = {r.item_id: r for r in whole.items}
    some = api.evaluate(
        MINI,
        ["lexical"],
        measures=["RR@5"],
        corpora=["mini-02", "mini-05"],
        options=api.RunConfig(store=False),
    )
    assert sorted(r.item_id for r in some.items) == ["mini-02", "mini-05"]
    recording = _Recording()
    api.evaluate(
        MINI, [recording], corpora=["mini-02", "mini-05"], options=api.RunConfig(store=False)
    )
    assert recording.corpora == {"mini-02", "mini-05"}
    for r in some.items:
        assert r.score == rows[r.item_id].score

    assert _evaluate(tmp_path, "--corpus", "mini-02", "--corpus", "mini-05") == 0
    mean, n = _rr5(tmp_path)
    assert n == 2
    assert mean == pytest.approx(sum(rows[q].score or 0 for q in ("mini-02", "mini-05")) / 2)
    summary = (tmp_path / "out" / "summary.md").read_text()
    assert "2 of the dataset's 6 judged queries were planned" in summary
    assert "the other 4 were not asked" in summary


def test_limit_takes_the_first_judged_queries_of_the_corpora(tmp_path: Path) -> None:
    assert _evaluate(tmp_path, "--limit", "3") == 0
    assert _rr5(tmp_path)[1] == 3
    assert (
        "3 of the dataset's 6 judged queries were planned"
        in (tmp_path / "out" / "summary.md").read_text()
    )


def test_the_whole_dataset_says_nothing_of_a_part(tmp_path: Path) -> None:
    assert _evaluate(tmp_path) == 0
    assert _rr5(tmp_path)[1] == 6
    assert "judged queries were planned" not in (tmp_path / "out" / "summary.md").read_text()


def test_a_corpus_the_dataset_lacks_is_bad_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A mistyped conversation id would run nothing and exit 0: exit 2, the corpora named."""
    assert _evaluate(tmp_path, "--corpus", "mini-99") == 2
    err = capsys.readouterr().err
    assert "no item of its dataset is in corpus mini-99" in err
    assert "'mini-01'" in err
    assert "Traceback" not in err
    assert not (tmp_path / "out").exists()
