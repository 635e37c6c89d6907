"""The ranking CLI as a user runs it (issue 14 contract): ``preferences import``, ``ratings
import``, ``analyze --run ID --rankings|--pairs --json`` — exit codes and JSON shapes."""

from __future__ import annotations

import json

from tests.helpers import PREFS_CSV, RATINGS_CSV, build_ranking_task, run_cli


def cli(db, *args):
    return run_cli(list(args), db=db)


def test_imports_and_analyze_json(db, db_path, tmp_path):
    rid = build_ranking_task(db, prefs=False, ratings=False)
    prefs = tmp_path / "prefs.csv"
    prefs.write_text(PREFS_CSV, encoding="utf-8")
    ref = tmp_path / "ref.csv"
    ref.write_text(RATINGS_CSV, encoding="utf-8")

    r = cli(db_path, "preferences", "import", str(prefs), "--task", "rank-demo")
    assert r.returncode == 0, r.stderr
    assert "imported 4 preferences (2 a, 1 b, 1 ties) over 4 queries" in r.stdout
    r = cli(db_path, "ratings", "import", str(ref), "--task", "rank-demo", "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["unmatched"] == ["not-in-task"]

    r = cli(db_path, "analyze", "--run", str(rid), "--rankings", "--json", "--bootstrap", "50")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert [s["system"] for s in out["systems"]] == ["sys-best", "sys-mid", "sys-low"]
    for s in out["systems"]:
        assert {"score", "rank", "ci", "reference", "elo"} <= set(s)
        assert len(s["ci"]) == 2
    assert out["spearman"]["value"] == 1.0 and out["kendall"]["value"] == 1.0
    assert {"value", "ci", "n", "reason"} <= set(out["kendall"])
    assert len(out["elo"]["systems"]) == 3 and out["elo"]["tie_margin"] == 0.1

    r = cli(db_path, "analyze", "--run", str(rid), "--pairs", "--json", "--tie-margin", "0.05")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert {"accuracy", "tie_rate", "three_way", "n_pairs", "confusion"} <= set(out)
    assert out["n_pairs"] == 4 and out["tie_margin"] == 0.05
    assert 0 <= out["accuracy"] <= 1 and out["three_way"] is not None

    r = cli(db_path, "analyze", "--run", str(rid), "--rankings", "--pairs")
    assert r.returncode == 0, r.stderr
    assert "sys-best" in r.stdout and "spearman: 1.000" in r.stdout and "pairs: n=4" in r.stdout


def test_cli_errors_exit_2(db, db_path, tmp_path):
    rid = build_ranking_task(db, prefs=False, ratings=False)
    # no reference / no preferences: NaN becomes null with the reason in the JSON
    out = json.loads(cli(db_path, "analyze", "--run", str(rid), "--rankings", "--json",
                         "--bootstrap", "10").stdout)
    assert out["spearman"]["value"] is None and "no reference ratings" in out["spearman"]["reason"]
    out = json.loads(cli(db_path, "analyze", "--run", str(rid), "--pairs", "--json").stdout)
    assert out["accuracy"] is None and out["n_pairs"] == 0

    bad = tmp_path / "bad.csv"
    bad.write_text("group_id,item_a,item_b,winner\ng1,g1:sys-best,g1:nobody,a\n")
    r = cli(db_path, "preferences", "import", str(bad), "--task", "rank-demo")
    assert r.returncode == 2 and "bad.csv, line 2, field 'item_b'" in r.stderr
    r = cli(db_path, "ratings", "import", str(tmp_path / "missing.csv"), "--task", "rank-demo")
    assert r.returncode == 2 and "no such file" in r.stderr
    r = cli(db_path, "analyze", "--run", "999", "--rankings", "--json")
    assert r.returncode == 2 and "no run 999" in r.stderr
    r = cli(db_path, "analyze", "--run", str(rid), "--run", str(rid), "--pairs")
    assert r.returncode == 2 and "exactly one --run" in r.stderr
