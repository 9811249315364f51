"""The GitHub Action's shell steps (scripts/ci/github-action.sh), run as the Action runs them:
a real subprocess, a fake event payload in GITHUB_EVENT_PATH, and a fake GitHub REST API on
127.0.0.1 (GITHUB_API_URL) that keeps the comments and records every request. The baseline
comes from outside the runner: a run bundle exported from another store.

The script's `python -m memgauge ...` commands are each their own process, forked from one
server that imported memgauge once for this file (tests/docs/fork_server.py, as the docs'
pages run it): the interpreter's start and the engine's imports, 1-2 s of CPU a command and
four commands a step, are paid once."""

from __future__ import annotations

import functools
import json
import os
import secrets
import shlex
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from tests.ci.conftest import FakeREST
from tests.docs.session import start_fork_server, stop_fork_server
from tests.helpers import run_memgauge, write_recall_suite

from memgauge.ci.github import main as github_main
from memgauge.ci.github import marker_line

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "ci" / "github-action.sh"
SRC = ROOT / "src"
DOCS_TESTS = ROOT / "tests" / "docs"


#: who posts with the default GITHUB_TOKEN (an installation token): the Action's bot
ACTIONS_BOT = {"login": "github-actions[bot]", "type": "Bot"}


#: GitHub's longest comment body, in characters (its 422 says so)
MAX_COMMENT = 65536


class FakeGitHub(FakeREST):
    """Issue comments of one repository, over the REST paths the script calls. Like GitHub:
    `GET /user` answers 403 for an installation token (`me=None`, the default GITHUB_TOKEN,
    whose comments are by github-actions[bot]) and the token's user for a user's token; lists
    page at `per_page` (at most `per_page_cap`) with a `Link: <...>; rel="next"` header;
    `refuse` answers a method (`POST`, `PATCH`) with that status instead; a body longer than
    GitHub takes is its 422."""

    def __init__(
        self,
        per_page_cap: int = 100,
        me: dict[str, str] | None = None,
        refuse: dict[str, int] | None = None,
    ) -> None:
        super().__init__()
        self.comments: list[dict[str, Any]] = []
        self.cap = per_page_cap
        self.me = me
        self.refuse = refuse or {}
        #: where the next page's Link points (None: this server)
        self.next_base: str | None = None

    def route(
        self,
        method: str,
        path: str,
        query: dict[str, list[str]],
        body: Any,
        headers: dict[str, str],
    ) -> tuple[int, Any]:
        parts = path.strip("/").split("/")
        if method == "GET" and parts == ["user"]:
            if self.me is None:
                return 403, {"message": "Resource not accessible by integration"}
            return 200, self.me
        if parts[:3] != ["repos", "acme", "memory"] or parts[3] != "issues":
            return 404, {"message": "Not Found"}
        if method in self.refuse:
            return self.refuse[method], {"message": "Resource not accessible by integration"}
        if method in ("POST", "PATCH") and len(body["body"]) > MAX_COMMENT:
            error = {"resource": "IssueComment", "code": "unprocessable", "field": "data"}
            error["message"] = f"Body is too long (maximum is {MAX_COMMENT} characters)"
            return 422, {"message": "Validation Failed", "errors": [error]}
        if method == "GET" and parts[5:] == ["comments"]:
            page = int(query.get("page", ["1"])[0])
            per = min(int(query.get("per_page", ["30"])[0]), self.cap)
            if page * per < len(self.comments):
                base = self.next_base or self.url
                headers["Link"] = f'<{base}{path}?per_page={per}&page={page + 1}>; rel="next"'
            return 200, self.comments[(page - 1) * per : page * per]
        if method == "POST" and parts[5:] == ["comments"]:
            made = {
                "id": 1000 + len(self.comments),
                "body": body["body"],
                "user": self.me or ACTIONS_BOT,
            }
            self.comments.append(made)
            return 201, made
        if method == "PATCH" and parts[4] == "comments":
            for c in self.comments:
                if c["id"] == int(parts[5]):
                    c["body"] = body["body"]
                    return 200, c
        return 404, {"message": "Not Found"}


