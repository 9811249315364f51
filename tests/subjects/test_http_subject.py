"""The HTTP subject against a real server on 127.0.0.1 that implements
docs/http-subject.openapi.yaml over the keyword memory of tests/data/subjects."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from memgauge.data.models import Memory
from memgauge.errors import DataError, SubjectError, UsageError
from memgauge.subjects.http import HttpSubject

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "data" / "subjects"))
from keyword_service import Service, serve  # noqa: E402

MEMS = [
    Memory(id="m1", text="Tax is rounded per invoice line"),
    Memory(id="m2", text="Payments go through Stripe"),
    Memory(id="m3", text="Stripe webhooks are verified"),
]


@pytest.fixture
def service() -> Iterator[tuple[Service, str]]:
    with serve() as running:
        yield running


def test_round_trip_with_namespaces(service: tuple[Service, str]) -> None:
    _, url = service
    a, b = HttpSubject(url), HttpSubject(url)
    a.reset()
    a.ingest(MEMS)
    a.flush()
    b.ingest(MEMS[:1])
    result = a.search("stripe webhooks", 2)
    assert [h.id for h in result.hits] == ["m3", "m2"]
    assert result.latency_ms["service_rank"] == 0.1
    assert "total" in result.latency_ms
    assert len(a.dump()) == 3
    assert len(b.dump()) == 1
    assert a.namespace != b.namespace
    assert result.pre_expansion is None
    svc, _ = service
    svc.expands = True
    assert a.search("stripe webhooks", 2).pre_expansion == ("m2", "m3")
    a.close()
    b.close()


@pytest.mark.parametrize(
    "stages",
    [
        {"rank": "3ms"},
        {"rank": None},
        {"rank": [1, 2]},
        # JSON's NaN and Infinity, which Python reads, and a negative time: no latency either
        {"rank": float("nan")},
        {"rank": float("inf")},
        {"rank": -0.5},
    ],
)
def test_a_stage_latency_that_is_no_number_fails_the_search_naming_it(
    stages: dict[str, Any], service: tuple[Service, str]
) -> None:
    svc, url = service
    svc.latency_ms = stages
    s = HttpSubject(url)
    s.ingest(MEMS)
    with pytest.raises(SubjectError) as info:
        s.search("stripe", 2)
    s.close()
    said = str(info.value)
    assert said.startswith(f"http:{url}/search: 'latency_ms' 'rank' is {stages['rank']!r}")
    assert said.endswith(
        "give each stage's milliseconds as a finite number, 0 or more ({'rank': 0.1})"
    )


def test_retries_then_succeeds_and_gives_up_with_the_message(service: tuple[Service, str]) -> None:
    svc, url = service
    s = HttpSubject(url, max_retries=2)
    s.ingest(MEMS)
    svc.fail = [(503, {"error": "warming up"}), (429, {"error": "slow down"})]
    assert s.search("stripe", 1).hits[0].id in {"m2", "m3"}
    svc.fail = [(500, {"error": {"message": "index corrupt"}})] * 3
    with pytest.raises(SubjectError, match="status 500 after 3 attempts: index corrupt"):
        s.search("stripe", 1)
    svc.fail = [(400, {"error": "bad k"})]
    with pytest.raises(SubjectError, match="status 400: bad k"):
        s.search("stripe", 1)  # a client error is not retried
    svc.fail = [(200, "not json")]
    with pytest.raises(SubjectError, match="not JSON"):
        s.search("stripe", 1)
    svc.fail = [(200, {"results": []})]
    with pytest.raises(SubjectError, match="with 'hits'"):
        s.search("stripe", 1)
    svc.fail = [(404, {"error": "no"})]
    with pytest.raises(SubjectError, match="does not implement /search"):
        s.search("stripe", 1)


def test_a_service_without_flush_is_searchable_once_ingest_returns(
    service: tuple[Service, str],
) -> None:
    # /flush is optional, as the quick start says: a 404 there means nothing to wait for
    svc, url = service
    s = HttpSubject(url)
    s.reset()
    s.ingest(MEMS)
    svc.fail = [(404, {"error": "no route"})]
    s.flush()
    assert svc.calls[-1][0] == "/flush"
    assert [h.id for h in s.search("stripe webhooks", 1).hits] == ["m3"]
    svc.fail = [(404, {"error": "no route"})]
    with pytest.raises(SubjectError, match="does not implement /reset"):
        s.reset()  # the endpoints a memory needs stay required
    s.close()


def test_api_key_from_the_environment_never_in_errors(
    service: tuple[Service, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    svc, url = service
    monkeypatch.setenv("MY_MEMORY_KEY", "s3cr3t-value")
    s = HttpSubject(url, api_key_env="MY_MEMORY_KEY", max_retries=0)
    s.reset()
    assert svc.auth[-1] == "Bearer s3cr3t-value"
    svc.fail = [(500, {"error": "boom"})]
    with pytest.raises(SubjectError) as info:
        s.reset()
    assert "s3cr3t" not in str(info.value)
    monkeypatch.delenv("MY_MEMORY_KEY")
    with pytest.raises(UsageError, match="MY_MEMORY_KEY is not set"):
        HttpSubject(url, api_key_env="MY_MEMORY_KEY")


def test_unreachable_and_bad_url() -> None:
    # a first run before the service is started: the message says what to check
    with pytest.raises(SubjectError, match="ConnectError after 1 attempts") as info:
        HttpSubject("http://127.0.0.1:9", max_retries=0).reset()
    assert str(info.value).endswith(
        "(nothing accepts connections at http://127.0.0.1:9: is the service running?)"
    )
    with pytest.raises(UsageError, match="must start with http"):
        HttpSubject("ftp://x")


def test_the_openapi_file_describes_every_endpoint_the_client_calls() -> None:
    spec = yaml.safe_load((ROOT / "docs" / "http-subject.openapi.yaml").read_text())
    assert spec["openapi"].startswith("3.")
    assert set(spec["paths"]) == {"/reset", "/ingest", "/flush", "/search", "/dump", "/answer"}
    assert all("post" in p for p in spec["paths"].values())


def _validators(spec: dict[str, Any]) -> dict[tuple[str, ...], Any]:
    """OpenAPI 3.1 schema validators (formats checked) of what `spec` says each path takes,
    keyed `(path, "requestBody")`, and gives back as JSON, keyed `(path, "responses",
    status)`."""
    from openapi_schema_validator import OAS31Validator
    from referencing import Registry, Resource
    from referencing.jsonschema import DRAFT202012

    registry = Registry().with_resource(
        "urn:spec", Resource.from_contents(spec, default_specification=DRAFT202012)
    )
    keys = [
        (path, *where)
        for path, item in spec["paths"].items()
        for where in [
            ("requestBody",),
            *[
                ("responses", code)
                for code, r in item["post"]["responses"].items()
                if "content" in r
            ],
        ]
    ]
    return {
        key: OAS31Validator(
            {
                "$ref": "urn:spec#"
                + "/".join(["/paths", key[0].replace("/", "~1"), "post", *key[1:]])
                + "/content/application~1json/schema"
            },
            registry=registry,
            format_checker=OAS31Validator.FORMAT_CHECKER,
        )
        for key in keys
    }


def test_requests_sent_and_answers_of_the_example_service_validate_against_the_openapi(
    service: tuple[Service, str],
    demo_dir: Path,
    run_suite_json: Any,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> None:
    """docs/http-subject.openapi.yaml is a valid OpenAPI document, and every request memgauge
    sends (memories with tiers, folders, sessions and times, searches with a session context,
    questions with and without a history) and every answer of the example service fits it."""
    from openapi_spec_validator import validate

    from memgauge.cli.main import main

    spec = yaml.safe_load((ROOT / "docs" / "http-subject.openapi.yaml").read_text())
    validate(spec)
    svc, url = service
    handle, exchanged = svc.handle, []

    def recording(path: str, body: dict[str, Any]) -> tuple[int, Any]:
        status, payload = handle(path, body)
        exchanged.append((path, body, status, payload))
        return status, payload

    svc.handle = recording
    system = tmp_path / "http.yaml"
    system.write_text(yaml.safe_dump({"http": {"base_url": url}}))
    args = ["evaluate", str(demo_dir), "-s", str(system), "--no-store", "--quiet"]
    args += ["--resamples", "100"]
    assert main([*args, "--out", str(tmp_path / "out")]) == 0
    capsys.readouterr()
    items = [
        {
            "id": "h",
            "input": "What colour is the boat?",
            "expected": "blue",
            "history": [
                {
                    "role": "user",
                    "content": "The boat is blue",
                    "timestamp": "2024-01-15T09:00:00Z",
                },
                {"role": "assistant", "content": "Noted."},
            ],
        },
        {"id": "n", "input": "Which port does the API listen on?", "expected": "8080"},
    ]
    agent = {"svc": {"http": {"base_url": url, "agent": True}}}
    task = {"name": "qa", "kind": "expected-output", "items": items, "evaluators": ["icontains"]}
    code, _ = run_suite_json({"name": "http-agent", "subjects": agent, "tasks": [task]})
    assert code == 0

    validators, seen = _validators(spec), set()
    for path, body, status, payload in exchanged:
        errors = [e.message for e in validators[path, "requestBody"].iter_errors(body)]
        assert not errors, (path, body, errors)
        assert str(status) in spec["paths"][path]["post"]["responses"], (path, status)
        if (path, "responses", str(status)) in validators:
            check = validators[path, "responses", str(status)]
            errors = [e.message for e in check.iter_errors(payload)]
            assert not errors, (path, payload, errors)
        seen.add(path)
        if path == "/search" and body.get("session"):
            seen.add("/search with a session")
        if path == "/answer" and body.get("history"):
            seen.add("/answer with a history")
    assert seen == {*spec["paths"], "/search with a session", "/answer with a history"}


def test_system_specs_for_every_adapter(tmp_path: Path) -> None:
    from memgauge.subjects.parse import parse_system
    from memgauge.subjects.registry import build_subject

    assert parse_system("http://127.0.0.1:8000@svc") == [
        ("svc", {"http": {"base_url": "http://127.0.0.1:8000"}})
    ]
    assert parse_system("python:pkg.mod:Factory") == [
        ("python:pkg.mod:Factory", {"python": {"target": "pkg.mod:Factory"}})
    ]
    spec = tmp_path / "s.yaml"
    spec.write_text("- http: {base_url: 'http://127.0.0.1:1'}\n- subprocess: {command: [x]}\n")
    assert [label for label, _ in parse_system(str(spec))] == ["http-0", "subprocess-1"]
    spec.write_text("{zep: {}}")
    with pytest.raises(DataError, match="must be one of"):  # a file's problem: file and line
        parse_system(str(spec))
    with pytest.raises(UsageError, match=r"http\.base_url: required"):
        build_subject({"http": {}})
    with pytest.raises(UsageError, match=r"http\.colour: unknown key"):
        build_subject({"http": {"base_url": "http://x", "colour": 1}})


def test_an_agent_service_answers_in_a_suite_run(
    service: tuple[Service, str], run_suite_json: Any
) -> None:
    _, url = service
    qa = ROOT / "tests" / "data" / "suites" / "qa"
    suite = {
        "name": "http-agent",
        "subjects": {"svc": {"http": {"base_url": url, "agent": True}}},
        "tasks": [
            {
                "name": "answers",
                "kind": "expected-output",
                "dataset": str(qa / "items.jsonl"),
                "memories": str(qa / "memories.jsonl"),
                "evaluators": ["icontains"],
            }
        ],
        "concurrency": 3,
    }
    code, doc = run_suite_json(suite)
    assert code == 0
    (row,) = doc["results"]
    assert row["mean"] == pytest.approx(0.6)
    assert row["n_scored"] == 5


def test_bench_drives_an_http_service_with_concurrent_clients(
    service: tuple[Service, str], capsys: pytest.CaptureFixture[str]
) -> None:
    from memgauge.cli.main import main

    svc, url = service
    code = main(["bench", url, "-c", "16", "--requests", "300", "--json"])
    (row,) = json.loads(capsys.readouterr().out)
    assert code == 0
    assert row["requests"] == 300
    assert row["errors"] == 0
    assert row["serialized"] is False  # httpx is thread-safe: 16 requests in flight at once
    assert sum(1 for path, _ in svc.calls if path == "/search") == 300


def test_golden_set_from_a_live_system_evaluated_as_it_stands(
    service: tuple[Service, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Production logs -> golden set whose memories come from the live system's dump -> the
    live system evaluated on it without being reset or fed anything."""
    from memgauge.cli.main import main
    from memgauge.online.querylog import QueryLog

    svc, url = service
    live = HttpSubject(url, namespace="prod")
    live.ingest(MEMS)
    live.close()
    spec = tmp_path / "prod.yaml"
    spec.write_text(yaml.safe_dump({"http": {"base_url": url, "namespace": "prod"}}))
    db = tmp_path / "log.db"
    log = QueryLog(db)
    q1 = log.query("stripe webhooks", session_id="s", result_ids=["m3", "m2"])
    q2 = log.query("invoice tax rounding", session_id="s", result_ids=["m1", "m9"])  # m9: gone
    log.feedback("read_after_search", session_id="s", query_id=q1, memory_id="m3", rank=1)
    log.feedback("reference", session_id="s", query_id=q2, memory_id="m1", rank=1)
    log.close()
    for args in (["judgments"], ["harvest", "-n", "10"]):
        assert main(["logs", args[0], str(db), *args[1:]]) == 0
    capsys.readouterr()
    out = tmp_path / "golden"
    both = ["--memories", str(spec), "--dump-from", str(spec)]
    assert main(["logs", "export", str(db), "--out", str(out), *both]) == 2
    assert main(["logs", "export", str(db), "--out", str(out), "--dump-from", str(spec)]) == 0
    counts = json.loads(capsys.readouterr().out)
    assert counts["queries"] == 2
    assert counts["memories"] == 3
    assert counts["judgments_dropped"] == 1  # m9 is no longer in the system
    assert counts["judgments"] == 3
    n_calls = len(svc.calls)
    report = tmp_path / "report"
    args = ["evaluate", str(out), "-s", str(spec), "--no-ingest", "--no-store", "--quiet"]
    assert main([*args, "--out", str(report)]) == 0
    paths = [path for path, body in svc.calls[n_calls:]]
    assert set(paths) == {"/search"}  # never reset, never fed
    result = json.loads((report / "result.json").read_text())
    assert result["settings"]["ingested"] is False
    (system,) = result["systems"]
    assert system["status"] == "ok"
    assert any("as it stood" in n for n in system["notes"])
    assert system["metrics"]["RR@10"]["value"] == 1.0  # stripe -> m3, tax -> m1, both on top
    again = HttpSubject(url, namespace="prod")
    assert len(again.dump()) == 3  # the live memories are untouched
    again.close()
