"""A model that answers `memgauge synth`'s prompts as a careful one would, for the fake server
(`fake_reply`) and the scripted client (`scripted_reply`), and memories to write from."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

_MEMORY = re.compile(r"^\[(\S+)\] (.*)$", re.M)
_CATEGORY = re.compile(r"^- ([a-z-]+): ", re.M)

MEMORIES = [
    {"id": "m1", "text": "The knowledge graph is stored in Neo4j behind the graph service"},
    {"id": "m2", "text": "Deploys go out on Tuesdays after the release review meeting"},
    {"id": "m3", "text": "The public API listens on port 8080 inside the cluster"},
    {"id": "m4", "text": "We chose PostgreSQL over MySQL because of JSONB indexing support"},
    {"id": "m5", "text": "Alice owns the billing pipeline and its nightly reconciliation job"},
    {"id": "m6", "text": "Secrets rotate every ninety days through the vault operator"},
]


def good_items(user: str) -> list[dict[str, Any]]:
    """One grounded item per category asked: the anchor (first memory) graded 3, the others 0,
    the second memory a hard negative; the query is the anchor's text under the category."""
    shown = _MEMORY.findall(user)
    anchor_id, anchor_text = shown[0]
    items = []
    for category in _CATEGORY.findall(user):
        items.append(
            {
                "category": category,
                "query": f"{category.replace('-', ' ')} {anchor_text.lower()}",
                "judgments": [
                    {"memory_id": mid, "grade": 3 if mid == anchor_id else 0} for mid, _ in shown
                ],
                "expected_answer": anchor_text if category == "semantic-search" else None,
                "hard_negatives": [mid for mid, _ in shown[1:2]],
            }
        )
    return items


def is_critic(messages: list[dict[str, str]]) -> bool:
    return messages[0]["content"].startswith("You check generated")


def fake_reply(payload: dict[str, Any]) -> str:
    """The fake server's rule: a careful generator, and a critic that keeps everything."""
    messages = payload["messages"]
    if is_critic(messages):
        return json.dumps({"verdict": "keep", "problem": "none", "reason": "grounded"})
    return json.dumps({"items": good_items(messages[-1]["content"])})


@pytest.fixture
def memories_file(tmp_path: Path) -> Path:
    path = tmp_path / "memories.jsonl"
    path.write_text("".join(json.dumps(m) + "\n" for m in MEMORIES))
    return path
