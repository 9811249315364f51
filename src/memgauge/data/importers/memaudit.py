"""memaudit datasets (JSON or JSONL) into the conversation models, read as memaudit reads them."""

from __future__ import annotations

from pathlib import Path

from memgauge.data.importers.common import ImportReport
from memgauge.data.io import load_conversations
from memgauge.data.models import ConversationDataset

__all__ = ["import_memaudit"]


def import_memaudit(path: str | Path) -> tuple[ConversationDataset, ImportReport]:
    """Load and validate a memaudit dataset; count conversations, turns, facts, supersessions."""
    ds = load_conversations(path)
    report = ImportReport(source=str(path), format="memaudit")
    report.counts = {
        "conversations": len(ds.conversations),
        "turns": sum(len(c.turns) for c in ds.conversations),
        "facts": sum(len(c.facts) for c in ds.conversations),
        "superseding_facts": sum(1 for c in ds.conversations for f in c.facts if f.supersedes),
    }
    return ds, report
