"""The texts of a retrieval run's search hits, for the pages a reviewer reads them on.

The store keeps a hit's text only where it differs from its dataset's text of that memory
(`runs.kinds.base.hit_record`: a LoCoMo run's 30,000 hits would otherwise repeat its 5,882
memories' texts). Those texts are read back from the task's dataset, where the run recorded
it, and only when the dataset still has the sha256 the run recorded (`aggregates.ir.
dataset_sha256`): the text shown is the text the memory held when the run searched it. Where
that cannot be told, the hit shows no text and `HitTexts.note` says why.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memgauge._util.listing import counted
from memgauge.aggregates.hits import hits_of
from memgauge.data.records import ItemRecord, RunRecord
from memgauge.errors import DataError, MemgaugeError

__all__ = ["HitTexts", "hit_texts", "remember"]

#: what tells a dataset unchanged: per file (a directory's every file), its name, inode,
#: mtime_ns and size
_Stamp = tuple[tuple[str, int, int, int], ...]
#: (resolved path, dataset kind) -> (stamp, sha256, texts): a dataset read and hashed once
#: while it is unchanged (an item page, then the next: the same LoCoMo file)
_READ: dict[tuple[str, str | None], tuple[_Stamp, str, dict[str, str]]] = {}
_LOCK = threading.Lock()


@dataclass(frozen=True)
class HitTexts:
    """Each task's memory texts (id -> text) as its run searched them, and why a task has
    none (task -> reason)."""

    texts: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    missing: Mapping[str, str] = field(default_factory=dict)

    def note(self, task: str) -> str | None:
        """Why the hits of `task` show no text the store left out; None when they do."""
        why = self.missing.get(task)
        return None if why is None else f"text not kept: {why}"

    def fill(self, it: ItemRecord) -> ItemRecord:
        """`it` with each hit the store kept without its text given its dataset's text."""
        output = self.filled(it.task, it.output)
        return it if output is it.output else it.model_copy(update={"output": output})

    def filled(self, task: str, output: Any) -> Any:
        """A retrieval item's `output` of `task` with each hit the store kept without its
        text given its dataset's text (`output` itself when none is left to give)."""
        known = self.texts.get(task)
        hits = hits_of(output)
        if not known or hits is None or all("text" in h for h in hits):
            return output
        filled = [
            h if "text" in h or h.get("id") not in known else {**h, "text": known[str(h["id"])]}
            for h in hits
        ]
        return {**output, "hits": filled} if isinstance(output, Mapping) else filled


def hit_texts(run: RunRecord) -> HitTexts:
    """The memory texts of `run`'s retrieval tasks, read from their datasets (see the module
    docstring)."""
    recorded = run.provenance.get("datasets") or {}
    # where the run read each dataset (absolute); a run recorded before it was kept reads a
    # relative path against its suite file's directory
    paths = run.provenance.get("dataset_paths")
    base = Path(run.suite_path).parent if run.suite_path else None
    texts: dict[str, Mapping[str, str]] = {}
    missing: dict[str, str] = {}
    for task in run.suite.get("tasks") or ():
        if not isinstance(task, Mapping) or task.get("kind") != "retrieval":
            continue
        name = str(task.get("name"))
        dataset = task.get("dataset") if paths is None else paths.get(name)
        found = _texts(dataset, task.get("dataset_kind"), base, recorded.get(name))
        if isinstance(found, str):
            missing[name] = found
        else:
            texts[name] = found
    return HitTexts(texts, missing)


def _texts(dataset: Any, kind: Any, base: Path | None, sha256: Any) -> dict[str, str] | str:
    """The memory texts of a task's `dataset` (its path) of `kind`, or why they cannot be
    told."""
    if not isinstance(dataset, str) or not isinstance(sha256, str):
        return "the run's dataset was given in memory, not read from a file"
    path = Path(dataset)
    if not path.is_absolute() and base is not None:
        path = base / path
    if not path.exists():
        return f"the dataset is no longer at {path}"
    try:
        found_sha, texts = _read(path.resolve(), kind if isinstance(kind, str) else None)
    except DataError as exc:
        # one line: a page or export shows it beside each hit (a file of 20,000 bad lines
        # made every item's reason megabytes long)
        first = exc.problems[0] if exc.problems else "not valid"
        more = exc.count - 1
        listed = (
            f"; and {counted(more, 'more problem')}: `memgauge validate {path}`" if more else ""
        )
        return f"the dataset at {path} cannot be read now ({first}{listed})"
    except (MemgaugeError, OSError, ValueError) as exc:
        return f"the dataset at {path} cannot be read now ({exc})"
    if found_sha != sha256:
        return f"the dataset changed since the run ({path} has another sha256)"
    return texts


def remember(path: Path, kind: str | None, sha256: str, dataset: Any) -> None:
    """Keep the texts of the dataset a run has just read from `path` (and hashed), so that its
    report in the same process (`evaluate --out`, `run`) reads the file again for nothing."""
    try:
        stamp = _stamp(path)
        key = (str(path.resolve()), kind)
    except OSError:
        return
    texts = {m.id: m.text for m in dataset.memories}
    with _LOCK:
        _keep(key, (stamp, sha256, texts))


def _stamp(path: Path) -> _Stamp:
    """What changes when the dataset at `path` does: a file's, or each file's of a directory
    (whose own mtime and size stay as they were when a file in it is rewritten in place)."""
    files = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
    stamp = []
    for f in files:
        st = f.stat()
        stamp.append((str(f), st.st_ino, st.st_mtime_ns, st.st_size))
    return tuple(stamp)


def _keep(key: tuple[str, str | None], found: tuple[_Stamp, str, dict[str, str]]) -> None:
    if key not in _READ and len(_READ) >= 4:
        _READ.pop(next(iter(_READ)))
    _READ[key] = found


def _read(path: Path, kind: str | None) -> tuple[str, dict[str, str]]:
    """The sha256 and memory texts of the dataset at `path`, read once while unchanged."""
    from memgauge.aggregates.ir import dataset_sha256
    from memgauge.data.readers import load_retrieval_source

    stamp = _stamp(path)
    key = (str(path), kind)
    with _LOCK:
        cached = _READ.get(key)
        if cached is not None and cached[0] == stamp:
            return cached[1], cached[2]
        ds = load_retrieval_source(path, kind)
        found = (stamp, dataset_sha256(ds), {m.id: m.text for m in ds.memories})
        _keep(key, found)
        return found[1], found[2]
