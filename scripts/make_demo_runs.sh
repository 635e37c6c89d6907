#!/usr/bin/env bash
# Re-create the demo's pre-computed runs (data/demo_runs/*.json) with the product's own commands.
#
# evidence — the runs the demo's Analysis, Versions and Compare views open on, all on the
#   configuration docs/benchmarks.md recommends (the CheckEval authors' seed questions, frozen
#   as version 2 of each demo task):
#   * summeval-demo: RocketEval with JUDGE_A (the 0.5B model) on the first LIMIT_SE items
#     (192 = all 12 documents × 16 summaries, so that the dev part holds the 6 documents a
#     proposal needs under the small-sample rule of docs/methods.md), the run Analysis opens on;
#   * topical-chat-demo: RocketEval with JUDGE_A on the first LIMIT_TC items (60 = 10
#     contexts × 6 responses);
#   * agreement across judges, checklist vs Likert (CheckEval's headline comparison): G-Eval
#     with JUDGE_A, RocketEval and G-Eval with JUDGE_B (the 1.5B model) on the first
#     LIMIT_CROSS summeval items (96 = 6 documents, shared with the first run: the fewest
#     documents that carry an interval under the small-sample rule);
#   * each paper's method at least once: CheckEval (first CHECKEVAL_LIMIT items) and SEAL
#     (first SEAL_LIMIT items) with JUDGE_A;
#   * the dev / held-out split of both tasks (the seed and share the demo loader sets:
#     checkeval_core/demo/runs.py), then version 3 = version 2 pruned by `checklist propose`
#     on the DEV documents of the JUDGE_A RocketEval run, and that run again on version 3
#     (its answers come from the request cache: seconds).
#   CROSS_TC=1 adds the same three cross-judge runs on topical-chat-demo (LIMIT_TC items).
# alpacaeval — RocketEval (JUDGE_A) on the instruction-following demo: 8 AlpacaEval queries ×
#   12 models, each answer asked its query's author-written checklist (456 answers).
#
# A bundle that is already in OUT is imported instead of being run again (REUSE=0 runs it),
# so a build that stopped, or one that adds a run, costs only the missing runs.
# Cost on the 2-vCPU VM of docs/benchmarks.md (measured wall / CPU time of every command goes
# to $OUT/LOG; the figures of the shipped build are in docs/benchmarks.md): the 0.5B judge
# reads a summary in a few seconds and answers a question in about half a second; the 1.5B
# takes about 3× that; a G-Eval item is read once per dimension.
#
# Usage: bash scripts/make_demo_runs.sh [all|evidence|alpacaeval]   (default: all;
#        `summeval` is an older name of `evidence`)
# Environment: DB (the build database; default a new temporary one), OUT (default
#   data/demo_runs), JUDGE_A / JUDGE_B (default embedded / embedded:quality), LABEL_A /
#   LABEL_B (their names in file names; default embedded / quality), LIMIT_SE (192),
#   LIMIT_TC (60), LIMIT_CROSS (96), CHECKEVAL_LIMIT (16), SEAL_LIMIT (16) — 0 means every
#   item —, CROSS_TC (0), REUSE (1), CHECKEVAL (the command; default .venv/bin/checkeval).
#   The tests run this script with the `fake` judge on a temporary OUT.
set -euo pipefail
shopt -s inherit_errexit  # a failed run inside $( ) stops the build
cd "$(dirname "$0")/.."
WHICH="${1:-all}"
[ "$WHICH" = summeval ] && WHICH=evidence
case "$WHICH" in all|evidence|alpacaeval) ;; *) echo "usage: $0 [all|evidence|alpacaeval]" >&2; exit 2;; esac
DB="${DB:-$(mktemp -d)/demo-runs.db}"
OUT="${OUT:-data/demo_runs}"
JUDGE_A="${JUDGE_A:-embedded}"
JUDGE_B="${JUDGE_B:-embedded:quality}"
LABEL_A="${LABEL_A:-embedded}"
LABEL_B="${LABEL_B:-quality}"
LIMIT_SE="${LIMIT_SE:-192}"
LIMIT_TC="${LIMIT_TC:-60}"
LIMIT_CROSS="${LIMIT_CROSS:-96}"
CHECKEVAL_LIMIT="${CHECKEVAL_LIMIT:-16}"
SEAL_LIMIT="${SEAL_LIMIT:-16}"
CROSS_TC="${CROSS_TC:-0}"
REUSE="${REUSE:-1}"
CHECKEVAL="${CHECKEVAL:-.venv/bin/checkeval}"
PY="${PYTHON:-.venv/bin/python}"
C="$CHECKEVAL --db $DB"
mkdir -p "$OUT"
WORK="$(mktemp -d)"
LOG="$OUT/LOG"
echo "# make_demo_runs.sh $WHICH $(date -u +%FT%TZ) db=$DB judges=$JUDGE_A,$JUDGE_B" >> "$LOG"
export CHECKEVAL_DEMO_RUNS=0

