"""One fake model for memaudit and memgauge alike, so both audit the same data against the same
model: it answers a memory question with the line of the history that shares most words with
it ("Not mentioned." when none does), and decides a match when the two statements share at
least half the expected one's words. It reads both tools' prompts:

- memaudit (src/adapters/openai.ts): `CONVERSATION HISTORY: ... QUESTION: ...` to answer,
  `Statement 1: "..." Statement 2: "..."` to match (it wants yes / no);
- memgauge: the chat agent's `CONVERSATIONS: ... QUESTION: ...`, the QA judge's `CORRECT
  ANSWER: ... MODEL'S RESPONSE: ...` (JSON verdict), the abstention judge's "cannot be
  answered" prompt.

`python -m tests.official.memaudit_model MEMAUDIT_DIR` runs the real memaudit (a built checkout
of zhy0216/memaudit: `npm ci && npm run build`) on every dataset of tests/data/memaudit/ against
this model on the fake server, and writes its results.json files into
tests/data/memaudit/results/ (see the README there).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parents[1] / "data" / "memaudit"
DATASETS = ("fixture-dataset.json", "memorybench-locomo.json", "sample.jsonl")

_WORD = re.compile(r"[a-z0-9]+")
_STOP = {"the", "a", "an", "is", "are", "was", "user", "users", "s", "of", "to", "in", "on", "what"}
_QA = re.compile(r"CORRECT ANSWER:\n(.*?)\n\nMODEL'S RESPONSE:\n(.*?)\n\n", re.S)
_MATCH = re.compile(r'Statement 1: "(.*)"\s*Statement 2: "(.*)"', re.S)
NOT_MENTIONED = "Not mentioned."


def _words(text: str) -> set[str]:
    return set(_WORD.findall(text.lower())) - _STOP


def agree(expected: str, actual: str) -> bool:
    """Whether `actual` says `expected`: at least half of its words are there."""
    want = _words(expected)
    return bool(want) and len(want & _words(actual)) * 2 >= len(want)


def answer(history: str, question: str) -> str:
    """The history's line that shares most words with the question."""
    asked = _words(question)
    best, score = NOT_MENTIONED, 0
    for line in history.splitlines():
        shared = len(asked & _words(line))
        if shared > score:
            best, score = line.split(": ", 1)[-1].strip(), shared
    return best


def rule(payload: dict[str, Any]) -> str:
    """The fake server's reply to a chat request from either tool."""
    text = "\n".join(str(m.get("content")) for m in payload.get("messages", []))
    if m := _MATCH.search(text):
        return "yes" if agree(m.group(1), m.group(2)) else "no"
    if m := _QA.search(text):
        ok = agree(m.group(1), m.group(2))
        return json.dumps({"reasoning": "word overlap", "label": "yes" if ok else "no"})
    if "cannot be answered" in text:
        said = text.rsplit("MODEL'S RESPONSE:", 1)[-1].lower()
        ok = "not mentioned" in said or "never mentioned" in said
        return json.dumps(
            {"reasoning": "abstained" if ok else "answered", "label": "yes" if ok else "no"}
        )
    for marker in ("CONVERSATION HISTORY:", "CONVERSATIONS:"):
        if marker in text and "QUESTION:" in text:
            history, question = text.split(marker, 1)[1].rsplit("QUESTION:", 1)
            return answer(history, question)
    return "OK"


def run_memaudit(cli: Path, dataset: Path, out_dir: Path, base_url: str) -> Path:
    """Run memaudit's `audit` on `dataset` (given by its name, from its directory: a JSONL
    dataset's id is the path memaudit is given) against `base_url`; the results.json it wrote."""
    env = {
        **os.environ,
        "OPENAI_BASE_URL": base_url,
        "OPENAI_API_KEY": "fake-key",
        "MEMAUDIT_MODEL": "fake-model",
    }
    subprocess.run(
        ["node", str(cli), "audit", dataset.name, "--output", str(out_dir), "--format", "json"],
        cwd=dataset.parent,
        env=env,
        check=True,
        capture_output=True,
        timeout=300,
    )
    return out_dir / "results.json"


def main(memaudit_dir: str) -> None:
    """Regenerate tests/data/memaudit/results/ with the real memaudit."""
    from memgauge.llm import FakeOpenAIServer

    cli = Path(memaudit_dir).resolve() / "dist" / "cli.js"
    with FakeOpenAIServer() as server, tempfile.TemporaryDirectory() as tmp:
        server.respond(rule)
        for name in DATASETS:
            got = run_memaudit(cli, DATA / name, Path(tmp) / name, server.base_url)
            target = DATA / "results" / f"{Path(name).stem}.results.json"
            target.write_bytes(got.read_bytes())  # as memaudit wrote it
            print(f"wrote {target}")


if __name__ == "__main__":
    main(sys.argv[1])
