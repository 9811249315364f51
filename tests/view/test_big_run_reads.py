"""What the viewer reads of a big run without reading all of it (revision 0022): the items
page's `changed` and `regressed` against a baseline compare verdict by verdict only the items
whose verdict digests differ (`suite_run_items.verdicts_digest`) and find what comparing every
verdict found; each measure's values kept with the summary (`suite_run_values`) are those its
verdicts make; both are written with the run and by the upgrade for the runs stored before; a
search matched in SQL finds what matching every value in Python found."""

from __future__ import annotations

import json
import sqlite3
import zlib
from dataclasses import replace
from pathlib import Path

import pytest
import sqlalchemy as sa
from viewer_store import ViewerStore

from memgauge.store import run_pages, search_docs, stored_forms
from memgauge.store.engine import open_engine, upgrade
from memgauge.store.item_rows import measure_values
from memgauge.store.revisions.versions import r0023_search_docs as r0023
from memgauge.store.run_pages import SHOWS, ItemQuery, RunReader
from memgauge.store.url import store_url


def _pages(db: Path, run: str, baseline: str) -> dict[str, tuple[int, list[str]]]:
    """Each filter's count and item ids against `baseline`."""
    out = {}
    with RunReader(db) as reader:
        for show in SHOWS:
            page = reader.item_page(run, ItemQuery(show=show, baseline=baseline, per_page=100))
            out[show] = (page.total, [r.item_id for r in page.rows])
    return out


