#!/usr/bin/env bash
# The quality table of docs/benchmarks.md, row by row. Every row reuses the bench
# database (default ~/.cache/checkeval/bench_quality.db): a finished row reruns in seconds,
# an interrupted one resumes where it stopped. Rows are ordered cheapest first.
#   bash bench/quality_sweep.sh            # all rows
#   bash bench/quality_sweep.sh 5 3        # rows 5 then 3
# Rows 14-15 compare all published questions with the seeds on the first 6 contexts (row 15
# reuses row 1's cached answers); rows 17-18 compare SEAL's units with RocketEval on the first 4
# SummEval documents (row 18 reuses row 2's cached answers). Row 19 is an ensemble of three runs
# (1.5B; 0.5B; 0.5B with the definition in the prompt), reusing rows 1, 3 and 6.
# Rows 20-21 confirm the recommended configurations on held-out documents (--skip: contexts
# 21-40, documents 17-32), never looked at while choosing them.
# Output: bench/out/<row>.txt (the table) and bench/out/<row>.json; progress logs go to
# $BENCH_LOGS (default ~/.cache/checkeval/bench-logs), never into the repository.
# The benchmark folder: BENCH_DATA=DIR (see docs/benchmarks.md).
set -uo pipefail
cd "$(dirname "$0")/.."
CK=".venv/bin/checkeval"
: "${BENCH_DATA:?set BENCH_DATA to the benchmark folder (summeval.jsonl, topical_chat.jsonl, ...)}"
export CHECKEVAL_BENCH_DATA="$BENCH_DATA"
LOGS="${BENCH_LOGS:-$HOME/.cache/checkeval/bench-logs}"
mkdir -p bench/out "$LOGS"
SE="--benchmark summeval --docs 16"
TC="--benchmark topical_chat --docs 20"
ROWS=(
  "tc-05b-rocketeval|$TC --judge embedded --method rocketeval"
  "se-05b-rocketeval|$SE --judge embedded --method rocketeval"
  "tc-ens-rocketeval|$TC --judge embedded --judge embedded:quality --method rocketeval"
  "tc-05b-geval|$TC --judge embedded --method geval"
  "se-05b-geval|$SE --judge embedded --method geval"
  "tc-05b-rocketeval-def|$TC --judge embedded --method rocketeval --param include_definition=true"
  "se-ens-rocketeval|$SE --judge embedded --judge embedded:quality --method rocketeval"
  "tc-05b-checkeval|$TC --judge embedded --method checkeval"
  "tc-05b-seal|$TC --judge embedded --method seal"
  "se-05b-rocketeval-ref|$SE --judge embedded --method rocketeval --param include_reference=true"
  "se-05b-checkeval|$SE --judge embedded --method checkeval"
  "se-05b-seal|$SE --judge embedded --method seal"
  "tc-15b-geval|$TC --judge embedded:quality --method geval"
  "tc6-05b-rocketeval-all|--benchmark topical_chat --docs 6 --judge embedded --method rocketeval --questions all"
  "tc6-05b-rocketeval|--benchmark topical_chat --docs 6 --judge embedded --method rocketeval"
  "se-15b-geval|$SE --judge embedded:quality --method geval"
  "se4-05b-seal|--benchmark summeval --docs 4 --judge embedded --method seal"
  "se4-05b-rocketeval|--benchmark summeval --docs 4 --judge embedded --method rocketeval"
  "tc-ens3-rocketeval|$TC --judge embedded:quality --judge embedded --member 'embedded include_definition=true' --method rocketeval"
  "tc-holdout-rocketeval|$TC --skip 20 --judge embedded:quality --judge embedded --method rocketeval"
  "se-holdout-rocketeval|$SE --skip 16 --judge embedded --judge embedded:quality --method rocketeval"
  "tc-15b-seal|$TC --judge embedded:quality --method seal"
)
order=("$@")
[[ ${#order[@]} -eq 0 ]] && order=($(seq 1 ${#ROWS[@]}))
for n in "${order[@]}"; do   # in the order given
  i=$((n - 1))
  [[ $i -ge 0 && $i -lt ${#ROWS[@]} ]] || { echo "no row $n" >&2; continue; }
  name="${ROWS[$i]%%|*}"
  args="${ROWS[$i]#*|}"
  echo "== row $n: $name: checkeval bench quality $args" >&2
  # eval: a row's options may hold a quoted --member "SPEC KEY=VALUE"
  eval "$CK bench quality $args --json" > "bench/out/$name.json" 2> "$LOGS/$name.log" \
    && eval "$CK bench quality $args" > "bench/out/$name.txt" 2>> "$LOGS/$name.log" \
    || echo "row $n failed: see $LOGS/$name.log" >&2
done
