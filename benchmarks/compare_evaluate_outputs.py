"""What `memgauge evaluate DATASET -s lexical` writes, compared between two checkouts: a change
made for speed must leave every output as it was but the run id, the times and the latencies.

    python benchmarks/compare_evaluate_outputs.py --before /tmp/before --after . \
        [--locomo ../shared/datasets/locomo10.json]

LoCoMo is imported once (with the after checkout); one run of the before checkout makes a store
(one earlier run in it, as `bench_evaluate_cpu.py --store existing` has it); then each checkout
evaluates the dataset on its own copy of that store, and the script compares:

- result.json key by key, keys that name a time or a latency set aside and the run id replaced;
- summary.md and the terminal output line by line (the differing lines are printed: they must be
  latencies, the run line and the output paths);
- report.html token by token: the text between numbers must be equal (the differing numbers are
  counted; they are latencies, durations and times);
- each checkout's store: the new run's per-query rows and its run row, JSON columns parsed, time
  and latency keys (and table rows and shapes about latency) set aside;
- report.html rendered in process by each checkout from the same stored run (the earlier one):
  byte for byte;
- `memgauge evaluate --help`: byte for byte.

Exit 1 when something other than those differs.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import zlib
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
IMPORT = [sys.executable, "-m", "memgauge.cli.main", "import", "locomo"]
VOLATILE = re.compile(
    r"latenc|_at$|^at$|started|finished|created|heartbeat|duration|elapsed|^pid|owner|^host$"
    r"|^time|seconds",
    re.IGNORECASE,
)
NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:e[+-]?\d+)?")
_RENDER = (
    "import sys\n"
    "from memgauge.view.render import report_from_store\n"
    "_, html = report_from_store(sys.argv[1], sys.argv[2])\n"
    "open(sys.argv[3], 'w', encoding='utf-8').write(html)\n"
)


def _env(src: Path, home: Path) -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": str(src), "MEMGAUGE_HOME": str(home), "COLUMNS": "150"}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def _evaluate(src: Path, dataset: Path, home: Path, out: Path) -> tuple[str, str]:
    cmd = [sys.executable, "-m", "memgauge.cli.main", "evaluate", str(dataset), "-s", "lexical"]
    proc = subprocess.run(
        [*cmd, "--out", str(out)], env=_env(src, home), capture_output=True, text=True, check=True
    )
    found = re.search(r"recorded run (\S+)", proc.stdout)
    assert found is not None, proc.stdout
    return proc.stdout, found.group(1)


def _loaded(value: Any) -> Any:
    if isinstance(value, bytes):
        for wbits in (15, -15):
            try:
                value = zlib.decompress(value, wbits).decode()
                break
            except (zlib.error, UnicodeDecodeError):
                continue
        else:
            return value
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def _about_latency(value: Any) -> bool:
    """A shape, a table row or a measure about latency (its name, title or first cell)."""
    if isinstance(value, dict):
        fields = ("name", "measure", "title", "label", "x_label", "y_label", "text", "key")
        return any(isinstance(value.get(f), str) and "latenc" in value[f].lower() for f in fields)
    if isinstance(value, list):
        return bool(value) and _about_latency(value[0])
    return False


def _stable(value: Any, run_id: str) -> Any:
    """`value` without its times and latencies, the run id replaced."""
    if isinstance(value, dict):
        return {
            k: _stable(v, run_id)
            for k, v in value.items()
            if not VOLATILE.search(str(k)) and not _about_latency(v)
        }
    if isinstance(value, list):
        return [_stable(v, run_id) for v in value if not _about_latency(v)]
    if isinstance(value, str):
        return value.replace(run_id, "RUN")
    return value


def _differences(a: Any, b: Any, path: str = "$") -> list[str]:
    if type(a) is not type(b):
        return [f"{path}: {str(a)[:80]!r} != {str(b)[:80]!r}"]
    if isinstance(a, dict):
        out = []
        for k in sorted(set(a) | set(b)):
            if k not in a or k not in b:
                out.append(f"{path}.{k}: on one side only")
            else:
                out += _differences(a[k], b[k], f"{path}.{k}")
        return out
    if isinstance(a, list):
        if len(a) != len(b):
            return [f"{path}: {len(a)} != {len(b)} members"]
        return [
            d
            for i, (x, y) in enumerate(zip(a, b, strict=True))
            for d in _differences(x, y, f"{path}[{i}]")
        ]
    return [] if a == b else [f"{path}: {str(a)[:80]!r} != {str(b)[:80]!r}"]


def _rows(db: Path, table: str, run_id: str) -> list[Any]:
    with sqlite3.connect(db) as conn:
        cols = [r[1] for r in conn.execute(f"PRAGMA table_info({table})")]
        keep = [c for c in cols if c != "run_id" and not VOLATILE.search(c)]
        rows = conn.execute(
            f"SELECT {', '.join(keep)} FROM {table} WHERE run_id = ?", (run_id,)
        ).fetchall()
    return sorted(
        json.dumps([_stable(_loaded(v), run_id) for v in r], sort_keys=True) for r in rows
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--before", type=Path, required=True)
    ap.add_argument("--after", type=Path, default=ROOT)
    ap.add_argument("--locomo", default=str(ROOT.parent / "shared" / "datasets" / "locomo10.json"))
    args = ap.parse_args()
    src = {"before": args.before.resolve() / "src", "after": args.after.resolve() / "src"}
    bad: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        dataset = work / "locomo"
        subprocess.run(
            [*IMPORT, args.locomo, "--out", str(dataset)],
            env=_env(src["after"], work / "import-home"),
            check=True,
            capture_output=True,
        )
        base = work / "base"
        base.mkdir()
        _, earlier = _evaluate(src["before"], dataset, base, work / "base-out")
        got: dict[str, tuple[str, str, Path]] = {}
        for name, s in src.items():
            home = work / name / "home"
            shutil.copytree(base, home)
            terminal, run_id = _evaluate(s, dataset, home, work / name / "out")
            got[name] = (terminal, run_id, home / "results.db")
        (t_a, id_a, db_a), (t_b, id_b, db_b) = got["before"], got["after"]
        out_a, out_b = work / "before" / "out", work / "after" / "out"

        found = _differences(
            _stable(json.loads((out_a / "result.json").read_text()), id_a),
            _stable(json.loads((out_b / "result.json").read_text()), id_b),
        )
        print(f"result.json: {len(found)} keys differ (times and latencies set aside)")
        bad += found[:20]
        texts = {
            "summary.md": ((out_a / "summary.md").read_text(), (out_b / "summary.md").read_text()),
            "terminal": (
                t_a.replace(str(work / "before"), ""),
                t_b.replace(str(work / "after"), ""),
            ),
        }
        for label, (a, b) in texts.items():
            la, lb = a.replace(id_a, "RUN").splitlines(), b.replace(id_b, "RUN").splitlines()
            differing = [(x, y) for x, y in zip(la, lb, strict=False) if x != y]
            print(f"{label}: {len(la)} / {len(lb)} lines, {len(differing)} differ:")
            for x, y in differing:
                print(f"  - {x[:150]}\n  + {y[:150]}")
            if len(la) != len(lb):
                bad.append(f"{label}: {len(la)} != {len(lb)} lines")
        html_a = (out_a / "report.html").read_text().replace(id_a, "RUN")
        html_b = (out_b / "report.html").read_text().replace(id_b, "RUN")
        between = NUMBER.split(html_a) == NUMBER.split(html_b)
        numbers = list(zip(NUMBER.findall(html_a), NUMBER.findall(html_b), strict=False))
        print(
            f"report.html: {len(html_a)} / {len(html_b)} characters; the text between numbers "
            f"equal: {between}; {sum(x != y for x, y in numbers)} of {len(numbers)} numbers differ"
        )
        if not between:
            bad.append("report.html: the text between numbers differs")
        for table in ("suite_run_queries", "suite_runs"):
            same = _rows(db_a, table, id_a) == _rows(db_b, table, id_b)
            print(f"store, {table}: equal once times and latencies are set aside: {same}")
            if not same:
                bad.append(f"store: {table} differs")
        rendered = {}
        for name, s in src.items():
            page = work / f"{name}-report.html"
            subprocess.run(
                [sys.executable, "-c", _RENDER, str(db_a), earlier, str(page)],
                env=_env(s, work / name / "render-home"),
                check=True,
            )
            rendered[name] = page.read_bytes()
        same = rendered["before"] == rendered["after"]
        print(f"report.html of the stored run {earlier}, rendered in process: identical: {same}")
        if not same:
            bad.append("report.html rendered from the same run differs")
        helps = [
            subprocess.run(
                [sys.executable, "-m", "memgauge.cli.main", "evaluate", "--help"],
                env=_env(s, work / "help-home"),
                capture_output=True,
                check=True,
            ).stdout
            for s in src.values()
        ]
        print(f"evaluate --help identical: {helps[0] == helps[1]}")
        if helps[0] != helps[1]:
            bad.append("evaluate --help differs")
    for line in bad:
        print("DIFFERS:", line)
    raise SystemExit(1 if bad else 0)


if __name__ == "__main__":
    main()
