"""The templates' code shipped compiled (`view.precompiled`): what the templates compile to
now, used instead of compiling them, the same pages byte for byte, and a template whose
source changed compiled from its source."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jinja2
import pytest

from memgauge.view.precompiled import COMPILED, Precompiled, compiled_sources, module_file
from memgauge.view.render import environment


def test_the_shipped_code_is_what_the_templates_compile_to() -> None:
    """Fails after a template changes until `python -m memgauge.view.precompiled` runs."""
    index = json.loads((COMPILED / "index.json").read_text(encoding="utf-8"))
    assert index["jinja2"] == jinja2.__version__
    found = compiled_sources(environment())
    assert index["templates"] == {name: checksum for name, (checksum, _) in found.items()}
    for name, (_, python) in found.items():
        assert (COMPILED / module_file(name)).read_text(encoding="utf-8") == python + "\n", name
    shipped = {p.name for p in COMPILED.glob("*.py")}
    assert shipped == {module_file(name) for name in found}


def _fresh() -> jinja2.Environment:
    env: jinja2.Environment = environment.__wrapped__()
    return env


def test_a_page_loads_its_templates_without_compiling_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A report's seven templates were parsed and compiled in every process (about 50 ms of
    CPU)."""
    env = _fresh()

    def compiled(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError(f"compiled {args[1:2]}")

    monkeypatch.setattr(env, "compile", compiled)
    for name in env.list_templates():
        template = env.get_template(name)
        assert template.filename is not None
        assert Path(template.filename).name == name  # the template's file, not the code's


@pytest.mark.parametrize("name", ["error.html", "_item_detail.html", "runs.html"])
def test_the_shipped_code_renders_the_page_compiling_renders(name: str) -> None:
    context: dict[str, Any] = {
        "status": 404,
        "message": "<b>no run 'x' & \"y\"</b>",
        "it": {"status": "done", "attempts": 1, "input": "<q>", "expected": {"m1": 2}},
        "hits": [
            {
                "rank": 1,
                "id": "m1",
                "text": "a <b>",
                "score": 1.5,
                "grade": 2,
                "relevant": True,
                "channels": ["lexical"],
            },
        ],
        "runs": [],
    }
    shipped = _fresh()
    plain = _fresh()
    plain.bytecode_cache = None
    html = shipped.get_template(name).render(context)
    assert html == plain.get_template(name).render(context)
    assert html


def test_a_template_changed_since_is_compiled_from_its_source(tmp_path: Path) -> None:
    env = _fresh()
    assert env.loader is not None
    source, filename, _ = env.loader.get_source(env, "base.html")
    (tmp_path / module_file("base.html")).write_text(
        (COMPILED / module_file("base.html")).read_text()
    )
    checksum = Precompiled().sources["base.html"]
    index = {"jinja2": jinja2.__version__, "templates": {"base.html": checksum}}
    (tmp_path / "index.json").write_text(json.dumps(index))
    cache = Precompiled(tmp_path)
    bucket = cache.get_bucket(env, "base.html", filename, source)
    assert bucket.code is not None
    assert bucket.code.co_filename == filename
    assert cache.get_bucket(env, "base.html", filename, source + "<!-- -->").code is None
    # another Jinja's code is not used
    (tmp_path / "index.json").write_text(json.dumps({**index, "jinja2": "0.0"}))
    assert Precompiled(tmp_path).get_bucket(env, "base.html", filename, source).code is None
