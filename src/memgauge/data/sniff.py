"""The outline of a structured file from its first bytes: whether the document is an object or a
list, the top-level keys, and the fields of its first record. Enough to tell what a file holds
without parsing all of it (LongMemEval files run to hundreds of megabytes) and without trusting
it: a cut-off head, a syntax error, an alias bomb or a deep nesting ends the outline where it
stands, never in an exception.

The first record is the first object in the top-level list, or in the first list under a
top-level key (`{"cases": [{...}]}`, `conversations:` then `- id: ...`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

import yaml

__all__ = ["Outline", "json_outline", "yaml_outline"]

_NODE_EVENTS = (yaml.ScalarEvent, yaml.AliasEvent, yaml.MappingStartEvent, yaml.SequenceStartEvent)

#: YAML events read at most (a head of a few kilobytes has far fewer)
_MAX_EVENTS = 20_000


@dataclass
class Outline:
    """What the start of a document shows.

    Attributes:
        top: `object` or `list` (None: not a JSON/YAML document, or nothing readable).
        keys: the top-level keys in order (of an object).
        record: the fields of the first record, in order.
    """

    top: Literal["object", "list"] | None = None
    keys: list[str] = field(default_factory=list)
    record: list[str] = field(default_factory=list)


class _Walk:
    """The outline, built from a stream of container starts and ends and object keys."""

    def __init__(self) -> None:
        self.outline = Outline()
        self.stack: list[str] = []  # "object" / "list"
        self.record_depth = 0  # depth of the record object while inside it, 0 otherwise
        self.done = False  # the record was closed: nothing more to learn but top keys

    def open(self, kind: Literal["object", "list"]) -> None:
        if not self.stack:
            self.outline.top = kind
        parent = self.stack[-1] if self.stack else None
        self.stack.append(kind)
        depth = len(self.stack)
        # the record: the top list's first object, or the first object of a list under a top key
        first = kind == "object" and parent == "list" and not self.done and not self.record_depth
        if first and (depth == 2 or (depth == 3 and self.stack[0] == "object")):
            self.record_depth = depth

    def close(self) -> None:
        if self.record_depth and len(self.stack) == self.record_depth:
            self.record_depth = 0
            self.done = True
        if self.stack:
            self.stack.pop()

    def key(self, name: str) -> None:
        depth = len(self.stack)
        if depth == 1:
            self.outline.keys.append(name)
        if self.record_depth and depth == self.record_depth:
            self.outline.record.append(name)


def json_outline(head: str) -> Outline:
    """The outline of JSON text, or of its first part (a file's head, one JSONL line)."""
    walk = _Walk()
    expect_key: list[bool] = []  # per open container: an object waiting for a key
    i, n = 0, len(head)
    while i < n:
        c = head[i]
        if c == '"':
            j = i + 1
            while j < n and head[j] != '"':
                j += 2 if head[j] == "\\" else 1
            if j >= n:
                break  # cut off inside a string
            if expect_key and expect_key[-1]:
                walk.key(head[i + 1 : j])
                expect_key[-1] = False
            i = j + 1
            continue
        if c in "{[":
            walk.open("object" if c == "{" else "list")
            expect_key.append(c == "{")
        elif c in "}]":
            walk.close()
            if expect_key:
                expect_key.pop()
            if not walk.stack:
                break  # one document (a JSONL line) is all there is
        elif c == "," and expect_key and walk.stack[-1] == "object":
            expect_key[-1] = True
        i += 1
    return walk.outline


def yaml_outline(head: str) -> Outline:
    """The outline of YAML text (or of its head), read from the parser's events: no value is
    built, so an alias is never expanded."""
    walk = _Walk()
    # per open container: for a mapping, whether the next node is a key
    at_key: list[bool] = []
    events = yaml.parse(head, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    try:
        for count, event in enumerate(events):
            if count > _MAX_EVENTS:
                break
            node = isinstance(event, _NODE_EVENTS)
            is_key = node and bool(at_key) and at_key[-1]
            if node and at_key and walk.stack[-1] == "object":
                at_key[-1] = not at_key[-1]  # a key, then its value, then a key ...
            if isinstance(event, yaml.MappingStartEvent):
                walk.open("object")
                at_key.append(True)
            elif isinstance(event, yaml.SequenceStartEvent):
                walk.open("list")
                at_key.append(False)
            elif isinstance(event, yaml.MappingEndEvent | yaml.SequenceEndEvent):
                walk.close()
                at_key.pop()
                if not walk.stack:
                    break
            elif isinstance(event, yaml.ScalarEvent) and is_key:
                walk.key(str(event.value))
    except (yaml.YAMLError, RecursionError, ValueError):
        pass  # the outline so far: a cut-off head ends in an error
    return walk.outline
