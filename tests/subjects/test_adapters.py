"""The Python-import and subprocess JSON-lines adapters, against a small real memory system
(tests/data/subjects/keyword_memory.py) run in-process and as a child process."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from memgauge import api
from memgauge.data.models import EvalQuery, Judgment, Memory, RetrievalDataset
from memgauge.errors import SubjectError, UsageError
from memgauge.report import retrieval_result
from memgauge.subjects.python_import import PythonSubject
from memgauge.subjects.subprocess_jsonl import SubprocessSubject

HERE = Path(__file__).resolve().parents[1] / "data" / "subjects"
SCRIPT = str(HERE / "keyword_memory.py")

MEMS = [
    Memory(id="m1", text="Tax is rounded per invoice line"),
    Memory(id="m2", text="Payments go through Stripe"),
    Memory(id="m3", text="Stripe webhooks are verified"),
]


@pytest.fixture(autouse=True)
def _importable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(HERE))


def test_python_import_subject_and_normalised_hits() -> None:
    s = PythonSubject("keyword_memory:KeywordMemory")
    s.reset()
    s.ingest(MEMS)
    s.flush()
    result = s.search("stripe webhooks", 2)
    assert [h.id for h in result.hits] == ["m3", "m2"]
    assert [h.rank for h in result.hits] == [1, 2]
    assert result.hits[0].score == 2.0
    assert "total" in result.latency_ms
    assert {m.id for m in s.dump()} == {"m1", "m2", "m3"}


@pytest.mark.parametrize(
    ("target", "message"),
    [
        ("keyword_memory", "package.module:factory"),
        ("no_such_module_xyz:Thing", "cannot import"),
        ("keyword_memory:Nope", "has no attribute"),
        ("keyword_memory:WORD", "not callable"),
        ("keyword_memory:NotAMemory", "without reset, ingest, search"),
    ],
)
def test_python_import_errors_say_what_to_fix(target: str, message: str) -> None:
    with pytest.raises(UsageError, match=message):
        PythonSubject(target)
    with pytest.raises(UsageError, match="unexpected keyword"):
        PythonSubject("keyword_memory:KeywordMemory", {"colour": "blue"})


def test_subprocess_subject_gives_the_same_results_as_in_process() -> None:
    with SubprocessSubject([sys.executable, SCRIPT]) as child:
        child.reset()
        child.ingest(MEMS)
        child.flush()
        assert [h.id for h in child.search("stripe webhooks", 2).hits] == ["m3", "m2"]
        assert [m.id for m in child.dump()] == ["m1", "m2", "m3"]


@pytest.mark.parametrize(
    ("mode", "message"),
    [
        ("--fail=garbage", "not JSON"),
        ("--fail=exit", "exited \\(code 7\\)"),
        ("--fail=error", "search failed: index is corrupt"),
        ("--fail=hang", "no answer to 'search' within 1 s"),
    ],
)
def test_subprocess_failures_are_named_with_stderr(mode: str, message: str) -> None:
    with SubprocessSubject([sys.executable, SCRIPT, mode], timeout=1) as child:
        child.ingest(MEMS)
        with pytest.raises(SubjectError, match=message) as info:
            child.search("stripe", 2)
        assert "handling search" in str(info.value)  # the child's stderr is shown


def test_subprocess_cannot_start() -> None:
    with pytest.raises(UsageError, match="cannot start"):
        SubprocessSubject(["/no/such/program"])


def test_both_adapters_in_a_retrieval_evaluation() -> None:
    ds = RetrievalDataset(
        memories=MEMS,
        queries=[
            EvalQuery(id="q1", text="stripe webhooks"),
            EvalQuery(id="q2", text="tax rounding"),
        ],
        judgments=[
            Judgment(query_id="q1", memory_id="m3", grade=3),
            Judgment(query_id="q2", memory_id="m1", grade=3),
        ],
    )
    report = api.evaluate(
        ds,
        {
            "py": {"python": {"target": "keyword_memory:KeywordMemory"}},
            "proc": {"subprocess": {"command": [sys.executable, SCRIPT]}},
        },
        measures=("RR@10",),
        resamples=100,
        store=False,
    )
    result = retrieval_result(report.run)
    assert [s.metrics["RR@10"].value for s in result.systems] == [1.0, 1.0]


class _SessionAware:
    def __init__(self) -> None:
        self.seen: list[object] = []

    def reset(self) -> None: ...

    def ingest(self, memories: object) -> None: ...

    def search(self, query: str, k: int, session: object = None) -> list[str]:
        self.seen.append(session)
        return ["m1"]


def test_session_context_reaches_a_search_that_accepts_it(monkeypatch: pytest.MonkeyPatch) -> None:
    from memgauge.data.models import SessionContext

    monkeypatch.setattr(sys.modules[__name__], "SESSION_AWARE", _SessionAware, raising=False)
    s = PythonSubject(f"{__name__}:SESSION_AWARE")
    ctx = SessionContext(session_id="s1", turn_number=2)
    assert [h.id for h in s.search("q", 5, session=ctx).hits] == ["m1"]
    s.search("q", 5)
    assert s.obj.seen == [ctx, None]


def test_a_memory_agent_refusing_its_llm_settings_stops_its_memory(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`memory-agent` built its memory (here a child process), then refused the reader's LLM
    settings (a UsageError before the run): the memory was left running until the garbage
    collector found it. It is closed as the agent is refused."""
    from memgauge.subjects.registry import build_subject

    started: list[SubprocessSubject] = []
    real_init = SubprocessSubject.__init__

    def init(self: SubprocessSubject, *args: object, **kwargs: object) -> None:
        real_init(self, *args, **kwargs)  # type: ignore[arg-type]
        started.append(self)

    monkeypatch.setattr(SubprocessSubject, "__init__", init)
    monkeypatch.setenv("MEMGAUGE_MODEL", "m")
    monkeypatch.setenv("MEMGAUGE_LLM_TIMEOUT", "soon")
    memory = {"subprocess": {"command": [sys.executable, SCRIPT]}}
    # the error is held, as a caller reporting it holds it (its frames hold the memory)
    with pytest.raises(UsageError, match="MEMGAUGE_LLM_TIMEOUT") as _refused:
        build_subject({"memory-agent": {"memory": memory}})
    (child,) = started
    assert child._child.proc.poll() is not None, "the memory's process still runs"
