"""The demo's pre-computed embedded-judge runs load with ``checkeval demo`` and are analysable."""

import json

from checkeval_core.config import data_dir
from tests.helpers import run_cli

BUNDLES = sorted((data_dir() / "demo_runs").glob("*.json"))


def test_demo_loads_precomputed_runs(tmp_path, monkeypatch):
    assert BUNDLES, "data/demo_runs has no bundle (scripts/make_demo_runs.sh makes them)"
    monkeypatch.setenv("CHECKEVAL_DEMO_RUNS", "1")
    dbf = tmp_path / "d.db"
    base = ["--db", str(dbf)]
    r = run_cli([*base, "demo"])
    assert r.returncode == 0, r.stderr
    assert "pre-computed run(s)" in r.stdout
    again = run_cli([*base, "demo"])
    assert again.stdout.count("pre-computed run(s) 1") == 1  # not imported twice
    runs = json.loads(run_cli([*base, "runs", "--task", "summeval-demo", "--json"],
                              check=True).stdout)
    rid = next(r["run"] for r in runs if r["judge"] == "embedded"
               and r["method"] == "rocketeval")  # whichever order the bundles load in
    out = json.loads(run_cli([*base, "analyze", "--run", str(rid), "--bootstrap", "0",
                              "--json"], check=True).stdout)
    run = out["runs"][str(rid)]
    assert run["judge"] == "embedded" and run["method"] == "rocketeval"
    assert set(run["dimensions"]) == {"coherence", "consistency", "fluency", "relevance"}
