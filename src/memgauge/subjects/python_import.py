"""Any Python object as a subject: `package.module:factory` called with keyword arguments.

The factory (a class or function) must return a memory system (`reset`, `ingest`, `search`,
optionally `flush` and `dump`), an agent (`answer(question, history=None)` returning text, an
object with a `text` attribute or a dict with "text"), or both. `search` may return a
`SearchResult`, a list of `Hit`s, or a list of dicts with `id` and optionally `text`, `score`,
`channels`: the adapter normalises them, so a user's class needs no memgauge imports. Session
context is passed as `session=` only when `search` accepts it.

The module of a target is looked for as `python -m` and pytest look for a test's module: in the
current directory (and first in a suite file's directory while that suite is checked or run),
then on `sys.path`; see `memgauge._util.imports`.
"""

from __future__ import annotations

import difflib
import inspect
import numbers
import reprlib
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar

from pydantic import Field, field_validator

from memgauge._util.imports import import_dirs, import_from
from memgauge._util.registry import SpecArgs, SpecProblem, args_model_of, problems_of
from memgauge.data.models import Memory, SessionContext, Turn
from memgauge.errors import (
    MemgaugeError,
    ReplyError,
    SubjectError,
    UnavailableError,
    UsageError,
)
from memgauge.subjects.async_bridge import bridged, stop_loop
from memgauge.subjects.events import Capabilities
from memgauge.subjects.protocol import (
    INGEST_BATCH,
    Agent,
    Answer,
    Hit,
    MemorySystem,
    SearchResult,
    close_subject,
)

__all__ = [
    "SEARCH_CONTRACT",
    "PythonArgs",
    "PythonSubject",
    "load_target",
    "normalise_answer",
    "normalise_hits",
    "speaking",
]

REQUIRED = ("reset", "ingest", "search")


