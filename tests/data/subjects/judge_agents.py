"""Agents that judge (seed 004's `judgeAgentId`), importing nothing from memgauge as a user's
would not. Each logs the prompts it is asked when given `calls_file`.

`KeywordJudge` answers in seed 004's free form ("Score: 90. <one sentence>"): high when the
OUTPUT section of the prompt holds its keyword. `JsonJudge` answers with the rubric's JSON, and
in a panel's second round (when shown its peers) moves halfway to their first score.
"""

from __future__ import annotations

import json
import re


def _output(prompt: str) -> str:
    return prompt.split("OUTPUT:", 1)[-1].split("Return {", 1)[0]


class KeywordJudge:
    def __init__(self, keyword: str, calls_file: str | None = None) -> None:
        self.keyword = keyword
        self.calls_file = calls_file

    def answer(self, question: str) -> str:
        if self.calls_file:
            with open(self.calls_file, "a", encoding="utf-8") as f:
                f.write(json.dumps(question) + "\n")
        if self.keyword.lower() in _output(question).lower():
            return f"Score: 90. The answer names {self.keyword}, as recalled from memory."
        return "Score: 10. The answer does not use the recalled fact."


class JsonJudge:
    def __init__(self, keyword: str) -> None:
        self.keyword = keyword

    def answer(self, question: str) -> str:
        found = self.keyword.lower() in _output(question).lower()
        score = 70 if found else 20
        peers = re.findall(r"Judge \d+[^:\n]*: score (\d+)", question)
        if peers:
            score = (score + int(peers[0])) // 2
        return "```json\n" + json.dumps({"score": score, "issues": [], "strengths": []}) + "\n```"


class Unhelpful:
    def answer(self, question: str) -> str:
        return "I would rather not say."
