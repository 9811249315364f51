"""One sticky pull-request comment: post the gate's Markdown on the pull request the workflow
runs for, or update the comment an earlier run posted, so a pull request carries one memgauge
comment however many times CI runs.

```
python -m memgauge.ci.github comment --body-file gate.md [--marker KEY]
```

The comment is found by a hidden marker, `<!-- memgauge: KEY -->`, on the first line of its body
(KEY defaults to `gate`; the Action uses the suite, so two suites keep two comments). It reads
what GitHub Actions sets: `GITHUB_EVENT_PATH` (the event payload: `pull_request.number`, or
`issue.number` for a comment event), `GITHUB_REPOSITORY`, `GITHUB_API_URL` and a token in
`GITHUB_TOKEN`. Outside a pull request it says so and does nothing (exit 0). The REST calls:

- `GET {api}/repos/{repo}/issues/{n}/comments?per_page=100&page=P` until a short page;
- `PATCH {api}/repos/{repo}/issues/comments/{id}` when the marker is found, else
- `POST {api}/repos/{repo}/issues/{n}/comments`.

Only the standard library: the Action runs this before anything else might be installed.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import urllib.error
import urllib.request
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["CommentError", "Target", "main", "marker_line", "sticky_comment", "target_from_env"]

PAGE = 100


class CommentError(Exception):
    """The comment could not be posted: what GitHub answered, or what is missing."""


@dataclass(frozen=True)
class Target:
    """Where the comment goes: the API's base URL, `owner/repo`, the pull request number."""

    api: str
    repo: str
    number: int
    token: str


def marker_line(key: str) -> str:
    """The hidden first line that finds the comment again."""
    return f"<!-- memgauge: {key} -->"


def target_from_env(env: Mapping[str, str]) -> Target | None:
    """The pull request of this workflow run, or None when the event is not one (a push).
    CommentError when the environment lacks what a pull request's comment needs."""
    path = env.get("GITHUB_EVENT_PATH")
    if not path:
        raise CommentError("GITHUB_EVENT_PATH is not set: run inside GitHub Actions")
    try:
        event = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise CommentError(
            f"GITHUB_EVENT_PATH {path}: not a readable event payload ({exc})"
        ) from None
    number = None
    if isinstance(event, dict):
        for key in ("pull_request", "issue"):
            part = event.get(key)
            if isinstance(part, dict) and isinstance(part.get("number"), int):
                number = part["number"]
                break
    if number is None:
        return None
    repo = env.get("GITHUB_REPOSITORY", "")
    token = env.get("GITHUB_TOKEN", "")
    if "/" not in repo:
        raise CommentError("GITHUB_REPOSITORY is not OWNER/REPO")
    if not token:
        raise CommentError(
            "GITHUB_TOKEN is empty: give the step a token (the Action's github-token input) "
            "with pull-requests: write"
        )
    api = env.get("GITHUB_API_URL") or "https://api.github.com"
    return Target(api.rstrip("/"), repo, number, token)


def _call(target: Target, method: str, path: str, body: Mapping[str, Any] | None = None) -> Any:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(
        f"{target.api}{path}",
        data=data,
        method=method,
        headers={
            "Accept": "application/vnd.github+json",
            "Authorization": f"Bearer {target.token}",
            "X-GitHub-Api-Version": "2022-11-28",
            "User-Agent": "memgauge-ci",
            **({"Content-Type": "application/json"} if data is not None else {}),
        },
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            raw = response.read()
    except urllib.error.HTTPError as exc:
        detail = exc.read().decode("utf-8", "replace")[:300]
        raise CommentError(f"{method} {path}: HTTP {exc.code} {detail}".strip()) from None
    except urllib.error.URLError as exc:
        raise CommentError(f"{method} {target.api}{path}: {exc.reason}") from None
    return json.loads(raw) if raw else None


def sticky_comment(target: Target, body: str, key: str = "gate") -> tuple[str, int]:
    """Post `body` under the marker of `key`, or update the comment that carries it; returns
    (`created` or `updated`, the comment's id)."""
    marker = marker_line(key)
    text = f"{marker}\n{body}"
    base = f"/repos/{target.repo}/issues"
    page = 1
    while True:
        comments = _call(
            target, "GET", f"{base}/{target.number}/comments?per_page={PAGE}&page={page}"
        )
        if not isinstance(comments, list):
            raise CommentError(f"GET {base}/{target.number}/comments: not a list of comments")
        for comment in comments:
            if isinstance(comment, dict) and str(comment.get("body", "")).startswith(marker):
                _call(target, "PATCH", f"{base}/comments/{comment['id']}", {"body": text})
                return "updated", int(comment["id"])
        if len(comments) < PAGE:
            break
        page += 1
    made = _call(target, "POST", f"{base}/{target.number}/comments", {"body": text})
    return "created", int(made["id"]) if isinstance(made, dict) and "id" in made else 0


def main(argv: Sequence[str] | None = None, env: Mapping[str, str] | None = None) -> int:
    """`comment --body-file FILE [--marker KEY]`: 0 posted (or not a pull request), 1 GitHub
    refused or the environment lacks the payload, repository or token, 2 no body file."""
    parser = argparse.ArgumentParser(prog="python -m memgauge.ci.github")
    sub = parser.add_subparsers(dest="command", required=True)
    comment = sub.add_parser("comment", help="post or update the sticky pull-request comment")
    comment.add_argument("--body-file", type=Path, required=True)
    comment.add_argument("--marker", default="gate", help="what tells this comment apart")
    args = parser.parse_args(argv)
    try:
        body = args.body_file.read_text(encoding="utf-8")
    except OSError as exc:
        print(f"error: --body-file {args.body_file}: {exc.strerror}", file=sys.stderr)
        return 2
    try:
        target = target_from_env(os.environ if env is None else env)
        if target is None:
            print("not a pull request: no comment posted")
            return 0
        done, comment_id = sticky_comment(target, body, args.marker)
    except CommentError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(f"{done} comment {comment_id} on {target.repo}#{target.number}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
