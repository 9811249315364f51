#!/usr/bin/env bash
# Audit an agent's memory on the sample dataset, as memaudit's examples/run-audit.sh does.
#
#   examples/run-audit.sh                 # offline: the extractive baseline, no LLM needed
#   OPENAI_API_KEY=sk-... examples/run-audit.sh            # gpt-4o-mini answers and judges
#   examples/run-audit.sh --model gpt-4.1-mini             # any model; it also judges
#   OPENAI_BASE_URL=http://localhost:8000/v1 examples/run-audit.sh --model my-model
#
# Writes ./audit-results/results.json, report.md and memaudit.json (memaudit's AuditResult:
# datasetId, timestamp, metrics.recallAccuracy, ..., probeResults). Exit codes as in the README.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# MEMGAUGE lets a checkout run its own code: MEMGAUGE="python -m memgauge" examples/run-audit.sh
read -r -a memgauge <<< "${MEMGAUGE:-memgauge}"
"${memgauge[@]}" validate "$here/data/sample-dataset.json"
exec "${memgauge[@]}" audit "$here/data/sample-dataset.json" --output "${OUTPUT:-audit-results}" "$@"
