"""scripts/llama_cmake_flags.sh: llama.cpp is built for the instruction sets the CPU reports,
never with AMX, and portably where /proc/cpuinfo says nothing usable."""

import subprocess

from tests.helpers import REPO

SCRIPT = REPO / "scripts" / "llama_cmake_flags.sh"
BASE = ("fpu sse sse2 ssse3 sse4_1 sse4_2 avx f16c fma bmi1 bmi2 avx2 popcnt")
AVX512 = "avx512f avx512dq avx512cd avx512bw avx512vl"
# a Sapphire Rapids guest as the VM that crashed reports it
XEON_AMX = f"{BASE} {AVX512} avx512vbmi avx512_vnni avx512_bf16 avx_vnni amx_bf16 amx_tile amx_int8"


def flags(tmp_path, cpu_flags=None, *args):
    argv = ["bash", str(SCRIPT), *args]
    if cpu_flags is not None:
        info = tmp_path / "cpuinfo"
        info.write_text(f"processor\t: 0\nmodel name\t: test\nflags\t\t: {cpu_flags}\n\n"
                        f"processor\t: 1\nflags\t\t: {cpu_flags}\n")
        argv.append(str(info))
    out = subprocess.run(argv, capture_output=True, text=True, check=True).stdout.split()
    return dict(f[2:].split("=", 1) for f in out)


def test_amx_cpu_gets_avx512_but_never_amx(tmp_path):
    f = flags(tmp_path, XEON_AMX)
    assert f["GGML_NATIVE"] == "OFF"
    assert f["GGML_AMX_TILE"] == f["GGML_AMX_INT8"] == f["GGML_AMX_BF16"] == "OFF"
    for opt in ("GGML_AVX2", "GGML_FMA", "GGML_F16C", "GGML_AVX512", "GGML_AVX512_VNNI",
                "GGML_AVX512_BF16", "GGML_AVX512_VBMI", "GGML_AVX_VNNI"):
        assert f[opt] == "ON", opt


def test_avx2_cpu_gets_no_avx512(tmp_path):
    f = flags(tmp_path, BASE)
    assert f["GGML_AVX2"] == f["GGML_FMA"] == f["GGML_F16C"] == "ON"
    assert f["GGML_AVX512"] == f["GGML_AVX512_VNNI"] == f["GGML_AVX_VNNI"] == "OFF"


def test_avx512_needs_every_subset_ggml_compiles_with(tmp_path):
    """ggml's AVX512 switch compiles with F, CD, VL, DQ and BW: one missing, none of it."""
    f = flags(tmp_path, f"{BASE} avx512f avx512cd avx512dq avx512vl avx512_vnni")
    assert f["GGML_AVX512"] == f["GGML_AVX512_VNNI"] == "OFF"
    assert f["GGML_AVX2"] == "ON"


def test_without_x86_flags_the_portable_build(tmp_path):
    portable = flags(tmp_path, None, "--portable")
    assert portable["GGML_AVX2"] == "ON" and "GGML_AVX512" not in portable
    assert portable["GGML_AMX_TILE"] == "OFF" and portable["GGML_NATIVE"] == "OFF"
    arm = tmp_path / "arm"
    arm.write_text("processor\t: 0\nFeatures\t: fp asimd evtstrm aes\n")
    out = subprocess.run(["bash", str(SCRIPT), str(arm)], capture_output=True, text=True,
                         check=True).stdout.split()
    assert dict(f[2:].split("=", 1) for f in out) == portable
    missing = subprocess.run(["bash", str(SCRIPT), str(tmp_path / "none")],
                             capture_output=True, text=True, check=True).stdout.split()
    assert dict(f[2:].split("=", 1) for f in missing) == portable
