"""One measure has one value and one n, whichever way the user asks for it.

One small dataset (with a query whose only judgment lies below the relevance threshold, a
query with nothing relevant at all, a query the memory finds nothing for, and a query whose
search fails) is evaluated by `memgauge evaluate`, by `memgauge run` on the equivalent suite,
and through the pytest plug-in; and each run is read back through `runs show` (text and
`--json`), `gate --json`, `--junit`, `memgauge report` and the viewer's run page. Every view of
every measure must give the value and the n (scored, failed) of `evaluate`'s result.json:
exactly where JSON carries the number, to the printed precision where only text does.
"""

from __future__ import annotations

import html
import json
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from starlette.testclient import TestClient
from tests.helpers import QUIET_PLUGINS, last_json
from tests.one_value import (
    Key,
    Seen,
    Tables,
    Views,
    cli,
    disagreements,
    measures_of,
    terminal_tables,
)

from memgauge.cli.main import main
from memgauge.view.app import create_app

SUBJECTS = Path(__file__).resolve().parents[1] / "data" / "subjects"
SUBJECT = "python:flaky_memory:FlakyMemory@mem"
MEASURES = ["nDCG@10", "Recall@5", "RR@10", "P@5", "AP@20"]
TASK = "retrieval"  # evaluate's task name, given to the suite's task too

MEMORIES = {
    "m01": "The billing service stores invoices in PostgreSQL.",
    "m02": "Invoices are numbered per tenant with a yearly prefix.",
    "m03": "The API gateway listens on port 8080.",
    "m04": "Deploys run through the staging cluster first.",
    "m05": "Password hashing uses Argon2id with a per-user salt.",
    "m06": "Sessions expire after thirty minutes of inactivity.",
    "m07": "The search index is rebuilt every night at two.",
    "m08": "Customer emails are sent through the mail relay.",
    "m09": "Feature flags are read from the flags table.",
    "m10": "Backups of the invoices database are kept for ninety days.",
    "m11": "The mobile app caches the dashboard for five minutes.",
    "m12": "Logs are shipped to the central log store.",
}
#: query id -> (text, {memory: grade}); relevant = grade >= 2 (the default threshold)
QUERIES = {
    "q01": ("Where are invoices stored?", {"m01": 3, "m10": 1, "m02": 2}),
    "q02": ("Which port does the API gateway listen on?", {"m03": 3}),
    "q03": ("How are passwords hashed?", {"m05": 3, "m06": 0}),
    "q04": ("When do sessions expire?", {"m06": 3}),
    "q05": ("When is the search index rebuilt?", {"m07": 2, "m12": 1}),
    "q06": ("How are customer emails sent?", {"m08": 3, "m11": 0}),
    "q07": ("Where are feature flags read from?", {"m09": 3}),
    "q08": ("How long are backups of invoices kept?", {"m10": 3, "m01": 1}),
    "q09": ("How are invoices numbered?", {"m02": 3, "m01": 1}),
    # nothing relevant: a grade-1 judgment only (nDCG still gains from it), grade 0 only
    "q10": ("What does the mobile app cache?", {"m11": 1}),
    "q11": ("Where are logs shipped?", {"m12": 0, "m04": 0}),
    # the memory finds nothing (no word in common): every measure 0
    "q12": ("zebra quantum saxophone", {"m04": 2}),
    # the search raises: a failed item, never a score
    "q13": ("[fail] how do deploys run", {"m04": 3}),
}
N_FAILED = 1
N_SCORED = len(QUERIES) - N_FAILED
#: the header of `runs compare A B`'s table of paired rows, as `one_value.terminal_tables` names it
COMPARED = "subject | task | evaluator | A (baseline) | B | delta B - A | 95% CI | p (Holm) | n"