@pytest.fixture
def github() -> Iterator[FakeGitHub]:
    with FakeGitHub() as fake:
        yield fake


def _script_env() -> dict[str, str]:
    """The environment the Action's step is given, as far as the interpreter reads it."""
    return {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")]),
    }


@pytest.fixture(scope="module")
def python(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The step's `python` (MEMGAUGE_PYTHON): `python -m memgauge ARGS` is the fork server's
    client (tests/docs/fork_client.py, the real command while no server answers), anything
    else the interpreter itself."""
    bindir = tmp_path_factory.mktemp("python")
    forks = Path(tempfile.gettempdir()) / f"memgauge-ci-{os.getuid()}-{secrets.token_hex(6)}"
    real = bindir / "memgauge"
    real.write_text(f'#!/bin/sh\nexec {shlex.quote(sys.executable)} -m memgauge "$@"\n')
    client = [sys.executable, "-S", "-I", str(DOCS_TESTS / "fork_client.py")]
    wrapper = bindir / "python"
    wrapper.write_text(
        "#!/bin/sh\n"
        'if [ "$1 $2" = "-m memgauge" ]; then\n'
        f'  shift 2; exec {shlex.join([*client, str(forks / "sock"), str(real)])} "$@"\n'
        "fi\n"
        f'exec {shlex.quote(sys.executable)} "$@"\n'
    )
    for path in (real, wrapper):
        path.chmod(0o755)
    server = start_fork_server(
        forks, "memgauge.cli.main:main", bindir, _script_env(), bindir / "fork-server.log"
    )
    yield wrapper
    if server is not None:
        stop_fork_server(server, forks)


def _suite(recall_suite: Any, memories: list[str]) -> Path:
    """The suite (one file, as on a branch): six items over the reference memory."""
    path: Path = recall_suite(
        [
            {"id": f"q{i}", "input": f"where is item {i}", "expected": f"shelf {i}"}
            for i in range(6)
        ],
        [{"id": f"m{i}", "text": t} for i, t in enumerate(memories)],
        ["contains"],
        name="shelves",
    )
    return path


GOOD = [f"item {i} is on shelf {i}" for i in range(6)]
#: half the memories lost: the recall of the suite halves, a regression
WORSE = [f"item {i} is on shelf {i}" for i in range(3)]


@pytest.fixture(scope="module")
def baseline(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A run of the suite on main, recorded in another store and exported as a bundle: made
    once for the file (a test only reads it), in a MEMGAUGE_HOME of its own."""
    root = tmp_path_factory.mktemp("baseline")
    suite = _suite(functools.partial(write_recall_suite, root), GOOD)
    store = str(root / "team.db")
    env = {"MEMGAUGE_HOME": str(root / "home")}
    done = run_memgauge("run", str(suite), "--store", store, "--json", env=env)
    assert done.returncode == 0, done.stderr
    run_id = json.loads(done.stdout.strip().splitlines()[-1])["run_id"]
    bundle = root / "baseline.json"
    done = run_memgauge(
        "runs",
        "export",
        run_id,
        "--format",
        "bundle",
        "--store",
        store,
        "--out",
        str(bundle),
        env=env,
    )
    assert done.returncode == 0, done.stderr
    return bundle


def _action(
    tmp_path: Path,
    python: Path,
    github: FakeGitHub,
    suite: Path,
    event: dict[str, Any],
    **extra: str,
) -> tuple[subprocess.CompletedProcess[str], dict[str, str]]:
    """Run the script in a fresh runner directory, as the Action's step does."""
    runner = tmp_path / f"runner{len(list(tmp_path.glob('runner*')))}"
    runner.mkdir()
    payload = runner / "event.json"
    payload.write_text(json.dumps(event))
    outputs = runner / "outputs.txt"
    env = {
        **_script_env(),
        "MEMGAUGE_PYTHON": str(python),
        "MEMGAUGE_INSTALL": "",
        "MEMGAUGE_SUITE": str(suite),
        "GITHUB_EVENT_NAME": "pull_request" if "pull_request" in event else "push",
        "GITHUB_EVENT_PATH": str(payload),
        "GITHUB_REPOSITORY": "acme/memory",
        "GITHUB_API_URL": github.url,
        "GITHUB_TOKEN": "t0ken",
        "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"),
        "GITHUB_OUTPUT": str(outputs),
        **extra,
    }
    done = subprocess.run(
        ["bash", str(SCRIPT)], cwd=runner, env=env, capture_output=True, text=True, timeout=300
    )
    lines = outputs.read_text().splitlines() if outputs.exists() else []
    got = dict(line.split("=", 1) for line in lines)
    return done, {
        k: str(runner / v) if not v.startswith("/") and "/" in v else v for k, v in got.items()
    }


