"""scripts/llama_wheel.sh: llama.cpp is built once per machine and set of build flags; the next
checkout installs the kept wheel instead of compiling for ~17 minutes. A fake interpreter stands
in for pip (it writes a wheel and counts its builds), so no compiler runs here."""

import os
import subprocess

from tests.helpers import REPO

SCRIPT = REPO / "scripts" / "llama_wheel.sh"
FLAGS = "-DLLAVA_BUILD=OFF -DGGML_NATIVE=OFF -DGGML_AVX2=ON -DGGML_AVX512=OFF"
REQ = "llama-cpp-python==0.3.36"
FAKE_PY = r"""#!/usr/bin/env bash
# stands in for .venv/bin/python: the Python tag, or "pip wheel -w DIR REQ"
if [[ "$1" == "-c" ]]; then echo "cp311-linux-x86_64"; exit 0; fi
echo "$CMAKE_ARGS" >> "$BUILDS"
sleep "${FAKE_BUILD_SECONDS:-0}"
while [[ $# -gt 0 ]]; do [[ "$1" == "-w" ]] && out=$2; shift; done
echo "$CMAKE_ARGS" > "$out/llama_cpp_python-0.3.36-cp311-cp311-linux_x86_64.whl"
"""


def _env(tmp_path, **extra):
    fake = tmp_path / "python"
    fake.write_text(FAKE_PY)
    fake.chmod(0o755)
    env = dict(os.environ, LLAMA_WHEEL_PYTHON=str(fake), LLAMA_WHEEL_CACHE=str(tmp_path / "cache"),
               BUILDS=str(tmp_path / "builds.log"))
    env.update(extra)
    return env


def wheel(tmp_path, flags=FLAGS, req=REQ, **extra):
    done = subprocess.run(["bash", str(SCRIPT), flags, req], capture_output=True, text=True,
                          env=_env(tmp_path, **extra), cwd=tmp_path, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip(), done.stderr


def builds(tmp_path):
    log = tmp_path / "builds.log"
    return log.read_text().splitlines() if log.exists() else []


def key(flags, req=REQ, tag="cp311-linux-x86_64"):
    return subprocess.run(["bash", str(SCRIPT), "--key", flags, req, tag], capture_output=True,
                          text=True, check=True).stdout.strip()


def test_the_key_changes_with_the_flags_the_version_and_the_python():
    base = key(FLAGS)
    assert len(base) == 16 and int(base, 16) >= 0
    assert key(FLAGS.replace("GGML_AVX512=OFF", "GGML_AVX512=ON")) != base
    assert key(FLAGS + " -DGGML_AVX_VNNI=ON") != base
    assert key(FLAGS, "llama-cpp-python==0.3.37") != base
    assert key(FLAGS, tag="cp312-linux-x86_64") != base
    # the same flags in another order or spacing build the same wheel
    assert key("  ".join(reversed(FLAGS.split()))) == base
    assert key(FLAGS, "llama-cpp-python == 0.3.36") == base


def test_a_second_checkout_reuses_the_wheel_and_other_flags_build_again(tmp_path):
    first, err = wheel(tmp_path)
    assert builds(tmp_path) == [FLAGS] and "building llama.cpp" in err
    assert first.startswith(str(tmp_path / "cache" / key(FLAGS, tag="cp311-linux-x86_64")))
    assert first.endswith(".whl") and open(first).read().strip() == FLAGS
    again, err = wheel(tmp_path)
    assert again == first and builds(tmp_path) == [FLAGS], "rebuilt a wheel already kept"
    assert "reusing" in err
    portable = FLAGS.replace("GGML_AVX512=OFF", "GGML_AVX512=ON")
    other, _ = wheel(tmp_path, flags=portable)
    assert other != first and builds(tmp_path) == [FLAGS, portable]
    newer, _ = wheel(tmp_path, req="llama-cpp-python==0.3.37")
    assert newer != first and len(builds(tmp_path)) == 3
    # nothing half-built is left where the next checkout would look
    leftovers = [p.name for p in (tmp_path / "cache").iterdir() if p.name.startswith(".")]
    assert leftovers == []


def test_a_long_build_prints_a_heartbeat_with_the_elapsed_time(tmp_path):
    _, err = wheel(tmp_path, LLAMA_WHEEL_HEARTBEAT="1", FAKE_BUILD_SECONDS="3")
    beats = [line for line in err.splitlines() if "still building llama.cpp" in line]
    assert len(beats) >= 2, err
    assert "0m 01s elapsed" in beats[0] or "0m 02s elapsed" in beats[0]
    assert "built in 0m" in err


def test_a_failed_build_keeps_nothing(tmp_path):
    failing = tmp_path / "python"
    env = _env(tmp_path)
    failing.write_text('#!/usr/bin/env bash\n[[ "$1" == "-c" ]] && { echo cp311-x; exit 0; }\n'
                       'echo "compiler error" >&2; exit 1\n')
    done = subprocess.run(["bash", str(SCRIPT), FLAGS, REQ], capture_output=True, text=True,
                          env=env, cwd=tmp_path, timeout=60)
    assert done.returncode == 1 and "compiler error" in done.stderr and done.stdout == ""
    assert list((tmp_path / "cache").iterdir()) == []
