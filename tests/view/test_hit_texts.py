"""A reviewer sees the text of each ranked hit: the store leaves out a hit's text where it is
the dataset's own, and the item page, `view --review` and `report`'s HTML read it back from
the run's dataset while it has the sha256 the run recorded (else they say why there is none)."""

from __future__ import annotations

import shutil
from pathlib import Path
from urllib.parse import urlencode

import pytest
import yaml
from starlette.testclient import TestClient
from tests.helpers import cli_output

from memgauge.store.suite_runs import SuiteRunStore
from memgauge.view.app import create_app

BUNDLE = Path(__file__).resolve().parents[1] / "data" / "good" / "bundle.yaml"
TEXT = "Deploys go out on Tuesdays"  # m1's text, which the search ranks first


@pytest.fixture
def run(tmp_path: Path) -> tuple[Path, Path, str]:
    """A lexical retrieval run of a copy of the tiny bundle: the copy, the store, the run."""
    dataset = tmp_path / "bundle.yaml"
    shutil.copy(BUNDLE, dataset)
    db = tmp_path / "runs.db"
    cli_output(["evaluate", str(dataset), "-s", "lexical", "--store", str(db), "--quiet"])
    with SuiteRunStore(db) as store:
        run_id = store.list_runs(1)[0]["run_id"]
    return dataset, db, run_id


def _page(db: Path, url: str, reviewer: str | None = None) -> str:
    with TestClient(create_app(db, reviewer=reviewer)) as client:
        r = client.get(url)
    assert r.status_code == 200, r.text[:2000]
    return r.text


def _item_url(run_id: str) -> str:
    return f"/runs/{run_id}/item?" + urlencode(
        {"subject": "lexical", "task": "retrieval", "item": "q1"}
    )


def _review_url(run_id: str) -> str:
    query = {"run": run_id, "subject": "lexical", "task": "retrieval", "item": "q1"}
    return "/review/item?" + urlencode(query)


def test_the_store_leaves_the_text_out_and_the_pages_read_it_back(
    run: tuple[Path, Path, str],
) -> None:
    _dataset, db, run_id = run
    with SuiteRunStore(db) as store:
        (item,) = [it for it in store.item_records(run_id) if it.item_id == "q1"]
    assert all("text" not in h for h in item.output)  # what makes the pages read it back
    for url, reviewer in ((_item_url(run_id), None), (_review_url(run_id), "alice")):
        html = _page(db, url, reviewer)
        assert f"<td>m1</td><td>{TEXT}</td>" in html, url
        assert "text not kept" not in html


def test_a_changed_dataset_shows_no_text_and_says_why(run: tuple[Path, Path, str]) -> None:
    dataset, db, run_id = run
    dataset.write_text(dataset.read_text().replace(TEXT, "Deploys go out on Fridays"))
    for url, reviewer in ((_item_url(run_id), None), (_review_url(run_id), "alice")):
        html = _page(db, url, reviewer)
        assert "Fridays" not in html, url
        assert TEXT not in html.split("Ranked hits")[1], url
        assert "text not kept: the dataset changed since the run" in html, url


def test_a_moved_dataset_says_where_it_was(run: tuple[Path, Path, str]) -> None:
    dataset, db, run_id = run
    dataset.unlink()
    html = _page(db, _item_url(run_id))
    assert f"text not kept: the dataset is no longer at {dataset}" in html


@pytest.mark.parametrize("fmt", ["jsonl", "json", "csv", "parquet"])
def test_runs_export_says_why_a_hit_has_no_text(
    run: tuple[Path, Path, str], fmt: str, tmp_path: Path
) -> None:
    """The item page and the report said why a hit had no text (the dataset moved); `runs
    export` left the text out without a word. It says the same reason, once per task."""
    dataset, db, run_id = run
    dataset.rename(tmp_path / "moved.yaml")
    out = tmp_path / f"items.{fmt}"
    argv = ["runs", "export", run_id, "--store", str(db), "--format", fmt, "--out", str(out)]
    err = cli_output(argv, with_stderr=True)
    why = f"text not kept: the dataset is no longer at {dataset}"
    assert err.count(f"note: task retrieval: hit {why}") == 1, err
    assert why in _page(db, _item_url(run_id))


def test_the_html_report_shows_the_hits_texts(run: tuple[Path, Path, str], tmp_path: Path) -> None:
    _dataset, db, run_id = run
    out = tmp_path / "report.html"
    cli_output(["report", run_id, "--store", str(db), "--out", str(out)])
    assert f"<td>m1</td><td>{TEXT}</td>" in out.read_text()


@pytest.mark.parametrize("fmt", ["jsonl", "json", "csv"])
def test_runs_export_rows_carry_the_hits_texts(run: tuple[Path, Path, str], fmt: str) -> None:
    _dataset, db, run_id = run
    out = cli_output(["runs", "export", run_id, "--store", str(db), "--format", fmt])
    assert TEXT in out


def test_a_bundle_keeps_the_run_as_stored(run: tuple[Path, Path, str]) -> None:
    _dataset, db, run_id = run
    out = cli_output(["runs", "export", run_id, "--store", str(db), "--format", "bundle"])
    assert TEXT not in out.split('"items"')[1]