def test_first_run_creates_the_comment_the_second_updates_it(
    tmp_path: Path, python: Path, github: FakeGitHub, baseline: Path, recall_suite: Any
) -> None:
    github.comments.append(
        {"id": 7, "body": "LGTM, a human comment", "user": {"login": "alice", "type": "User"}}
    )
    pr = {"pull_request": {"number": 42}}
    suite = _suite(recall_suite, GOOD)
    first, out = _action(tmp_path, python, github, suite, pr, MEMGAUGE_BASELINE=f"{baseline}\n")
    assert first.returncode == 0, first.stderr
    assert out["gate-status"] == "pass"
    assert "created comment 1001 on acme/memory#42" in first.stdout
    calls = [(r["method"], r["path"]) for r in github.requests]
    assert calls == [
        ("GET", "/repos/acme/memory/issues/42/comments"),
        ("POST", "/repos/acme/memory/issues/42/comments"),
    ]
    assert all(r["auth"] == "Bearer t0ken" for r in github.requests)
    body = github.comments[1]["body"]
    assert body.startswith(marker_line(f"gate {suite}"))
    assert "### ✅ memgauge gate: pass" in body
    assert "rolling baseline of 1 earlier run" in body  # the bundle, from outside the runner
    # the job summary has the same Markdown; JUnit files and the bundle are where it says
    summary = (tmp_path / "summary.md").read_text()
    assert body.split("\n", 1)[1] == summary
    for key in ("junit", "gate-junit", "bundle"):
        assert Path(out[key]).is_file(), key

    # a regression on the same pull request: the one comment is updated, no second one
    github.requests.clear()
    # the pull request's next commit loses half the memories: same suite file, worse recall
    assert _suite(recall_suite, WORSE) == suite
    second, out = _action(tmp_path, python, github, suite, pr, MEMGAUGE_BASELINE=str(baseline))
    assert second.returncode == 1, second.stderr
    assert out["gate-status"] == "fail"
    calls = [(r["method"], r["path"]) for r in github.requests]
    assert calls[-1] == ("PATCH", "/repos/acme/memory/issues/comments/1001")
    assert [c["id"] for c in github.comments] == [7, 1001]
    assert github.comments[0]["body"] == "LGTM, a human comment"
    updated = github.comments[1]["body"]
    assert "### ❌ memgauge gate: fail" in updated
    assert "regression" in updated
    assert updated.count(marker_line(f"gate {suite}")) == 1


