"""The templates' compiled code kept in MEMGAUGE_HOME between processes: a second process
loads it instead of compiling, draws the same page, and a home that cannot hold it costs
nothing but the compiling."""

from __future__ import annotations

from pathlib import Path

import pytest
from jinja2 import Environment

from memgauge.view import render


def _draw(env: Environment) -> str:
    return env.get_template("error.html").render(title="t", message="<m>", status=404)


def _drawn_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[str, list[Path]]:
    """The page drawn by a fresh environment in the home `tmp_path`, and the files it kept."""
    monkeypatch.setenv("MEMGAUGE_HOME", str(tmp_path))
    first = _draw(render.environment.__wrapped__())
    return first, sorted((tmp_path / "templates").iterdir())


def test_a_second_process_loads_the_templates_compiled_by_the_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first, kept = _drawn_once(tmp_path, monkeypatch)
    assert kept  # error.html and base.html, which it extends
    assert all(p.stat().st_size > 0 and p.suffix == ".cache" for p in kept)

    def no_compiling(*_a: object, **_k: object) -> None:
        raise AssertionError("compiled again")

    monkeypatch.setattr(Environment, "compile", no_compiling)
    assert _draw(render.environment.__wrapped__()) == first


def test_a_template_changed_since_is_compiled_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMGAUGE_HOME", str(tmp_path))
    env = render.environment.__wrapped__()
    _draw(env)
    cache = env.bytecode_cache
    assert cache is not None
    source, filename, _ = env.loader.get_source(env, "error.html")  # type: ignore[union-attr]
    assert cache.get_bucket(env, "error.html", filename, source).code is not None
    # the code kept for error.html, asked for with another source: not given
    assert cache.get_bucket(env, "error.html", filename, source + "{{ 1 }}").code is None


def test_a_home_that_cannot_hold_the_cache_still_draws_the_page(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    home.write_text("a file where the folder would be")
    monkeypatch.setenv("MEMGAUGE_HOME", str(home))
    env = render.environment.__wrapped__()
    assert env.bytecode_cache is None
    assert "&lt;m&gt;" in _draw(env)
    # a folder that goes away after the environment is made (a test's home, a cleaned cache)
    monkeypatch.setenv("MEMGAUGE_HOME", str(tmp_path / "gone"))
    env = render.environment.__wrapped__()
    (tmp_path / "gone" / "templates").rmdir()
    assert "&lt;m&gt;" in _draw(env)


def test_code_compiled_under_other_settings_is_not_loaded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a template's code depends on the environment too (trim_blocks, a filter taking the
    # context), not only on its source: a home kept across an upgrade that changed them
    monkeypatch.setenv("MEMGAUGE_HOME", str(tmp_path))
    _draw(render.environment.__wrapped__())

    class Untrimmed(Environment):
        def __init__(self, **options: object) -> None:
            super().__init__(**{**options, "trim_blocks": False})  # type: ignore[arg-type]

    monkeypatch.setattr(render, "Environment", Untrimmed)
    fresh = render.environment.__wrapped__()
    fresh.bytecode_cache = None
    assert _draw(render.environment.__wrapped__()) == _draw(fresh)


def test_no_home_directory_to_keep_the_cache_in_still_draws_the_page(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # no MEMGAUGE_HOME, no HOME, and a user id without a passwd entry (a container run under
    # an arbitrary id): `memgauge report --store FILE` needs no home, and the cache is optional
    def no_home(cls: type[Path]) -> Path:
        raise RuntimeError("Could not determine home directory.")

    monkeypatch.delenv("MEMGAUGE_HOME", raising=False)
    monkeypatch.setattr(Path, "home", classmethod(no_home))
    env = render.environment.__wrapped__()
    assert env.bytecode_cache is None
    assert "&lt;m&gt;" in _draw(env)


def test_a_damaged_cache_file_is_compiled_again_and_replaced(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Jinja's own reading of a file cut short after its header raises (its pickle), where a
    # file cut elsewhere is a miss: a report would fail on it until the file was deleted
    from jinja2.bccache import bc_magic

    first, kept = _drawn_once(tmp_path, monkeypatch)
    for p in kept:
        p.write_bytes(bc_magic + b"\x80")
    assert _draw(render.environment.__wrapped__()) == first
    assert all(p.stat().st_size > len(bc_magic) + 1 for p in kept)  # written again
