"""CPU-seconds of report.html's parts on a LoCoMo run, before against after, in one process
(interleaved, min and median): the ranked-hits rows of the report's 1,000 items, and the
items table's cells cut to one line (`render._brief`: input, output, expected, reasons); then
the whole `render_run_report` in a fresh process per checkout (a second call, its templates
loaded), interleaved, its HTML checked equal.

    python benchmarks/bench_report_cuts.py --before /tmp/before --dataset DIR [--runs 9]

DIR: a retrieval dataset (`memgauge import locomo ... --out DIR`), evaluated once with this
checkout (`-s lexical`, a temporary home); its stored run and items are read back as
`report.html` reads them. BEFORE: an older checkout (a `git archive`), whose modules are loaded
from their files. Each pair's results are checked equal first.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import pickle
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _child(state: Path) -> None:
    import gc
    import time

    from memgauge.view.render import render_run_report

    run, items = pickle.loads(state.read_bytes())
    gc.collect()
    gc.freeze()
    render_run_report(run, items)
    t = time.process_time()
    html = render_run_report(run, items)
    print(time.process_time() - t)
    print(len(html), hash(html))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--before", type=Path, required=True)
    ap.add_argument("--dataset", type=Path, required=True)
    ap.add_argument("--runs", type=int, default=9)
    ap.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child is not None:
        _child(args.child)
        return
    sys.path.insert(0, str(ROOT / "benchmarks"))
    sys.path.insert(0, str(ROOT / "src"))
    from bench_summary_cuts import _load, _pair
    from memgauge.cli.main import main as cli
    from memgauge.store.run_pages import RunReader
    from memgauge.view import hit_table, render
    from memgauge.view.pages import hit_rows

    with tempfile.TemporaryDirectory() as tmp:
        os.environ["MEMGAUGE_HOME"] = tmp
        with contextlib.suppress(SystemExit):
            cli(["evaluate", str(args.dataset), "-s", "lexical", "--out", f"{tmp}/out", "--quiet"])
        with RunReader(f"{tmp}/results.db") as reader:
            (run_id,) = reader.find_run_ids("")
            run, every = reader.get_run(run_id), reader.item_records(run_id)
        items = every[:1000]
        state = Path(tmp) / "state.pickle"
        state.write_bytes(pickle.dumps((run, every)))
        whole: dict[str, list[float]] = {"before": [], "after": []}
        for _ in range(args.runs):
            seen = []
            for name, src in (("before", args.before.resolve() / "src"), ("after", ROOT / "src")):
                env = {**os.environ, "PYTHONPATH": str(src), "PYTHONHASHSEED": "0"}
                cmd = [sys.executable, __file__, "--before", ".", "--dataset", ".", "--child"]
                out = subprocess.run([*cmd, str(state)], env=env, capture_output=True, check=True)
                took, html = out.stdout.decode().split("\n", 1)
                whole[name].append(float(took))
                seen.append(html)
            assert seen[0] == seen[1], "the reports differ"
    src = args.before.resolve() / "src" / "memgauge"
    old = _load(src / "view" / "hit_table.py", "_before_hit_table")
    rows = [hit_rows(it) for it in items]
    print(f"load: {os.getloadavg()[0]:.1f}; {len(rows)} items; CPU-s")
    for name, ts in whole.items():
        label = "render_run_report, a process"
        print(f"{label:28s} {name:6s} min {min(ts):.4f}  median {statistics.median(ts):.4f}")
    _pair(
        "hit_table_rows, 1,000 items",
        lambda: [str(old.hit_table_rows(r)) for r in rows if r is not None],
        lambda: [str(hit_table.hit_table_rows(r)) for r in rows if r is not None],
        args.runs,
    )
    old_render = _load(src / "view" / "render.py", "_before_render")
    cells = [
        (v, limit)
        for it in items
        for v, limit in (
            (it.input, 160),
            (it.output, 160),
            (it.expected, 80),
            *((s.reason, 120) for s in it.scores if s.reason),
        )
    ]
    _pair(
        f"_brief, {len(cells):,} cells",
        lambda: [old_render._brief(v, limit) for v, limit in cells],
        lambda: [render._brief(v, limit) for v, limit in cells],
        args.runs,
    )


if __name__ == "__main__":
    main()
