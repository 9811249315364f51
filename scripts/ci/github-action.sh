#!/usr/bin/env bash
# The steps of memgauge's GitHub Action (action.yml), as one script that tests can run with a
# fake event payload and a fake GitHub API (tests/ci/test_github_action.py).
#
# 1. install memgauge (pip arguments in MEMGAUGE_INSTALL, `memgauge` meaning this Action's own
#    checkout; empty: it is installed already)
# 2. run the suite into a store (MEMGAUGE_STORE_URL, e.g. postgresql://...; default a SQLite file
#    on the runner), its targets as JUnit XML
# 3. gate the run against the baseline that lives outside the runner: the store's own history
#    (PostgreSQL) and/or run bundles (MEMGAUGE_BASELINE, one path per line; `memgauge runs export
#    ID --format bundle`); the gate's Markdown and JUnit XML
# 4. export this run as a bundle (the next baseline, once the branch is merged)
# 5. append the Markdown to $GITHUB_STEP_SUMMARY; on a pull request, post or update ONE comment
#    (found again by a hidden marker naming the suite, among the comments of the token's own
#    identity: GET /user, else MEMGAUGE_COMMENT_AUTHOR, default github-actions[bot])
#
# Exit code: the run's when it did not pass (1 a target missed, 2 bad input, 3 unavailable,
# 4 the subject failed), else the gate's (1 a regression). A comment that cannot be posted (a
# fork's read-only token, GitHub down) is a warning annotation and changes neither.
set -euo pipefail

: "${MEMGAUGE_SUITE:?set MEMGAUGE_SUITE (the suite input of the Action) to the suite file}"
py="${MEMGAUGE_PYTHON:-python}"
out="${MEMGAUGE_OUTPUT_DIR:-memgauge-ci}"
mkdir -p "$out"
store="${MEMGAUGE_STORE_URL:-$out/results.db}"

mg() { "$py" -m memgauge "$@"; }
output() { if [ -n "${GITHUB_OUTPUT:-}" ]; then echo "$1=$2" >>"$GITHUB_OUTPUT"; fi; }
summary() { if [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then cat >>"$GITHUB_STEP_SUMMARY"; else cat >/dev/null; fi; }

if [ -n "${MEMGAUGE_INSTALL:-}" ]; then
  # the words of MEMGAUGE_INSTALL ("memgauge[postgres] my-memory-package"), never globbed. The
  # word `memgauge` (or `memgauge[EXTRAS]`) is this Action's own checkout: the package its
  # scripts belong to, at the ref `uses:` names (memgauge is not on PyPI; a pin such as
  # memgauge==0.2 still asks the index)
  here="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
  read -ra words -d "" <<<"$MEMGAUGE_INSTALL" || true  # every line's words
  args=()
  for word in "${words[@]}"; do
    case "$word" in
      memgauge) args+=("$here") ;;
      memgauge\[*\]) args+=("$here${word#memgauge}") ;;
      *) args+=("$word") ;;
    esac
  done
  "$py" -m pip install --quiet "${args[@]}"
fi

# -- 2. run ----------------------------------------------------------------------------------
run_rc=0
# shellcheck disable=SC2086
mg run "$MEMGAUGE_SUITE" --store "$store" --junit "$out/run.xml" --json \
  ${MEMGAUGE_RUN_ARGS:-} >"$out/run.json" || run_rc=$?
output junit "$out/run.xml"
run_id="$("$py" -c 'import json, sys
lines = open(sys.argv[1], encoding="utf-8").read().strip().splitlines()
print(json.loads(lines[-1]).get("run_id", "") if lines else "")' "$out/run.json" 2>/dev/null || true)"
if [ -z "$run_id" ] || [ "$run_rc" -ge 2 ]; then
  printf '### memgauge: the suite did not run to the end (exit %s)\n\nSee the job log.\n' \
    "$run_rc" | tee "$out/gate.md" | summary
  output gate-status error
  exit "$run_rc"
fi
output run-id "$run_id"

# -- 3. gate ---------------------------------------------------------------------------------
baselines=()
while IFS= read -r line; do
  line="${line#"${line%%[![:space:]]*}"}"
  line="${line%"${line##*[![:space:]]}"}"
  [ -z "$line" ] && continue
  if [ -f "$line" ]; then
    baselines+=(--baseline "$line")
  else
    echo "memgauge: baseline $line does not exist (yet): gating without it" >&2
  fi
done <<<"${MEMGAUGE_BASELINE:-}"

gate_rc=0
# shellcheck disable=SC2086
mg gate "$run_id" --store "$store" --no-learn --markdown "$out/gate.md" \
  --junit "$out/gate.xml" ${baselines[@]+"${baselines[@]}"} ${MEMGAUGE_GATE_ARGS:-} >/dev/null || gate_rc=$?
if [ ! -f "$out/gate.md" ]; then
  printf '### memgauge gate: error (exit %s)\n\nSee the job log.\n' "$gate_rc" >"$out/gate.md"
fi
output gate-junit "$out/gate.xml"
case "$gate_rc" in
  0) output gate-status pass ;;
  1) output gate-status fail ;;
  *) output gate-status error ;;
esac

# -- 4. this run as the next baseline ------------------------------------------------------------
mg runs export "$run_id" --format bundle --store "$store" --out "$out/run-bundle.json" >/dev/null
output bundle "$out/run-bundle.json"

# -- 5. step summary and the sticky comment ------------------------------------------------------
summary <"$out/gate.md"
case "${GITHUB_EVENT_NAME:-}" in
  pull_request | pull_request_target)
    if [ "${MEMGAUGE_COMMENT:-true}" = "true" ]; then
      comment=(--body-file "$out/gate.md" --marker "gate $MEMGAUGE_SUITE" --on-error warn)
      if [ -n "${MEMGAUGE_COMMENT_AUTHOR:-}" ]; then
        comment+=(--author "$MEMGAUGE_COMMENT_AUTHOR")
      fi
      # GitHub's refusals are already a warning (exit 0); this catches the comment's own crash
      "$py" -m memgauge.ci.github comment "${comment[@]}" ||
        echo "::warning title=memgauge comment::the pull-request comment was not posted" \
          "(exit $?, see the log above); the step's status is the gate's"
    fi
    ;;
esac

if [ "$run_rc" -ne 0 ]; then
  exit "$run_rc"
fi
exit "$gate_rc"
