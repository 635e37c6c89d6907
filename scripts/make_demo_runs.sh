#!/usr/bin/env bash
# Re-create the demo's pre-computed run (data/demo_runs/*.json) with the product's own commands
# and the embedded judge: RocketEval, the 16 summaries of the first SummEval demo document, the
# published 122-question checklist (about 10 minutes on 2 CPU cores).
# Usage: bash scripts/make_demo_runs.sh
set -euo pipefail
cd "$(dirname "$0")/.."
DB="$(mktemp -d)/demo-runs.db"
C=".venv/bin/checkeval --db $DB"
mkdir -p data/demo_runs
rm -f data/demo_runs/*.json
CHECKEVAL_DEMO_RUNS=0 $C demo
R1=$($C run --task summeval-demo --judge embedded --method rocketeval --limit 16 --json --quiet \
     | python3 -c 'import json,sys; print(json.load(sys.stdin)["run"])')
$C bundle export --run "$R1" --out data/demo_runs/summeval-embedded-rocketeval.json
