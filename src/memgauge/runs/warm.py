"""Embedding ahead of need: while the run's first lanes search and score, a subject that can
`warm(texts, stop)` (the reference memory with a dense channel and an embedding cache) is given
every text it will embed, its memories and its questions, corpus by corpus in the order its lane
will ask for them. The embedder runs those in large length-bucketed batches on every core; the
lane, when it gets there, finds them cached, or waits for the ones being embedded instead of
embedding them again. A warm-up that fails changes nothing: the lane embeds what it needs
itself, and a failure is then recorded where it belongs.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Any, cast

from memgauge._util.imports import rooted
from memgauge.data.models import Memory
from memgauge.runs.lanes import SubjectLane
from memgauge.runs.plan import PlannedTask
from memgauge.runs.shards import Shard
from memgauge.runs.suite import Suite
from memgauge.runs.summary import subjects_of
from memgauge.subjects.registry import build_subject

__all__ = ["Warming", "texts_to_embed", "warm_shards"]


def texts_to_embed(task: PlannedTask, pending: Iterable[str]) -> list[str]:
    """The texts a memory subject embeds for `task`'s pending item ids, in the order it does:
    per corpus (in item order) that corpus's memories, then its questions."""
    wanted = set(pending)
    groups: dict[str | None, list[str]] = {}
    for it in task.items:
        if it.id in wanted:
            queries = groups.setdefault(it.corpus, [])
            if isinstance(it.input, str):
                queries.append(it.input)
    by_corpus: dict[str | None, list[Memory]] = {}
    for m in task.memories or ():
        by_corpus.setdefault(m.corpus, []).append(m)
    texts: list[str] = []
    for corpus, queries in groups.items():
        if task.memories is not None:
            shared = by_corpus.get(None, []) if corpus is not None else []
            texts.extend(m.text for m in (*by_corpus.get(corpus, []), *shared))
        texts.extend(queries)
    return texts


class Warming:
    """The warm-up of a run's lanes, on one background thread."""

    def __init__(self, work: Sequence[tuple[object, list[str]]]) -> None:
        self.stop = threading.Event()
        self._thread: threading.Thread | None = None
        if work:
            self._thread = threading.Thread(
                target=self._run, args=(work,), name="memgauge-warm", daemon=True
            )
            self._thread.start()

    @classmethod
    def start(
        cls,
        plan: Sequence[PlannedTask],
        suite: Suite,
        lanes: Mapping[str, SubjectLane],
        pending: Collection[tuple[str, str, str]],
        skip: Collection[str] = (),
    ) -> Warming:
        """Warm every lane that can be warmed, in the order the run will use them."""
        work: list[tuple[object, list[str]]] = []
        for task in plan:
            for name in subjects_of(task, suite):
                lane = lanes.get(name)
                if lane is None or name in skip or not lane.memory:
                    continue
                if not callable(getattr(lane.subject, "warm", None)):
                    continue
                ids = (i for (s, t, i) in pending if s == name and t == task.spec.name)
                texts = texts_to_embed(task, ids)
                if texts:
                    work.append((lane.subject, texts))
        return cls(work)

    def _run(self, work: Sequence[tuple[object, list[str]]]) -> None:
        for subject, texts in work:
            if self.stop.is_set():
                return
            # the lane meets the same failure when it embeds, and records it there
            with contextlib.suppress(Exception):
                cast(Any, subject).warm(texts, stop=self.stop)

    def close(self, *, wait: bool = True) -> None:
        """Stop after the texts being embedded now; wait for the thread (and the cache's
        writes) unless `wait` is false (the run was interrupted: the daemon thread ends with
        the process)."""
        self.stop.set()
        if wait and self._thread is not None:
            self._thread.join()


def warm_shards(shards: Sequence[Shard], plan: Sequence[PlannedTask]) -> None:
    """Embed here, before the shards run, every text their subjects will embed: each distinct
    text once, on every core, into the embedding cache the workers on this machine read.
    Otherwise each worker embeds the texts of its own corpora, and a text that corpora in
    different shards share (LongMemEval's haystacks share many sessions) is embedded once per
    worker. Only reference memories with a dense channel are built here (what can `warm`; any
    other subject is built by its shards alone: its constructor may be costly or start
    something); one that cannot be built here, or whose warm-up fails, is left to its shards
    (which record what goes wrong)."""
    tasks = {t.spec.name: t for t in plan}
    wanted: dict[str, tuple[Shard, dict[str, list[str]]]] = {}
    for shard in shards:
        if not _embeds(shard.spec):
            continue
        _first, ids = wanted.setdefault(shard.subject, (shard, {}))
        ids.setdefault(shard.task.name, []).extend(shard.items)
    for first, ids in wanted.values():
        texts = [t for name, some in ids.items() for t in texts_to_embed(tasks[name], some)]
        if not texts:
            continue
        with contextlib.suppress(Exception):
            lane = SubjectLane(first.subject, first.spec, 1, rooted(build_subject, first.base))
            try:
                if lane.memory and callable(getattr(lane.subject, "warm", None)):
                    lane.subject.warm(texts)
            finally:
                lane.close()


def _embeds(spec: Mapping[str, Any]) -> bool:
    """Whether a subject spec is a reference memory with a dense channel."""
    # imported when a run has shards, not with every run's engine
    from memgauge.subjects.reference import ReferenceMemoryConfig

    ((kind, raw),) = spec.items()
    args = raw or {}
    mode = args.get("mode", ReferenceMemoryConfig().mode) if isinstance(args, Mapping) else None
    return kind == "reference" and mode in ("dense", "hybrid")
