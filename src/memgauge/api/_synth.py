"""Synthetic evaluation data from a user's memories (`memgauge synth`): read the memories
(a memories file, a memaudit file, LoCoMo or LongMemEval, a dataset, or a subject's store
through its dump), generate, and write an ordinary dataset directory marked synthetic, with
synth_report.json beside it, all at once or not at all."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal, get_args

from memgauge._util.jsonout import dumps_strict
from memgauge._util.numbers import MAX_FAILURE_RATE
from memgauge.api._files import refuse_replacing_src
from memgauge.data.models import Memory, RetrievalDataset
from memgauge.errors import DataError, Problem, UsageError, argument, check_path

if TYPE_CHECKING:
    from memgauge.synth import SynthReport

__all__ = ["MEMORY_SOURCES", "Synthesized", "read_memories", "synth"]

MemorySource = Literal["memories", "conversations", "locomo", "longmemeval", "dataset", "subject"]
#: what MEMORIES can be (`--kind`): detected from the file when not given
MEMORY_SOURCES: tuple[str, ...] = get_args(MemorySource)
REPORT_FILE = "synth_report.json"
_FILE_SUFFIXES = (".jsonl", ".json", ".yaml", ".yml", ".txt")


@dataclass(frozen=True)
class Synthesized:
    """What `synth` made: the dataset, its report, and the files written."""

    dataset: RetrievalDataset
    report: SynthReport
    files: list[Path]

    @property
    def report_path(self) -> Path:
        """synth_report.json: every count, and every rejection with its reason."""
        return next(f for f in self.files if f.name == REPORT_FILE)


def _kind_of(path: Path) -> MemorySource:
    from memgauge.data.detect import detect_kind

    found = detect_kind(path)
    if found in ("dataset-dir", "bundle"):
        return "dataset"
    if found in ("locomo", "longmemeval", "conversations", "subject"):
        return found  # a subject's spec file: its store is read through its dump
    return "memories"  # {id, text} records; the reader names what else is wrong


def read_memories(source: str | Path, kind: str | None = None) -> list[Memory]:
    """The memories of `source`: a file or directory (its kind detected, or `kind`), or a
    subject written as `evaluate -s` takes it (kind `subject`, or a source that is no path),
    read through its dump. A DataError names the file and line of a malformed file."""
    if kind is not None and kind not in MEMORY_SOURCES:
        raise UsageError(f"{argument('kind', repr(kind))}: one of {', '.join(MEMORY_SOURCES)}")
    path = Path(source)
    # a name with a file's suffix that is not there is a missing file, not a subject
    looks_like_file = path.suffix.lower() in _FILE_SUFFIXES
    if not path.exists() and kind != "subject" and (looks_like_file or kind is not None):
        raise DataError(Problem(str(source), None, None, "no such file or directory"))
    found = kind or (_kind_of(path) if path.exists() else "subject")
    if found == "subject":
        from memgauge.api._online import dump_memories

        return dump_memories(str(source), "MEMORIES", "a memories file")
    if found == "memories":
        from memgauge.data.io import load_memories_file

        return load_memories_file(path)
    if found == "conversations":
        from memgauge.data.io import load_conversations

        return [
            Memory(id=f.id, text=f.content, corpus=c.id, session=c.id)
            for c in load_conversations(path).conversations
            for f in c.facts
        ]
    from memgauge.data.readers import load_retrieval_source

    kind_arg = {"dataset": None}.get(found, found)
    return list(load_retrieval_source(path, kind_arg, judged=False).memories)


def synth(
    memories: str | Path,
    out_dir: str | Path,
    *,
    kind: str | None = None,
    model: str | None = None,
    critic_model: str | None = None,
    critic: bool = True,
    categories: tuple[str, ...] | None = None,
    group_size: int = 5,
    max_groups: int = 25,
    embedder: str = "minilm",
    dedupe_threshold: float = 0.9,
    max_failure_rate: float = MAX_FAILURE_RATE,
    name: str | None = None,
) -> Synthesized:
    """Write a synthetic retrieval dataset from `memories` into `out_dir` (see
    `memgauge.synth`): queries of seed 002's categories with graded judgments (0-3), expected
    answers and hard negatives, written by `model` (default `MEMGAUGE_MODEL`), near-duplicate
    queries dropped at cosine `dedupe_threshold` under `embedder`, the rest checked by
    `critic_model` (default the generator; `critic=False` skips it). Calls go through the LLM
    cache (`configure_llm`), so a second run replays them. A failed call past
    `max_failure_rate` raises SubjectError and writes nothing."""
    from memgauge.data.environment import embeddings_cache
    from memgauge.data.io import FILES, save_retrieval_dataset
    from memgauge.embed import CachedEmbedder, load_embedder
    from memgauge.synth import SynthConfig, synthesize

    check_path("memories", memories)
    check_path("out_dir", out_dir)
    config = SynthConfig(
        model=model,
        critic_model=critic_model,
        critic=critic,
        group_size=group_size,
        max_groups=max_groups,
        dedupe_threshold=dedupe_threshold,
        max_failure_rate=max_failure_rate,
        name=name or Path(out_dir).name or "synthetic",
        **({"categories": tuple(categories)} if categories else {}),
    )
    names = ("dataset.yaml", *FILES.values(), REPORT_FILE)
    refuse_replacing_src(Path(memories), Path(out_dir), names, "the synthetic dataset")
    read = read_memories(memories, kind)
    inner = load_embedder(embedder)
    try:
        # through the embedding cache, as the reference memory embeds: a second run embeds
        # nothing again
        built = CachedEmbedder(inner, embeddings_cache())
        dataset, report = synthesize(read, built, config, source=str(memories))
    finally:
        close = getattr(inner, "close", None)
        if callable(close):
            close()
    text = dumps_strict(report.as_dict(), sort_keys=True, indent=2) + "\n"
    files = save_retrieval_dataset(dataset, out_dir, extras={REPORT_FILE: text})
    return Synthesized(dataset, report, files)