def test_a_suite_s_dataset_is_found_beside_the_suite(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A suite names its dataset relative to itself: read back from there, wherever the
    viewer is started."""
    where = tmp_path / "suite"
    where.mkdir()
    shutil.copy(BUNDLE, where / "tiny.yaml")
    suite = {
        "name": "tiny-suite",
        "subjects": {"lexical": {"reference": {"mode": "lexical"}}},
        "tasks": [
            {
                "name": "retrieval",
                "kind": "retrieval",
                "dataset": "tiny.yaml",
                "k": 2,
                "evaluators": [{"retrieval": "Recall@2"}],
            }
        ],
    }
    (where / "suite.yaml").write_text(yaml.safe_dump(suite))
    db = tmp_path / "runs.db"
    cli_output(["run", str(where / "suite.yaml"), "--store", str(db), "--json"])
    with SuiteRunStore(db) as store:
        run_id = store.list_runs(1)[0]["run_id"]
    monkeypatch.chdir(tmp_path)
    assert f"<td>m1</td><td>{TEXT}</td>" in _page(db, _item_url(run_id))


def test_a_runs_report_reads_its_dataset_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`evaluate --out` wrote report.html by reading and hashing the dataset the run had just
    read (LoCoMo: 0.2 s of a 2.6 CPU-s evaluate): the texts the run read are kept for it."""
    import memgauge.data.readers as readers

    dataset = tmp_path / "bundle.yaml"
    shutil.copy(BUNDLE, dataset)
    reads: list[Path] = []
    real = readers.load_retrieval_source

    def counted(path: Path, *args: object, **kwargs: object) -> object:
        reads.append(path)
        return real(path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(readers, "load_retrieval_source", counted)  # the report's own read
    out = tmp_path / "report"
    cli_output(["evaluate", str(dataset), "-s", "lexical", "--out", str(out), "--quiet"])
    assert TEXT in (out / "report.html").read_text()
    assert reads == []


def test_a_suite_built_in_code_finds_its_dataset_where_the_run_read_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A suite without a file (the API's, an optimization's candidates) names its dataset
    relative to the run's `base`: read back from where the run read it, not from the
    directory the viewer is started in."""
    from memgauge import api
    from memgauge.runs.hit_texts import hit_texts
    from memgauge.runs.suite import Suite

    where = tmp_path / "suite"
    where.mkdir()
    shutil.copy(BUNDLE, where / "tiny.yaml")
    task = {"name": "retrieval", "kind": "retrieval", "dataset": "tiny.yaml", "k": 2}
    suite = Suite.model_validate(
        {
            "name": "tiny-suite",
            "subjects": {"lexical": {"reference": {"mode": "lexical"}}},
            "tasks": [{**task, "evaluators": [{"retrieval": "Recall@2"}]}],
        }
    )
    db = tmp_path / "runs.db"
    report = api.run_suite(suite, store=db, base=where)
    monkeypatch.chdir(tmp_path)
    with SuiteRunStore(db) as store:
        run = store.get_run(report.run_id)
    assert run is not None
    texts = hit_texts(run)
    assert texts.missing == {}
    assert texts.texts["retrieval"]["m1"] == TEXT


def test_a_dataset_given_in_memory_says_so(tmp_path: Path) -> None:
    from memgauge import api
    from memgauge.runs.hit_texts import hit_texts

    db = tmp_path / "runs.db"
    report = api.evaluate(api.load_dataset(BUNDLE), ["lexical"], store=db)
    with SuiteRunStore(db) as store:
        run = store.get_run(report.run_id)
    assert run is not None
    assert hit_texts(run).note("retrieval") == (
        "text not kept: the run's dataset was given in memory, not read from a file"
    )


def test_a_dataset_directory_edited_in_place_shows_no_text_and_says_why(tmp_path: Path) -> None:
    """A directory's own mtime and size stay as they were when a file in it is rewritten in
    place: the run's texts, kept for its report, were shown as the dataset's although its
    memories.jsonl no longer held them."""
    from memgauge import api
    from memgauge.data.io import save_retrieval_dataset

    dataset = tmp_path / "tiny"
    save_retrieval_dataset(api.load_dataset(BUNDLE), dataset)
    db = tmp_path / "runs.db"
    cli_output(["evaluate", str(dataset), "-s", "lexical", "--store", str(db), "--quiet"])
    with SuiteRunStore(db) as store:
        run_id = store.list_runs(1)[0]["run_id"]
    memories = dataset / "memories.jsonl"
    memories.write_text(memories.read_text().replace(TEXT, "Deploys go out on Fridays"))
    html = _page(db, _item_url(run_id))
    assert TEXT not in html.split("Ranked hits")[1]
    assert "text not kept: the dataset changed since the run" in html


def test_a_dataset_broken_on_every_line_gives_a_one_line_reason(
    run: tuple[Path, Path, str], tmp_path: Path
) -> None:
    """A run's dataset overwritten with thousands of bad lines: the reason each hit showed (item
    page, report, export) listed every problem, megabytes beside every item. It names the
    first, counts the rest and says which command lists them."""
    dataset, db, run_id = run
    dataset.write_text("memories:\n" + "  - {tier: x}\n" * 2_000)
    html = _page(db, _item_url(run_id))
    why = html.split("text not kept: ")[1].split("<")[0]
    assert len(why) < 500, why[:1000]
    assert f"the dataset at {dataset} cannot be read now (" in why, why
    assert f"more problems: `memgauge validate {dataset}`)" in why, why
    err = cli_output(["runs", "export", run_id, "--store", str(db)], with_stderr=True)
    (note,) = [line for line in err.splitlines() if line.startswith("note:")]
    assert len(note) < 500, note[:1000]
    assert f"more problems: `memgauge validate {dataset}`)" in note, note
