"""Write langsmith_sdk_runs.json and langsmith_sdk_runtree.jsonl: runs made by LangSmith's SDK.

Run by hand (not by the tests; it imports no memgauge), offline, without an API key:

    pip install langsmith
    python tests/data/traces/make_langsmith.py

Functions decorated with LangSmith's own `@traceable` run under `tracing_context(enabled="local")`
(run trees built as when tracing, nothing sent); each root's finished `RunTree` is taken by the
`on_end` callback. Two shapes are written:

- `langsmith_sdk_runtree.jsonl`: every run's own `RunTree.json()`, one a line, parents first (a
  flat export: each run names its `parent_run_id` and `trace_id`);
- `langsmith_sdk_runs.json`: each root as LangSmith's `schemas.Run` (the type
  `Client.read_run(id, load_child_runs=True)` returns) with its `child_runs`, built from the run
  tree's own fields and written by `Run.model_dump(mode="json")`. Fields only the server
  computes (`status`, `prompt_tokens`, costs...) are left unset: no server computed them.

Run ids are uuid7s (time and random) and times are the clock's, so each run writes new ones.
"""

from __future__ import annotations

import contextlib
import json
import os
import warnings
from pathlib import Path
from typing import Any

os.environ.pop("LANGSMITH_API_KEY", None)
os.environ["LANGSMITH_ENDPOINT"] = "http://127.0.0.1:9"  # never the hosted API

from langsmith import schemas, traceable, tracing_context
from langsmith.run_trees import RunTree

HERE = Path(__file__).parent
MODEL = {"ls_provider": "openai", "ls_model_name": "gpt-4o-mini-2024-07-18"}


@traceable(run_type="retriever", name="search_memories")
def search_memories(query: str) -> list[dict[str, Any]]:
    # LangSmith's documented retriever output: a list of Document-like dicts
    return [
        {
            "page_content": "Customers are dentists in Porto.",
            "type": "Document",
            "metadata": {"id": "m-porto", "score": 0.88},
        },
        {
            "page_content": "Price is 35 euros.",
            "type": "Document",
            "metadata": {"id": "m-price", "score": 0.31},
        },
    ]


@traceable(run_type="tool", name="crm_lookup")
def crm_lookup(segment: str, fail: bool) -> str:
    if fail:
        raise TimeoutError("CRM did not answer within 5 s")
    return "12 accounts"


@traceable(run_type="llm", name="ChatOpenAI", metadata=MODEL)
def chat(messages: list[dict[str, str]], fail: bool) -> dict[str, Any]:
    if fail:
        raise RuntimeError("Error code: 429 - rate limit reached for gpt-4o-mini")
    answer = "Your customers are dentists in Porto; 12 accounts."
    # LangSmith's documented LLM output: OpenAI's message, with `usage_metadata`
    return {
        "choices": [{"message": {"role": "assistant", "content": answer}}],
        "usage_metadata": {"input_tokens": 412, "output_tokens": 23, "total_tokens": 435},
    }


@traceable(name="memory_agent")
def memory_agent(question: str, fail: bool = False) -> str:
    search_memories(question.lower())
    with contextlib.suppress(TimeoutError):
        crm_lookup("dentists Porto", fail)
    reply = chat([{"role": "user", "content": question}], fail)
    return str(reply["choices"][0]["message"]["content"])


@traceable(run_type="llm", name="ChatOpenAI", metadata=MODEL)
def extractor_llm(messages: list[dict[str, str]]) -> dict[str, Any]:
    return {
        "choices": [{"message": {"role": "assistant", "content": '["pricing: 35 euros"]'}}],
        "usage_metadata": {"input_tokens": 120, "output_tokens": 9, "total_tokens": 129},
    }


@traceable(name="extract_memories", tags=["memory_extraction"])
def extract_memories(conversation: list[dict[str, str]], existing_memory: list[str]) -> list[str]:
    reply = extractor_llm(conversation)
    return list(json.loads(reply["choices"][0]["message"]["content"]))


def _run(tree: RunTree) -> schemas.Run:
    fields = tree.model_dump(exclude={"child_runs", "parent_run", "ls_client"})
    own = {k: v for k, v in fields.items() if k in schemas.Run.model_fields}
    children = [_run(c) for c in tree.child_runs]
    return schemas.Run(**own, child_runs=children, child_run_ids=[c.id for c in children])


def _flat(tree: RunTree) -> list[str]:
    return [tree.json()] + [line for c in tree.child_runs for line in _flat(c)]


def main() -> None:
    roots: list[RunTree] = []
    thread = {"metadata": {"thread_id": "thread-porto"}, "on_end": roots.append}
    with warnings.catch_warnings(), tracing_context(enabled="local"):
        warnings.simplefilter("ignore")  # pydantic's deprecation of .json(), no API key
        memory_agent("Which city are our customers in?", langsmith_extra=thread)
        with contextlib.suppress(RuntimeError):
            memory_agent("How many accounts?", fail=True, langsmith_extra=thread)
        extract_memories(
            [{"role": "user", "content": "Actually, charge 35 euros instead of 20."}],
            ["pricing: 20 euros"],
            langsmith_extra={"on_end": roots.append},
        )
        lines = [line for root in roots for line in _flat(root)]
    runs = [_run(root).model_dump(mode="json") for root in roots]
    (HERE / "langsmith_sdk_runs.json").write_text(
        json.dumps(runs, indent=1, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    (HERE / "langsmith_sdk_runtree.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
