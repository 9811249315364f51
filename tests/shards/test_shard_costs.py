"""What a sharded run costs beside a serial one: texts shared by corpora in different shards
are embedded once (in the driver, before the shards run), a warm embedding cache is not
embedded again, and shards that would not pay for the pool's start-up run in the driver's
own process (no worker is started); the results are the serial run's either way."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from tests.helpers import repeatable
from tests.shards.runs_alike import item_view, summary_view

from memgauge import api
from memgauge.data.io import save_retrieval_dataset
from memgauge.data.models import EvalQuery, Judgment, Memory, RetrievalDataset
from memgauge.embed import EMBEDDERS
from memgauge.errors import UsageError
from memgauge.runs import engine
from memgauge.runs.pools import ShardPool, open_pool


def _shared_haystacks(tmp_path: Path, corpora: int = 8) -> Path:
    """LongMemEval's shape in small: each question its own corpus, whose haystack is mostly
    sessions of a shared pool (the same texts in many corpora) and one of its own."""
    pool = [
        f"shared session {s} turn {t} about topic {s * t % 7}" for s in range(6) for t in range(4)
    ]
    memories, queries, judgments = [], [], []
    for c in range(corpora):
        corpus = f"q{c}"
        texts = [*pool[c % 3 :: 2], f"the answer of {c} is a lamp {c}", f"own turn {c}"]
        memories += [
            Memory(id=f"{corpus}/m{i}", text=t, corpus=corpus) for i, t in enumerate(texts)
        ]
        queries.append(EvalQuery(id=corpus, text=f"answer of {c}?", corpus=corpus))
        judgments.append(
            Judgment(query_id=corpus, memory_id=f"{corpus}/m{len(texts) - 2}", grade=3)
        )
    out = tmp_path / "haystacks"
    save_retrieval_dataset(
        RetrievalDataset(memories=memories, queries=queries, judgments=judgments), out
    )
    return out


def _embedded(log: Path) -> list[tuple[int, str]]:
    if not log.exists():
        return []
    return [tuple(json.loads(line)) for line in log.read_text().splitlines()]  # type: ignore[misc]


@pytest.fixture
def logged(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The embedder `logged:LOG` (tests/data/subjects/logged_embeddings.py) installed as a
    plug-in, here and in the worker processes (which read PYTHONPATH)."""
    site = tmp_path / "site"
    info = site / "mg_logged-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: mg-logged\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(
        "[memgauge.embedders]\nlogged = logged_embeddings:LoggedEmbedder\n"
    )
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(site), os.environ["PYTHONPATH"]]))
    EMBEDDERS.reload()
    yield
    monkeypatch.undo()
    EMBEDDERS.reload()


def _spec(log: Path) -> dict[str, Any]:
    return {"reference": {"mode": "hybrid", "embedder": f"logged:{log}"}}