def _dataset(root: Path) -> Path:
    ds = root / "dataset"
    ds.mkdir()
    (ds / "dataset.yaml").write_text("name: one-value\n")
    lines = {
        "memories": [{"id": m, "text": t} for m, t in MEMORIES.items()],
        "queries": [{"id": q, "text": t} for q, (t, _) in QUERIES.items()],
        "judgments": [
            {"query_id": q, "memory_id": m, "grade": g}
            for q, (_, grades) in QUERIES.items()
            for m, g in grades.items()
        ],
    }
    for name, rows in lines.items():
        (ds / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return ds


def _suite(root: Path, ds: Path) -> Path:
    suite = {
        "name": "one-value",
        # room for items failed by an evaluator (what `no_relevant: fail` did by default):
        # the run completes and the comparison shows the values that differ
        "max_failure_rate": 0.5,
        "subjects": {"mem": {"python": {"target": "flaky_memory:FlakyMemory"}}},
        "tasks": [
            {
                "name": TASK,
                "kind": "retrieval",
                "dataset": str(ds),
                "k": 20,  # evaluate's default depth
                "evaluators": [{"retrieval": m} for m in MEASURES],
            }
        ],
    }
    path = root / "suite.yaml"
    path.write_text(yaml.safe_dump(suite))
    return path


def _fail_under() -> list[str]:
    """A met target on every measure: JUnit then has one case per measure with its value."""
    return [a for m in MEASURES for a in ("--fail-under", f"mem/{TASK}/{m}=0")]


# --- reading each view ----------------------------------------------------------------------


def _result_json(path: Path) -> dict[Key, Seen]:
    result = json.loads(path.read_text())
    (system,) = [s for s in result["systems"] if s["name"] == "mem"]
    return {
        ("mem", m): Seen(s["value"], n_scored=s["n_scored"], n_failed=s["n_failed"])
        for m, s in system["metrics"].items()
    }


def _rows(
    rows: list[dict[str, Any]], subject: str = "mem", measures: list[str] = MEASURES
) -> dict[Key, Seen]:
    """Rows of `run --json` / `runs show --json` (`results`): one per evaluator."""
    return {
        (subject, r["evaluator"]): Seen(r["mean"], n_scored=r["n_scored"], n_failed=r["n_failed"])
        for r in rows
        if r["subject"] == subject and r["task"] == TASK and r["evaluator"] in measures
    }


def _aggregate(
    summary: dict[str, Any], subject: str = "mem", measures: list[str] = MEASURES
) -> dict[Key, Seen]:
    """The ir aggregate's measures in a stored summary (what gate, history and targets read)."""
    return {
        key: seen
        for key, seen in measures_of(summary, "ir").items()
        if key[0] == subject and key[1] in measures
    }


_CELL = re.compile(r"(n/a|\d+\.\d+)")


def _number(cell: str) -> str:
    """The value a table cell starts with (`0.765 [0.66, 0.86]` -> `0.765`), or `n/a`."""
    found = _CELL.match(cell)
    assert found, cell
    return found.group(1)


def _terminal_table(text: str, first_col: str) -> dict[Key, Seen]:
    """A rich table printed on the terminal: the row of subject `mem` in the retrieval measures'
    tables (`evaluate`, a measure per column) or the rows whose cells are `subject | task | evaluator | mean | CI | pass | scored | failed`."""
    out: dict[Key, Seen] = {}
    header: list[str] = []
    for line in text.splitlines():
        cells = [c.strip() for c in re.split(r"[│┃]", line)[1:-1]]
        if first_col == "measure" and line.startswith("┃") and cells[:1] == ["system"]:
            header = cells  # the retrieval measures' table, a system per row
        elif first_col == "measure" and header and cells[:1] == ["mem"]:
            found = {h: c for h, c in zip(header, cells, strict=True) if h in MEASURES}
            out.update({("mem", h): Seen(_number(c), fmt=".3f") for h, c in found.items()})
        mine = len(cells) == 8 and (cells[0], cells[1]) == ("mem", TASK)
        if first_col == "subject" and mine and cells[2] in MEASURES:
            out[("mem", cells[2])] = Seen(cells[3], None, ".3f", int(cells[6]), int(cells[7]))
    return out


def _markdown(text: str) -> dict[Key, Seen]:
    lines = text.splitlines()
    i = next(i for i, line in enumerate(lines) if line.startswith("| system |"))
    header = [c.strip() for c in lines[i].strip("|").split("|")]
    row = next(line for line in lines[i:] if line.startswith("| mem |"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    return {
        ("mem", h): Seen(_number(c), fmt=".3f")
        for h, c in zip(header, cells, strict=True)
        if h in MEASURES
    }


def _junit(path: Path, line: str) -> dict[Key, Seen]:
    """Each case's `value X` (a run's target) or `current X` (a gate's measure), as `.4g`."""
    out: dict[Key, Seen] = {}
    for case in ET.parse(path).getroot().iter("testcase"):
        if case.get("classname") != f"mem.{TASK}":
            continue
        measure = str(case.get("name")).split(" ")[0]
        text = " ".join(
            (el.text or "") + " " + el.get("message", "") for el in case if el is not None
        )
        found = re.search(rf"\b{line} (n/a|[-\d.e+]+)", text)
        if measure in MEASURES and found:
            out[("mem", measure)] = Seen(found.group(1), fmt=".4g")
    return out


def _run_page(html: str) -> Views:
    """The run page (viewer or `memgauge report`): the results grid (evaluators' rows, with n)
    and the retrieval section's summary (the ir aggregate's values)."""
    parser = Tables()
    parser.feed(html)
    grid, summary = parser.tables["grid"], parser.tables["retrieval-summary"]
    column = grid[0].index("mem")
    cells: dict[Key, Seen] = {}
    for row in grid[1:]:
        if row[0] == TASK and row[1] in MEASURES:
            found = re.match(r"(n/a|\d+\.\d+).* n (\d+)(?: · (\d+) failed)?$", row[column])
            assert found, row[column]
            n_failed = int(found.group(3) or 0)
            cells[("mem", row[1])] = Seen(
                found.group(1), None, ".3f", int(found.group(2)), n_failed
            )
    header = summary[0]
    (mem,) = [r for r in summary[1:] if r[0] == "mem"]
    aggregate = {
        ("mem", h): Seen(_number(c), fmt=".3f")
        for h, c in zip(header, mem, strict=True)
        if h in MEASURES
    }
    return {"grid": cells, "retrieval": aggregate}


#: the views of the task's combined score (several evaluators: `run` prints a bold row of it)
COMBINED = "combined:"


def _combined_views(
    seen: Views, shown: dict[str, Any], terminal: str, report: str, viewer: str
) -> None:
    """The combined score of `mem` on the task in `runs show --json` (the reference),
    `runs show`, `memgauge report` and the viewer's run page."""
    (score,) = [
        t["score"] for t in shown["summary"]["tasks"] if (t["subject"], t["task"]) == ("mem", TASK)
    ]
    seen[f"{COMBINED} runs show --json"] = {
        ("mem", "combined"): Seen(
            score["mean"],
            (score["ci_low"], score["ci_high"]),
            None,
            score["n_scored"],
            score["n_failed"],
        )
    }
    for line in terminal.splitlines():
        cells = [c.strip() for c in re.split(r"[│┃]", line)[1:-1]]
        if cells[:3] == ["mem", TASK, "combined"]:
            low, high = re.findall(r"\d+\.\d+", cells[4])
            seen[f"{COMBINED} runs show"] = {
                ("mem", "combined"): Seen(
                    cells[3], (low, high), ".3f", int(cells[6]), int(cells[7])
                )
            }
    for view, html_text in (("memgauge report", report), ("viewer run page", viewer)):
        parser = Tables()
        parser.feed(html_text)
        grid = parser.tables["grid"]
        column = grid[0].index("mem")
        for row in grid[1:]:
            if row[0] == TASK and row[1] == "combined":
                found = re.match(
                    r"(\d+\.\d+) \[(\d+\.\d+), (\d+\.\d+)\].* n (\d+)(?: · (\d+) failed)?$",
                    row[column],
                )
                assert found, row[column]
                seen[f"{COMBINED} {view}"] = {
                    ("mem", "combined"): Seen(
                        found.group(1),
                        (found.group(2), found.group(3)),
                        ".3f",
                        int(found.group(4)),
                        int(found.group(5) or 0),
                    )
                }


def _md_combined(text: str) -> dict[Key, Seen]:
    """`memgauge report --out run.md`'s row of the combined score."""
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip("|").split("|")]
        if cells[:2] == [TASK, "combined"]:
            found = re.match(
                r"(\d+\.\d+) \[(\d+\.\d+), (\d+\.\d+)\] \(n=(\d+)(?:, (\d+) failed)?\)", cells[2]
            )
            assert found, cells[2]
            return {
                ("mem", "combined"): Seen(
                    found.group(1),
                    (found.group(2), found.group(3)),
                    ".3f",
                    int(found.group(4)),
                    int(found.group(5) or 0),
                )
            }
    return {}


# --- the runs, once for the module ----------------------------------------------------------


@pytest.fixture(scope="module")
def views(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Views, Path, Path]]:
    """Every view of the dataset's measures, by name; the dataset and the store."""
    root = tmp_path_factory.mktemp("one-value")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("MEMGAUGE_HOME", str(root / "home"))
        mp.syspath_prepend(str(SUBJECTS))
        ds, db = _dataset(root), str(root / "r.db")
        suite = _suite(root, ds)
        seen: Views = {}

        ev_out = root / "evaluate"
        argv = ["evaluate", str(ds), "-s", SUBJECT, *(a for m in MEASURES for a in ("-m", m))]
        junit = ["--junit", str(root / "e.xml"), *_fail_under()]
        text = cli([*argv, "--out", str(ev_out), "--store", db, "--quiet", *junit])
        seen["evaluate result.json"] = _result_json(ev_out / "result.json")
        (system,) = json.loads((ev_out / "result.json").read_text())["systems"]
        (q10,) = [q for q in system["per_query"] if q["query_id"] == "q10"]
        seen["q10 nDCG@10"] = {("mem", "nDCG@10"): Seen(q10["metrics"]["nDCG@10"])}
        seen["evaluate terminal"] = _terminal_table(text, "measure")
        seen["evaluate summary.md"] = _markdown((ev_out / "summary.md").read_text())
        seen["evaluate report.html"] = _run_page((ev_out / "report.html").read_text())["grid"]
        seen["evaluate --junit"] = _junit(root / "e.xml", "value")
        ev_run = str(json.loads((ev_out / "result.json").read_text())["run_id"])

        text = cli(["run", str(suite), "--store", db])
        seen["run terminal"] = _terminal_table(text, "subject")
        run = [
            *("run", str(suite), "--store", db, "--json", "--junit", str(root / "r.xml")),
            *_fail_under(),
        ]
        last = last_json(cli(run))
        run_id = str(last["run_id"])
        seen["run --json"] = _rows(last["results"])
        seen["run --json: measures"] = {
            ("mem", m["name"]): Seen(m["value"], n_scored=m["n_scored"], n_failed=m["n_failed"])
            for m in last["measures"]
            if (m["subject"], m["task"]) == ("mem", TASK) and m["name"] in MEASURES
        }
        seen["run --junit"] = _junit(root / "r.xml", "value")

        for name, rid in (("run", run_id), ("evaluate", ev_run)):
            shown = last_json(cli(["runs", "show", rid, "--store", db, "--json"]))
            seen[f"runs show --json ({name}): rows"] = _rows(shown["results"])
            seen[f"runs show --json ({name}): ir aggregate"] = _aggregate(shown["summary"])
            text = cli(["runs", "show", rid, "--store", db])
            seen[f"runs show ({name})"] = _terminal_table(text, "subject")
            page = root / f"{name}.html"
            cli(["report", rid, "--out", str(page), "--store", db])
            for part, got in _run_page(page.read_text()).items():
                seen[f"memgauge report ({name}): {part}"] = got
            with TestClient(create_app(db)) as client:
                response = client.get(f"/runs/{rid}")
            assert response.status_code == 200
            for part, got in _run_page(response.text).items():
                seen[f"viewer run page ({name}): {part}"] = got
            if name == "run":
                _combined_views(seen, shown, text, page.read_text(), response.text)
                markdown = root / "run.md"
                cli(["report", rid, "--out", str(markdown), "--store", db])
                seen[f"{COMBINED} report run.md"] = _md_combined(markdown.read_text())

        # evaluate's run against the suite's: each side's mean and the items they pair
        compared = last_json(cli(["runs", "compare", ev_run, run_id, "--store", db, "--json"]))
        text = cli(["runs", "compare", ev_run, run_id, "--store", db])
        for side, column in (("a", 3), ("b", 4)):
            seen[f"runs compare --json ({side})"] = {
                ("mem", r["evaluator"]): Seen(r[f"mean_{side}"], n_scored=r["n"])
                for r in compared["rows"]
                if (r["subject"], r["task"]) == ("mem", TASK) and r["evaluator"] in MEASURES
            }
            seen[f"runs compare ({side})"] = {
                ("mem", row[2]): Seen(row[column], None, ".3f", int(row[8]))
                for row in terminal_tables(text).get(COMPARED, [])[1:]
                if (row[0], row[1]) == ("mem", TASK) and row[2] in MEASURES
            }

        gate = [
            "gate",
            run_id,
            "--store",
            db,
            "--json",
            "--no-learn",
            "--junit",
            str(root / "g.xml"),
        ]
        gated = last_json(cli(gate))
        seen["gate --json"] = {
            ("mem", c["evaluator"]): Seen(c["current"])
            for c in gated["metrics"]
            if c["subject"] == "mem" and c["task"] == TASK and c["evaluator"] in MEASURES
        }
        seen["gate --junit"] = _junit(root / "g.xml", "current")
        yield seen, ds, Path(db)


def test_every_view_of_a_run_gives_each_measure_one_value_and_one_n(
    views: tuple[Views, Path, Path],
) -> None:
    seen, _, _ = views
    reference = seen["evaluate result.json"]
    assert set(reference) == {("mem", m) for m in MEASURES}
    # the queries with nothing relevant count in n (scored); the failed search is failed
    assert {(s.n_scored, s.n_failed) for s in reference.values()} == {(N_SCORED, N_FAILED)}
    assert all(isinstance(s.value, float) and 0 < s.value < 1 for s in reference.values())
    # the data holds what tells the ways of scoring q10 apart: its grade-1 memory was found
    # (nDCG > 0 from it under `zero`, where a flat 0, a failure or a skip would differ)
    assert seen["q10 nDCG@10"][("mem", "nDCG@10")].value == pytest.approx(1.0)
    kept = {k: v for k, v in seen.items() if k != "q10 nDCG@10" and not k.startswith(COMBINED)}
    assert disagreements(reference, kept) == []


def test_the_combined_score_has_one_value_ci_and_n_in_every_view(
    views: tuple[Views, Path, Path],
) -> None:
    """The task's combined score (five evaluators): `run` and `runs show` printed it, the
    viewer's run page and `memgauge report` (HTML and Markdown) did not."""
    seen, _, _ = views
    combined = {k: v for k, v in seen.items() if k.startswith(COMBINED)}
    reference = combined.pop(f"{COMBINED} runs show --json")
    assert reference[("mem", "combined")].n_failed == N_FAILED
    assert sorted(combined) == sorted(
        f"{COMBINED} {v}"
        for v in ("runs show", "memgauge report", "viewer run page", "report run.md")
    )
    assert disagreements(reference, combined) == []


def test_a_failed_search_is_one_count_in_the_accounting_and_the_agent_metrics(
    views: tuple[Views, Path, Path],
) -> None:
    """The accounting said n_judged 12 for 13 judged queries asked (the scored queries' own
    count overwrote it), and the agent-memory metrics, computed over the 12 searches that
    answered, said nothing of the failed one."""
    _, ds, _ = views
    out = ds.parent / "evaluate"
    (system,) = json.loads((out / "result.json").read_text())["systems"]
    counts = system["counts"]
    assert counts["n_judged"] == len(QUERIES)
    assert (counts["n_failed"], counts["n_scored"]) == (N_FAILED, N_SCORED)
    summary = (out / "summary.md").read_text()
    assert f"n_judged {len(QUERIES)}, n_unjudged 0, n_failed {N_FAILED}" in summary
    assert f"failed searches are left out of every one (mem {N_FAILED})" in summary


@pytest.mark.usefixtures("pytester_keeps_modules")
def test_the_pytest_plugin_gives_the_same_values(
    views: tuple[Views, Path, Path], pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`assert_retrieval` in a user's test: its failure table prints every measure's value
    (the one missed is the reason it fails), and its recorded run has the same n."""
    seen, ds, db = views
    reference = seen["evaluate result.json"]
    # miss one target on purpose: the table of values is printed only for a failing test
    thresholds = dict.fromkeys(MEASURES, 0.0) | {"RR@10": 0.999}
    monkeypatch.syspath_prepend(str(SUBJECTS))
    pytester.makepyfile(
        f"""
        from memgauge.pytest_plugin import assert_retrieval

        def test_memory():
            assert_retrieval(
                {str(ds)!r}, {SUBJECT!r}, {thresholds!r},
                measures={MEASURES!r}, k=20, store={str(db)!r},
            )
        """
    )
    result = pytester.runpytest("-p", "memgauge.pytest_plugin", *QUIET_PLUGINS)
    result.assert_outcomes(failed=1)
    out = result.stdout.str()
    table: dict[Key, Seen] = {}
    for m in MEASURES:
        found = re.search(rf"mem/{TASK}/{re.escape(m)}\s+(n/a|[\d.]+)", out)
        assert found, (m, out[-3000:])
        table[("mem", m)] = Seen(found.group(1), fmt=".4f")
    run_id = re.search(r"assert_retrieval: run (\S+) ", out)
    assert run_id, out[-3000:]
    shown = last_json(cli(["runs", "show", run_id.group(1), "--store", str(db), "--json"]))
    views_of_plugin = {
        "assert_retrieval failure table": table,
        "assert_retrieval run: rows": _rows(shown["results"]),
        "assert_retrieval run: ir aggregate": _aggregate(shown["summary"]),
    }
    assert disagreements(reference, views_of_plugin) == []


# --- a setting other than the default: still one value, and stated wherever numbers are ------

#: (suite evaluator argument, evaluate flag, the text the conventions line states it with)
NON_DEFAULT = [
    ({"no_relevant": "one"}, ["--no-relevant", "one"], "no relevant document: one"),
    ({"no_relevant": "skip"}, ["--no-relevant", "skip"], "no relevant document: skip"),
    ({"gain": "linear"}, ["--gain", "linear"], "gain: linear"),
    ({"rel_threshold": 1}, ["--rel-threshold", "1"], "relevant: grade >= 1"),
    ({"no_relevant": "fail"}, None, "no relevant document: fail"),  # a suite's only
]


@pytest.mark.parametrize(
    ("args", "flags", "stated"), NON_DEFAULT, ids=[t for _, _, t in NON_DEFAULT]
)
def test_a_non_default_convention_gives_one_value_and_is_stated_everywhere(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    args: dict[str, Any],
    flags: list[str] | None,
    stated: str,
) -> None:
    """Set on the suite's retrieval evaluators only: the task's ir aggregate follows them, so
    the run's rows, its aggregate and `evaluate` with the same flag agree on value and n, and
    the run's terminal, `runs show` (text and `--json`), `memgauge report` and the viewer state
    the setting."""
    monkeypatch.syspath_prepend(str(SUBJECTS))
    ds, db = _dataset(tmp_path), str(tmp_path / "r.db")
    suite = _suite(tmp_path, ds)
    spec = yaml.safe_load(suite.read_text())
    spec["tasks"][0]["evaluators"] = [
        {"spec": {"retrieval": {"measure": m, **args}}, "label": m} for m in MEASURES
    ]
    suite.write_text(yaml.safe_dump(spec))
    text = cli(["run", str(suite), "--store", db])
    assert f"task {TASK} / IR measures: " in text
    lines = [line for line in text.splitlines() if line.startswith(f"task {TASK} / ")]
    assert len(lines) == len(MEASURES) + 1
    assert all(stated in line for line in lines), lines
    last = last_json(cli(["run", str(suite), "--store", db, "--json"]))
    assert all(stated in r["conventions"] for r in last["results"])
    shown = last_json(cli(["runs", "show", last["run_id"], "--store", db, "--json"]))
    rows, aggregate = _rows(shown["results"]), _aggregate(shown["summary"])
    assert disagreements(rows, {"ir aggregate": aggregate}) == []
    assert stated in cli(["runs", "show", last["run_id"], "--store", db])
    with TestClient(create_app(db)) as client:
        page = html.unescape(client.get(f"/runs/{last['run_id']}").text)
    assert page.count(stated) >= len(MEASURES) + 2  # the conventions lines, the retrieval section
    n_no_relevant = 2  # q10 and q11
    if args.get("no_relevant") == "fail":
        counts = {(N_SCORED - n_no_relevant, N_FAILED + n_no_relevant)}
    elif args.get("no_relevant") == "skip":
        counts = {(N_SCORED - n_no_relevant, N_FAILED)}
    else:
        counts = {(N_SCORED, N_FAILED)}
    assert {(s.n_scored, s.n_failed) for s in rows.values()} == counts
    # the item's combined score counts the same way
    (combined,) = [t["score"] for t in shown["summary"]["tasks"] if t["subject"] == "mem"]
    assert {(combined["n_scored"], combined["n_failed"])} == counts
    if flags is None:
        return
    out = tmp_path / "evaluate"
    argv = ["evaluate", str(ds), "-s", SUBJECT, *(a for m in MEASURES for a in ("-m", m))]
    text = cli([*argv, *flags, "--out", str(out), "--store", db, "--quiet"])
    assert stated in text
    assert stated in json.loads((out / "result.json").read_text())["settings"]["conventions"]
    assert (
        disagreements(_result_json(out / "result.json"), {"run": rows, "ir aggregate": aggregate})
        == []
    )


@pytest.mark.parametrize(
    ("evaluators", "aggregate", "named"),
    [
        # two evaluators of nDCG, each with its own gain, feed one aggregate
        (
            [{"retrieval": "nDCG@10"}, {"retrieval": {"measure": "nDCG@5", "gain": "linear"}}],
            None,
            "nDCG@10 (gain: exp), nDCG@5 (gain: linear)",
        ),
        # the aggregate set apart from its evaluator
        ([{"retrieval": "nDCG@10"}], [{"ir": {"gain": "linear"}}], "nDCG@10 (gain: exp)"),
        ([{"retrieval": "Recall@5"}], [{"ir": {"no_relevant": "skip"}}], "Recall@5"),
    ],
    ids=["evaluators-differ", "gain-on-the-aggregate", "no_relevant-on-the-aggregate"],
)
def test_a_suite_that_would_give_one_measure_two_values_is_refused(
    tmp_path: Path,
    evaluators: list[Any],
    aggregate: list[Any] | None,
    named: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    ds = _dataset(tmp_path)
    task: dict[str, Any] = {
        "name": TASK,
        "kind": "retrieval",
        "dataset": str(ds),
        "evaluators": evaluators,
    }
    if aggregate is not None:
        task["aggregates"] = aggregate
    suite = tmp_path / "suite.yaml"
    suite.write_text(
        yaml.safe_dump(
            {
                "name": "two",
                "subjects": {"lex": {"reference": {"mode": "lexical"}}},
                "tasks": [task],
            }
        )
    )
    assert main(["run", str(suite), "--store", str(tmp_path / "r.db")]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert f"task {TASK!r}" in err
    assert named in err
    assert "Traceback" not in err
    # nothing was run or recorded
    assert main(["runs", "list", "--store", str(tmp_path / "r.db"), "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == []


def test_a_longmemeval_paper_dataset_gives_recall_all_one_value(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """LongMemEval's `paper` protocol scores recall_all of a question with nothing relevant as
    1.0 (all() of nothing): the per-item evaluator's row and the ir aggregate agree on it."""
    monkeypatch.setenv("MEMGAUGE_HOME", str(tmp_path / "home"))
    sample = Path(__file__).resolve().parents[1] / "data" / "longmemeval" / "sample.json"
    questions = json.loads(sample.read_text())
    # one question's evidence moves to an assistant turn: under the paper protocol (user
    # turns only) it has nothing relevant, and recall_all counts it as all found
    moved = questions[0]
    for session in moved["haystack_sessions"]:
        for turn in session:
            if turn.pop("has_answer", False):
                next(t for t in session if t["role"] == "assistant")["has_answer"] = True
    src = tmp_path / "lme.json"
    src.write_text(json.dumps(questions))
    assert main(["import", "longmemeval", str(src), "--out", str(tmp_path / "lme")]) == 0
    measures = ["recall_all@5", "recall_any@5", "ndcg_any@5"]
    suite = {
        "name": "lme",
        "subjects": {"lexical": {"reference": {"mode": "lexical"}}},
        "tasks": [
            {
                "name": TASK,
                "kind": "retrieval",
                "dataset": "lme",
                "k": 5,
                "evaluators": [{"retrieval": {"measure": m}} for m in measures],
            }
        ],
    }
    (tmp_path / "suite.yaml").write_text(yaml.safe_dump(suite))
    db = str(tmp_path / "r.db")
    capsys.readouterr()
    assert main(["run", str(tmp_path / "suite.yaml"), "--store", db, "--json"]) == 0
    run_id = last_json(capsys.readouterr().out)["run_id"]
    assert main(["runs", "show", run_id, "--store", db, "--json"]) == 0
    summary = last_json(capsys.readouterr().out)["summary"]
    rows = _rows(summary["evaluators"], "lexical", measures)
    agg = _aggregate(summary, "lexical", measures)
    assert set(rows) == set(agg) == {("lexical", m) for m in measures}
    assert disagreements(rows, {"ir aggregate": agg}) == []
    recall_all, recall_any = agg[("lexical", "recall_all@5")], agg[("lexical", "recall_any@5")]
    assert recall_all.n_scored == 2  # the moved question is scored
    assert isinstance(recall_any.value, float)
    assert isinstance(recall_all.value, float)
    assert recall_all.value > recall_any.value  # its 1.0 against a 0
