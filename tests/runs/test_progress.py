"""What a run tells its progress: the item total over the whole run, and, while each corpus is
ingested, its memories in batches (the ingest bar's count and ETA); the CLI's bar shows both."""

from __future__ import annotations

from io import StringIO
from typing import Any

from rich.console import Console

from memgauge import api
from memgauge.data.models import EvalQuery, Judgment, Memory, RetrievalDataset
from memgauge.runs.work import INGEST_BATCH


class _Recorded:
    def __init__(self) -> None:
        self.calls: list[tuple[Any, ...]] = []

    def start(self, run_id: str, total: int, done: int) -> None:
        self.calls.append(("start", total, done))

    def phase(self, subject: str, task: str, corpus: str | None) -> None:
        self.calls.append(("phase", subject, corpus))

    def ingest(self, subject: str, corpus: str | None, done: int, total: int) -> None:
        self.calls.append(("ingest", subject, corpus, done, total))

    def advance(self, row: Any) -> None:
        self.calls.append(("advance",))


def _dataset(n_memories: int, corpora: int) -> RetrievalDataset:
    memories = [
        Memory(id=f"m{i}", text=f"memory {i} about topic {i % 7}", corpus=f"c{i % corpora}")
        for i in range(n_memories)
    ]
    queries = [EvalQuery(id=f"q{c}", text="topic 3", corpus=f"c{c}") for c in range(corpora)]
    judgments = [Judgment(query_id=f"q{c}", memory_id=f"m{c}", grade=3) for c in range(corpora)]
    return RetrievalDataset(memories=memories, queries=queries, judgments=judgments)


def test_ingest_reports_batches_per_corpus_and_the_item_total_is_the_runs() -> None:
    n = INGEST_BATCH * 2 + 37
    progress = _Recorded()
    api.evaluate(
        _dataset(n * 2, 2),
        ["lexical"],
        measures=("Recall@5",),
        resamples=100,
        store=False,
        progress=progress,
    )
    starts = [c for c in progress.calls if c[0] == "start"]
    assert starts == [("start", 2, 0)]  # both corpora's queries, from the first phase on
    for corpus in ("c0", "c1"):
        seen = [c[3:] for c in progress.calls if c[0] == "ingest" and c[2] == corpus]
        assert seen == [(0, n), (INGEST_BATCH, n), (2 * INGEST_BATCH, n), (n, n)]
    assert sum(c[0] == "advance" for c in progress.calls) == 2
    # the first corpus is ingested whole before its item is searched
    assert progress.calls.index(("ingest", "lexical", "c0", n, n)) < progress.calls.index(
        ("advance",)
    )


def test_the_cli_bar_shows_an_ingest_bar_that_goes_away_when_done() -> None:
    from memgauge.cli._evaluation import RunProgressBar

    bar = RunProgressBar()
    bar.progress.live.console = Console(file=StringIO(), width=120)
    bar.start("r1", total=10, done=0)
    bar.ingest("lexical", "c0", 0, 100)
    bar.ingest("lexical", "c0", 50, 100)
    task = bar._task(bar.ingest_task)  # type: ignore[arg-type]
    assert (task.completed, task.total, task.visible) == (50, 100, True)
    assert task.description == "ingest lexical [c0]"
    bar.ingest("lexical", "c0", 100, 100)
    assert bar._task(bar.ingest_task).visible is False  # type: ignore[arg-type]
    bar.ingest("dense", "c1", 0, 40)  # the next corpus reuses the bar from zero
    task = bar._task(bar.ingest_task)  # type: ignore[arg-type]
    assert (task.completed, task.total, task.visible) == (0, 40, True)
    assert task.description == "ingest dense [c1]"
    bar.stop()
