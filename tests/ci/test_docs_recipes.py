"""docs/ci.md's recipes name real options: each YAML block parses, and every `memgauge COMMAND
--option` in them is an option of that command (a renamed flag breaks the recipe here first).
The GitLab recipe's merge-request note runs against a fake GitLab API."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from tests.ci.conftest import FakeREST
from tests.docs.blocks import read_blocks

from memgauge.cli.main import main


def _blocks(lang: str) -> list[str]:
    return [b.text for b in read_blocks("docs/ci.md") if b.lang == lang]


def test_the_yaml_blocks_parse_and_gitlab_reports_junit() -> None:
    blocks = [yaml.safe_load(b) for b in _blocks("yaml")]
    assert len(blocks) >= 3
    gitlab = next(b for b in blocks if isinstance(b, dict) and "memgauge" in b)
    assert gitlab["memgauge"]["artifacts"]["reports"]["junit"] == [
        "memgauge-ci/run.xml",
        "memgauge-ci/gate.xml",
    ]


def test_every_memgauge_option_in_the_recipes_exists(capsys: pytest.CaptureFixture[str]) -> None:
    script = "\n".join(
        line
        for b in _blocks("yaml")
        for job in [yaml.safe_load(b)]
        if isinstance(job, dict) and "memgauge" in job
        for line in job["memgauge"]["script"]
    )
    used: dict[str, set[str]] = {}
    for m in re.finditer(r"memgauge ((?:runs )?\w+) ([^|\n]*)", script):
        words = shlex.split(m.group(2).replace("$", ""), comments=False)
        used.setdefault(m.group(1), set()).update(w for w in words if w.startswith("--"))
    assert {"run", "gate", "runs export"} <= set(used)
    for command, options in used.items():
        assert main([*command.split(), "--help"]) == 0
        text = capsys.readouterr().out
        for option in options:
            assert option in text, f"memgauge {command} {option}"


class FakeGitLab(FakeREST):
    """The notes of merge request 2 of project 5, as GitLab's REST API v4 serves them: pages
    of `per_page` with `X-Next-Page` (empty on the last), `GET /user` the token's own user."""

    def __init__(self, refuse: dict[str, int] | None = None) -> None:
        super().__init__()
        self.notes: list[dict[str, Any]] = []
        self.me = {"id": 7, "username": "project_5_bot_memgauge"}
        self.refuse = refuse or {}

    def route(
        self,
        method: str,
        path: str,
        query: dict[str, list[str]],
        body: Any,
        headers: dict[str, str],
    ) -> tuple[int, Any]:
        base = "/api/v4/projects/5/merge_requests/2/notes"
        if method in self.refuse:
            return self.refuse[method], {"message": "403 Forbidden"}
        if (method, path) == ("GET", "/api/v4/user"):
            return 200, self.me
        if (method, path) == ("GET", base):
            page = int(query.get("page", ["1"])[0])
            per = min(int(query.get("per_page", ["20"])[0]), 100)
            more = page * per < len(self.notes)
            headers["X-Next-Page"] = str(page + 1) if more else ""
            return 200, self.notes[(page - 1) * per : page * per]
        if (method, path) == ("POST", base):
            self.notes.append(
                {"id": 900 + len(self.notes), "body": body["body"], "author": self.me}
            )
            return 201, self.notes[-1]
        if method == "PUT" and path.startswith(f"{base}/"):
            note = next(n for n in self.notes if n["id"] == int(path.rsplit("/", 1)[1]))
            note["body"] = body["body"]
            return 200, note
        return 404, {"message": "404 Not Found"}


def _gitlab_script() -> list[str]:
    """The GitLab recipe's script lines."""
    job = next(
        b for b in map(yaml.safe_load, _blocks("yaml")) if isinstance(b, dict) and "memgauge" in b
    )
    return list(job["memgauge"]["script"])


def test_the_gitlab_job_exits_with_the_runs_code_when_no_run_was_recorded(
    tmp_path: Path,
) -> None:
    """A suite with bad input (exit 2) wrote no JSON line, and the recipe's next line, reading
    the run id from it, died with Python's IndexError: the job failed with exit 1 and a
    traceback, never reaching its last line, which exits with the run's code."""
    bad = tmp_path / "suite.yaml"
    bad.write_text("name: x\nsubjects: {a: {reference: {mode: lexical}}}\ntasks: []\n")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "python").symlink_to(sys.executable)
    shim = bin_dir / "memgauge"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m memgauge "$@"\n')
    shim.chmod(0o755)
    # the runner's own steps: no install, and no baseline to download on the first pipeline
    script = [s for s in _gitlab_script() if not s.startswith(("pip install", "curl"))]
    env = {
        **os.environ,
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
        "SUITE": str(bad),
        "MEMGAUGE_HOME": str(tmp_path / "home"),
    }
    done = subprocess.run(
        ["bash", "-eo", "pipefail", "-c", "\n".join(script)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert "suite.yaml" in done.stderr


def _post_note(tmp_path: Path, gitlab: FakeGitLab) -> subprocess.CompletedProcess[str]:
    """Run the recipe's note step, as the GitLab runner runs it, on a merge request."""
    step = next(line for line in _gitlab_script() if "CI_MERGE_REQUEST_IID" in line)
    (tmp_path / "memgauge-ci").mkdir()
    (tmp_path / "memgauge-ci" / "gate.md").write_text("### memgauge gate: pass\n")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "python").symlink_to(sys.executable)
    env = {
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
        "CI_API_V4_URL": f"{gitlab.url}/api/v4",
        "CI_PROJECT_ID": "5",
        "CI_MERGE_REQUEST_IID": "2",
        "SUITE": "suites/memory.yaml",
        "MEMGAUGE_GITLAB_TOKEN": "glpat-x",
    }
    return subprocess.run(
        ["bash", "-e", "-c", step], cwd=tmp_path, env=env, capture_output=True, text=True
    )


def test_the_gitlab_note_is_the_tokens_own_past_the_first_page(tmp_path: Path) -> None:
    marker = "<!-- memgauge: gate suites/memory.yaml -->"
    mallory = {"id": 66, "username": "mallory"}
    with FakeGitLab() as gitlab:
        gitlab.notes.append({"id": 1, "body": f"{marker}\nplanted: pass", "author": mallory})
        gitlab.notes += [
            {"id": i, "body": "added 1 commit", "author": {"id": 3}} for i in range(2, 120)
        ]
        gitlab.notes.append({"id": 500, "body": f"{marker}\nold gate", "author": gitlab.me})
        done = _post_note(tmp_path, gitlab)
        assert done.returncode == 0, done.stderr
        assert done.stderr == ""
        assert {r["headers"]["private-token"] for r in gitlab.requests} == {"glpat-x"}
        assert [(r["method"], r["path"].rsplit("/", 1)[-1]) for r in gitlab.requests][-1] == (
            "PUT",
            "500",
        )
        assert gitlab.notes[0]["body"] == f"{marker}\nplanted: pass"
        assert gitlab.notes[-1]["body"] == f"{marker}\n### memgauge gate: pass\n"
        assert len(gitlab.notes) == 120


def test_a_gitlab_note_that_cannot_be_posted_leaves_the_job_to_the_gate(tmp_path: Path) -> None:
    with FakeGitLab(refuse={"POST": 403}) as gitlab:
        done = _post_note(tmp_path, gitlab)
    assert done.returncode == 0
    assert "the merge-request note was not posted (HTTP Error 403: Forbidden)" in done.stderr
    assert "MEMGAUGE_GITLAB_TOKEN" in done.stderr
    assert gitlab.notes == []
