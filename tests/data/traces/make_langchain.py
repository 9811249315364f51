"""Write langchain_runs.json: a LangChain agent's runs as LangSmith records them.

Run by hand (not by the tests; it imports no memgauge), offline, without an API key:

    pip install langsmith langchain-core
    python tests/data/traces/make_langchain.py

A LangChain retriever (`BaseRetriever` returning `Document`s with ids), a LangChain `@tool` and
LangChain's own fake chat model (`GenericFakeChatModel`, answering an `AIMessage` with
`usage_metadata`) run under a LangSmith `@traceable` root in `tracing_context(enabled="local")`:
LangChain's callbacks record its runs into the root's run tree (its tracer also tries to send
them, to an endpoint set to 127.0.0.1, which refuses). Written as make_langsmith.py writes
`langsmith_sdk_runs.json`: each root as LangSmith's `schemas.Run` with its `child_runs`.
"""

from __future__ import annotations

import json
import sys
import warnings
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))
from langchain_core.callbacks import CallbackManagerForRetrieverRun  # noqa: E402
from langchain_core.documents import Document  # noqa: E402
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel  # noqa: E402
from langchain_core.messages import AIMessage  # noqa: E402
from langchain_core.retrievers import BaseRetriever  # noqa: E402
from langchain_core.tools import tool  # noqa: E402
from langsmith import traceable, tracing_context  # noqa: E402
from langsmith.run_trees import RunTree  # noqa: E402
from make_langsmith import _run  # noqa: E402  (sets the offline endpoint before langsmith)


class MemoryRetriever(BaseRetriever):
    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun
    ) -> list[Document]:
        return [
            Document(
                id="m-porto",
                page_content="Customers are dentists in Porto.",
                metadata={"score": 0.88},
            ),
            Document(id="m-price", page_content="Price is 35 euros.", metadata={"score": 0.31}),
        ]


@tool
def crm_lookup(segment: str) -> str:
    """How many accounts a customer segment has."""
    return "12 accounts"


ANSWER = AIMessage(
    content="Your customers are dentists in Porto; 12 accounts.",
    usage_metadata={"input_tokens": 412, "output_tokens": 23, "total_tokens": 435},
)


@traceable(name="memory_agent")
def memory_agent(question: str) -> str:
    MemoryRetriever().invoke(question.lower())
    crm_lookup.invoke({"segment": "dentists Porto"})
    model = GenericFakeChatModel(messages=iter([ANSWER]))
    return str(model.invoke(question).content)


def main() -> None:
    roots: list[RunTree] = []
    extra: dict[str, Any] = {"metadata": {"thread_id": "thread-porto"}, "on_end": roots.append}
    with warnings.catch_warnings(), tracing_context(enabled="local"):
        warnings.simplefilter("ignore")
        memory_agent("Which city are our customers in?", langsmith_extra=extra)
    runs = [_run(root).model_dump(mode="json") for root in roots]
    (HERE / "langchain_runs.json").write_text(
        json.dumps(runs, indent=1, ensure_ascii=False) + "\n", encoding="utf-8"
    )


if __name__ == "__main__":
    main()