@pytest.mark.usefixtures("logged")
def test_texts_corpora_share_are_embedded_once_across_workers_and_not_again_when_warm(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = _shared_haystacks(tmp_path)
    distinct = {m.text for m in api.load_dataset(data).memories} | {
        q.text for q in api.load_dataset(data).queries
    }
    monkeypatch.setenv("MEMGAUGE_EMBEDDINGS", str(tmp_path / "cache-sharded"))
    log = tmp_path / "sharded.log"
    sharded = api.evaluate(data, {"h": _spec(log)}, store=False, workers=2)
    embedded = _embedded(log)
    assert sorted(t for _pid, t in embedded) == sorted(distinct)  # each text once, no more
    assert {pid for pid, _t in embedded} == {os.getpid()}  # by the driver, on every core
    again = api.evaluate(data, {"h": _spec(log)}, store=False, workers=2)
    assert len(_embedded(log)) == len(embedded)  # warm: the workers embed nothing
    serial = api.evaluate(data, {"h": _spec(log)}, store=False)
    assert sharded.status == serial.status == "completed"
    assert item_view(sharded.items) == item_view(serial.items) == item_view(again.items)
    assert summary_view(sharded.summary) == summary_view(serial.summary)
    assert {m.name for m in serial.summary.measures() if m.value is not None} >= {"nDCG@10"}


def _pid_spec(pids: Path, **kwargs: Any) -> dict[str, Any]:
    """A PidMemory subject writing which process ingested each corpus under `pids` (made)."""
    pids.mkdir()
    return {
        "python": {"target": "shard_subjects:PidMemory", "kwargs": {"pids": str(pids), **kwargs}}
    }


def test_shards_that_would_not_pay_for_the_pool_run_in_the_driver(
    locomo_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    serial = api.evaluate(locomo_dir, {"m": _pid_spec(tmp_path / "serial")}, store=False)
    # opening the pool is said to cost an hour: these few milliseconds of shards stay here
    monkeypatch.setenv("MEMGAUGE_SHARD_STARTUP", "3600")
    kept = api.evaluate(locomo_dir, {"m": _pid_spec(tmp_path / "kept")}, store=False, workers=2)
    assert [p.name for p in (tmp_path / "kept").iterdir()] == [str(os.getpid())]
    monkeypatch.setenv("MEMGAUGE_SHARD_STARTUP", "0")  # free: every shard goes to the pool
    pooled = api.evaluate(locomo_dir, {"m": _pid_spec(tmp_path / "pooled")}, store=False, workers=2)
    pids = {p.name for p in (tmp_path / "pooled").iterdir()}
    assert pids
    assert str(os.getpid()) not in pids
    assert item_view(kept.items) == item_view(serial.items) == item_view(pooled.items)
    # (the summaries name each run's own subject spec, whose pids directory differs)
    measures = [(m.name, m.value) for m in repeatable(serial.summary.measures())]
    assert [(m.name, m.value) for m in repeatable(kept.summary.measures())] == measures
    assert any(value is not None for _name, value in measures)


def test_the_driver_keeps_running_shards_beside_the_pool_it_opens(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = _shared_haystacks(tmp_path)  # 8 corpora: 8 shards of one corpus each

    serial = api.evaluate(data, {"m": _pid_spec(tmp_path / "serial")}, store=False)
    # the pool pays after the first shard; this process does not wait for it to open
    monkeypatch.setenv("MEMGAUGE_SHARD_STARTUP", "1e-9")
    pooled = api.evaluate(data, {"m": _pid_spec(tmp_path / "pooled")}, store=False, workers=2)
    ingested = {p.name: p.read_text().split() for p in (tmp_path / "pooled").iterdir()}
    here = ingested.pop(str(os.getpid()))
    # the first shard (its time the estimate), then at least the one run while the pool opens
    assert len(here) >= 2
    everywhere = sorted([*here, *(c for some in ingested.values() for c in some)])
    assert everywhere == [f"q{c}" for c in range(8)]  # each corpus once, in one process
    assert item_view(pooled.items) == item_view(serial.items)
    measures = [(m.name, m.value) for m in repeatable(serial.summary.measures())]
    assert [(m.name, m.value) for m in repeatable(pooled.summary.measures())] == measures


class _HeldCounted(ThreadPoolExecutor):
    """A pool of one worker (a thread) that counts the shards it holds, running or waiting
    behind the running one, at the most at once."""

    def __init__(self) -> None:
        super().__init__(1)
        self.lock = threading.Lock()
        self.held = self.most_held = self.ran = 0

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        with self.lock:
            self.held += 1
            self.most_held = max(self.most_held, self.held)

        def counted() -> Any:
            try:
                return fn(*args, **kwargs)
            finally:
                with self.lock:  # before its future is done: the next is submitted after
                    self.held -= 1
                    self.ran += 1

        return super().submit(counted)


def test_no_shard_waits_in_the_pool_behind_a_busy_worker_while_the_driver_could_run_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = _shared_haystacks(tmp_path)  # 8 corpora: 8 shards of one corpus each

    serial = api.evaluate(
        data, {"m": _pid_spec(tmp_path / "serial", per_memory=0.005)}, store=False
    )
    counted = _HeldCounted()
    # a pool of one worker beside the driver, worth opening after the driver's first shard
    pool = ShardPool(lambda: counted, 2, startup=1e-9, slots=1)
    monkeypatch.setattr(engine, "open_pool", lambda workers, executor: pool)
    try:
        pooled = api.evaluate(
            data, {"m": _pid_spec(tmp_path / "pooled", per_memory=0.005)}, store=False, workers=2
        )
    finally:
        counted.shutdown()
    # the pool was given a shard as its worker freed, never one to hold while it ran another:
    # such a shard waits there while the driver could take it (at the end, the driver would
    # wait on it)
    assert counted.most_held == 1
    assert 1 <= counted.ran < 8
    assert item_view(pooled.items) == item_view(serial.items)
    measures = [(m.name, m.value) for m in repeatable(serial.summary.measures())]
    assert [(m.name, m.value) for m in repeatable(pooled.summary.measures())] == measures


@pytest.mark.parametrize(("startup", "spawned"), [("", 1), ("0.5", 1), ("0", 2)])
def test_the_driver_is_one_of_the_workers_when_it_runs_shards_beside_the_pool(
    monkeypatch: pytest.MonkeyPatch, startup: str, spawned: int
) -> None:
    # "": the default start-up; "0": a free pool, which takes every shard and has every worker
    monkeypatch.setenv("MEMGAUGE_SHARD_STARTUP", startup)
    pool = open_pool(2, None)
    assert pool is not None
    try:
        assert (pool.workers, pool.slots) == (2, spawned)
        assert pool.executor._max_workers == spawned  # type: ignore[attr-defined]
    finally:
        pool.close()


def test_only_memories_that_embed_are_built_in_the_driver_before_the_shards(
    locomo_dir: Path, tmp_path: Path
) -> None:
    pids = tmp_path / "built"
    pids.mkdir()
    spec = {"python": {"target": "shard_subjects:PidOnBuild", "kwargs": {"pids": str(pids)}}}
    report = api.evaluate(locomo_dir, {"m": spec}, store=False, workers=2)  # all to the pool
    assert report.status == "completed"
    built = {p.name for p in pids.iterdir()}
    assert built
    assert str(os.getpid()) not in built  # its constructor ran in the workers only


def test_a_bad_startup_setting_is_a_usage_error(
    locomo_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMGAUGE_SHARD_STARTUP", "soon")
    with pytest.raises(UsageError, match="MEMGAUGE_SHARD_STARTUP=soon: give seconds"):
        api.evaluate(locomo_dir, ["lexical"], store=False, workers=2)
