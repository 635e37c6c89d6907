"""The demo's pre-computed embedded-judge runs load with ``checkeval demo`` and are analysable."""

import json
import subprocess
import sys

import pytest

from checkeval_core.config import data_dir

BUNDLES = sorted((data_dir() / "demo_runs").glob("*.json"))


@pytest.mark.skipif(not BUNDLES, reason="data/demo_runs has no bundle")
def test_demo_loads_precomputed_runs(tmp_path, monkeypatch):
    monkeypatch.setenv("CHECKEVAL_DEMO_RUNS", "1")
    dbf = tmp_path / "d.db"
    base = [sys.executable, "-m", "checkeval_core", "--db", str(dbf)]
    r = subprocess.run([*base, "demo"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "pre-computed run(s)" in r.stdout
    again = subprocess.run([*base, "demo"], capture_output=True, text=True, timeout=120)
    assert again.stdout.count("pre-computed run(s) 1") == 1  # not imported twice
    runs = json.loads(subprocess.run([*base, "runs", "--task", "summeval-demo", "--json"],
                                     capture_output=True, text=True, check=True).stdout)
    rid = next(r["run"] for r in runs if r["judge"] == "embedded"
               and r["method"] == "rocketeval")  # whichever order the bundles load in
    out = json.loads(subprocess.run([*base, "analyze", "--run", str(rid), "--bootstrap", "0",
                                     "--json"], capture_output=True, text=True,
                                    check=True).stdout)
    run = out["runs"][str(rid)]
    assert run["judge"] == "embedded" and run["method"] == "rocketeval"
    assert set(run["dimensions"]) == {"coherence", "consistency", "fluency", "relevance"}