def test_changed_and_regressed_find_what_every_verdict_compared_finds(
    viewer_store: ViewerStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    a, b = viewer_store.judged
    db = Path(viewer_store.path)
    fast = {(x, y): _pages(db, x, y) for x, y in ((b, a), (a, b), (b, b))}
    # every verdict compared, whatever the digests say
    every = {k: v.replace(run_pages._MAY_DIFFER, "1 = 1") for k, v in run_pages._WHERE.items()}
    assert every != run_pages._WHERE
    monkeypatch.setattr(run_pages, "_WHERE", every)
    slow = {(x, y): _pages(db, x, y) for x, y in ((b, a), (a, b), (b, b))}
    assert fast == slow
    assert fast[(b, a)]["regressed"] == (4, ["q2", "q4", "q8", "q10"])
    assert fast[(b, a)]["changed"][0] >= 4
    assert fast[(b, b)]["changed"] == (0, [])


def _digests(db: Path) -> dict[tuple[str, str, str, str], str | None]:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        rows = conn.execute(
            "SELECT run_id, subject, task, item_id, verdicts_digest FROM suite_run_items"
        ).fetchall()
    finally:
        conn.close()
    return {r[:4]: r[4] for r in rows}


def _values(db: Path) -> dict[str, object]:
    """Each run's stored values per measure, and those its verdicts make."""
    with RunReader(db) as reader:
        runs = [r[0] for r in reader._sql("SELECT run_id FROM suite_runs")]
        stored = {
            run: {k: (ids, list(v)) for k, (ids, v) in reader.measure_values(run).items()}
            for run in runs
        }
        made = {
            run: {
                k: (ids, list(v))
                for k, (ids, v) in measure_values(
                    reader._sql(
                        "SELECT subject, task, evaluator, item_id, value, error"
                        " FROM suite_run_scores WHERE run_id = :r",
                        {"r": run},
                    )
                ).items()
            }
            for run in runs
        }
        n_stored = reader._sql("SELECT COUNT(*) FROM suite_run_values")[0][0]
    return {"stored": stored, "made": made, "n": n_stored}


def test_each_finished_item_has_its_digest_recorded_and_upgraded(
    viewer_store: ViewerStore, tmp_path: Path
) -> None:
    db = Path(viewer_store.path)
    recorded = _digests(db)
    values = _values(db)
    assert values["n"]
    assert repr(values["stored"]) == repr(values["made"])  # NaN too
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    statuses = {
        (r[0], r[1], r[2], r[3]): r[4]
        for r in conn.execute("SELECT run_id, subject, task, item_id, status FROM suite_run_items")
    }
    conn.close()
    finished = {k for k, s in statuses.items() if s in ("completed", "failed")}
    assert "failed" in statuses.values()
    assert all(recorded[k] for k in finished)
    # same verdicts, same digest: the runs' items that passed (or failed) alike
    assert len(set(recorded.values())) < len(finished)
    # the store as it was before revision 0022, upgraded
    copy = tmp_path / "old.db"
    source, target = sqlite3.connect(db), sqlite3.connect(copy)
    source.backup(target)
    source.close()
    target.executescript(
        "DROP TABLE suite_run_queries; DROP TABLE suite_run_values;"
        " ALTER TABLE suite_run_items DROP COLUMN verdicts_digest;"
        " DROP TABLE suite_run_search; DROP TABLE suite_run_compared;"
        " UPDATE alembic_version SET version_num = '0021';"
    )
    target.close()
    url = store_url(copy)
    engine = open_engine(url)
    try:
        assert upgrade(engine, url) == ["0022", "0023", "0024"]
    finally:
        engine.dispose()
    upgraded = _digests(copy)
    # each item's search document, recorded and filled by the upgrade alike (revision 0023)
    documents = (
        "SELECT run_id, subject, task, item_id, doc FROM suite_run_search ORDER BY 1, 2, 3, 4"
    )
    recorded_docs = sqlite3.connect(db).execute(documents).fetchall()
    assert len(recorded_docs) == len(statuses)
    assert sqlite3.connect(copy).execute(documents).fetchall() == recorded_docs
    assert repr(_values(copy)) == repr(values)
    assert {k: upgraded[k] for k in finished} == {k: recorded[k] for k in finished}
    assert all(upgraded[k] is None for k in statuses.keys() - finished)


def _search_store(db: Path) -> str:
    """A run whose searchable values are each a way SQLite's `LIKE` and Python's matching could
    part: case, characters past ASCII (stored raw, or as JSON escapes), deflated outputs, the
    `LIKE` pattern's own characters."""
    from memgauge.data.records import ItemRecord, RunPlan, RunRecord, ScoreRecord
    from memgauge.store.suite_runs import SuiteRunStore

    run = RunRecord(
        run_id="search",
        suite_name="s",
        status="queued",
        created_at="2000-01-01T00:00:00+00:00",
        suite_sha256="0" * 64,
        suite={"name": "s"},
    )
    texts = [
        ("Apple Pie", "plain", "reason: APPLE"),
        ("Café au lait", "\u212aelvin sign", "İstanbul"),
        ("50%_off!", "x" * 600 + " Needle_X% " + "y" * 600, "no"),
        ("back\\u00e9slash", "short", "a_b"),
        ("nothing", "nothing", "Zürich 50% off"),
    ]
    items = [
        ItemRecord(
            subject="sys",
            task="t",
            item_id=f"i{n}",
            seq=n,
            category="Cat" if n % 2 else None,
            input={"text": text},
            expected={"m": 1},
        )
        for n, (text, _out, _reason) in enumerate(texts)
    ]
    with SuiteRunStore(db) as store:
        store.create_run(
            run, RunPlan({"sys": {}}, [{"task": "t", "kind": "qa", "n_items": 5}], items)
        )
        store.claim_run("search", {"token": "t", "pid": 1, "host": "h"}, expect=None)
        done = [
            it.model_copy(
                update={
                    "status": "completed",
                    "output": out,
                    "scores": [ScoreRecord(evaluator="e", value=1.0, reason=reason)],
                }
            )
            for it, (_text, out, reason) in zip(items, texts, strict=True)
        ]
        store.record_items("search", done)
        store.set_status("search", "completed", owner="t")
    return "search"


NEEDLES = [
    "apple",
    "café",
    "caf",
    "\u00e9",
    "k",
    "\u212a",
    "kelvin",
    "i\u0307",
    "istanbul",
    "stanbul",
    "%",
    "_",
    "!",
    "50%_off!",
    "needle_x%",
    "\\u00e9",
    "zür",
    "cat",
    "i3",
    "zzz",
]


def test_a_search_matches_what_python_matched_value_by_value(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "r.db"
    run = _search_store(db)

    def found() -> dict[str, list[str]]:
        with RunReader(db) as reader:
            return {
                n: [r.item_id for r in reader.item_page(run, ItemQuery(q=n, per_page=50)).rows]
                for n in NEEDLES
            }

    fast = found()
    # every value read and matched in Python (`_has`), as before
    monkeypatch.setattr(run_pages, "_matches", lambda c: f"{run_pages.HAS_FUNCTION}({c}, :needle)")
    slow = found()
    assert fast == slow
    assert fast["apple"] == ["i0"]
    assert fast["café"] == ["i1"]  # its input is stored as JSON's escapes
    assert fast["kelvin"] == ["i1"]  # the Kelvin sign is a k to Python
    assert fast["needle_x%"] == ["i2"]  # in a deflated output
    assert fast["%"] == ["i2", "i4"]
    assert fast["zzz"] == []


#: what a search found before the searchable copy (revision 0023), pinned: each needle's count
#: and the ids of its first two pages of two items, per sort and filter
SEARCH_GOLDEN = Path(__file__).with_name("search_golden.json")
MORE_NEEDLES = ["I", " pie", "APPLE", "\u00c9", "e", "\\", '"', "u00e9", "é", "yyy", "xy"]
MORE_NEEDLES += ['{"text"', "r", "\x00", "a\x00b", "needle_x% y", "x" * 600, " "]
VIEWS = (("seq", False, "all"), ("item", True, "all"), ("score", False, "failures"))
VIEWS += (("seq", False, "passes"), ("status", True, "errors"))


def searched(db: Path, runs: dict[str, str], needles: list[str]) -> dict[str, list[object]]:
    """Each (run, needle, view)'s count and its first two pages' item ids (`runs`: label -> id)."""
    out: dict[str, list[object]] = {}
    with RunReader(db) as reader:
        for label, run in runs.items():
            for n in needles:
                for sort, desc, show in VIEWS:
                    ids: list[str] = []
                    for page in (1, 2):
                        query = ItemQuery(q=n, sort=sort, desc=desc, show=show, per_page=2)
                        found = reader.item_page(run, replace(query, page=page))
                        ids += [f"{r.subject}/{r.item_id}" for r in found.rows]
                    out[f"{label}|{n!r}|{sort}|{desc}|{show}"] = [found.total, ids]
    return out


def test_a_search_finds_what_it_found_before_the_searchable_copy(
    viewer_store: ViewerStore, tmp_path: Path
) -> None:
    db = tmp_path / "r.db"
    run = _search_store(db)
    found = searched(db, {"search": run}, NEEDLES + MORE_NEEDLES)
    a, b = viewer_store.judged
    runs = {"a": a, "b": b, "retrieval": viewer_store.retrieval, "hostile": viewer_store.hostile}
    found |= searched(Path(viewer_store.path), runs, ["the", "q1", "a", "yes", "<svg", "é"])
    golden = json.loads(SEARCH_GOLDEN.read_text())
    assert found == golden
    conn = sqlite3.connect(db)
    assert conn.execute("SELECT COUNT(*) FROM suite_run_search").fetchone() == (5,)
    # an item without its document (here i1 and i3) is matched value by value, as before
    conn.execute("DELETE FROM suite_run_search WHERE item_id IN ('i1', 'i3')")
    conn.commit()
    part = searched(db, {"search": run}, NEEDLES + MORE_NEEDLES)
    conn.execute("DELETE FROM suite_run_search")
    conn.commit()
    conn.close()
    assert part == searched(db, {"search": run}, NEEDLES + MORE_NEEDLES)
    assert part == {k: v for k, v in golden.items() if k.startswith("search|")}


#: stored values of every kind `_has` reads: text, escapes (a lone surrogate's too), a broken
#: escape, raw and deflated bytes (ASCII, and with an escape), a number
VALUES = [None, "Café", "caf\\u00e9", '{"a":"caf\\u00e9 K\\u212a"}', '"\\ud800x"', "İstanbul"]
VALUES += ['"bad \\u json', b"plain bytes", zlib.compress(("x" * 600 + " Needle_X% ").encode())]
VALUES += [zlib.compress(b'{"t":"Z\\u00fcrich"}'), "tab\tline\nend", 7]
#: JSON strings with a double quote and a backslash (escaped as stored), deflated too
VALUES += ['{"t":"say \\"Hi\\" C:\\\\Dir"}', zlib.compress(b'["a\\\\b", "\\"q\\" \\u00e9"]')]


@pytest.mark.parametrize("value", VALUES)
def test_a_document_holds_a_needle_exactly_when_has_finds_it_in_the_value(value: object) -> None:
    needles = [*NEEDLES, *MORE_NEEDLES, "caf\u00e9", "\u212a", "k\u212a", "ürich"]
    needles += ["needle_x% ", "x\n", "\t", "7", '"t":"z']
    needles += ['"hi"', "c:\\dir", "c:\\\\dir", "a\\b", '"q" é', '\\"q\\"', 'hi" c']
    doc = search_docs.document([value])
    assert doc is not None or value == '"\\ud800x"'
    for needle in (n.strip().lower() for n in needles):
        if not needle or doc is None:
            continue
        assert (needle in doc) == bool(run_pages._has(value, needle)), needle  # type: ignore[arg-type]


#: documents and needles with GLOB's special characters, and not: what `instr` finds, GLOB's
#: pattern of the needle finds
GLOB_TEXTS = ["a*b?c[d]e", "[x]", "x]", "**", "?", "caf\u00e9 \u212a", "\\[*?]", "100%_!", "ab"]
GLOB_NEEDLES = ["*", "?", "[", "]", "[x]", "a*b", "b?c", "[d]", "d]", "^", "[*", "*?", "%_", "!"]
GLOB_NEEDLES += ["caf\u00e9", "\u212a", "\\", "x", "ab", "a", "b", "[!x]", "[^x]", "c[d"]


@pytest.mark.parametrize("text", GLOB_TEXTS)
def test_a_documents_glob_pattern_finds_a_needle_exactly_where_instr_does(text: str) -> None:
    conn = sqlite3.connect(":memory:")
    for needle in GLOB_NEEDLES:
        pattern = run_pages._glob_containing(needle)
        ((globbed, found),) = conn.execute(
            "SELECT ? GLOB ?, instr(?, ?) > 0", (text, pattern, text, needle)
        ).fetchall()
        assert bool(globbed) == bool(found) == (needle in text), (text, needle)


def test_an_items_document_follows_its_rows_through_a_retry(tmp_path: Path) -> None:
    """A failed item (no verdict: its reason leaves the document) put back in the queue with a
    retryable verdict's item, then recorded again: each document is its rows' as stored."""
    from memgauge.data.records import Failure, ScoreRecord
    from memgauge.store.search_docs import refill
    from memgauge.store.suite_runs import SuiteRunStore

    db = tmp_path / "r.db"
    run = _search_store(db)
    with SuiteRunStore(db) as store:
        items = store.item_records(run)
        failed = items[0].model_copy(
            update={
                "status": "failed",
                "output": None,
                "scores": [],
                "failures": [Failure(stage="answer", kind="Boom", message="oops")],
            }
        )
        retry = ScoreRecord(evaluator="e", value=None, reason="Judge Down", detail={"retryable": 1})
        store.record_items(run, [failed, items[1].model_copy(update={"scores": [retry]})])
        assert _searched_ids(db, run, "reason: apple") == []
        assert _searched_ids(db, run, "judge down") == ["i1"]
        assert store.unfinished_items(run, retry_failed=True) == {
            ("sys", "t", "i0"),
            ("sys", "t", "i1"),
        }
        assert _searched_ids(db, run, "judge down") == []
        again = items[0].model_copy(
            update={"scores": [ScoreRecord(evaluator="e", value=1.0, reason="Pear")]}
        )
        store.record_items(run, [again])
        assert _searched_ids(db, run, "pear") == ["i0"]
        with store._write() as c:
            kept = sorted(c.execute(sa.text("SELECT * FROM suite_run_search")).all())
            refill(c, run)
            assert sorted(c.execute(sa.text("SELECT * FROM suite_run_search")).all()) == kept


def _searched_ids(db: Path, run: str, needle: str) -> list[str]:
    with RunReader(db) as reader:
        return [r.item_id for r in reader.item_page(run, ItemQuery(q=needle)).rows]


QUOTED = 'say "Quoted" in C:\\Dir'


def _quoted_store(db: Path) -> str:
    """A run whose input, output and verdict reason hold a double quote and a backslash (JSON
    stores them escaped: `\\"`, `\\\\`)."""
    from memgauge.data.records import ItemRecord, RunPlan, RunRecord, ScoreRecord
    from memgauge.store.suite_runs import SuiteRunStore

    run = RunRecord(
        run_id="quoted",
        suite_name="s",
        status="queued",
        created_at="2000-01-01T00:00:00+00:00",
        suite_sha256="0" * 64,
        suite={"name": "s"},
    )
    values = [({"text": QUOTED}, "plain", "no"), ({"text": "plain"}, QUOTED, "no")]
    values += [({"text": "plain"}, "x" * 700 + QUOTED, "no"), ({"text": "plain"}, "no", QUOTED)]
    values += [({"text": 'say \\"quoted\\"'}, "no", "no")]  # the escaped form, as written
    items = [
        ItemRecord(subject="sys", task="t", item_id=f"i{n}", seq=n, input=inp, expected={})
        for n, (inp, _out, _reason) in enumerate(values)
    ]
    with SuiteRunStore(db) as store:
        store.create_run(
            run, RunPlan({"sys": {}}, [{"task": "t", "kind": "qa", "n_items": 5}], items)
        )
        store.claim_run("quoted", {"token": "t", "pid": 1, "host": "h"}, expect=None)
        done = [
            it.model_copy(
                update={
                    "status": "completed",
                    "output": {"answer": out},
                    "scores": [ScoreRecord(evaluator="e", value=1.0, reason=reason)],
                }
            )
            for it, (_inp, out, reason) in zip(items, values, strict=True)
        ]
        store.record_items("quoted", done)
        store.set_status("quoted", "completed", owner="t")
    return "quoted"


QUOTED_FOUND = {
    '"quoted"': ["i0", "i1", "i2", "i3"],
    "c:\\dir": ["i0", "i1", "i2", "i3"],
    '"quoted" in c:\\dir': ["i0", "i1", "i2", "i3"],
    # as stored, JSON's escapes written out, still found where they are
    '\\"quoted\\"': ["i0", "i1", "i2", "i4"],
    "say \\": ["i0", "i1", "i2", "i4"],
}


def _forms_before_0024(text: str) -> list[str]:
    """The documents' forms as revision 0023 shipped them: the text, and its decoded JSON
    where it has a `\\uXXXX` escape (no string with a quote or a backslash as shown)."""
    out = [text.lower()]
    if "\\u" in text:
        out.append(json.dumps(json.loads(text), ensure_ascii=False).lower())
    return out


def test_a_needle_with_a_double_quote_or_a_backslash_is_found_as_the_page_shows_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Documents, values matched one by one (a store without documents), and a store whose
    documents were made before (revision 0023's form) upgraded: the same items."""
    db = tmp_path / "r.db"
    run = _quoted_store(db)
    assert {n: _searched_ids(db, run, n) for n in QUOTED_FOUND} == QUOTED_FOUND
    for value in (QUOTED, '"x"', "a\\b"):
        stored = json.dumps({"text": value})
        assert run_pages._has(stored, value.lower()) == 1
        assert value.lower() in (search_docs.document([stored]) or "")
    # no documents: each value matched by `_has`
    bare = tmp_path / "bare.db"
    source, target = sqlite3.connect(db), sqlite3.connect(bare)
    source.backup(target)
    target.execute("DELETE FROM suite_run_search")
    target.commit()
    assert {n: _searched_ids(bare, run, n) for n in QUOTED_FOUND} == QUOTED_FOUND
    # documents as revision 0023 made them, upgraded
    old = tmp_path / "old.db"
    target = sqlite3.connect(old)
    source.backup(target)
    source.close()
    target.execute("DELETE FROM suite_run_search")
    target.commit()
    target.close()
    engine = sa.create_engine(f"sqlite:///{old}")
    with monkeypatch.context() as m, engine.begin() as c:
        # 0023 fills with the rules of `stored_forms`, which are 0024's now: as it shipped
        m.setattr(stored_forms, "text_forms", _forms_before_0024)
        r0023._fill(c)
    engine.dispose()
    target = sqlite3.connect(old)
    assert _searched_ids(old, run, '"quoted"') == ["i3"]  # the reason, stored as it is
    target.execute("DROP TABLE suite_run_compared")
    target.execute("UPDATE alembic_version SET version_num = '0023'")
    target.commit()
    target.close()
    url = store_url(old)
    engine = open_engine(url)
    try:
        assert upgrade(engine, url) == ["0024"]
    finally:
        engine.dispose()
    assert {n: _searched_ids(old, run, n) for n in QUOTED_FOUND} == QUOTED_FOUND
    documents = (
        "SELECT run_id, subject, task, item_id, doc FROM suite_run_search ORDER BY 1, 2, 3, 4"
    )
    assert (
        sqlite3.connect(old).execute(documents).fetchall()
        == sqlite3.connect(db).execute(documents).fetchall()
    )
