#!/usr/bin/env bash
# Two llama.cpp builds of the embedded judge, alternated in one run: `checkeval bench speed
# --engine-only` (tokens per CPU-second, median of REPEATS) under each Python, ROUNDS times.
#   bash bench/build_speed.sh PYTHON_A PYTHON_B [ROUNDS=3] [REPEATS=3]   # JSON lines on stdout
# Each Python is a virtual environment with checkeval's requirements and its own llama-cpp-python
# build; the working tree's checkeval_core is used by both. One llama.cpp thread
# (CHECKEVAL_EMBEDDED_THREADS, default 1) keeps other load on a small machine from skewing it.
set -euo pipefail
cd "$(dirname "$0")/.."
[[ $# -ge 2 ]] || { echo "usage: bash bench/build_speed.sh PYTHON_A PYTHON_B [ROUNDS] [REPEATS]" >&2; exit 2; }
A=$1; B=$2; ROUNDS=${3:-3}; REPEATS=${4:-3}
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
export CHECKEVAL_EMBEDDED_THREADS="${CHECKEVAL_EMBEDDED_THREADS:-1}"
for r in $(seq 1 "$ROUNDS"); do
  for py in "$A" "$B"; do
    res=$("$py" -m checkeval_core bench speed --judge embedded --engine-only --repeats "$REPEATS" --json)
    echo "{\"round\": $r, \"python\": \"$py\", \"result\": $res}"
  done
done
