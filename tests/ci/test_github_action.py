"""The GitHub Action's shell steps (scripts/ci/github-action.sh), run as the Action runs them:
a real subprocess, a fake event payload in GITHUB_EVENT_PATH, and a fake GitHub REST API on
127.0.0.1 (GITHUB_API_URL) that keeps the comments and records every request. The baseline
comes from outside the runner: a run bundle exported from another store."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
import yaml

from memgauge.ci.github import main as github_main
from memgauge.ci.github import marker_line
from memgauge.cli.main import main

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "ci" / "github-action.sh"
SRC = ROOT / "src"


class FakeGitHub:
    """Issue comments of one repository, over the REST paths the script calls."""

    def __init__(self, per_page_cap: int = 100) -> None:
        self.requests: list[dict[str, Any]] = []
        self.comments: list[dict[str, Any]] = []
        self.cap = per_page_cap
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def _answer(self, code: int, body: Any) -> None:
                raw = json.dumps(body).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

            def _handle(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length)) if length else None
                url = urlsplit(self.path)
                fake.requests.append(
                    {
                        "method": self.command,
                        "path": url.path,
                        "query": parse_qs(url.query),
                        "auth": self.headers.get("Authorization"),
                        "body": body,
                    }
                )
                code, answer = fake.route(self.command, url.path, parse_qs(url.query), body)
                self._answer(code, answer)

            do_GET = do_POST = do_PATCH = _handle  # noqa: N815 (http.server names them)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def route(
        self, method: str, path: str, query: dict[str, list[str]], body: Any
    ) -> tuple[int, Any]:
        parts = path.strip("/").split("/")
        if parts[:3] != ["repos", "acme", "memory"] or parts[3] != "issues":
            return 404, {"message": "Not Found"}
        if method == "GET" and parts[5:] == ["comments"]:
            page, per = int(query["page"][0]), min(int(query["per_page"][0]), self.cap)
            return 200, self.comments[(page - 1) * per : page * per]
        if method == "POST" and parts[5:] == ["comments"]:
            made = {"id": 1000 + len(self.comments), "body": body["body"]}
            self.comments.append(made)
            return 201, made
        if method == "PATCH" and parts[4] == "comments":
            for c in self.comments:
                if c["id"] == int(parts[5]):
                    c["body"] = body["body"]
                    return 200, c
        return 404, {"message": "Not Found"}

    def __enter__(self) -> FakeGitHub:
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def github() -> Iterator[FakeGitHub]:
    with FakeGitHub() as fake:
        yield fake


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


@pytest.fixture
def baseline(tmp_path: Path, capsys: pytest.CaptureFixture[str], recall_suite: Any) -> Path:
    """A run of the suite on main, recorded in another store and exported as a bundle."""
    suite = _suite(recall_suite, GOOD)
    store = str(tmp_path / "team.db")
    assert main(["run", str(suite), "--store", store, "--json"]) == 0
    run_id = json.loads(capsys.readouterr().out.strip().splitlines()[-1])["run_id"]
    bundle = tmp_path / "baseline.json"
    assert (
        main(
            ["runs", "export", run_id, "--format", "bundle", "--store", store, "--out", str(bundle)]
        )
        == 0
    )
    return bundle


def _action(
    tmp_path: Path, github: FakeGitHub, suite: Path, event: dict[str, Any], **extra: str
) -> tuple[subprocess.CompletedProcess[str], dict[str, str]]:
    """Run the script in a fresh runner directory, as the Action's step does."""
    runner = tmp_path / f"runner{len(list(tmp_path.glob('runner*')))}"
    runner.mkdir()
    payload = runner / "event.json"
    payload.write_text(json.dumps(event))
    outputs = runner / "outputs.txt"
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")]),
        "MEMGAUGE_PYTHON": sys.executable,
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
    tmp_path: Path, github: FakeGitHub, baseline: Path, recall_suite: Any
) -> None:
    github.comments.append({"id": 7, "body": "LGTM, a human comment"})
    pr = {"pull_request": {"number": 42}}
    suite = _suite(recall_suite, GOOD)
    first, out = _action(tmp_path, github, suite, pr, MEMGAUGE_BASELINE=f"{baseline}\n")
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
    second, out = _action(tmp_path, github, suite, pr, MEMGAUGE_BASELINE=str(baseline))
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
    tmp_path: Path, baseline: Path, recall_suite: Any
) -> None:
    with FakeGitHub(per_page_cap=100) as github:
        suite = _suite(recall_suite, GOOD)
        key = f"gate {suite}"
        github.comments.extend({"id": i, "body": f"chatter {i}"} for i in range(150))
        github.comments.append({"id": 999, "body": f"{marker_line(key)}\nold gate"})
        done, _ = _action(
            tmp_path,
            github,
            suite,
            {"pull_request": {"number": 5}},
            MEMGAUGE_BASELINE=str(baseline),
        )
        assert done.returncode == 0, done.stderr
        pages = [r["query"]["page"] for r in github.requests if r["method"] == "GET"]
        assert pages == [["1"], ["2"]]
        assert github.requests[-1]["method"] == "PATCH"
        assert github.comments[-1]["body"] != f"{marker_line(key)}\nold gate"
        assert len(github.comments) == 151


def test_a_push_writes_the_summary_and_posts_nothing(
    tmp_path: Path, github: FakeGitHub, recall_suite: Any
) -> None:
    # no baseline at all (the first run on main): the gate passes until one exists
    done, out = _action(
        tmp_path,
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


def test_a_suite_that_cannot_run_exits_2_and_says_so(tmp_path: Path, github: FakeGitHub) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: x\ntasks: nope\n")
    done, out = _action(tmp_path, github, bad, {"pull_request": {"number": 1}})
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