def test_the_marked_comment_is_found_past_the_first_page(
    tmp_path: Path, python: Path, baseline: Path, recall_suite: Any
) -> None:
    # GitHub pages at what it allows, whatever per_page asks: the Link header says what follows
    # (a page shorter than asked is not the last one)
    with FakeGitHub(per_page_cap=30) as github:
        suite = _suite(recall_suite, GOOD)
        key = f"gate {suite}"
        github.comments.extend(
            {"id": i, "body": f"chatter {i}", "user": {"login": "bob"}} for i in range(50)
        )
        github.comments.append(
            {"id": 999, "body": f"{marker_line(key)}\nold gate", "user": ACTIONS_BOT}
        )
        done, _ = _action(
            tmp_path,
            python,
            github,
            suite,
            {"pull_request": {"number": 5}},
            MEMGAUGE_BASELINE=str(baseline),
        )
        assert done.returncode == 0, done.stderr
        listed = [
            r["query"]
            for r in github.requests
            if r["method"] == "GET" and r["path"].endswith("/5/comments")
        ]
        assert listed == [{"per_page": ["100"]}, {"per_page": ["30"], "page": ["2"]}]
        assert [(r["method"], r["path"]) for r in github.requests[-2:]] == [
            ("GET", "/user"),
            ("PATCH", "/repos/acme/memory/issues/comments/999"),
        ]
        assert github.comments[-1]["body"] != f"{marker_line(key)}\nold gate"
        assert len(github.comments) == 51


def test_a_comment_github_refuses_is_a_warning_and_the_gate_decides(
    tmp_path: Path, python: Path, baseline: Path, recall_suite: Any
) -> None:
    # a pull request from a fork: its token reads but may not write the comment
    pr = {"pull_request": {"number": 8}}
    suite = _suite(recall_suite, GOOD)
    with FakeGitHub(refuse={"POST": 403}) as github:
        done, out = _action(tmp_path, python, github, suite, pr, MEMGAUGE_BASELINE=str(baseline))
        assert (done.returncode, out["gate-status"]) == (0, "pass"), done.stderr
        warnings = [line for line in done.stdout.splitlines() if line.startswith("::warning")]
        assert len(warnings) == 1, done.stdout
        assert "HTTP 403" in warnings[0]
        assert "Resource not accessible by integration" in warnings[0]
        assert "pull-requests: write" in warnings[0]
        assert "fork" in warnings[0]
        assert github.comments == []
        # the gate's Markdown is in the job summary all the same
        assert "memgauge gate: pass" in (tmp_path / "summary.md").read_text()

        _suite(recall_suite, WORSE)
        done, out = _action(tmp_path, python, github, suite, pr, MEMGAUGE_BASELINE=str(baseline))
        assert (done.returncode, out["gate-status"]) == (1, "fail"), done.stderr
        assert sum(line.startswith("::warning") for line in done.stdout.splitlines()) == 1


def test_a_marker_planted_by_someone_else_is_not_edited(
    tmp_path: Path, python: Path, github: FakeGitHub, baseline: Path, recall_suite: Any
) -> None:
    suite = _suite(recall_suite, GOOD)
    planted = f"{marker_line(f'gate {suite}')}\n### ✅ memgauge gate: pass (trust me)"
    mallory = {"login": "mallory", "type": "User"}
    github.comments.append({"id": 66, "body": planted, "user": mallory})
    pr = {"pull_request": {"number": 9}}
    done, _ = _action(tmp_path, python, github, suite, pr, MEMGAUGE_BASELINE=str(baseline))
    assert done.returncode == 0, done.stderr
    assert "created comment 1001 on acme/memory#9" in done.stdout
    assert github.comments[0] == {"id": 66, "body": planted, "user": mallory}
    assert github.comments[1]["user"] == ACTIONS_BOT
    # the next run finds the Action's own comment, not the planted one
    done, _ = _action(tmp_path, python, github, suite, pr, MEMGAUGE_BASELINE=str(baseline))
    assert done.returncode == 0, done.stderr
    assert "updated comment 1001 on acme/memory#9" in done.stdout
    assert [c["id"] for c in github.comments] == [66, 1001]
    assert github.comments[0]["body"] == planted


