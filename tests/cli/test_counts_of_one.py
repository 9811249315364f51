"""A count of one beside its noun in the singular (`counted`): "1 case", "1 labelled
output", "1 vector for 2 texts", not "1 cases". The files' "1 cell" and "1 number" are in
tests/cli/test_malformed_files.py and tests/data_io/test_validate_cli.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memgauge import api
from memgauge.aggregates.ir_shapes import ir_shapes
from memgauge.cli.main import main
from memgauge.embed import OpenAIEmbedder
from memgauge.errors import SubjectError
from memgauge.llm import FakeOpenAIServer, Fault
from memgauge.runs.kinds.base import PlannedItem
from memgauge.runs.kinds.embedding import EmbeddingKind

DATA = Path(__file__).resolve().parents[1] / "data"


def test_one_extraction_case_is_one_case(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    cases = json.loads((DATA / "extraction" / "cases.json").read_text())
    cases["cases"] = cases["cases"][:1]
    one = tmp_path / "one.json"
    one.write_text(json.dumps(cases))
    monkeypatch.syspath_prepend(str(DATA / "subjects"))
    extractor = "{python: {target: 'extractors:NaiveExtractor'}}"
    args = ["--store", str(tmp_path / "r.db"), "--no-targets", "--output", str(tmp_path / "o")]
    assert main(["extraction", str(one), "--extractor", extractor, *args]) == 0
    assert "extractor: 1 case, 1 scored, 0 failed" in capsys.readouterr().out


def test_a_labels_file_of_one_output(tmp_path: Path) -> None:
    labels = tmp_path / "labels.jsonl"
    labels.write_text(json.dumps({"id": "i1", "output": "blue", "label": "pass"}) + "\n")
    assert api.validate_file(labels, "labels") == ("labels", "1 labelled output (1 pass, 0 fail)")


def test_a_subject_embedding_two_texts_into_one_vector() -> None:
    class OneVector:
        def embed(self, texts: list[str]) -> list[list[float]]:
            return [[1.0, 0.0]]

    item = PlannedItem(id="p1", input={"a": "x", "b": "y"}, expected="similar")
    with pytest.raises(SubjectError, match=r"^embed\(\) gave 1 vector for 2 texts$"):
        EmbeddingKind().ask(OneVector(), False, None, item)  # type: ignore[arg-type]


def test_an_endpoint_sending_one_vector_for_two_texts() -> None:
    one = {"data": [{"index": 0, "embedding": [1.0, 0.0]}]}
    with FakeOpenAIServer(dim=2) as server:
        server.fail(Fault(200, body=json.dumps(one)), Fault(200, body=json.dumps({"data": []})))
        emb = OpenAIEmbedder("m", base_url=server.base_url, api_key="k", max_retries=0)
        with pytest.raises(SubjectError, match=r"returned 1 vector for 2 texts$"):
            emb.embed(["x", "y"])
        with pytest.raises(SubjectError, match=r"returned 0 vectors for 1 text$"):
            emb.embed(["z"])


def test_query_expansion_over_one_query() -> None:
    system = {"name": "m", "status": "ok", "expansion": {"n_queries": 1, "new_relevant": 1}}
    (impact,) = [s for s in ir_shapes({"systems": [system]}) if s.title.startswith("Query-exp")]
    assert impact.note is not None
    assert impact.note.startswith("1 query; 1 relevant")
