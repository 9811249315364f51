"""Sharded runs on Dask: a `LocalCluster` of two worker processes, started and stopped by the
fixture. A run equals the serial one item for item; a worker killed mid-run is replaced by
Dask, its shard runs again, and nothing is lost or recorded twice."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.helpers import lazy_import
from tests.shards.runs_alike import SUBJECTS, item_view, summary_view

from memgauge import api
from memgauge.runs import pools
from memgauge.runs.pools import open_pool
from memgauge.runs.suite import Suite

distributed = lazy_import("distributed")


@pytest.fixture(scope="module")
def cluster() -> Iterator[Any]:
    """Two worker processes of one thread each; they import the test subjects."""
    with pytest.MonkeyPatch.context() as mp:
        # the workers' environment is the one they are started with
        mp.setenv("PYTHONPATH", os.pathsep.join([str(SUBJECTS), os.environ.get("PYTHONPATH", "")]))
        mp.syspath_prepend(str(SUBJECTS))  # a spawned process takes its parent's sys.path
        with distributed.LocalCluster(
            n_workers=2,
            threads_per_worker=1,
            processes=True,
            # no dashboard; the scheduler's HTTP server (health, metrics) on a free port: at
            # Dask's default 8787 it warns when another cluster holds it (and fails a test)
            dashboard_address=":0",
            scheduler_kwargs={"dashboard": False},
            silence_logs=50,
        ) as local:
            yield local


def _suite(dataset: Path, per_memory: float) -> Suite:
    memory = {"target": "shard_subjects:SlowIngestMemory", "kwargs": {"per_memory": per_memory}}
    return Suite.model_validate(
        {
            "name": "dask-shards",
            "seed": 5,
            "subjects": {"lexical": {"reference": {"mode": "lexical"}}, "slow": {"python": memory}},
            "tasks": [
                {
                    "name": "recall",
                    "kind": "retrieval",
                    "dataset": str(dataset),
                    "k": 5,
                    "evaluators": [{"retrieval": "nDCG@5"}, {"retrieval": "MRR@5"}],
                }
            ],
        }
    )


def _stored(db: Path, run_id: str) -> list[api.ItemRecord]:
    with api.open_store(db) as store:
        return store.item_records(run_id)


def test_a_dask_run_equals_the_serial_run_item_for_item(
    cluster: Any, locomo_dir: Path, tmp_path: Path
) -> None:
    suite = _suite(locomo_dir, 0.0)
    db = tmp_path / "r.db"
    serial = api.run_suite(suite, store=db)
    address = cluster.scheduler_address.replace("tcp://", "dask://")
    sharded = api.run_suite(suite, store=db, executor=address)
    assert sharded.status == "completed"
    assert len(sharded.items) == 120
    assert item_view(_stored(db, sharded.run_id)) == item_view(_stored(db, serial.run_id))
    assert summary_view(sharded.summary) == summary_view(serial.summary)


class _KillAWorker:
    """Progress that, when the first items are recorded, kills a Dask worker that is running
    a shard (SIGKILL to its process)."""

    def __init__(self, cluster: Any) -> None:
        self.client = distributed.Client(cluster)
        self.killed: list[str] = []

    def start(self, run_id: str, total: int, done: int) -> None:
        pass

    def phase(self, subject: str, task: str, corpus: str | None) -> None:
        pass

    def advance(self, row: Any) -> None:
        if self.killed:
            return
        busy = [addr for addr, keys in self.client.processing().items() if keys]
        if not busy:
            return
        pid = self.client.run(os.getpid, workers=[busy[0]])[busy[0]]
        os.kill(pid, signal.SIGKILL)
        self.killed.append(busy[0])


def test_a_dask_worker_killed_mid_run_loses_nothing_and_records_nothing_twice(
    cluster: Any, locomo_dir: Path, tmp_path: Path
) -> None:
    suite = _suite(locomo_dir, 0.02)  # 0.3 s of ingestion per conversation
    db = tmp_path / "r.db"
    killer = _KillAWorker(cluster)
    try:
        sharded = api.run_suite(
            suite, store=db, executor=cluster.scheduler_address, progress=killer
        )
    finally:
        killer.client.close()
    assert killer.killed, "no worker was busy when the first items were recorded"
    assert sharded.status == "completed"
    stored = _stored(db, sharded.run_id)
    assert len(stored) == 120
    assert all(r.status == "completed" for r in stored)
    assert all(r.attempts == 1 for r in stored)
    serial = api.run_suite(_suite(locomo_dir, 0.0), store=db)
    assert item_view(stored) == item_view(_stored(db, serial.run_id))
    cluster.wait_for_workers(2, timeout=60)  # the nanny started a new one


def test_open_pool_leaves_importing_dask_to_the_thread_that_opens_the_cluster() -> None:
    # the driver runs shards while the cluster opens: importing Dask is part of opening it
    code = (
        "import sys; from memgauge.runs.pools import open_pool; p = open_pool(2, 'dask:local'); "
        "print(p is not None and not p.opened, 'distributed' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["True", "False"]


def test_a_local_cluster_the_driver_works_beside_has_one_worker_process_fewer(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("MEMGAUGE_SHARD_STARTUP", raising=False)
    pool = open_pool(2, "dask:local")
    assert pool is not None
    assert (pool.workers, pool.slots) == (2, 1)  # the driver is the second
    pids: set[int] = set()
    try:
        executor: Any = pool.executor
        assert len(executor._client.scheduler_info()["workers"]) == 1
        pids = set(executor._client.run(os.getpid).values())
    finally:
        pool.close()
    # closed at once, not left to Dask's graceful close: no worker process is left, and no
    # nanny started one again
    assert pids
    assert not [p for p in pids if _alive(p)]
    monkeypatch.setenv("MEMGAUGE_SHARD_STARTUP", "0")  # free to open: it takes every shard
    free = open_pool(2, "dask:local")
    assert free is not None
    assert (free.workers, free.slots) == (2, 2)


def _alive(pid: int) -> bool:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return False
    return "\nState:\tZ" not in status


class _Cluster:
    def __init__(self, **_options: Any) -> None:
        self.workers: dict[str, Any] = {}
        self.closed = False
        opened_clusters.append(self)

    def sync(self, *_args: Any) -> None:
        pass

    def close(self) -> None:
        self.closed = True


opened_clusters: list[_Cluster] = []


class _NoClient:
    def __init__(self, _cluster: Any) -> None:
        raise TimeoutError("the scheduler did not answer")  # or Ctrl-C while it connects


def test_a_cluster_whose_client_failed_to_connect_is_still_closed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    fake = type("distributed", (), {"LocalCluster": _Cluster, "Client": _NoClient})
    monkeypatch.setattr(pools, "_distributed", lambda: fake)
    opened_clusters.clear()
    pool = open_pool(2, "dask:local")
    assert pool is not None
    with pytest.raises(TimeoutError):
        _ = pool.executor
    pool.close()  # the run's cleanup: no error of its own in place of the run's
    assert [c.closed for c in opened_clusters] == [True]