def test_a_github_app_posts_as_the_bot_the_comment_author_input_names(
    tmp_path: Path, python: Path, github: FakeGitHub, baseline: Path, recall_suite: Any
) -> None:
    # a GitHub App's installation token: GET /user is refused, the app's bot posts
    suite = _suite(recall_suite, GOOD)
    marked = f"{marker_line(f'gate {suite}')}\nold gate"
    app = {"login": "memgauge-ci[bot]", "type": "Bot"}
    github.comments += [
        {"id": 11, "body": marked, "user": ACTIONS_BOT},
        {"id": 12, "body": marked, "user": app},
    ]
    pr = {"pull_request": {"number": 4}}
    done, _ = _action(
        tmp_path,
        python,
        github,
        suite,
        pr,
        MEMGAUGE_BASELINE=str(baseline),
        MEMGAUGE_COMMENT_AUTHOR="memgauge-ci[bot]",
    )
    assert done.returncode == 0, done.stderr
    assert "updated comment 12 on acme/memory#4" in done.stdout
    assert github.comments[0]["body"] == marked
    assert github.comments[1]["body"] != marked


def test_a_push_writes_the_summary_and_posts_nothing(
    tmp_path: Path, python: Path, github: FakeGitHub, recall_suite: Any
) -> None:
    # no baseline at all (the first run on main): the gate passes until one exists
    done, out = _action(
        tmp_path,
        python,
        github,
        _suite(recall_suite, GOOD),
        {"ref": "refs/heads/main"},
        MEMGAUGE_BASELINE=str(tmp_path / "not-there-yet.json"),
    )
    assert done.returncode == 0, done.stderr
    assert "does not exist (yet)" in done.stderr
    assert github.requests == []
    assert "No earlier run to compare with" in (tmp_path / "summary.md").read_text()
    assert Path(out["bundle"]).is_file()


def test_a_suite_that_cannot_run_exits_2_and_says_so(
    tmp_path: Path, python: Path, github: FakeGitHub
) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: x\ntasks: nope\n")
    done, out = _action(tmp_path, python, github, bad, {"pull_request": {"number": 1}})
    assert done.returncode == 2
    assert out["gate-status"] == "error"
    assert "did not run to the end (exit 2)" in (tmp_path / "summary.md").read_text()
    assert github.requests == []


def test_the_action_passes_every_input_to_the_script() -> None:
    action = yaml.safe_load((ROOT / "action.yml").read_text())
    assert action["runs"]["using"] == "composite"
    step = action["runs"]["steps"][-1]
    assert "scripts/ci/github-action.sh" in step["run"]
    passed = " ".join(str(v) for v in step["env"].values())
    for name in action["inputs"]:
        if name != "python-version":
            assert f"inputs.{name} }}}}" in passed, name
    script = SCRIPT.read_text()
    for var in step["env"]:
        assert var in script or var == "GITHUB_TOKEN", var
    for name, spec in action["outputs"].items():
        assert spec["value"] == f"${{{{ steps.memgauge.outputs.{name} }}}}"
        assert f"output {name} " in script, name


def test_comment_errors_say_what_is_missing_or_what_github_answered(
    tmp_path: Path, github: FakeGitHub, capsys: pytest.CaptureFixture[str]
) -> None:
    body = tmp_path / "gate.md"
    body.write_text("gate\n")
    event = tmp_path / "event.json"
    event.write_text(json.dumps({"pull_request": {"number": 3}}))
    env = {"GITHUB_EVENT_PATH": str(event), "GITHUB_REPOSITORY": "acme/memory"}
    argv = ["comment", "--body-file", str(body)]
    assert github_main(argv, env) == 1
    assert "GITHUB_TOKEN is empty" in capsys.readouterr().err
    env |= {"GITHUB_TOKEN": "t", "GITHUB_API_URL": github.url, "GITHUB_REPOSITORY": "acme/other"}
    assert github_main(argv, env) == 1
    assert "HTTP 404" in capsys.readouterr().err
    assert github_main(["comment", "--body-file", str(tmp_path / "none.md")], env) == 2
    assert "none.md" in capsys.readouterr().err
    event.write_text("{not json")
    assert github_main(argv, env) == 1
    assert "not a readable event payload" in capsys.readouterr().err


