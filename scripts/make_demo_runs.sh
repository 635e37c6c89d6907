#!/usr/bin/env bash
# Re-create the demo's pre-computed runs (data/demo_runs/*.json) with the product's own commands
# and the embedded judge:
#  * summeval   — RocketEval, the 16 summaries of the first SummEval demo document, the
#                 published 122-question checklist (about 10 minutes on 2 CPU cores);
#  * alpacaeval — RocketEval on the instruction-following demo (issue 14): 8 AlpacaEval queries
#                 × 12 models, each answer asked its query's author-written checklist (the
#                 frozen instance checklist of alpacaeval-demo; 456 answers, 87 min on 2 cores
#                 shared with other work on 2026-11-23, roughly 10–15 min on a free machine).
# Usage: bash scripts/make_demo_runs.sh [all|summeval|alpacaeval]   (default: all)
set -euo pipefail
cd "$(dirname "$0")/.."
WHICH="${1:-all}"
DB="$(mktemp -d)/demo-runs.db"
C=".venv/bin/checkeval --db $DB"
mkdir -p data/demo_runs
CHECKEVAL_DEMO_RUNS=0 $C demo
run_id() { python3 -c 'import json,sys; print(json.load(sys.stdin)["run"])'; }
if [ "$WHICH" = all ] || [ "$WHICH" = summeval ]; then
  rm -f data/demo_runs/summeval-embedded-rocketeval.json
  R1=$($C run --task summeval-demo --judge embedded --method rocketeval --limit 16 --json --quiet \
       | run_id)
  $C bundle export --run "$R1" --out data/demo_runs/summeval-embedded-rocketeval.json
fi
if [ "$WHICH" = all ] || [ "$WHICH" = alpacaeval ]; then
  rm -f data/demo_runs/alpacaeval-embedded-rocketeval.json
  R2=$($C run --task alpacaeval-demo --judge embedded --method rocketeval --json --quiet | run_id)
  $C bundle export --run "$R2" --out data/demo_runs/alpacaeval-embedded-rocketeval.json
fi
