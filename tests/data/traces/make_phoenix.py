"""Write phoenix_sdk_spans.jsonl and phoenix_sdk_rest.json: make_otel.py's traces from Phoenix.

Run by hand (not by the tests; it imports no memgauge), offline, against a local Phoenix:

    python -m venv /tmp/phx && /tmp/phx/bin/pip install arize-phoenix
    PHOENIX_WORKING_DIR=/tmp/phx/data PHOENIX_PORT=16006 PHOENIX_GRPC_PORT=14317 \
        /tmp/phx/bin/phoenix serve &
    /tmp/phx/bin/python tests/data/traces/make_phoenix.py

The spans of make_otel.py's two traces (same seed, same times) are sent by the SDK's own OTLP
HTTP exporter to Phoenix's `/v1/traces`, read back with Phoenix's own client
(`Client().spans.get_spans_dataframe()`), and written as that dataframe's JSON lines
(`to_json(orient="records", lines=True, date_format="iso")`); and as Phoenix's REST API gives
them (`GET /v1/projects/{project}/spans`: `{"data": [...], "next_cursor": ...}`), written as
received.
"""

from __future__ import annotations

import random
import sys
import time
from pathlib import Path

import httpx
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from phoenix.client import Client

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))
from make_otel import MS, T0, _trace  # noqa: E402

URL = "http://127.0.0.1:16006"
PROJECT = "memgauge-fixture"


def main() -> None:
    random.seed(20260101)  # ids drawn as in make_otel.py (the exporter draws some too)
    resource = Resource.create(
        {
            "service.name": "boat-agent",
            "service.instance.id": "boat-1",
            "openinference.project.name": PROJECT,
        }
    )
    provider = TracerProvider(resource=resource)
    provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(f"{URL}/v1/traces")))
    tracer = provider.get_tracer("memgauge.fixture", "1.0")
    for n, (question, fail) in enumerate(
        [("Where is my boat and when is the dentist?", False), ("When is the dentist?", True)]
    ):
        _trace(tracer, "session-porto", question, T0 + n * 60_000 * MS, fail=fail)
    provider.shutdown()
    for _ in range(60):  # Phoenix writes what it receives in the background
        frame = Client(base_url=URL).spans.get_spans_dataframe(project_identifier=PROJECT)
        if len(frame) == 8:
            break
        time.sleep(1)
    text = frame.to_json(orient="records", lines=True, date_format="iso")
    (HERE / "phoenix_sdk_spans.jsonl").write_text(text, encoding="utf-8")
    rest = httpx.get(f"{URL}/v1/projects/{PROJECT}/spans", params={"limit": 100})
    rest.raise_for_status()
    (HERE / "phoenix_sdk_rest.json").write_bytes(rest.content)


if __name__ == "__main__":
    main()
