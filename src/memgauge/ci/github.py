"""One sticky pull-request comment: post the gate's Markdown on the pull request the workflow
runs for, or update the comment an earlier run posted, so a pull request carries one memgauge
comment however many times CI runs.

```
python -m memgauge.ci.github comment --body-file gate.md [--marker KEY] [--author LOGIN]
                                     [--on-error fail|warn]
```

The comment is found by a hidden marker, `<!-- memgauge: KEY -->`, on the first line of its body
(KEY defaults to `gate`; the Action uses the suite, so two suites keep two comments), AND by its
author: the token's own identity. Anyone can write the marker into a comment of their own; such a
comment is never edited (a new one is posted). Who the token is: `GET /user` for a user's token;
an installation token (the default GITHUB_TOKEN, a GitHub App's) is refused there, and its
comments are by the app's bot: `--author` (default `github-actions[bot]`, the GITHUB_TOKEN's).

It reads what GitHub Actions sets: `GITHUB_EVENT_PATH` (the event payload: `pull_request.number`,
or `issue.number` for a comment event), `GITHUB_REPOSITORY`, `GITHUB_API_URL` and a token in
`GITHUB_TOKEN`. Outside a pull request it says so and does nothing (exit 0). The REST calls:

- `GET {api}/repos/{repo}/issues/{n}/comments?per_page=100`, then each `Link: rel="next"` page
  (on the same API only: the token goes nowhere else);
- `GET {api}/user` once a marked comment is seen;
- `PATCH {api}/repos/{repo}/issues/comments/{id}` for the token's own marked comment, else
- `POST {api}/repos/{repo}/issues/{n}/comments`.

A body longer than GitHub takes (65,536 characters) keeps its first whole lines that fit and a
note of how many more the job summary has (`fitted`).

A comment that cannot be posted (a fork's pull request gets a read-only token: 403) is exit 1 and
an error; with `--on-error warn` it is one GitHub Actions warning annotation and exit 0, so the
Action's step keeps the gate's status.

Only the standard library: the Action runs this before anything else might be installed.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = [
    "ACTIONS_BOT",
    "MAX_BODY",
    "CommentError",
    "Target",
    "fitted",
    "main",
    "marker_line",
    "sticky_comment",
    "target_from_env",
    "token_login",
]

PAGE = 100
#: who posts with the default GITHUB_TOKEN
ACTIONS_BOT = "github-actions[bot]"
#: the longest comment body GitHub takes (422 "Body is too long (maximum is 65536
#: characters)"); `fitted` counts UTF-16 code units, never fewer than GitHub's characters
MAX_BODY = 65536
_NEXT = re.compile(r'<([^>]*)>\s*;\s*rel="([^"]*)"')


class CommentError(Exception):
    """The comment could not be posted: what GitHub answered (`status`, None when it did not
    answer), or what is missing; `advice` says what to do about it."""

    def __init__(self, message: str, status: int | None = None, advice: str = "") -> None:
        super().__init__(message)
        self.status = status
        self.advice = advice


def _advice(status: int) -> str:
    if status == 403:
        return (
            "give the job `permissions: pull-requests: write`; a pull request from a fork gets a "
            "read-only token, so its comment cannot be posted (the job summary has the gate)"
        )
    if status in (401, 404):
        return (
            "check the github-token input: this token cannot see the repository or the pull "
            "request (or GITHUB_API_URL is not this repository's GitHub)"
        )
    if status == 429 or status >= 500:
        return "GitHub did not take the comment now: re-run the job to post it"
    return "see GitHub's answer"


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


def _request(
    target: Target, method: str, url: str, body: Mapping[str, Any] | None = None
) -> tuple[Any, str]:
    """GitHub's JSON answer to one call and its Link header."""
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(
        url,
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
    path = url.removeprefix(target.api)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            raw = response.read()
            link = response.headers.get("Link", "")
    except urllib.error.HTTPError as exc:
        raw_detail = exc.read().decode("utf-8", "replace")
        try:
            detail = str(json.loads(raw_detail)["message"])
        except (ValueError, KeyError, TypeError):
            detail = raw_detail
        raise CommentError(
            f"{method} {path}: HTTP {exc.code} {detail[:300]}".strip(), exc.code, _advice(exc.code)
        ) from None
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        raise CommentError(
            f"{method} {url}: {reason}",
            advice="GitHub's API could not be reached: check GITHUB_API_URL, or re-run the job",
        ) from None
    return (json.loads(raw) if raw else None), link


def _call(target: Target, method: str, path: str, body: Mapping[str, Any] | None = None) -> Any:
    return _request(target, method, f"{target.api}{path}", body)[0]


def _comments(target: Target) -> Iterator[dict[str, Any]]:
    """Every comment of the pull request, oldest first, page after page as the Link header
    says (GitHub may page at fewer than asked, so a short page is not the last)."""
    path = f"/repos/{target.repo}/issues/{target.number}/comments"
    url: str | None = f"{target.api}{path}?per_page={PAGE}"
    while url is not None:
        page, link = _request(target, "GET", url)
        if not isinstance(page, list):
            raise CommentError(f"GET {path}: not a list of comments")
        yield from (c for c in page if isinstance(c, dict))
        url = next((u for u, rel in _NEXT.findall(link) if "next" in rel.split()), None)
        if url is not None and not url.startswith(f"{target.api}/"):
            # the token is sent with every page: only to the API it was given for
            raise CommentError(
                f"GET {path}: the next page is on another host ({url}), not {target.api}"
            )


def token_login(target: Target, fallback: str = ACTIONS_BOT) -> str:
    """Who posts with this token: the login `GET /user` answers, or `fallback` when GitHub
    refuses to say (an installation token: the default GITHUB_TOKEN, a GitHub App's)."""
    try:
        me = _call(target, "GET", "/user")
    except CommentError as exc:
        if exc.status in (403, 404):
            return fallback
        raise
    if not isinstance(me, dict) or not isinstance(me.get("login"), str):
        raise CommentError("GET /user: no login in GitHub's answer")
    return str(me["login"])


def _login(comment: Mapping[str, Any]) -> str:
    user = comment.get("user")
    return str(user.get("login", "")) if isinstance(user, dict) else ""


def _size(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def fitted(text: str, limit: int = MAX_BODY) -> str:
    """`text`, or, when GitHub would refuse it as too long, its first whole lines that fit
    (a table keeps whole rows) and a note of how many lines the job summary has besides."""
    if _size(text) <= limit:
        return text
    lines = text.splitlines(keepends=True)
    note = (
        "\n\n*Cut to fit GitHub's {n} characters for a comment: {cut} more lines are in this "
        "workflow run's job summary.*\n"
    )
    room = limit - _size(note.format(n=f"{limit:,}", cut=len(lines)))
    kept, used = 0, 0
    while kept < len(lines) and used + _size(lines[kept]) <= room:
        used += _size(lines[kept])
        kept += 1
    body = "".join(lines[:kept]).rstrip("\n")
    return body + note.format(n=f"{limit:,}", cut=len(lines) - kept)


def sticky_comment(
    target: Target, body: str, key: str = "gate", author: str = ACTIONS_BOT
) -> tuple[str, int]:
    """Post `body` under the marker of `key` (cut to what GitHub takes: `fitted`), or update
    the token's own comment that carries it (`author` names who posts when `GET /user` cannot
    say); returns (`created` or `updated`, the comment's id). A marked comment by anyone else
    is left alone."""
    marker = marker_line(key)
    text = fitted(f"{marker}\n{body}")
    base = f"/repos/{target.repo}/issues"
    me: str | None = None
    for comment in _comments(target):
        if not str(comment.get("body", "")).startswith(marker):
            continue
        if me is None:
            me = token_login(target, author).casefold()
        if _login(comment).casefold() == me and "id" in comment:
            _call(target, "PATCH", f"{base}/comments/{comment['id']}", {"body": text})
            return "updated", int(comment["id"])
    made = _call(target, "POST", f"{base}/{target.number}/comments", {"body": text})
    return "created", int(made["id"]) if isinstance(made, dict) and "id" in made else 0


def _annotation(message: str) -> str:
    """A GitHub Actions warning: one line, its data escaped as the runner reads it."""
    data = message.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    return f"::warning title=memgauge comment::{data}"


def main(argv: Sequence[str] | None = None, env: Mapping[str, str] | None = None) -> int:
    """`comment --body-file FILE [--marker KEY] [--author LOGIN] [--on-error fail|warn]`: 0
    posted (or not a pull request), 1 GitHub refused or could not be reached, or the
    environment lacks the payload, repository or token (`--on-error warn`: a warning
    annotation and 0), 2 no body file, or one that is not UTF-8."""
    parser = argparse.ArgumentParser(prog="python -m memgauge.ci.github")
    sub = parser.add_subparsers(dest="command", required=True)
    comment = sub.add_parser("comment", help="post or update the sticky pull-request comment")
    comment.add_argument("--body-file", type=Path, required=True)
    comment.add_argument("--marker", default="gate", help="what tells this comment apart")
    comment.add_argument(
        "--author",
        default=ACTIONS_BOT,
        help="who posts when the token cannot say (GET /user refused, as for an installation "
        "token): a GitHub App's bot login (default: %(default)s, the GITHUB_TOKEN's)",
    )
    comment.add_argument(
        "--on-error",
        choices=("fail", "warn"),
        default="fail",
        help="a comment that cannot be posted: exit 1 (fail) or a GitHub Actions warning and "
        "exit 0 (warn)",
    )
    args = parser.parse_args(argv)
    try:
        body = args.body_file.read_text(encoding="utf-8")
    except OSError as exc:
        print(f"error: --body-file {args.body_file}: {exc.strerror}", file=sys.stderr)
        return 2
    except UnicodeDecodeError as exc:
        print(
            f"error: --body-file {args.body_file}: not UTF-8 text (byte 0x{exc.object[exc.start]:02x}"
            f" at offset {exc.start}); give the file `memgauge gate --markdown` wrote",
            file=sys.stderr,
        )
        return 2
    try:
        target = target_from_env(os.environ if env is None else env)
        if target is None:
            print("not a pull request: no comment posted")
            return 0
        done, comment_id = sticky_comment(target, body, args.marker, args.author)
    except CommentError as exc:
        said = f"{exc}: {exc.advice}" if exc.advice else str(exc)
        if args.on_error == "warn":
            print(_annotation(f"the pull-request comment was not posted: {said}"))
            return 0
        print(f"error: {said}", file=sys.stderr)
        return 1
    print(f"{done} comment {comment_id} on {target.repo}#{target.number}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
