#!/usr/bin/env bash
# Re-create the demo's pre-computed runs (data/demo_runs/*.json) with the product's own commands
# and the embedded judge (about 15 minutes on 2 CPU cores). Usage: bash scripts/make_demo_runs.sh
set -euo pipefail
cd "$(dirname "$0")/.."
DB="$(mktemp -d)/demo-runs.db"
C=".venv/bin/checkeval --db $DB"
mkdir -p data/demo_runs
rm -f data/demo_runs/*.json
$C demo
# SummEval: the 16 summaries of the first document; Topical-Chat: the first 2 contexts x 6
R1=$($C run --task summeval-demo --judge embedded --method rocketeval --limit 16 --json --quiet | python3 -c 'import json,sys; print(json.load(sys.stdin)["run"])')
R2=$($C run --task topical-chat-demo --judge embedded --method rocketeval --limit 12 --json --quiet | python3 -c 'import json,sys; print(json.load(sys.stdin)["run"])')
$C bundle export --run "$R1" --out data/demo_runs/summeval-embedded-rocketeval.json
$C bundle export --run "$R2" --out data/demo_runs/topical-chat-embedded-rocketeval.json
