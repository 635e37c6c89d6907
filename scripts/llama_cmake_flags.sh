#!/usr/bin/env bash
# Print the CMake flags that build llama.cpp for this CPU's instruction sets.
#   bash scripts/llama_cmake_flags.sh [CPUINFO]      # default /proc/cpuinfo
#   bash scripts/llama_cmake_flags.sh --portable     # AVX2/FMA/F16C: any x86-64 CPU of the last decade
#
# Why not llama.cpp's own "native" build (-march=native): it also enables AMX, and on virtual
# machines that report AMX without letting a process use its tiles, the first decode ends the
# process with SIGSEGV. Here each instruction set is switched on only when the CPU reports it,
# AMX always stays off, and GGML_NATIVE=OFF keeps the compiler from adding anything else.
# Without x86 flags (ARM, macOS) the portable flags are printed: there they change nothing.
set -euo pipefail

COMMON="-DLLAVA_BUILD=OFF -DGGML_NATIVE=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF"
PORTABLE="$COMMON -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON"

if [[ "${1:-}" == "--portable" ]]; then
  echo "$PORTABLE"
  exit 0
fi
CPUINFO="${1:-/proc/cpuinfo}"
line="$(grep -m1 -E '^flags[[:space:]]*:' "$CPUINFO" 2>/dev/null || true)"
if [[ -z "$line" ]]; then
  echo "$PORTABLE"
  exit 0
fi
declare -A has=()
for f in ${line#*:}; do has[$f]=1; done
on() {  # on FLAG CPUFLAG...: ON when the CPU reports every CPUFLAG
  local opt=$1; shift
  local v=ON
  for c in "$@"; do [[ -n "${has[$c]:-}" ]] || v=OFF; done
  printf ' -D%s=%s' "$opt" "$v"
}
if [[ -z "${has[avx2]:-}" || -z "${has[fma]:-}" || -z "${has[f16c]:-}" ]]; then
  # older than the portable baseline: only what it reports (ggml's scalar code covers the rest)
  echo "$COMMON$(on GGML_SSE42 sse4_2)$(on GGML_AVX avx)$(on GGML_AVX2 avx2)$(on GGML_FMA fma)$(on GGML_F16C f16c)$(on GGML_BMI2 bmi2) -DGGML_AVX512=OFF"
  exit 0
fi
out="$COMMON$(on GGML_SSE42 sse4_2)$(on GGML_AVX avx)$(on GGML_AVX2 avx2)$(on GGML_FMA fma)"
out+="$(on GGML_F16C f16c)$(on GGML_BMI2 bmi2)$(on GGML_AVX_VNNI avx_vnni)"
# ggml's AVX512 switch compiles with -mavx512f -mavx512cd -mavx512vl -mavx512dq -mavx512bw
AVX512=(avx512f avx512cd avx512vl avx512dq avx512bw)
out+="$(on GGML_AVX512 "${AVX512[@]}")"
out+="$(on GGML_AVX512_VBMI "${AVX512[@]}" avx512vbmi)"
out+="$(on GGML_AVX512_VNNI "${AVX512[@]}" avx512_vnni)"
out+="$(on GGML_AVX512_BF16 "${AVX512[@]}" avx512_bf16)"
echo "$out"
