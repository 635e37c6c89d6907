"""Analysis of runs: the CLI's JSON shape, agreement across judges, diagnostics, review."""

import json
import math
import subprocess
import sys

import pytest

from checkeval_core.analysis.report import analyze_runs, question_diagnostics, send_to_review
from checkeval_core.checklists.model import questions
from tests.conftest import fake_demo_runs

LEVEL_KEYS = {"spearman", "kendall", "pearson", "n"}


@pytest.fixture
def two_runs(db):
    return fake_demo_runs(db, 32)


def test_analyze_runs_shape_and_agreement(db, two_runs):
    rep = analyze_runs(db, two_runs, n_boot=20)
    assert set(rep) == {"runs", "agreement", "stability"}
    r = rep["runs"][str(two_runs[0])]
    assert set(r["dimensions"]) == {"coherence", "consistency", "fluency", "relevance"}
    for level in ("sample_level", "dataset_level", "system_level"):
        assert LEVEL_KEYS <= set(r["dimensions"]["coherence"][level])
        assert LEVEL_KEYS <= set(r["average"][level])
    assert r["dimensions"]["coherence"]["sample_level"]["n"] == 2  # two documents
    assert r["dimensions"]["coherence"]["dataset_level"]["n"] == 32
    ag = rep["agreement"]
    assert ag["n_units"] == 32 * 122 and -1 <= ag["fleiss_kappa"] <= 1
    assert str(two_runs[0]) + "-" + str(two_runs[1]) in ag["pairwise_cohen"]
    assert set(rep["stability"]) == {"rocketeval", "checkeval"}
    one = analyze_runs(db, two_runs[:1], n_boot=0)["agreement"]
    assert math.isnan(one["krippendorff_alpha"])  # one judge: documented NaN, no exception


def test_diagnostics_and_send_to_review(db, two_runs):
    diag = question_diagnostics(db, two_runs)
    assert len(diag) == 122
    d = diag[0]
    assert {"yes_rate", "discrimination", "judge_agreement", "invalid_rate", "flags"} <= set(d)
    flagged = [x["question_id"] for x in diag if x["flags"]]
    assert flagged  # the fake judge never says yes to some questions
    assert send_to_review(db, flagged, "test") == len(flagged)
    st = {q["id"]: q["status"] for q in questions(db, "summeval-demo")}
    assert all(st[q] == "proposed" for q in flagged)


def test_cli_analyze_json(tmp_path):
    dbf = tmp_path / "c.db"
    base = [sys.executable, "-m", "checkeval_core", "--db", str(dbf)]
    subprocess.run([*base, "demo"], check=True, capture_output=True, timeout=120)
    r = subprocess.run([*base, "run", "--task", "topical-chat-demo", "--judge", "fake",
                        "--method", "geval", "--json", "--quiet"], capture_output=True,
                       text=True, timeout=300)
    rid = json.loads(r.stdout)["run"]
    out = json.loads(subprocess.run([*base, "analyze", "--run", str(rid), "--bootstrap", "10",
                                     "--json"], capture_output=True, text=True,
                                    check=True).stdout)
    dims = out["runs"][str(rid)]["dimensions"]
    assert set(dims) == {"coherence", "engagingness", "groundedness", "naturalness"}
    assert dims["coherence"]["dataset_level"]["n"] == 72
    metric = tmp_path / "m.csv"
    metric.write_text("item_id,coherence\n" + "".join(f"tc-{i:03d},{i % 5}\n" for i in range(72)))
    r = subprocess.run([*base, "analyze", "--task", "topical-chat-demo", "--metric-file",
                        str(metric), "--bootstrap", "0", "--json"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    m = json.loads(r.stdout)
    assert set(m) == {"dimensions", "average"}
    assert LEVEL_KEYS <= set(m["dimensions"]["coherence"]["sample_level"])
    bad = tmp_path / "bad.csv"
    bad.write_text("item_id,coherence\nnope,1\n")
    r = subprocess.run([*base, "analyze", "--task", "topical-chat-demo", "--metric-file",
                        str(bad), "--json"], capture_output=True, text=True)
    assert r.returncode == 2 and "bad.csv, line 2, field 'item_id'" in r.stderr
