"""Memory-operation scoring (seed 000), in three tiers with their own targets.

- **heuristic** (target 95%; no LLM, case-insensitive): `exact-noop` (identical content,
  ignoring case and spacing, must be NOOP), `no-placeholders` (no `<memory-id>`, `<id>`,
  `{{...}}`, `[ID]` left in the output), `required-fields` (an action; a target id for UPDATE and
  DELETE; content for CREATE and UPDATE; tags too, for cases whose expected decision lists
  `tags`, as seed 000's "ID, content, tags all present");
- **operation** (target 80%): `action` (the decision is one of the expected ones, with the
  right target id) and, for pairs marked `expect_similar`, `similarity` (seed 000's similarity
  detection: a similar pair is merged into the stored memory, UPDATE or DELETE; a dissimilar
  one is stored apart, CREATE);
- **judge** (target 70%): `merge-quality`, the rubric judge's merge-quality preset
  (completeness 50 / coherence 30 / conciseness 20) on the merged text of an UPDATE.

Actions are compared in one vocabulary: mem0's ADD / UPDATE / DELETE / NONE map to CREATE /
UPDATE / DELETE / NOOP.
"""

from __future__ import annotations

import json
import re
from typing import Any, Literal

from memgauge.data.models import OperationCase, blank, normalize_action
from memgauge.data.parsing import loads_json

__all__ = [
    "TIERS",
    "TIER_SCORING",
    "TIER_TARGETS",
    "decision_of",
    "heuristic_checks",
    "normalize_action",
    "operation_check",
]

TIER_TARGETS = {"heuristic": 0.95, "operation": 0.80, "judge": 0.70}
#: How each tier's verdicts are reached, for the gate's threshold (seed 000: exact-match
#: heuristics 10%, LLM judges 20%; an LLM operation checked by rule, the default 15%).
TIER_SCORING: dict[str, Literal["exact", "judge"] | None] = {
    "heuristic": "exact",
    "operation": None,
    "judge": "judge",
}
TIERS = {
    "exact-noop": "heuristic",
    "no-placeholders": "heuristic",
    "required-fields": "heuristic",
    "action": "operation",
    "similarity": "operation",
    "merge-quality": "judge",
}
_PLACEHOLDER = re.compile(r"<\s*memory[-_ ]?id\s*>|<\s*id\s*>|\{\{[^}]*\}\}|\[\s*id\s*\]", re.I)
_FENCE = re.compile(r"^\s*```(?:json)?\s*|\s*```\s*$", re.I)
_ACTION = re.compile(r"^\s*([A-Za-z_-]+)\s*[:\s]\s*([\w.-]+)?")


def decision_of(output: Any) -> dict[str, Any]:
    """A decider's output as `{action, id, content, reason}` (JSON text accepted; mem0's
    `{"event": ..., "text": ...}` too)."""
    if isinstance(output, str):
        text = _FENCE.sub("", output)
        try:
            output = loads_json(text)  # bounded: a hostile output is text, not a crash
        except ValueError:
            m = _ACTION.match(text + " ")  # "UPDATE: mem_2", "NOOP"
            if m is None:
                return {"action": "", "raw": output}
            return {"action": normalize_action(m.group(1)), "id": m.group(2), "raw": output}
    if not isinstance(output, dict):
        return {"action": "", "raw": output}
    d = dict(output)
    d["action"] = normalize_action(d.get("action", d.get("event", "")))
    if "content" not in d and "text" in d:
        d["content"] = d["text"]
    if "id" not in d and "target_id" in d:
        d["id"] = d["target_id"]
    return d


def _same(a: str, b: str) -> bool:
    return " ".join(a.lower().split()) == " ".join(b.lower().split())


def _incoming(case: OperationCase) -> str:
    inc = case.incoming
    return inc.content if hasattr(inc, "content") else str(dict(inc).get("content", ""))


def _exact(case: OperationCase) -> bool:
    """Whether the incoming memory is one the case holds already (but for case and spacing)."""
    return any(_same(m.content, _incoming(case)) for m in case.existing)


def checks_for(case: OperationCase) -> list[str]:
    """The checks that apply to `case` whatever its decision: what a decision that failed could
    not be checked on. Not the merge-quality judge's, which applies to an UPDATE only."""
    return [
        *(["exact-noop"] if _exact(case) else []),
        "no-placeholders",
        "required-fields",
        "action",
        *(["similarity"] if case.expect_similar is not None else []),
    ]


def heuristic_checks(
    case: OperationCase, decision: dict[str, Any]
) -> dict[str, tuple[bool, str] | None]:
    """The heuristic tier's checks (None where a check does not apply to the case)."""
    action = decision["action"]
    exact = _exact(case)
    out: dict[str, tuple[bool, str] | None] = {}
    out["exact-noop"] = (
        (
            action == "NOOP",
            "identical content kept as NOOP"
            if action == "NOOP"
            else f"identical content, but {action or 'no action'}",
        )
        if exact
        else None
    )
    text = json.dumps(decision.get("raw", decision), default=str)
    found = _PLACEHOLDER.search(text)
    out["no-placeholders"] = (
        found is None,
        f"placeholder {found.group(0)!r} left in the output" if found else "no placeholders",
    )
    missing = []
    if action not in ("CREATE", "UPDATE", "DELETE", "NOOP"):
        missing.append("action")
    if action in ("UPDATE", "DELETE") and not decision.get("id"):
        missing.append("id")
    # zero-width characters alone are no content, as an incoming memory's are refused
    if action in ("CREATE", "UPDATE") and blank(str(decision.get("content") or "")) is not None:
        missing.append("content")
    if action in ("CREATE", "UPDATE") and case.expected.tags is not None:
        tags = decision.get("tags")
        if isinstance(tags, str):  # "auth, tokens"
            tags = [t for t in re.split(r"[,\s]+", tags) if t]
        if not isinstance(tags, list) or not [t for t in tags if str(t).strip()]:
            missing.append("tags")
    out["required-fields"] = (
        not missing,
        f"missing {', '.join(missing)}" if missing else "all fields present",
    )
    return out


def operation_check(case: OperationCase, decision: dict[str, Any]) -> tuple[bool, str]:
    """Is the decision one of the expected ones (and aimed at the right memory)?"""
    want = case.expected.action
    allowed = {normalize_action(a) for a in (want if isinstance(want, list) else [want])}
    action = decision["action"]
    if action not in allowed:
        return False, f"{action or 'no action'}, expected {' or '.join(sorted(allowed))}"
    target = case.expected.id
    if action not in ("UPDATE", "DELETE"):
        return True, f"{action} as expected"
    aimed = str(decision.get("id"))
    stored = {m.id for m in case.existing}
    # an UPDATE or DELETE of a memory the store does not hold changes nothing that is there
    nowhere = " (not a stored memory)" if aimed not in stored else ""
    if target and aimed != target:
        return False, f"{action} of {decision.get('id')!r}{nowhere}, expected {target!r}"
    if nowhere:
        return False, f"{action} of {decision.get('id')!r}{nowhere}"
    return True, f"{action} as expected"


def similarity_check(case: OperationCase, decision: dict[str, Any]) -> tuple[bool, str] | None:
    """Seed 000's similarity detection, for cases that say whether the pair is similar."""
    if case.expect_similar is None:
        return None
    action = decision["action"]
    if case.expect_similar:
        ok = action in ("UPDATE", "DELETE")
        return ok, "similar pair merged" if ok else f"similar pair, but {action or 'no action'}"
    ok = action == "CREATE"
    return ok, "different topic kept apart" if ok else f"false match: {action} of a different topic"
