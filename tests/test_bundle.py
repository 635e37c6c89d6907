"""Run bundles: export a finished run, import it into another database, same scores."""

import json
import subprocess
import sys

import pytest

from checkeval_core.demo import load_demo
from checkeval_core.runs import create_run, execute_run
from checkeval_core.runs.bundle import export_bundle, import_bundle
from checkeval_core.runs.scores import run_scores
from checkeval_core.store import NotFound, db_path, open_db


def test_bundle_round_trip(db, tmp_path):
    load_demo(db)
    rid = create_run(db, "summeval-demo", "fake", "seal", limit=2)
    execute_run(db_path(db), rid)
    b = json.loads(json.dumps(export_bundle(db, rid)))
    other = open_db(tmp_path / "other.db")
    load_demo(other)
    new = import_bundle(other, b, name="x.json")
    assert import_bundle(other, b, name="x.json") == new  # imported once
    key = ("item_id", "dimension", "aggregation", "value")
    assert sorted(tuple(r[k] for k in key) for r in run_scores(db, rid, "all")) == \
        sorted(tuple(r[k] for k in key) for r in run_scores(other, new, "all"))
    b["checklist_hash"] = "0" * 64
    with pytest.raises(NotFound, match="no checklist version"):
        import_bundle(other, b)


def test_bundle_cli(tmp_path):
    a, b = tmp_path / "a.db", tmp_path / "b.db"
    for d in (a, b):
        subprocess.run([sys.executable, "-m", "checkeval_core", "--db", str(d), "demo"],
                       check=True, capture_output=True, timeout=120)
    subprocess.run([sys.executable, "-m", "checkeval_core", "--db", str(a), "run", "--task",
                    "topical-chat-demo", "--judge", "fake", "--method", "rocketeval", "--limit",
                    "2", "--quiet"], check=True, capture_output=True, timeout=120)
    out = tmp_path / "r.json"
    r = subprocess.run([sys.executable, "-m", "checkeval_core", "--db", str(a), "bundle",
                        "export", "--run", "1", "--out", str(out)], capture_output=True,
                       text=True)
    assert r.returncode == 0 and "216 answers" in r.stdout, r.stderr
    r = subprocess.run([sys.executable, "-m", "checkeval_core", "--db", str(b), "bundle",
                        "import", str(out)], capture_output=True, text=True)
    assert r.returncode == 0 and "imported" in r.stdout, r.stderr