timed() {  # label command...: run it, append its wall / CPU time to the LOG
  local label=$1; shift
  local rc=0
  /usr/bin/time -f "%e s wall, %U s user, %S s sys, %M KB max RSS" -o "$WORK/time" "$@" || rc=$?
  echo "$label: $* — $(tail -1 "$WORK/time")$([ $rc = 0 ] || echo " — FAILED (exit $rc)")" \
    >> "$LOG"
  return $rc
}
field() {  # file key: a top-level field of a JSON file
  "$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$1" "$2"
}
one() {  # name task judge method checklist [limit]: run (or import the bundle already in
  # OUT), then export its bundle; prints the run id
  local name=$1 task=$2 judge=$3 method=$4 version=$5 lim=()
  [ $# -ge 6 ] && [ "$6" != 0 ] && lim=(--limit "$6")
  local r
  if [ "$REUSE" = 1 ] && [ -f "$OUT/$name.json" ]; then
    timed "import $name" $C bundle import "$OUT/$name.json" > "$WORK/$name.import.txt"
    r=$(grep -oE 'run [0-9]+' "$WORK/$name.import.txt" | head -1 | cut -d' ' -f2)
    [ -n "$r" ] || { echo "could not import $OUT/$name.json" >&2; exit 1; }
    echo "$r"
    return
  fi
  timed "run $name" $C run --task "$task" --judge "$judge" --method "$method" \
    --checklist "$version" "${lim[@]}" --json --quiet > "$WORK/$name.run.json"
  r=$(field "$WORK/$name.run.json" run)
  timed "export $name" $C bundle export --run "$r" --out "$OUT/$name.json" > /dev/null
  echo "$r"
}
freeze_seeds() {  # task: the seed questions as a version; prints its number
  $C checklist freeze --task "$1" --origin seed --json \
    --note "the CheckEval authors' seed questions (the recommended configuration)" \
    > "$WORK/$1.v.json"
  field "$WORK/$1.v.json" version
}

timed "demo" $C demo > /dev/null
if [ "$WHICH" = all ] || [ "$WHICH" = evidence ]; then
  SEED=$("$PY" -c 'from checkeval_core.demo.runs import SPLIT_SEED; print(SPLIT_SEED)')
  SHARE=$("$PY" -c 'from checkeval_core.demo.runs import SPLIT_SHARE; print(SPLIT_SHARE)')
  VS=$(freeze_seeds summeval-demo)
  VT=$(freeze_seeds topical-chat-demo)
  for t in summeval-demo topical-chat-demo; do  # before any choice is made on the runs
    $C split --task "$t" --heldout-share "$SHARE" --seed "$SEED" --no-by-system > /dev/null
  done
  RA=$(one "summeval-$LABEL_A-rocketeval" summeval-demo "$JUDGE_A" rocketeval "$VS" "$LIMIT_SE")
  one "summeval-$LABEL_A-geval" summeval-demo "$JUDGE_A" geval "$VS" "$LIMIT_CROSS" > /dev/null
  one "summeval-$LABEL_B-rocketeval" summeval-demo "$JUDGE_B" rocketeval "$VS" \
    "$LIMIT_CROSS" > /dev/null
  one "summeval-$LABEL_B-geval" summeval-demo "$JUDGE_B" geval "$VS" "$LIMIT_CROSS" > /dev/null
  one "summeval-$LABEL_A-checkeval" summeval-demo "$JUDGE_A" checkeval "$VS" \
    "$CHECKEVAL_LIMIT" > /dev/null
  one "summeval-$LABEL_A-seal" summeval-demo "$JUDGE_A" seal "$VS" "$SEAL_LIMIT" > /dev/null
  one "topical-chat-$LABEL_A-rocketeval" topical-chat-demo "$JUDGE_A" rocketeval "$VT" \
    "$LIMIT_TC" > /dev/null
  if [ "$CROSS_TC" = 1 ]; then
    one "topical-chat-$LABEL_A-geval" topical-chat-demo "$JUDGE_A" geval "$VT" "$LIMIT_TC" \
      > /dev/null
    one "topical-chat-$LABEL_B-rocketeval" topical-chat-demo "$JUDGE_B" rocketeval "$VT" \
      "$LIMIT_TC" > /dev/null
    one "topical-chat-$LABEL_B-geval" topical-chat-demo "$JUDGE_B" geval "$VT" "$LIMIT_TC" \
      > /dev/null
  fi
  # version 3: version 2 without the questions the proposal drops on DEV documents
  timed "propose" $C checklist propose --run "$RA" --json > "$WORK/propose.json"
  mapfile -t EXCL < <("$PY" -c 'import json,sys
p = json.load(open(sys.argv[1]))
for d in p["dropped"]:
    print("--exclude"); print(d["question"]["id"])' "$WORK/propose.json")
  NOTE=$("$PY" -c 'import json,sys
p = json.load(open(sys.argv[1])); d = p["dev"]
f = lambda x: "undefined" if x is None else "%.3f" % x
print("version %s pruned on dev documents by checklist propose (%s rocketeval run): "
      "%d dropped, %d kept; dev agreement %s -> %s" % (p["version"], sys.argv[2],
      len(p["dropped"]), len(p["kept"]), f(d["before"]), f(d["after"])))' \
    "$WORK/propose.json" "$JUDGE_A")
  if [ ${#EXCL[@]} -eq 0 ]; then
    echo "the proposal on run $RA dropped no question: no pruned version to ship" >&2
    exit 1
  fi
  $C checklist freeze --task summeval-demo --origin seed "${EXCL[@]}" --note "$NOTE" --json \
    > "$WORK/v3.json"
  V3=$(field "$WORK/v3.json" version)
  [ "$(field "$WORK/v3.json" n_questions)" = "$("$PY" -c 'import json,sys
print(len(json.load(open(sys.argv[1]))["kept"]))' "$WORK/propose.json")" ] \
    || { echo "version $V3 is not the proposal's kept set" >&2; exit 1; }
  one "summeval-v$V3-$LABEL_A-rocketeval" summeval-demo "$JUDGE_A" rocketeval "$V3" \
    "$LIMIT_SE" > /dev/null
fi
if [ "$WHICH" = all ] || [ "$WHICH" = alpacaeval ]; then
  one "alpacaeval-$LABEL_A-rocketeval" alpacaeval-demo "$JUDGE_A" rocketeval latest > /dev/null
fi
echo "# done $(date -u +%FT%TZ)" >> "$LOG"
rm -rf "$WORK"
