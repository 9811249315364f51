"""Sharded runs on a process pool: item for item what a serial run gives, a worker that dies is
replaced and its shard run again, live objects stay in this process."""

from __future__ import annotations

import dataclasses
import pickle
from pathlib import Path
from typing import Any

import pytest
from tests.shards.runs_alike import item_view, locomo_like, summary_view

from memgauge import api
from memgauge.data.io import load_retrieval_dataset, save_retrieval_dataset
from memgauge.errors import DataError, UsageError
from memgauge.runs.plan import plan_suite
from memgauge.runs.shards import (
    SHARDS_PER_WORKER,
    WorkerLLM,
    plan_shards,
    run_shard,
    worker_llm,
)
from memgauge.runs.suite import Suite

LOCOMO = Path("/work/shared/datasets/locomo10.json")
QA_ITEMS = 320


def _suite(dataset: Path, subjects: dict[str, Any], *, audit: bool = False) -> Suite:
    tasks: list[dict[str, Any]] = [
        {
            "name": "recall",
            "kind": "retrieval",
            "dataset": str(dataset),
            "k": 5,
            "evaluators": [{"retrieval": "nDCG@5"}, {"retrieval": "Recall@5"}],
        }
    ]
    if audit:
        tasks.append(
            {
                "name": "qa",
                "kind": "expected-output",
                "dataset": str(LOCOMO),
                "probes": {"seed": 3},
                # LoCoMo's first three conversations (199 + 105 + 16 questions): shards of
                # several conversations, as the whole file's 1,986 gave, at a sixth of its cost
                "limit": QA_ITEMS,
                "k": 3,
                "subjects": ["lexical"],
                "evaluators": [{"token_f1": {"variant": "locomo"}}, "locomo-qa"],
            }
        )
    return Suite.model_validate(
        {"name": "shards", "seed": 11, "subjects": subjects, "tasks": tasks}
    )


SUBJECTS = {
    "lexical": {"reference": {"mode": "lexical"}},
    "keyword": {
        "python": {"target": "shard_subjects:SlowIngestMemory", "kwargs": {"per_memory": 0}}
    },
}


def _stored(db: Path, run_id: str) -> list[api.ItemRecord]:
    with api.open_store(db) as store:
        return store.item_records(run_id)


@pytest.mark.skipif(not LOCOMO.is_file(), reason="LoCoMo is not in ../shared/datasets")
def test_a_process_pool_run_equals_the_serial_run_item_for_item(
    locomo_dir: Path, tmp_path: Path
) -> None:
    suite = _suite(locomo_dir, SUBJECTS, audit=True)
    db = tmp_path / "r.db"
    serial = api.run_suite(suite, store=db, concurrency=3)
    sharded = api.run_suite(suite, store=db, concurrency=3, workers=2)
    assert serial.status == sharded.status == "completed"
    assert len(sharded.items) == len(serial.items) == 60 * 2 + QA_ITEMS  # + LoCoMo's probes
    assert len({r.item_id.split(":")[0] for r in sharded.items if r.task == "qa"}) == 3
    assert item_view(sharded.items) == item_view(serial.items)
    assert item_view(_stored(db, sharded.run_id)) == item_view(_stored(db, serial.run_id))
    assert summary_view(sharded.summary) == summary_view(serial.summary)
    # the numbers are real ones, not empty on both sides
    assert {m.name for m in sharded.summary.measures() if m.value is not None} >= {
        "nDCG@5",
        "Recall@5",
    }
    assert all(r.attempts == 1 for r in _stored(db, sharded.run_id))


def test_a_worker_that_dies_is_replaced_and_nothing_is_recorded_twice(
    locomo_dir: Path, tmp_path: Path
) -> None:
    marker = tmp_path / "died"
    dies = {"python": {"target": "shard_subjects:DiesOnce", "kwargs": {"marker": str(marker)}}}
    db = tmp_path / "r.db"
    sharded = api.run_suite(_suite(locomo_dir, {"keyword": dies}), store=db, workers=2)
    assert marker.exists()  # a worker did die mid-shard
    serial = api.run_suite(_suite(locomo_dir, {"keyword": SUBJECTS["keyword"]}), store=db)
    assert sharded.status == "completed"
    stored = _stored(db, sharded.run_id)
    assert len(stored) == 60
    assert all(r.status == "completed" for r in stored)
    assert all(r.attempts == 1 for r in stored)
    assert item_view(stored) == item_view(_stored(db, serial.run_id))


class _LiveMemory:
    """A live object: it cannot leave this process."""

    def __init__(self) -> None:
        self.memories: list[Any] = []

    def reset(self) -> None:
        self.memories = []

    def ingest(self, memories: list[Any]) -> None:
        self.memories += memories

    def search(self, query: str, k: int) -> list[str]:
        words = set(query.split())
        ranked = sorted(self.memories, key=lambda m: (-len(words & set(m.text.split())), m.id))
        return [m.id for m in ranked[:k]]


def test_live_objects_run_in_this_process_beside_the_shards(locomo_dir: Path) -> None:
    systems = {"lexical": "lexical", "live": _LiveMemory()}
    serial = api.evaluate(locomo_dir, systems, store=False)
    sharded = api.evaluate(locomo_dir, systems, store=False, workers=2)
    assert sharded.status == "completed"
    assert {r.subject for r in sharded.items} == {"lexical", "live"}
    assert item_view(sharded.items) == item_view(serial.items)


