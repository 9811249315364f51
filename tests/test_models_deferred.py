"""memgauge's pydantic models build their validators on first use (`memgauge._util.model`)."""

from __future__ import annotations

import ast
import threading
from pathlib import Path

import pytest
from pydantic import BaseModel, ConfigDict, ValidationError

from memgauge._util.model import DEFERRED, Model

SRC = Path(__file__).resolve().parents[1] / "src" / "memgauge"


def test_every_model_of_the_source_derives_from_the_deferred_base() -> None:
    """A class written `class X(BaseModel)` would build at import again: only `Model` may."""
    direct = []
    for path in sorted(SRC.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                names = {b.id if isinstance(b, ast.Name) else ast.unparse(b) for b in node.bases}
                if names & {"BaseModel", "pydantic.BaseModel", "RootModel"}:
                    direct.append(f"{path.relative_to(SRC)} {node.name}")
    assert direct == ["_util/model.py Model"]


@pytest.mark.skipif(not DEFERRED, reason="pydantic before 2.14 builds models eagerly")
def test_a_model_is_built_on_first_use_with_the_schema_an_eager_build_gives() -> None:
    class Deferred(Model):
        model_config = ConfigDict(extra="forbid")
        n: int
        tags: tuple[str, ...] = ()

    class Eager(BaseModel):
        model_config = ConfigDict(extra="forbid")
        n: int
        tags: tuple[str, ...] = ()

    assert Eager.__pydantic_complete__
    assert not Deferred.__pydantic_complete__
    assert Deferred(n="3").model_dump() == Eager(n="3").model_dump() == {"n": 3, "tags": ()}
    assert Deferred.__pydantic_complete__
    for bad in ({"n": "x"}, {"n": 1, "other": 2}):
        with pytest.raises(ValidationError) as deferred:
            Deferred.model_validate(bad)
        with pytest.raises(ValidationError) as eager:
            Eager.model_validate(bad)
        assert deferred.value.errors() == eager.value.errors()
    assert Deferred.model_json_schema()["properties"] == Eager.model_json_schema()["properties"]


def test_threads_that_first_use_a_subclass_at_once_all_get_its_validator() -> None:
    """The race pydantic 2.14 closed (issue 11849): a model built on one thread while another
    validates with it must not hand the other its parent's validator."""

    class Parent(Model):
        model_config = ConfigDict(extra="forbid")

    for _ in range(20):

        class Child(Parent):
            n: int
            label: str = ""

        start = threading.Barrier(8)
        errors: list[BaseException] = []

        def use(
            cls: type[Model] = Child,
            start: threading.Barrier = start,
            errors: list[BaseException] = errors,
        ) -> None:
            start.wait()
            try:
                assert cls.model_validate({"n": "2", "label": "x"}).model_dump() == {
                    "n": 2,
                    "label": "x",
                }
            except BaseException as exc:  # collected for the main thread to see
                errors.append(exc)

        threads = [threading.Thread(target=use) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert errors == []