def load_target(target: str) -> Callable[..., Any]:
    """Resolve `package.module:attr.path` to the object; UsageError saying what is wrong.

    The module is looked for in `import_dirs()` first, then on `sys.path`."""
    module_name, sep, attr = target.partition(":")
    if not sep or not module_name or not attr:
        raise UsageError(f"python subject {target!r}: write it as package.module:factory")
    dirs = import_dirs()
    try:
        obj: Any = import_from(module_name, dirs)
    except ImportError as exc:
        missing = exc.name if isinstance(exc, ModuleNotFoundError) else None
        where = _line_running(exc, module_name)
        if missing and where:  # the module was found: a package its own import needs is not
            raise UnavailableError(
                f"python subject {target!r}: importing {module_name} ({where}) failed: it "
                f"imports {missing}, which is not installed in this Python ({sys.executable}); "
                "install it there (pip install ...)"
            ) from None
        raise UsageError(
            f"python subject {target!r}: cannot import {module_name!r} ({exc}); it was looked "
            f"for in {', '.join(dirs)}, then on PYTHONPATH and among the installed packages"
        ) from None
    for part in attr.split("."):
        if not hasattr(obj, part):
            public = [n for n in dir(obj) if not n.startswith("_")]
            close = difflib.get_close_matches(part, public, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise UsageError(
                f"python subject {target!r}: {module_name} has no attribute {attr!r}{hint}"
            )
        obj = getattr(obj, part)
    factory: object = obj
    if not callable(factory):
        raise UsageError(f"python subject {target!r}: {attr} is not callable")
    return factory


def _line_running(exc: BaseException, module_name: str) -> str | None:
    """The file and line of `module_name`'s own code that `exc` was raised under, or None
    when the module never ran (it was not found)."""
    where = None
    tb = exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_globals.get("__name__") == module_name:
            where = f"{tb.tb_frame.f_code.co_filename}, line {tb.tb_lineno}"
        tb = tb.tb_next
    return where


def normalise_answer(raw: Any, elapsed_ms: float) -> Answer:
    """An `Answer` from whatever an agent returned: text, an `Answer`, any object with a str
    `text` attribute (the agent's own class: a user's code needs no memgauge import), or a
    mapping with a str "text" (its other keys become the metadata). Anything else is a
    ReplyError naming the type returned and what is expected."""
    if isinstance(raw, str):
        return Answer(raw, {"total": elapsed_ms})
    if isinstance(raw, Answer):
        return Answer(raw.text, {**raw.latency_ms, "adapter_total": elapsed_ms}, raw.metadata)
    if isinstance(raw, Mapping):
        text, meta = raw.get("text"), {k: v for k, v in raw.items() if k != "text"}
    else:
        text, meta = getattr(raw, "text", None), {}
    if isinstance(text, str):
        return Answer(text, {"total": elapsed_ms}, meta)
    raise ReplyError(_unreadable(raw, text))


def _unreadable(raw: Any, text: Any) -> str:
    """What a ReplyError says: the type returned (and of its text), and what is expected."""
    what = type(raw).__name__
    if isinstance(raw, Mapping):
        what += (
            " without a str 'text'" if text is None else f" whose 'text' is {type(text).__name__}"
        )
    elif text is not None:
        what += f" whose text is {type(text).__name__}"
    # reprlib: shortened, and an object whose repr raises is still named
    return (
        f"answer() returned {what} ({reprlib.repr(raw)}); expected text (str), an object with a str `text` "
        "attribute, or a dict with a str 'text'"
    )


def pre_expansion_ids(raw: Any, k: int) -> tuple[str, ...] | None:
    """A search's `pre_expansion` (`SearchResult.pre_expansion`): ids, or hits with an `id`,
    best first, cut at `k`; None stays None. SubjectError when it is anything else."""
    hits = _listed(raw, "pre_expansion", "memory ids (best first) ranked before query expansion")
    return None if hits is None else tuple(h.id for h in normalise_hits(hits, k))


def dedup_filtered_hits(raw: Any) -> tuple[Hit, ...] | None:
    """A search's `dedup_filtered` (`SearchResult.dedup_filtered`): the results a session
    dedup filtered out, as hits (ids, dicts with an `id` and `text`); None stays None.
    SubjectError when it is anything else."""
    hits = _listed(
        raw,
        "dedup_filtered",
        "the results (ids, or hits with their text) the session dedup filtered out",
    )
    return None if hits is None else tuple(normalise_hits(list(hits), max(len(hits), 1)))


def _listed(raw: Any, field: str, give: str) -> Sequence[Any] | None:
    """A search's optional list `field`; SubjectError (`give` a list of what) when it is not
    one."""
    if raw is None:
        return None
    if not isinstance(raw, Sequence) or isinstance(raw, str | bytes):
        raise SubjectError(f"search's {field} is a {type(raw).__name__}; give a list of {give}")
    return raw


def search_result(raw: Any, k: int, latency_ms: dict[str, float]) -> SearchResult:
    """A search's answer as a `SearchResult`: a list of hits, or an object `{"hits": [...],
    "pre_expansion": [...], "dedup_filtered": [...]}` (what the HTTP and JSON-lines protocols
    send)."""
    if isinstance(raw, Mapping) and "hits" in raw:
        return SearchResult(
            normalise_hits(raw["hits"], k),
            latency_ms,
            pre_expansion_ids(raw.get("pre_expansion"), k),
            dedup_filtered_hits(raw.get("dedup_filtered")),
        )
    if isinstance(raw, SearchResult):
        return SearchResult(
            normalise_hits(raw.hits, k),
            latency_ms,
            pre_expansion_ids(raw.pre_expansion, k),
            dedup_filtered_hits(raw.dedup_filtered),
        )
    return SearchResult(normalise_hits(raw, k), latency_ms)


#: what `search` must return, quoted by every error about a search's reply (docs/subjects.md)
SEARCH_CONTRACT = (
    "search(query, k) must return a list of hits, best first, each a memory id (str), a dict "
    "with 'id' (and optionally 'text', 'score', 'channels', 'metadata'), or a memgauge Hit; or "
    "an object {'hits': [...], 'pre_expansion': [...]}, or a memgauge SearchResult"
)


def normalise_hits(raw: Any, k: int) -> list[Hit]:
    """Hits from whatever a subject returned: SearchResult, Hits, dicts or plain ids. Anything
    else is a SubjectError that names what came back and quotes SEARCH_CONTRACT."""
    if isinstance(raw, SearchResult):  # its hits read by the same rule (dicts, ids or Hits)
        return normalise_hits(raw.hits, k)
    if not isinstance(raw, Sequence) or isinstance(raw, str | bytes):
        raise SubjectError(
            f"search returned {type(raw).__name__} ({reprlib.repr(raw)}); {SEARCH_CONTRACT}"
        )
    hits: list[Hit] = []
    for rank, item in enumerate(raw[:k], 1):
        if isinstance(item, Hit):
            hits.append(item)
        elif isinstance(item, Mapping):
            hits.append(_dict_hit(rank, item))
        elif isinstance(item, str | int) and not isinstance(item, bool):
            hits.append(Hit(id=str(item), text="", score=None, rank=rank))
        else:
            raise SubjectError(_not_a_hit(rank, item))
    return hits


def _dict_hit(rank: int, item: Mapping[str, Any]) -> Hit:
    """A hit given as a dict; SubjectError naming the hit and the field that is not of its
    contract's type (read as another, it would be scored as something the system never
    said)."""
    if "id" not in item:
        raise SubjectError(
            f"search hit {rank} has no 'id' ({reprlib.repr(dict(item))}); {SEARCH_CONTRACT}"
        )
    raw_id = item["id"]
    if isinstance(raw_id, bool) or not isinstance(raw_id, str | int):
        raise SubjectError(
            f"search hit {rank} has 'id' {_shown(raw_id)}: give the id of the memory as it was "
            f"ingested (str); {SEARCH_CONTRACT}"
        )
    ident = str(raw_id)
    channels = item.get("channels") or ()
    if isinstance(channels, str | bytes) or not isinstance(channels, Sequence):
        raise SubjectError(
            f"search hit {rank} ({ident!r}) has 'channels' {_shown(channels)}: give a list of "
            f"the channels' names (['lexical', 'dense']); {SEARCH_CONTRACT}"
        )
    score = item.get("score")
    # a number of any type (a vector library's numpy.float32 too); a bool is no score
    if score is not None and (isinstance(score, bool) or not isinstance(score, numbers.Real)):
        raise SubjectError(
            f"search hit {rank} ({ident!r}) has 'score' {_shown(score)}: give a number, or no "
            f"'score'; {SEARCH_CONTRACT}"
        )
    metadata = item.get("metadata") or {}
    if not isinstance(metadata, Mapping):
        raise SubjectError(
            f"search hit {rank} ({ident!r}) has 'metadata' {_shown(metadata)}: give a dict, or "
            f"no 'metadata'; {SEARCH_CONTRACT}"
        )
    return Hit(
        id=ident,
        text=str(item.get("text") or item.get("memory") or ""),
        score=None if score is None else float(score),
        rank=rank,
        channels=tuple(channels),
        metadata=dict(metadata),
    )


def _shown(value: Any) -> str:
    """A field's value as an error shows it: shortened, with its type."""
    return f"{reprlib.repr(value)}, a {type(value).__name__}"


def _not_a_hit(rank: int, item: Any) -> str:
    # (id, score) pairs are what most retrieval libraries return: say how to write them
    hint = ""
    if isinstance(item, tuple | list) and len(item) == 2:
        hint = (
            "; an (id, score) pair is not read as one (which is the id?): return "
            "{'id': id, 'score': score} instead"
        )
    return (
        f"search hit {rank} is a {type(item).__name__} ({reprlib.repr(item)}){hint}; "
        f"{SEARCH_CONTRACT}"
    )


class PythonArgs(SpecArgs):
    """The spec of a `python:` subject."""

    target: str = Field(description="package.module:factory, a class or function to call.")
    kwargs: dict[str, Any] = Field(
        default_factory=dict,
        description="Keyword arguments of the factory (checked against its signature unless "
        "it takes **kwargs).",
    )

    @field_validator("target")
    @classmethod
    def _target(cls, value: str) -> str:
        module, sep, attr = value.partition(":")
        if not (sep and module and attr):
            raise ValueError(f"write it as package.module:factory, got {value!r}")
        return value

    def more_problems(self) -> list[SpecProblem]:
        """`kwargs` against the factory's signature (the target is imported only then)."""
        if not self.kwargs:
            return []
        try:
            factory = load_target(self.target)
        except UsageError as exc:
            return [SpecProblem(("target",), str(exc))]
        except UnavailableError:  # the spec may be right: building the subject says what is not
            return []
        model = args_model_of(factory)
        if model is None:  # the factory takes **kwargs
            return []
        return [p.under("kwargs") for p in problems_of(model, self.kwargs)]


class _CallError(SubjectError):
    """A call of the user's object raised: the message says which call, the failure's kind
    stays the exception's type."""

    def __init__(self, message: str, kind: str) -> None:
        super().__init__(message)
        self.failure_kind = kind


class PythonSubject:
    """Wraps the object a factory returns; calls are timed and errors named."""

    Args: ClassVar[type[PythonArgs]] = PythonArgs

    def __init__(
        self, target: str, kwargs: Mapping[str, Any] | None = None, *, obj: Any = None
    ) -> None:
        made = obj is None  # by the target's factory, not handed over live (the API's)
        if obj is None:
            factory = load_target(target)
            given = dict(kwargs or {})
            if not given and _is_write_function(factory):
                obj = factory  # `decide(existing, incoming)` itself, not a factory of it
            else:
                _refuse_unbindable_factory(target, factory, given)
                try:
                    obj = factory(**given)
                except TypeError as exc:  # its arguments were bound above: its own code raised
                    raise _CallError(str(exc), type(exc).__name__) from exc
        if isinstance(obj, type):  # its methods unbound: every call would miss `self`
            did, do = ("returned", "return") if made else ("is", "give")
            raise UsageError(
                f"python subject {target!r} {did} the class {obj.__name__}, where an object "
                f"of it is needed: {do} {obj.__name__}(), not {obj.__name__}"
            )
        self.obj = obj
        missing = [m for m in REQUIRED if not callable(getattr(self.obj, m, None))]
        self._answers = callable(getattr(self.obj, "answer", None))
        self._function = callable(self.obj) and not any(
            callable(getattr(self.obj, m, None)) for m in ("search", "answer", "extract", "decide")
        )
        writes = any(callable(getattr(self.obj, m, None)) for m in ("extract", "decide"))
        if missing and not self._answers and not writes and not self._function:
            raise UsageError(
                f"python subject {target!r} returned a {type(self.obj).__name__} without "
                f"{', '.join(missing)}; a memory system needs reset, ingest and search, an "
                "agent needs answer, an extractor extract, a decider decide (or return a "
                "function taking the same arguments)"
            )
        self._memory = not missing
        self.target = target
        _refuse_unreadable_methods(target, self.obj)
        # pass session context only to a search that takes it
        self._takes_session = self._memory and _accepts(self.obj.search, "session")
        self._takes_history = self._answers and _accepts(self.obj.answer, "history")
        # `async def` methods (an asyncio memory system's) run on an event loop of its own
        self.obj = bridged(self.obj, _CALLED)

    @classmethod
    def wrap(cls, obj: Any, name: str) -> PythonSubject:
        """A live object (made in the caller's code) behind the same adapter as a factory's."""
        return cls(name, obj=obj)

    @property
    def capabilities(self) -> Capabilities:
        """What the wrapped object declares, else what its methods show."""
        declared = getattr(self.obj, "capabilities", None)
        if isinstance(declared, Capabilities):
            return declared
        return Capabilities(
            dump=callable(getattr(self.obj, "dump", None)),
            session_context=self._takes_session,
            answers=self._answers,
        )

    @property
    def is_memory(self) -> bool:
        """Whether the object is a memory system (an agent may be one too)."""
        return self._memory

    @property
    def name(self) -> str:
        """The import target."""
        return f"python:{self.target}"

    def _need_memory(self, method: str) -> None:
        if not self._memory:
            raise SubjectError(
                f"{self.name} is an agent without {method}(); use it in tasks that ask"
            )

    def reset(self) -> None:
        """Forward."""
        self._need_memory("reset")
        self.obj.reset()

    def ingest(self, memories: Sequence[Memory]) -> None:
        """Forward; an error of the object's ingest names the call and what it is given (an
        ingest written for one memory fails on the list with an error that says neither)."""
        self._need_memory("ingest")
        try:
            self.obj.ingest(list(memories))
        except MemgaugeError:  # said in memgauge's terms already (UnavailableError: exit 3)
            raise
        except Exception as exc:
            raise _CallError(
                f"{self.name}: ingest(memories) failed: {exc} (it is given a list of Memory "
                f"objects, each with .id and .text, up to {INGEST_BATCH} a call)",
                type(exc).__name__,
            ) from exc

    def flush(self) -> None:
        """Forward when the object has `flush`."""
        fn = getattr(self.obj, "flush", None)
        if callable(fn):
            fn()

    def search(self, query: str, k: int, *, session: SessionContext | None = None) -> SearchResult:
        """Forward (with `session=` when given and accepted) and normalise the hits."""
        self._need_memory("search")
        t0 = time.perf_counter()
        if session is not None and self._takes_session:
            raw = self.obj.search(query, k, session=session)
        else:
            raw = self.obj.search(query, k)
        ms = (time.perf_counter() - t0) * 1000
        if isinstance(raw, SearchResult):
            return search_result(raw, k, {**raw.latency_ms, "adapter_total": ms})
        return search_result(raw, k, {"total": ms})

    def dump(self) -> list[Memory]:
        """Forward when the object has `dump`; an empty list otherwise."""
        fn = getattr(self.obj, "dump", None)
        if not callable(fn):
            return []
        return [m if isinstance(m, Memory) else Memory.model_validate(m) for m in fn()]

    def answer(self, question: str, *, history: Sequence[Turn] | None = None) -> Answer:
        """Forward to the object's `answer` (with `history=` when given and accepted)."""
        if not self._answers:
            raise SubjectError(f"{self.name} has no answer(); it is a memory system, not an agent")
        t0 = time.perf_counter()
        if history is not None and self._takes_history:
            raw = self.obj.answer(question, history=list(history))
        else:
            raw = self.obj.answer(question)
        return normalise_answer(raw, (time.perf_counter() - t0) * 1000)

    def extract(self, conversation: Sequence[Turn], existing_memory: Sequence[str]) -> Any:
        """Forward to the object's `extract` (or call it, when the factory gave a function)."""
        return self._write_call("extract", list(conversation), list(existing_memory))

    def embed(self, texts: Sequence[str]) -> Any:
        """Forward to the object's `embed` (or call it, when the factory gave a function)."""
        return self._write_call("embed", list(texts))

    def decide(self, existing: Sequence[Mapping[str, Any]], incoming: Mapping[str, Any]) -> Any:
        """Forward to the object's `decide` (or call it, when the factory gave a function)."""
        return self._write_call("decide", [dict(m) for m in existing], dict(incoming))

    def _write_call(self, method: str, *args: Any) -> Any:
        fn = getattr(self.obj, method, None)
        if callable(fn):
            return fn(*args)
        if self._function:
            return self.obj(*args)
        raise SubjectError(f"{self.name} has no {method}(); it cannot be used in this task")

    def close(self) -> None:
        """Stop the event loop of an object with `async def` methods; the object itself is the
        user's to close (memgauge does not close a `python:` subject's object)."""
        stop_loop(self.obj)


class _ClosedWithTheRun(PythonSubject):
    """A plug-in's object behind the adapter: built by memgauge, so closed by it, as it was
    before it was wrapped."""

    def close(self) -> None:
        """The object's `close`, when it has one."""
        close_subject(self.obj)


def speaking(obj: Any, name: str, *, owned: bool = False) -> Any:
    """`obj` itself when it speaks the subject protocol (`MemorySystem` or `Agent`, with its
    `capabilities`, as memgauge's own subjects do), else `obj` behind the `python:` adapter:
    hits as dicts or ids, `session=` passed only when its search takes it, calls timed.
    `owned`: memgauge built `obj` (a plug-in's), so its `close` is called with the run's."""
    if isinstance(obj, MemorySystem | Agent) and hasattr(obj, "capabilities"):
        return obj
    return (_ClosedWithTheRun if owned else PythonSubject).wrap(obj, name)


#: the methods whose return value memgauge reads when it calls them (or that must have run);
#: any may be a coroutine function (`async def`: run on an event loop of the object's own)
_CALLED = ("reset", "ingest", "flush", "search", "dump", "answer", "extract", "decide", "embed")

#: how memgauge calls a memory's or an agent's method: the arguments (by position), the call
#: as the docs write it, and what it passes
_CALLS: dict[str, tuple[tuple[Any, ...], str, str]] = {
    "reset": ((), "reset()", "no argument"),
    "ingest": (([],), "ingest(memories)", "a list of Memory objects"),
    "flush": ((), "flush()", "no argument"),
    "search": (("query", 10), "search(query, k)", "the query and how many hits to return"),
    "dump": ((), "dump()", "no argument"),
    "answer": (("question",), "answer(question)", "the question"),
}


def _refuse_unreadable_methods(target: str, obj: Any) -> None:
    """UsageError for a method that cannot be called as memgauge calls it (`_CALLS`), or that
    returns what memgauge cannot read in place of its result: one that yields (a generator, or
    an `async def` that yields). An `async def` that returns is run (`async_bridge`)."""
    for method in _CALLED:
        fn = getattr(obj, method, None)
        if not callable(fn):
            continue
        where = f"python subject {target!r}: {type(obj).__name__}.{method}"
        if method in _CALLS:
            _refuse_uncallable(where, fn, *_CALLS[method])
        if inspect.isasyncgenfunction(fn):
            raise UsageError(
                f"{where} is an asynchronous generator (async def with yield): return the "
                "result instead (an async def that returns is awaited)"
            )
        if method == "search" and inspect.isgeneratorfunction(fn):
            raise UsageError(
                f"{where} is a generator function (it yields): return the hits as a list"
            )


#: how a signature writes its variadic parameters
_STARS: dict[inspect._ParameterKind, str] = {
    inspect.Parameter.VAR_POSITIONAL: "*",
    inspect.Parameter.VAR_KEYWORD: "**",
}


#: the parameters of the write calls (`extract`, `decide`, `embed`) whose function may be a
#: `python:` target itself, as well as the object or function a factory returns
_WRITE_CALLS = (("conversation", "existing_memory"), ("existing", "incoming"), ("texts",))
_VARIADIC = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)


