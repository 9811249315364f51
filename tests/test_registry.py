"""The one Registry type: argument models, spec forms, entry-point loading, schemas, and each
component family on it (evaluators, subjects, aggregates, LLM providers, embedders)."""

from __future__ import annotations

import sys
import tomllib
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any, ClassVar

import jsonschema
import pytest
from pydantic import BaseModel

from memgauge._util.builtins import BUILTINS
from memgauge._util.registry import Registry, RegistryError, SpecArgs, args_model_of
from memgauge.aggregates import AGGREGATES
from memgauge.embed import EMBEDDERS, MiniLMEmbedder, OpenAIEmbedder, load_embedder
from memgauge.errors import UsageError, command_line
from memgauge.llm.config import LLMConfig
from memgauge.llm.providers import LLM_PROVIDERS
from memgauge.runs.kinds import KINDS, TaskKind, kind_of
from memgauge.scorers import EVALUATORS, evaluator_from_spec, registered
from memgauge.subjects.parse import parse_system, write_path_spec
from memgauge.subjects.registry import SUBJECTS, RunOptions, build_subject, check_subject

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data"


@dataclass(frozen=True)
class Shout:
    """Upper-cases its input.

    Attributes:
        times: how many exclamation marks follow.
        word: the word shouted.
    """

    word: str
    times: int = 1
    name: ClassVar[str] = "shout"


class Transport:
    """Something only code can pass (no YAML form)."""


def make_client(
    url: str, *, retries: int = 3, transport: Transport | None = None
) -> dict[str, Any]:
    """A factory function.

    Args:
        url: where to connect.
        retries: attempts after the first.
    """
    return {"url": url, "retries": retries, "transport": transport}


def open_anything(**options: Any) -> dict[str, Any]:
    return options


class Explicit(BaseModel):
    level: int = 0


def with_args(level: int = 0) -> int:
    return level


with_args.Args = Explicit  # type: ignore[attr-defined]


def registry() -> Registry[Any]:
    reg: Registry[Any] = Registry("widget", "memgauge.tests-nothing-here")
    reg.register("shout", Shout)
    reg.register("client", make_client)
    reg.register("anything", open_anything)
    reg.register("explicit", with_args)
    return reg


def test_argument_models_come_from_dataclasses_signatures_and_args() -> None:
    shout = args_model_of(Shout)
    assert shout is not None
    assert list(shout.model_fields) == ["word", "times"]  # ClassVar `name` is not an argument
    assert shout.model_fields["times"].description == "how many exclamation marks follow."
    client = args_model_of(make_client)
    assert client is not None
    # `transport` takes a live object and has a default: code passes it, a spec cannot
    assert list(client.model_fields) == ["url", "retries"]
    assert client.model_fields["url"].description == "where to connect."
    assert args_model_of(open_anything) is None  # **options: anything goes
    explicit = args_model_of(with_args)
    assert explicit is not None
    assert issubclass(explicit, Explicit)
    assert explicit.model_config.get("extra") == "forbid"  # whatever the model said


def test_spec_forms_expand_to_name_and_arguments() -> None:
    reg = registry()
    assert reg.parse("anything") == ("anything", {})
    assert reg.parse({"shout": "hey"}) == ("shout", {"word": "hey"})  # the first argument
    assert reg.parse({"client": None}) == ("client", {})
    assert reg.parse({"shout": {"word": "x", "times": 2}}) == ("shout", {"word": "x", "times": 2})
    with pytest.raises(RegistryError, match="a widget is 'name'"):
        reg.parse({"shout": {}, "client": {}})
    with pytest.raises(RegistryError, match=r"unknown widget 'shuot'; did you mean 'shout'\?"):
        reg.parse("shuot")
    strict: Registry[Any] = Registry("kind", "memgauge.tests-nothing-here", short_forms=False)
    strict.register("shout", Shout)
    with pytest.raises(RegistryError):
        strict.parse("shout")  # a bare name is not a spec here
    assert strict.problems({"shout": "hey"})[0].message.startswith("give the arguments")