def test_what_cannot_go_to_a_worker_is_refused_before_anything_runs(
    locomo_dir: Path, tmp_path: Path
) -> None:
    ds = load_retrieval_dataset(locomo_dir)
    with pytest.raises(UsageError, match="dataset given in memory"):
        api.evaluate(ds, ["lexical"], store=False, workers=2)
    on_disk = {"reference": {"mode": "lexical", "path": str(tmp_path / "mem.db")}}
    with pytest.raises(UsageError, match="every worker would share"):
        api.run_suite(_suite(locomo_dir, {"file": on_disk}), store=False, workers=2)
    with pytest.raises(UsageError, match="--executor 'ray'"):
        api.run_suite(_suite(locomo_dir, SUBJECTS), store=False, executor="ray")


def _shards(locomo_dir: Path, pending: set[tuple[str, str, str]] | None, workers: int) -> Any:
    suite = _suite(locomo_dir, {"lexical": SUBJECTS["lexical"]})
    plan = plan_suite(suite, locomo_dir)
    keys = {("lexical", "recall", it.id) for it in plan[0].items}
    return keys, plan_shards(
        plan,
        suite,
        ["lexical"],
        keys if pending is None else pending,
        base=locomo_dir,
        concurrency=2,
        workers=workers,
        llm=WorkerLLM(),
    )


def test_shards_cut_corpora_into_neighbour_groups_and_hold_only_pending_items(
    locomo_dir: Path,
) -> None:
    keys, shards = _shards(locomo_dir, None, workers=1)
    # 12 conversations, at most SHARDS_PER_WORKER shards for one worker: two per shard
    assert len(shards) == 12 // 2
    assert SHARDS_PER_WORKER == 8
    assert [s.corpora for s in shards[:2]] == [("conv-0", "conv-1"), ("conv-2", "conv-3")]
    held = [("lexical", "recall", i) for s in shards for i in s.items]
    assert sorted(held) == sorted(keys)  # every item once
    some = set(sorted(keys)[:7])
    _keys, fewer = _shards(locomo_dir, some, workers=2)
    assert {("lexical", "recall", i) for s in fewer for i in s.items} == some
    assert all(s.items for s in fewer)


def test_the_last_shards_hold_one_corpus_each_so_no_worker_waits_long_on_the_last(
    tmp_path: Path,
) -> None:
    data = tmp_path / "forty"
    save_retrieval_dataset(locomo_like(40, 3, 1), data)
    keys, shards = _shards(data, None, workers=2)
    # 16 shards' worth for 2 workers: 3 corpora a shard, but the last 2 shards' worth (6
    # corpora) one a shard
    assert [len(s.corpora) for s in shards] == [3] * 11 + [1] + [1] * 6
    assert [c for s in shards for c in s.corpora] == [f"conv-{i}" for i in range(40)]
    assert sorted(("lexical", "recall", i) for s in shards for i in s.items) == sorted(keys)


def test_a_worker_reads_nothing_of_the_dataset_its_shard_carries_its_items_and_memories(
    locomo_dir: Path, tmp_path: Path
) -> None:
    _keys, shards = _shards(locomo_dir, None, workers=1)
    shard = shards[1]
    assert shard.part is not None
    assert [it.id for it in shard.part.items] == list(shard.items)
    ds = load_retrieval_dataset(locomo_dir)
    mine = [m.id for m in ds.memories if m.corpus in shard.corpora]
    assert [m.id for m in shard.part.memories or ()] == mine  # its corpora's, nothing else
    # a worker elsewhere, with no dataset at all: the shard answers from what it carries
    landed = pickle.loads(pickle.dumps(dataclasses.replace(shard, driver="elsewhere")))
    assert landed.part.memories == shard.part.memories
    locomo_dir.rename(tmp_path / "gone")
    answered = run_shard(landed)
    assert sorted(r.item_id for r, _s in answered.records) == sorted(shard.items)
    assert all(r.status == "queued" and r.output for r, _s in answered.records)
    assert [c for c, _s in answered.setups] == list(shard.corpora)


def test_a_worker_whose_dataset_differs_refuses_the_shard(locomo_dir: Path) -> None:
    _keys, shards = _shards(locomo_dir, None, workers=1)
    # a shard without its part (a plug-in kind's) is planned from the worker's dataset
    wrong = dataclasses.replace(shards[0], dataset_sha256="0" * 64, driver="elsewhere", part=None)
    with pytest.raises(DataError, match="every worker must see the dataset"):
        run_shard(wrong)
    answered = run_shard(shards[0])  # in this process, the same shard answers its items
    assert len(answered.records) == len(shards[0].items)
    assert all(r.status == "queued" and r.output for r, _s in answered.records)  # unscored


def test_each_worker_gets_its_share_of_the_llm_concurrency(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    api.configure_llm()  # the file cache of MEMGAUGE_LLM_CACHE
    monkeypatch.setenv("MEMGAUGE_LLM_CONCURRENCY", "10")
    share = worker_llm(4)
    assert share.concurrency == 2  # 4 workers x 2 in flight: within the 10 allowed
    assert share.mode == "use"
    assert getattr(share.cache, "path", None) is not None  # the driver's file, reopened there
    monkeypatch.delenv("MEMGAUGE_LLM_CONCURRENCY")
    assert worker_llm(32).concurrency == 1  # never none


def test_the_workers_share_is_of_the_concurrency_every_client_reads(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The share read MEMGAUGE_LLM_CONCURRENCY on its own: "1e2" (100 for the driver's
    client) was 16 here, and "-3" or "many" fell back to 16 without a word (fuzzC-6)."""
    api.configure_llm()
    monkeypatch.setenv("MEMGAUGE_LLM_CONCURRENCY", "1e2")
    assert worker_llm(4).concurrency == 25
    monkeypatch.setenv("MEMGAUGE_LLM_CONCURRENCY", "-3")
    with pytest.raises(
        UsageError, match="MEMGAUGE_LLM_CONCURRENCY='-3' is out of range: set it to a whole number"
    ):
        worker_llm(4)
