#!/usr/bin/env bash
# What the tests need besides Python packages, installed when this machine lets us (root, or
# sudo without a password), else named with the line that installs them, before anything runs:
# - Debian's Chromium at /usr/bin/chromium: the viewer's browser tests (never `playwright
#   install`: CI reaches only the package registries, so Playwright's own download would fail)
# - PostgreSQL's initdb and pg_ctl: the results store's tests start their own server
#   (tests/pgserver.py; MEMGAUGE_TEST_PG_BIN names another directory holding them)
# - npm: the MCP tests install the reference memory server from the npm registry
# scripts/check.sh runs this; .ci/run runs scripts/check.sh.
set -euo pipefail

have_postgres() {
  local dir
  for dir in "${MEMGAUGE_TEST_PG_BIN:-}" /usr/lib/postgresql/*/bin; do
    if [ -n "$dir" ] && [ -x "$dir/initdb" ] && [ -x "$dir/pg_ctl" ]; then return 0; fi
  done
  command -v initdb >/dev/null && command -v pg_ctl >/dev/null
}

missing=()
[ -x /usr/bin/chromium ] || missing+=(chromium)
have_postgres || missing+=(postgresql)
command -v npm >/dev/null || missing+=(npm)
[ "${#missing[@]}" -eq 0 ] && exit 0

if [ "$(id -u)" = 0 ]; then
  sudo=()
elif command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
  sudo=(sudo)
else
  sudo=(none)
fi
if [ "${sudo[*]}" = none ] || ! command -v apt-get >/dev/null; then
  {
    echo "scripts/check.sh: the tests need ${missing[*]}, not installed here; install them (as root):"
    echo "  sudo apt-get update && sudo apt-get install -y ${missing[*]}"
    echo "(Debian and Ubuntu package names; Chromium must be /usr/bin/chromium), then run"
    echo "bash scripts/check.sh again"
  } >&2
  exit 1
fi
echo "scripts/check.sh: installing ${missing[*]} for the tests (apt-get)" >&2
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