def test_problems_name_the_key_the_known_ones_and_the_closest() -> None:
    reg = registry()
    problems = reg.problems({"shout": {"wrod": "x", "times": "many"}})
    by_field = {p.field: p.message for p in problems}
    assert by_field["shout.wrod"] == "unknown key; did you mean 'word'? (it takes times, word)"
    assert by_field["shout.word"] == "required; add it"
    assert by_field["shout.times"].startswith("Input should be a valid integer")
    assert "(got 'many')" in by_field["shout.times"]
    assert reg.problems({"anything": {"whatever": 1}}) == []
    assert reg.problems({"explicit": {"level": 2}}) == []
    assert [p.field for p in reg.problems({"explicit": {"lvl": 2}})] == ["explicit.lvl"]


def test_build_converts_values_to_their_declared_types() -> None:
    reg = registry()
    built = reg.build({"shout": {"word": 8080, "times": "3"}})
    assert built == Shout(word="8080", times=3)  # YAML's 8080 is text where text is meant
    assert reg.build("client", {"url": "http://x"}) == {
        "url": "http://x",
        "retries": 3,
        "transport": None,
    }
    with pytest.raises(RegistryError) as err:
        reg.build({"client": {"url": "http://x", "transport": "tcp"}})
    assert [p.field for p in err.value.problems] == ["client.transport"]


def test_common_keys_are_checked_and_kept_from_the_factory() -> None:
    reg: Registry[Any] = Registry("kind", "memgauge.tests-nothing-here", common=RunOptions)
    reg.register("client", make_client)
    assert reg.problems({"client": {"url": "u", "concurrent": True, "agent": False}}) == []
    assert reg.build({"client": {"url": "u", "concurrent": True}})["url"] == "u"
    [problem] = reg.problems({"client": {"url": "u", "concurrent": "sometimes"}})
    assert problem.field == "client.concurrent"


def test_reload_keeps_entries_registered_in_code() -> None:
    reg = registry()
    assert "shout" in reg
    reg.reload()
    assert reg.names() == ["anything", "client", "explicit", "shout"]


