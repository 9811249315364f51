"""The runs page's list: a user's own runs, and each optimization once, its candidate runs
grouped under it.

An optimization makes one ordinary run per candidate (19 for one study is common), which would
bury the runs a user started under them. So each study is one row (its objective, status and
how many candidate runs it made) at the place of its newest run, and its candidates are listed
under it only when asked (`?candidates=show`), never among the user's runs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = ["CANDIDATES", "Entry", "runs_list"]

#: the runs page's `candidates` filter: optimizations' candidate runs hidden under their study
#: (the default), or listed under it
CANDIDATES: tuple[str, ...] = ("hide", "show")


@dataclass
class Entry:
    """One line of the runs list: a run of its own, or a study with its candidate runs (`runs`,
    empty while they are hidden)."""

    kind: Literal["run", "study"]
    row: Mapping[str, Any]
    runs: list[Mapping[str, Any]] = field(default_factory=list)

    @property
    def created_at(self) -> str:
        """When the run, or the study's newest candidate run, was created."""
        return str(self.row.get("created_at") or "")


def runs_list(
    rows: Sequence[Mapping[str, Any]], groups: Sequence[Mapping[str, Any]], *, show: bool
) -> list[Entry]:
    """Runs of their own and studies, newest first. `rows` are `RunReader.runs_overview`'s
    (each with its `study_id`), `groups` `RunReader.study_groups`'; with `show`, each
    study's candidate runs among `rows` are listed under it, newest first."""
    entries = [Entry("study", g) for g in groups]
    by_study = {str(e.row["study_id"]): e for e in entries}
    for r in rows:
        study = r.get("study_id")
        if study is None:
            entries.append(Entry("run", r))
        elif show and str(study) in by_study:
            by_study[str(study)].runs.append(r)
    # sorted() is stable: rows and groups come newest first, ties keep that order
    return sorted(entries, key=lambda e: e.created_at, reverse=True)