def _pr_env(tmp_path: Path, api: str) -> dict[str, str]:
    event = tmp_path / "event.json"
    event.write_text(json.dumps({"pull_request": {"number": 3}}))
    return {
        "GITHUB_EVENT_PATH": str(event),
        "GITHUB_REPOSITORY": "acme/memory",
        "GITHUB_TOKEN": "t",
        "GITHUB_API_URL": api,
    }


def _body(tmp_path: Path) -> list[str]:
    body = tmp_path / "gate.md"
    body.write_text("gate\n")
    return ["comment", "--body-file", str(body)]


@pytest.mark.parametrize(
    ("refuse", "said", "advice"),
    [
        ({"PATCH": 403}, "HTTP 403", "pull-requests: write"),
        ({"GET": 404}, "HTTP 404", "github-token"),
        ({"GET": 401}, "HTTP 401", "github-token"),
        ({"PATCH": 502}, "HTTP 502", "re-run"),
    ],
)
def test_on_error_warn_turns_each_refusal_into_one_annotation(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    refuse: dict[str, int],
    said: str,
    advice: str,
) -> None:
    with FakeGitHub(refuse=refuse) as github:
        github.comments.append(
            {"id": 5, "body": f"{marker_line('gate')}\nold", "user": ACTIONS_BOT}
        )
        env = _pr_env(tmp_path, github.url)
        assert github_main([*_body(tmp_path), "--on-error", "warn"], env) == 0
        out, err = capsys.readouterr()
        assert err == ""
        assert out.startswith("::warning title=memgauge comment::the pull-request comment")
        assert out.count("\n") == 1  # one annotation: a newline would end it
        assert said in out
        assert advice in out
        # without --on-error warn, the same refusal is exit 1 and an error
        assert github_main(_body(tmp_path), env) == 1
        assert said in capsys.readouterr().err


def test_a_summary_longer_than_a_comment_takes_is_cut_at_a_line_and_says_so(
    tmp_path: Path, github: FakeGitHub, capsys: pytest.CaptureFixture[str]
) -> None:
    """A gate over many subjects and tasks outgrows GitHub's 65,536 characters: the comment
    keeps the first whole lines that fit (characters outside the BMP count twice, as in
    UTF-16) and says how many it left to the job summary, instead of failing."""
    head = "### memgauge gate: fail\n\n| subject | measure | current |\n|---|---|---:|\n"
    rows = [f"| subject {n} \U0001f600 {'x' * 60} | nDCG@10 | 0.{n:04d} |\n" for n in range(2000)]
    body = tmp_path / "gate.md"
    body.write_text(head + "".join(rows), encoding="utf-8")
    env = _pr_env(tmp_path, github.url)
    assert github_main(["comment", "--body-file", str(body)], env) == 0
    assert "created comment" in capsys.readouterr().out
    (posted,) = [c["body"] for c in github.comments]
    assert len(posted.encode("utf-16-le")) // 2 <= MAX_COMMENT
    marker, rest = posted.split("\n", 1)
    assert marker == marker_line("gate")
    kept, note = rest.rsplit("\n\n", 1)
    assert (kept + "\n").startswith(head)
    n_kept = len(kept.splitlines()) - len(head.splitlines())
    assert kept.splitlines()[-1] + "\n" == rows[n_kept - 1]  # whole lines, the last one whole
    assert n_kept > 500
    assert f"{len(rows) - n_kept} more lines" in note
    assert "job summary" in note
    # a body that fits is posted as it is
    body.write_text(head + "".join(rows[:10]), encoding="utf-8")
    assert github_main(["comment", "--body-file", str(body)], env) == 0
    assert github.comments[0]["body"] == f"{marker_line('gate')}\n{head}{''.join(rows[:10])}"


