#!/usr/bin/env bash
# A llama-cpp-python wheel built once per machine and reused by every checkout on it.
#   bash scripts/llama_wheel.sh --key "CMAKE_FLAGS" "REQUIREMENT"   # print the cache key
#   bash scripts/llama_wheel.sh "CMAKE_FLAGS" "REQUIREMENT"         # print the wheel's path,
#                                                                    # building it if not cached
# Building llama.cpp takes ~17-20 min on a busy 2-core machine; pip's own cache cannot hold it
# (it keys a built wheel by the source, not by CMAKE_ARGS, so a wheel built with other flags
# would be reused), so setup.sh used --no-cache-dir and every new checkout rebuilt. Here the
# wheel is kept under a directory named by a hash of what decides its contents: the CMake
# flags (order and spacing ignored), the requirement (llama-cpp-python==VERSION), and the
# Python tag and platform of the interpreter that builds it.
#   LLAMA_WHEEL_CACHE   the cache root (default ${XDG_CACHE_HOME:-~/.cache}/checkeval/wheels)
#   LLAMA_WHEEL_PYTHON  the interpreter whose pip builds the wheel (default .venv/bin/python)
#   LLAMA_WHEEL_HEARTBEAT  seconds between "still building" lines (default 60)
# Progress goes to stderr; stdout is only the wheel's path.
set -euo pipefail

PYBIN="${LLAMA_WHEEL_PYTHON:-.venv/bin/python}"
CACHE="${LLAMA_WHEEL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/checkeval/wheels}"
BEAT="${LLAMA_WHEEL_HEARTBEAT:-60}"

py_tag() {  # cp311-linux_x86_64: a wheel built by one interpreter fits only its kind
  "$PYBIN" -c 'import sys, sysconfig; print(f"cp{sys.version_info[0]}{sys.version_info[1]}-{sysconfig.get_platform()}")'
}

wheel_key() {  # FLAGS REQUIREMENT PYTAG -> 16 hex digits
  local flags norm
  flags=$1
  norm="$(tr -s ' \t\n' '\n' <<<"$flags" | sed '/^$/d' | LC_ALL=C sort | tr '\n' ' ')"
  printf 'flags=%s\nreq=%s\npy=%s\n' "$norm" "$(tr -d ' ' <<<"$2")" "$3" \
    | sha256sum | cut -c1-16
}

if [[ "${1:-}" == "--key" ]]; then
  [[ $# -ge 3 ]] || { echo "usage: llama_wheel.sh --key FLAGS REQUIREMENT [PYTAG]" >&2; exit 2; }
  wheel_key "$2" "$3" "${4:-$(py_tag)}"
  exit 0
fi
[[ $# -ge 2 ]] || { echo "usage: llama_wheel.sh FLAGS REQUIREMENT" >&2; exit 2; }
FLAGS=$1
REQ=$2
DIR="$CACHE/$(wheel_key "$FLAGS" "$REQ" "$(py_tag)")"

cached() { compgen -G "$DIR/llama_cpp_python-*.whl" | head -n1 || true; }

whl="$(cached)"
if [[ -n "$whl" ]]; then
  echo "setup: reusing the llama.cpp wheel built earlier on this machine ($DIR)" >&2
  echo "$whl"
  exit 0
fi

mkdir -p "$CACHE"
tmp="$(mktemp -d "$CACHE/.build.XXXXXX")"
beat_pid=""
cleanup() { if [[ -n "$beat_pid" ]]; then kill "$beat_pid" 2>/dev/null || true; fi; rm -rf "$tmp"; }
trap cleanup EXIT
start=$SECONDS
echo "setup: building llama.cpp from source (~17-20 min on a busy 2-core machine, once per" \
     "machine; the wheel is kept in $DIR): $FLAGS" >&2
( nap=""; trap 'kill "$nap" 2>/dev/null; exit 0' TERM  # the sleep too: it holds the output open
  while :; do
    sleep "$BEAT" & nap=$!
    wait "$nap"
    s=$((SECONDS - start))
    printf 'setup: still building llama.cpp (%dm %02ds elapsed)\n' $((s / 60)) $((s % 60)) >&2
  done ) &
beat_pid=$!
status=0
CMAKE_ARGS="$FLAGS" "$PYBIN" -m pip wheel -q --no-cache-dir --no-deps -w "$tmp" "$REQ" \
  >"$tmp/build.log" 2>&1 || status=$?
kill "$beat_pid" 2>/dev/null || true
wait "$beat_pid" 2>/dev/null || true
beat_pid=""
built="$(compgen -G "$tmp/llama_cpp_python-*.whl" | head -n1 || true)"
if [[ $status != 0 || -z "$built" ]]; then
  grep -v -E "is ignored: it is neither a file nor a directory" "$tmp/build.log" >&2 || true
  echo "setup: building llama.cpp failed (exit $status)" >&2
  exit 1
fi
s=$((SECONDS - start))
echo "setup: llama.cpp built in $((s / 60))m $((s % 60))s" >&2
# into the cache only when whole: a build stopped halfway leaves nothing another checkout reuses
mkdir -p "$DIR"
mv "$built" "$DIR/.partial.whl"
mv "$DIR/.partial.whl" "$DIR/$(basename "$built")"
echo "$DIR/$(basename "$built")"