def test_a_broken_plugin_is_named_and_does_not_hide_the_others(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    info = tmp_path / "broken_plugin-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: broken-plugin\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(
        "[memgauge.evaluators]\nbroken = no_such_module_anywhere:Thing\nexact = os:getcwd\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    EVALUATORS.reload()
    try:
        with pytest.raises(RegistryError, match="'broken' is installed but failed to load"):
            EVALUATORS.get("broken")
        assert "exact" in EVALUATORS.names()  # the others still load
        # a plug-in cannot take a built-in's name: memgauge's own comes first
        assert EVALUATORS.get("exact").origin == "memgauge"
        assert ("exact", "broken-plugin") in EVALUATORS.shadowed
    finally:
        monkeypatch.undo()
        EVALUATORS.reload()
    assert "broken" not in EVALUATORS.broken()


def test_getting_one_name_loads_only_its_entry_points(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run names one subject kind and a few evaluators: the registry imports those, not every
    component (the other modules, and the HTTP, MCP and LLM stacks they pull in, cost a run's
    start-up); what shadows what is still recorded once everything is listed."""
    info = tmp_path / "lazy_plugin-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: lazy-plugin\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(
        "[memgauge.evaluators]\nlazy_one = lazy_mod_one:Thing\nlazy_two = lazy_mod_two:Thing\n"
        "exact = lazy_mod_two:Thing\n"
    )
    for name in ("lazy_mod_one", "lazy_mod_two"):
        (tmp_path / f"{name}.py").write_text("class Thing:\n    pass\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    EVALUATORS.reload()
    try:
        assert EVALUATORS.get("lazy_one").origin == "lazy-plugin"
        assert "lazy_mod_one" in sys.modules
        assert "lazy_mod_two" not in sys.modules  # another name's module: not imported
        assert EVALUATORS.get("exact").origin == "memgauge"  # a built-in still comes first
        assert "lazy_mod_two" not in sys.modules
        assert EVALUATORS.shadowed == []  # not known until everything is loaded
        assert {"lazy_one", "lazy_two", "exact"} <= set(EVALUATORS.names())
        assert "lazy_mod_two" in sys.modules
        assert EVALUATORS.shadowed == [("exact", "lazy-plugin")]  # recorded once
    finally:
        monkeypatch.undo()
        for name in ("lazy_mod_one", "lazy_mod_two"):
            sys.modules.pop(name, None)
        EVALUATORS.reload()


def test_builtins_table_is_the_one_pyproject_declares() -> None:
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["entry-points"]
    # memgauge's own component families; `pytest11` (the pytest plug-in) is pytest's group
    assert {k: v for k, v in declared.items() if k != "pytest11"} == BUILTINS
    families = {
        "memgauge.aggregates": AGGREGATES,
        "memgauge.evaluators": EVALUATORS,
        "memgauge.subjects": SUBJECTS,
        "memgauge.llm_providers": LLM_PROVIDERS,
        "memgauge.embedders": EMBEDDERS,
        "memgauge.kinds": KINDS,
    }
    assert set(families) == set(BUILTINS)
    for group, reg in families.items():
        assert reg.group == group
        assert set(BUILTINS[group]) <= set(reg.names()), group
        assert not reg.broken(), reg.broken()  # every built-in loads
    assert all(isinstance(kind_of(name), TaskKind) for name in BUILTINS["memgauge.kinds"])


def test_spec_schemas_accept_every_form_and_refuse_misspellings() -> None:
    reg = registry()
    defs: dict[str, Any] = {}
    forms = reg.spec_schemas(defs, siblings={"weight": {"type": "number"}})
    schema = {"anyOf": forms, "$defs": defs}
    jsonschema.Draft202012Validator.check_schema(schema)
    valid = jsonschema.Draft202012Validator(schema)
    for ok in (
        "anything",
        {"shout": "hey"},
        {"shout": {"word": "x", "times": 2}, "weight": 2},
        {"client": {"url": "u"}},
        {"anything": {"whatever": [1, 2]}},
    ):
        assert valid.is_valid(ok), ok
    for bad in ("shout", {"shout": {"wrod": "x"}}, {"client": {}}, {"nope": {}}, {"shout": 1.5}):
        assert not valid.is_valid(bad), bad


# -- the families ------------------------------------------------------------------------


def test_evaluators_keep_their_public_helpers() -> None:
    assert "exact" in registered()
    assert evaluator_from_spec({"regex": "^yes"}).value == "^yes"  # type: ignore[attr-defined]
    assert evaluator_from_spec({"retrieval": "Recall@5"}).measure == "Recall@5"  # type: ignore[attr-defined]
    with pytest.raises(UsageError, match=r"token_f1\.varient: unknown key; did you mean 'variant'"):
        evaluator_from_spec({"token_f1": {"varient": "mem0"}})


def test_subject_specs_check_every_kind_and_nested_memories() -> None:
    assert check_subject({"reference": {"mode": "lexical", "concurrent": True}}) == []
    fields = [p.field for p in check_subject({"reference": {"mdoe": "dense"}})]
    assert fields == ["reference.mdoe"]
    nested = check_subject({"memory-agent": {"memory": {"reference": {"k_rf": 1}}, "k": 3}})
    assert [p.field for p in nested] == ["memory-agent.memory.reference.k_rf"]
    assert [p.field for p in check_subject({"http": {}})] == ["http.base_url"]
    with pytest.raises(UsageError, match=r"subject unknown subject kind 'zep'"):
        build_subject({"zep": {}})
    memory = build_subject({"reference": {"mode": "lexical", "k_rrf": "10"}})
    assert memory.config.k_rrf == 10


def test_python_kwargs_are_checked_against_the_factory(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(DATA / "subjects"))
    good = {"python": {"target": "lookup_agents:LookupAgent", "kwargs": {"answers": {"a": "b"}}}}
    assert check_subject(good) == []
    [typo] = check_subject(
        {"python": {"target": "lookup_agents:LookupAgent", "kwargs": {"answer": {}}}}
    )
    assert typo.field == "python.kwargs.answer"
    assert "did you mean 'answers'?" in typo.message
    [misspelt] = check_subject({"python": {"target": "pkg.mod:make", "kwarg": {"x": 1}}})
    assert misspelt.field == "python.kwarg"
    assert "did you mean 'kwargs'?" in misspelt.message
    [target] = check_subject({"python": {"target": "pkg.mod", "kwargs": {"x": 1}}})
    assert target.message == "write it as package.module:factory, got 'pkg.mod'"
    # no kwargs: nothing to check, nothing imported (`-s python:pkg.mod:Factory` parses)
    assert check_subject({"python": {"target": "not_installed_xyz:make"}}) == []


def test_flags_name_themselves_in_errors() -> None:
    with pytest.raises(UsageError, match=r"^--system 'reference:mdoe=dense': reference\.mdoe"):
        parse_system("reference:mdoe=dense")
    with pytest.raises(UsageError, match=r"^--subject 'hybrid:k_rf=1': reference\.k_rf"):
        parse_system("hybrid:k_rf=1", "--subject")
    with command_line():  # a command names its flag; from Python, the keyword
        with pytest.raises(UsageError, match=r"^--extractor .*: llm-extractor\.modle: unknown"):
            write_path_spec("extractor", "{llm: {modle: m}}")
        with pytest.raises(UsageError, match=r"^--decider .*: heuristic-decider\.treshold"):
            write_path_spec("decider", "{heuristic: {treshold: 0.5}}")
    with pytest.raises(UsageError, match=r"^spec '.*': llm-extractor\.modle: unknown key"):
        write_path_spec("extractor", "{llm: {modle: m}}")
    with pytest.raises(UsageError, match=r"python\.kwarg: unknown key; did you mean 'kwargs'"):
        write_path_spec("decider", "{python: {target: 'pkg.mod:make', kwarg: {}}}")


def test_arguments_after_a_python_target_are_answered_with_the_spec_file_to_write() -> None:
    # `-s python:mod:Factory:key=value` looked for an attribute called 'Factory:key=value'
    for text in ("python:sqlmem:SqlMemory:min_word=5", "python:sqlmem:SqlMemory,min_word=5"):
        with pytest.raises(UsageError) as info:
            parse_system(text)
        assert str(info.value) == (
            f"--system {text!r}: a python: target takes no arguments on the command line; write"
            " its spec in a file and give the file to -s: {python: {target: 'sqlmem:SqlMemory',"
            " kwargs: {min_word: 5}}}"
        )


def test_llm_providers_come_from_the_registry(monkeypatch: pytest.MonkeyPatch) -> None:
    from memgauge.llm import context

    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://anthropic.invalid/v1")
    assert LLMConfig.from_env(model="m", provider="anthropic").base_url == (
        "http://anthropic.invalid/v1"
    )
    with pytest.raises(UsageError, match="unknown LLM provider 'opneai'; did you mean 'openai'"):
        LLMConfig.from_env(model="m", provider="opneai")

    class Echo:
        base_url_env = "ECHO_URL"
        default_base_url = "http://echo.invalid"
        api_key_env = "ECHO_KEY"

        def __init__(self, config: LLMConfig, *, meter: Any = None) -> None:
            self.config = config

    monkeypatch.setenv("ECHO_KEY", "secret-echo-key")
    LLM_PROVIDERS.register("echo", Echo)
    try:
        config = LLMConfig.from_env(model="m", provider="echo")
        assert (config.base_url, config.api_key) == ("http://echo.invalid", "secret-echo-key")
        client = context.default_factory(config, context.llm_context().meter)
        assert isinstance(client, Echo)
    finally:
        LLM_PROVIDERS.unregister("echo")
    assert "echo" not in LLM_PROVIDERS


def test_embedders_keep_the_name_colon_argument_form(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    openai = load_embedder("openai:text-embedding-3-small")
    assert isinstance(openai, OpenAIEmbedder)
    assert openai.model == "text-embedding-3-small"
    assert isinstance(load_embedder("minilm"), MiniLMEmbedder)
    with pytest.raises(UsageError, match=r"unknown embedder 'word2vec'.*minilm, openai, st"):
        load_embedder("word2vec")
    with pytest.raises(UsageError, match=r"openai\.modle: unknown key"):
        load_embedder({"openai": {"modle": "x"}})


class Tiny(SpecArgs):
    size: int = 1


def test_spec_args_refuse_unknown_keys_and_read_numbers_as_text() -> None:
    assert Tiny.model_config.get("extra") == "forbid"
    assert Tiny.model_config.get("coerce_numbers_to_str") is True


def test_aggregates_take_every_spec_form() -> None:
    assert AGGREGATES.build({"ir": ["nDCG@10"]}).measures == ("nDCG@10",)  # type: ignore[attr-defined]
    assert AGGREGATES.build("audit").name == "audit"
    [problem] = AGGREGATES.problems({"ir": {"measure": ["nDCG@10"]}})
    assert problem.field == "ir.measure"
    assert "did you mean 'measures'?" in problem.message


def test_a_listing_reads_each_distributions_metadata_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A distribution's name is read from its METADATA, parsed whole on each read: a listing
    read it three times per entry point (121 parses, about 0.1 CPU-s, in a lexical evaluate
    of LoCoMo); once per distribution is enough, since its entry points share it."""
    info = tmp_path / "counted_plugin-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: counted-plugin\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(
        "[memgauge.evaluators]\ncounted_one = json:dumps\ncounted_two = json:loads\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    eps = list(metadata.entry_points(group="memgauge.evaluators"))
    dists = {ep.dist.metadata["Name"] for ep in eps if ep.dist is not None}
    assert "counted-plugin" in dists
    assert len(eps) > len(dists)
    reads: list[str] = []
    read_text = metadata.PathDistribution.read_text

    def counted(self: metadata.PathDistribution, filename: str) -> str | None:
        if filename in ("METADATA", "PKG-INFO"):
            reads.append(filename)
        return read_text(self, filename)

    monkeypatch.setattr(metadata.PathDistribution, "read_text", counted)
    EVALUATORS.reload()
    try:
        assert EVALUATORS.get("counted_two").origin == "counted-plugin"
        assert len(reads) <= len(dists)
        reads.clear()
        assert {"counted_one", "counted_two", "exact"} <= set(EVALUATORS.names())
        assert len(reads) <= len(dists)
    finally:
        monkeypatch.undo()
        EVALUATORS.reload()


def test_the_registries_share_one_reading_of_the_installed_entry_points(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`entry_points(group=...)` reads every distribution's entry_points.txt whatever the group:
    each registry reading its own group read them all again (five passes in a lexical evaluate).
    A built-in name needs no pass (memgauge's own table has it: a lexical evaluate reads none);
    a plug-in's name needs one, which serves every registry, and one put on `sys.path` later is
    still found (read again).

    The passes are counted where the registries make them (`metadata.entry_points` as the
    registries' own module calls it), so what other tests left in the process (distributions of
    other classes, a registry already loaded) cannot hide one."""
    regmod = sys.modules[type(EVALUATORS).__module__]
    passes: list[tuple[str, ...]] = []
    real = regmod.metadata.entry_points

    def counted(**params: Any) -> Any:
        passes.append(tuple(sorted(params)))
        return real(**params)

    monkeypatch.setattr(regmod.metadata, "entry_points", counted)
    families = (EVALUATORS, AGGREGATES, KINDS, SUBJECTS)
    for reg in families:
        reg.reload()
    try:
        assert EVALUATORS.get("exact").origin == "memgauge"
        assert AGGREGATES.get("ir").origin == "memgauge"
        assert KINDS.get("retrieval").origin == "memgauge"
        assert SUBJECTS.get("reference").origin == "memgauge"
        assert passes == []  # built-in names: no pass over the installed distributions

        info = tmp_path / "late_plugin-1.0.dist-info"
        info.mkdir()
        (info / "METADATA").write_text("Metadata-Version: 2.1\nName: late-plugin\nVersion: 1.0\n")
        (info / "entry_points.txt").write_text(
            "[memgauge.aggregates]\nlate_one = json:dumps\n"
            "[memgauge.evaluators]\nlate_two = json:loads\n"
        )
        monkeypatch.syspath_prepend(str(tmp_path))
        assert AGGREGATES.get("late_one").origin == "late-plugin"
        assert EVALUATORS.get("late_two").origin == "late-plugin"
        assert passes == [()]  # one pass over every group, for both registries

        later = tmp_path / "later"
        (later / "later_plugin-1.0.dist-info").mkdir(parents=True)
        for name, text in (
            ("METADATA", "Metadata-Version: 2.1\nName: later-plugin\nVersion: 1.0\n"),
            ("entry_points.txt", "[memgauge.aggregates]\nlater_one = json:dumps\n"),
        ):
            (later / "later_plugin-1.0.dist-info" / name).write_text(text)
        monkeypatch.syspath_prepend(str(later))
        assert AGGREGATES.get("later_one").origin == "later-plugin"
        assert passes == [(), ()]  # sys.path changed: read again, once
    finally:
        monkeypatch.undo()
        for reg in families:
            reg.reload()