def test_on_error_warn_says_when_github_cannot_be_reached(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with FakeGitHub() as github:
        closed = github.url  # nothing listens once the server is closed
    env = _pr_env(tmp_path, closed)
    assert github_main([*_body(tmp_path), "--on-error", "warn"], env) == 0
    out = capsys.readouterr().out
    assert out.startswith("::warning title=memgauge comment::")
    assert "GITHUB_API_URL" in out
    assert closed in out


def test_a_users_token_edits_only_that_users_comment(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # a personal token: GET /user names who posts; the bot's marked comment is someone else's
    alice = {"login": "alice", "type": "User"}
    with FakeGitHub(me=alice) as github:
        marked = f"{marker_line('gate')}\nold"
        github.comments += [
            {"id": 1, "body": marked, "user": ACTIONS_BOT},
            {"id": 2, "body": marked, "user": alice},
        ]
        assert github_main(_body(tmp_path), _pr_env(tmp_path, github.url)) == 0
        assert "updated comment 2 on acme/memory#3" in capsys.readouterr().out
        assert [c["body"] for c in github.comments] == [marked, f"{marker_line('gate')}\ngate\n"]
        # --author names the bot for tokens that cannot say who they are; GET /user wins
        assert (
            github_main([*_body(tmp_path), "--author", "someone"], _pr_env(tmp_path, github.url))
            == 0
        )
        assert "updated comment 2 " in capsys.readouterr().out


def test_a_next_page_on_another_host_is_not_followed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # the token goes to GITHUB_API_URL only, whatever a Link header says
    with FakeGitHub(per_page_cap=1) as github, FakeGitHub() as elsewhere:
        github.next_base = elsewhere.url
        github.comments += [{"id": i, "body": "hi", "user": ACTIONS_BOT} for i in range(3)]
        assert github_main(_body(tmp_path), _pr_env(tmp_path, github.url)) == 1
        assert "another host" in capsys.readouterr().err
        assert elsewhere.requests == []
        assert len(github.comments) == 3


def test_the_install_input_memgauge_is_the_actions_own_checkout(
    tmp_path: Path, python: Path, github: FakeGitHub
) -> None:
    """memgauge is not on PyPI: the word `memgauge` (with extras or not) installs the checkout
    the Action runs from; any other word is given to pip as written."""
    calls = tmp_path / "pip-calls.txt"
    recording = tmp_path / "python"
    recording.write_text(
        "#!/usr/bin/env bash\n"
        f'if [ "$1 $2" = "-m pip" ]; then printf "%s\\n" "${{@:3}}" >> {calls}; exit 0; fi\n'
        f'exec {python} "$@"\n'
    )
    recording.chmod(0o755)
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: x\ntasks: nope\n")
    install = "memgauge[X,postgres]  my-memory==1.0\nmemgauge"
    done, _ = _action(
        tmp_path,
        recording,
        github,
        bad,
        {"pull_request": {"number": 1}},
        MEMGAUGE_INSTALL=install,
    )
    assert done.returncode == 2, done.stderr  # then the suite: bad input, as usual
    words = calls.read_text().splitlines()
    assert words == ["install", "--quiet", f"{ROOT}[X,postgres]", "my-memory==1.0", str(ROOT)]


def test_a_body_file_that_is_not_utf8_exits_2_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A body file in Latin-1 (`café` as the byte 0xE9) ended in a UnicodeDecodeError
    traceback (exit 1, as if GitHub had refused the comment): exit 2, the file and the byte
    named, before any call to GitHub."""
    body = tmp_path / "gate.md"
    body.write_bytes(b"caf\xe9\n")
    assert github_main(["comment", "--body-file", str(body)], {}) == 2
    err = capsys.readouterr().err
    assert f"error: --body-file {body}: not UTF-8 text (byte 0xe9 at offset 3)" in err, err