def _is_write_function(target: Any) -> bool:
    """Whether `target` is a function (not a class) whose first parameters are a write call's
    and that needs no other: a factory never takes `existing` and `incoming`. A default on
    one of them (`existing_memory=None`) or an option after them leaves it a write function."""
    if isinstance(target, type):
        return False
    try:
        sig = inspect.signature(target)
    except (TypeError, ValueError):
        return False
    params = list(sig.parameters.values())
    positional = tuple(
        p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
    )
    required = {p.name for p in params if p.default is p.empty and p.kind not in _VARIADIC}
    return any(
        positional[: len(call)] == call and bool(required) and required <= set(call)
        for call in _WRITE_CALLS
    )


def _refuse_unbindable_factory(target: str, factory: Any, given: dict[str, Any]) -> None:
    """UsageError when the factory's signature cannot take the spec's kwargs (a class that
    needs an argument, given on `-s` where no kwargs can be), saying where to give them."""
    try:
        sig = inspect.signature(factory)
    except (TypeError, ValueError):  # a builtin without a signature: its call will tell
        return
    try:
        sig.bind(**given)
    except TypeError as exc:
        name = getattr(factory, "__name__", target.partition(":")[2])
        called = f"kwargs {given!r}" if given else "no argument"
        message = f"python subject {target!r}: {name}({_params(sig)}) cannot be called with {called} ({exc})"
        needed = [
            p.name
            for p in sig.parameters.values()
            if p.default is p.empty
            and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
            and p.name not in given
        ]
        if needed:
            example = ", ".join(f"{n}: ..." for n in needed)
            message += (
                f": give its arguments under the spec's kwargs, {{python: {{target: {target}, "
                f"kwargs: {{{example}}}}}}} (in a spec file given to -s, or a suite's subjects)"
            )
        raise UsageError(message) from None


def _params(sig: inspect.Signature) -> str:
    """A signature's parameter names as a call writes them (`query, *args, **kwargs`)."""
    return ", ".join(_STARS.get(p.kind, "") + p.name for p in sig.parameters.values())


def _refuse_uncallable(
    where: str, fn: Callable[..., Any], args: tuple[Any, ...], call: str, what: str
) -> None:
    """UsageError when `fn`'s signature cannot take `args` by position (a search without `k`
    would fail every query with a TypeError naming neither the subject nor the contract)."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):  # a builtin without a signature: its calls will tell
        return
    try:
        sig.bind(*args)
    except TypeError as exc:
        by = ", by position" if args else ""
        raise UsageError(
            f"{where}({_params(sig)}) cannot be called as {call} ({exc}): memgauge passes "
            f"{what}{by}"
        ) from None


def _accepts(fn: Callable[..., Any], name: str) -> bool:
    params = inspect.signature(fn).parameters.values()
    return any(p.name == name or p.kind is inspect.Parameter.VAR_KEYWORD for p in params)
