"""Every way a generated item can be unusable is a counted rejection with its reason, never a
silent gap: the pipeline run on a scripted model whose reply for each memory is wrong in one
way (and whose critic rejects one item and answers another with no JSON)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest
from tests.synth.conftest import good_items

from memgauge.data.models import Memory
from memgauge.errors import LLMError, SubjectError
from memgauge.llm import ScriptedClient
from memgauge.llm.context import configure
from memgauge.llm.fake_server import hashed_embedding
from memgauge.llm.types import ChatRequest
from memgauge.synth import REASONS, SynthConfig, synthesize

CATEGORIES = ("semantic-search", "causal-query")
#: each memory's reply is wrong in the way its id says
TEXTS = {
    "ok": "the cafeteria serves ramen every thursday at noon",
    "badjson": "our vpn gateway lives in the frankfurt region",
    "partial": "carol maintains the android release checklist",
    "missing": "invoices are archived after seven years in glacier",
    "ghost": "the staging cluster autoscales between three and nine nodes",
    "grade": "the design system uses the inter typeface",
    "unknowncat": "bob prefers pairing sessions in the morning",
    "norel": "the wiki moved from confluence to notion last spring",
    "inconsistent": "oncall handoffs happen on mondays at ten",
    "dup": "kafka topics keep messages for fourteen days",
    "critic": "the mobile app supports offline drafts since version four",
    "down": "the data warehouse refreshes every six hours",
}


class HashEmbedder:
    """The fake server's hashed bag of words, in-process."""

    name = "hashed-64"
    dim = 64

    def embed(self, texts: Sequence[str]) -> Any:
        return np.array([hashed_embedding(t) for t in texts])


def _anchor(request: ChatRequest) -> str:
    user = next(m.content for m in request.messages if m.role == "user")
    return user.split("Memories:\n[", 1)[1].split("]", 1)[0]


def _reply(request: ChatRequest) -> str:
    anchor = _anchor(request)
    system = request.messages[0].content
    if system.startswith("You check generated"):
        if anchor != "critic":
            return json.dumps({"verdict": "keep", "problem": "none", "reason": "fine"})
        if "causal query" in request.messages[1].content:
            return "I would rather not say."
        return json.dumps({"verdict": "reject", "problem": "ambiguous", "reason": "vague"})
    if anchor == "down":
        raise LLMError("server", "HTTP 503 from the endpoint")
    if anchor == "badjson":
        return "Here are some great queries! (none of them JSON)"
    user = request.messages[1].content
    items = good_items(user)
    first = items[0]
    if anchor == "partial":
        items = items[:1]
    elif anchor == "missing":
        del first["judgments"]
    elif anchor == "ghost":
        first["judgments"].append({"memory_id": "m-nope", "grade": 2})
    elif anchor == "grade":
        first["judgments"][0]["grade"] = 7
    elif anchor == "unknowncat":
        items.append({**first, "category": "vibes"})
    elif anchor == "norel":
        first["judgments"][0]["grade"] = 0
    elif anchor == "inconsistent":
        first["hard_negatives"] = [anchor]
    elif anchor == "dup":
        first["query"] = f"semantic search {TEXTS['ok']}"
    return json.dumps({"items": items})


@pytest.fixture
def scripted() -> ScriptedClient:
    client = ScriptedClient(rule=_reply, model="scripted-gen")
    configure(factory=lambda _config, _meter: client)
    return client


def _memories() -> list[Memory]:
    return [Memory(id=k, text=v) for k, v in TEXTS.items()]


def test_each_reason_is_counted(scripted: ScriptedClient) -> None:
    config = SynthConfig(model="scripted-gen", categories=CATEGORIES, group_size=1)
    dataset, report = synthesize(_memories(), HashEmbedder(), config, source="memories.jsonl")
    counts = report.by_reason()
    assert set(counts) == set(REASONS)
    assert counts == {
        "failed_call": 1,
        "bad_json": 2,  # the generator's for `badjson` (after one repair), the critic's once
        "missing_fields": 1,
        "missing_item": 1,
        "unknown_category": 1,
        "unknown_memory_id": 1,
        "grade_out_of_range": 1,
        "inconsistent_judgments": 1,
        "no_relevant_memory": 1,
        "duplicate": 1,
        "critic_reject": 1,
    }
    # 20 items read (one more category than asked, one missing) lose 6 to the checks, 1 to the
    # dedupe and 2 to the critic (whose 13 calls come after the 12 generator calls)
    assert report.n_kept == 11 == len(dataset.queries)
    assert report.n_rejected == sum(counts.values()) == 12
    assert report.n_calls == 12 + 13
    assert report.n_failed_calls == 1
    critic = next(r for r in report.rejections if r.reason == "critic_reject")
    assert (critic.group, critic.category) == (10, "semantic-search")
    assert critic.detail == "ambiguous: vague"
    dup = next(r for r in report.rejections if r.reason == "duplicate")
    assert dup.group == 9
    assert "cosine 1.000" in dup.detail
    failed = next(r for r in report.rejections if r.reason == "failed_call")
    assert failed.memory_ids == ["down"]
    assert "503" in failed.detail
    # nothing from a rejected item reaches the dataset
    kept = {(q.metadata["source_memory_ids"][0], q.category) for q in dataset.queries}
    assert ("ghost", "semantic-search") not in kept
    assert ("ghost", "causal-query") in kept
    assert ("partial", "semantic-search") in kept
    assert ("critic", "causal-query") not in kept


def test_failed_calls_past_the_budget_stop_the_run(scripted: ScriptedClient) -> None:
    config = SynthConfig(
        model="scripted-gen", categories=CATEGORIES, group_size=1, max_failure_rate=0.0
    )
    with pytest.raises(SubjectError, match=r"1 of 12 LLM calls failed.*max_failure_rate 0"):
        synthesize(_memories(), HashEmbedder(), config, source="memories.jsonl")


def test_a_model_that_writes_nothing_usable_is_a_failure(scripted: ScriptedClient) -> None:
    memories = [Memory(id="badjson", text=TEXTS["badjson"])]
    config = SynthConfig(model="scripted-gen", categories=CATEGORIES)
    with pytest.raises(SubjectError, match=r"no usable item .*bad_json 1"):
        synthesize(memories, HashEmbedder(), config, source="memories.jsonl")


def test_a_bare_list_of_items_is_read_as_the_items(scripted: ScriptedClient) -> None:
    def bare(request: ChatRequest) -> str:
        if request.messages[0].content.startswith("You check generated"):
            return json.dumps({"verdict": "keep", "reason": "fine"})
        return json.dumps(good_items(request.messages[1].content))

    configure(factory=lambda _config, _meter: ScriptedClient(rule=bare))
    config = SynthConfig(model="scripted-gen", categories=CATEGORIES)
    dataset, report = synthesize(_memories()[:1], HashEmbedder(), config, source="m.jsonl")
    assert [q.category for q in dataset.queries] == list(CATEGORIES)
    assert report.n_rejected == 0
