"""A deliberately small memory system for adapter tests: keyword overlap search.

Importable (`keyword_memory:KeywordMemory`) and runnable as a JSON-lines subject
(`python keyword_memory.py`), so both adapters can be checked to give the same results.
It imports nothing from memgauge, as a user's own system would not.
"""

from __future__ import annotations

import json
import re
import sys
from typing import Any

WORD = re.compile(r"\w+")


class KeywordMemory:
    def __init__(self, boost_recent: bool = False) -> None:
        self.boost_recent = boost_recent
        self.items: dict[str, str] = {}

    def reset(self) -> None:
        self.items.clear()

    def ingest(self, memories: list[Any]) -> None:
        for m in memories:
            mid = m["id"] if isinstance(m, dict) else m.id
            text = m["text"] if isinstance(m, dict) else m.text
            self.items[mid] = text

    def search(self, query: str, k: int) -> list[dict[str, Any]]:
        q = set(WORD.findall(query.lower()))
        scored = []
        for i, (mid, text) in enumerate(self.items.items()):
            overlap = len(q & set(WORD.findall(text.lower())))
            if overlap:
                scored.append((overlap + (i * 1e-6 if self.boost_recent else 0.0), mid, text))
        scored.sort(key=lambda x: (-x[0], x[1]))
        return [{"id": mid, "text": text, "score": s} for s, mid, text in scored[:k]]

    def answer(self, question: str, history: list[Any] | None = None) -> str:
        """A memory-backed agent at its simplest: the best matching memory, or no answer."""
        hits = self.search(question, 1)
        return hits[0]["text"] if hits else "I don't know"

    def dump(self) -> list[dict[str, str]]:
        return [{"id": k, "text": v} for k, v in self.items.items()]


class NotAMemory:
    def hello(self) -> str:
        return "hi"


def serve() -> None:
    mem = KeywordMemory(boost_recent="--boost" in sys.argv)
    mode = next((a for a in sys.argv if a.startswith("--fail=")), "")
    if mode == "--fail=log-to-stdout":  # a log line where responses go, as print() logs
        print("loading index from ./memory.db", flush=True)
    for line in sys.stdin:
        req = json.loads(line)
        method, params = req["method"], req["params"]
        print(f"handling {method}", file=sys.stderr, flush=True)
        if mode == "--fail=garbage" and method == "search":
            print("this is not json", flush=True)
            continue
        if mode == "--fail=exit" and method == "search":
            print("crashing now", file=sys.stderr, flush=True)
            sys.exit(7)
        if mode == "--fail=hang" and method == "search":
            import time

            time.sleep(60)
        if mode == "--fail=slow-once" and method == "search":
            import time

            time.sleep(1.0)  # past the test's timeout, then answers as always
            mode = ""
        if mode == "--fail=error" and method == "search":
            print(
                json.dumps({"id": req["id"], "error": {"message": "index is corrupt"}}), flush=True
            )
            continue
        if method == "reset":
            mem.reset()
            result: Any = None
        elif method == "ingest":
            mem.ingest(params["memories"])
            result = None
        elif method == "flush":
            result = None
        elif method == "search":
            result = mem.search(params["query"], params["k"])
        elif method == "dump":
            result = mem.dump()
        elif method == "answer":
            result = {"text": mem.answer(params["question"]), "source": "keyword"}
        else:
            print(
                json.dumps({"id": req["id"], "error": {"message": f"no method {method}"}}),
                flush=True,
            )
            continue
        print(json.dumps({"id": req["id"], "result": result}), flush=True)


if __name__ == "__main__":
    serve()
