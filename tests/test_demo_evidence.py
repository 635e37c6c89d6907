"""The demo with evidence: ``scripts/make_demo_runs.sh`` (here with the ``fake`` judge standing
in for both embedded judges) makes the bundles, and a fresh ``load_demo`` from them gives the
seed version, the version pruned on dev documents, the RocketEval run on 12 documents, both
judges' RocketEval and G-Eval runs on the first 3, CheckEval and SEAL, Topical-Chat on 10
contexts, the split, and the versions view on dev and held-out — once. A second build with the
same output folder imports the bundles it finds instead of running them again."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from checkeval_core.analysis.proposal import propose
from checkeval_core.analysis.versions import versions_report
from checkeval_core.checklists.versions import get_version, list_versions
from checkeval_core.demo import load_demo
from checkeval_core.demo.runs import SPLIT_SEED, SPLIT_SHARE
from checkeval_core.store import loads, open_db
from checkeval_core.task_split import get_split

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """Run the script's evidence part with the fake judge; the folder of its bundles."""
    base = tmp_path_factory.mktemp("build")
    out = base / "demo_runs"
    env = {**os.environ, "DB": str(base / "build.db"), "OUT": str(out), "JUDGE_A": "fake",
           "JUDGE_B": "fake", "LABEL_A": "fakea", "LABEL_B": "fakeb",
           "CHECKEVAL": f"{sys.executable} -m checkeval_core", "PYTHON": sys.executable,
           "PYTHONPATH": str(ROOT)}
    r = subprocess.run(["bash", str(ROOT / "scripts" / "make_demo_runs.sh"), "evidence"],
                       env=env, capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stderr[-3000:]
    return out


@pytest.fixture
def demo_env(built, monkeypatch):
    monkeypatch.setenv("CHECKEVAL_DEMO_RUNS", "1")
    monkeypatch.setenv("CHECKEVAL_DEMO_RUNS_DIR", str(built))
    return built


def _runs(db) -> list[dict]:
    out = []
    for rid, method, params, items, version in db.execute(
            "SELECT r.id, r.method, r.params, r.item_ids, v.version FROM run r JOIN task t ON "
            "t.id = r.task_id JOIN checklist_version v ON v.id = r.checklist_version_id "
            "WHERE t.name = 'summeval-demo' ORDER BY r.id"):
        ids = loads(items)
        groups = db.execute(f"SELECT COUNT(DISTINCT group_id) FROM item WHERE id IN "
                            f"({','.join('?' * len(ids))})", ids).fetchone()[0]
        out.append({"run": rid, "method": method, "bundle": loads(params)["bundle"],
                    "version": version, "n_items": len(ids), "n_groups": groups})
    return out


def test_script_writes_every_bundle_and_logs_its_cost(built):
    names = sorted(p.stem for p in built.glob("*.json"))
    assert names == sorted([
        "summeval-fakea-rocketeval", "summeval-fakea-geval", "summeval-fakeb-rocketeval",
        "summeval-fakeb-geval", "summeval-fakea-checkeval", "summeval-fakea-seal",
        "summeval-v3-fakea-rocketeval", "topical-chat-fakea-rocketeval"])
    log = (built / "LOG").read_text()
    assert "run summeval-fakea-rocketeval:" in log and "s wall" in log and "s user" in log
    b = json.loads((built / "summeval-v3-fakea-rocketeval.json").read_text())
    assert b["checklist"]["version"] == 3 and "pruned on dev documents" in b["checklist"]["note"]


def test_fresh_demo_has_versions_runs_split_and_the_versions_view(demo_env, db):
    load_demo(db)
    vs = {v["version"]: v for v in list_versions(db, "summeval-demo")}
    assert sorted(vs) == [1, 2, 3]
    assert vs[1]["n_questions"] == 122 and vs[2]["n_questions"] == 15
    assert 1 <= vs[3]["n_questions"] < 15
    assert [v["version"] for v in list_versions(db, "topical-chat-demo")] == [1, 2]

    runs = _runs(db)
    by = {(r["bundle"].split("-")[1], r["method"], r["version"]): r for r in runs}
    main = by[("fakea", "rocketeval", 2)]
    # every document: the dev part holds the 6 a proposal needs (MIN_GROUPS)
    assert (main["n_items"], main["n_groups"]) == (192, 12)
    for judge, method in (("fakea", "geval"), ("fakeb", "rocketeval"), ("fakeb", "geval")):
        # across judges on 6 documents: the fewest that carry an interval (MIN_GROUPS)
        assert (by[(judge, method, 2)]["n_items"], by[(judge, method, 2)]["n_groups"]) == (96, 6)
    assert by[("fakea", "checkeval", 2)]["n_items"] == 16
    assert by[("fakea", "seal", 2)]["n_items"] == 16
    assert by[("v3", "rocketeval", 3)]["n_items"] == 192
    tc = db.execute("SELECT r.item_ids FROM run r JOIN task t ON t.id = r.task_id WHERE "
                    "t.name = 'topical-chat-demo'").fetchall()
    assert len(tc) == 1 and len(loads(tc[0][0])) == 60  # 10 contexts × 6 responses

    split = get_split(db, "summeval-demo")
    assert split["defined"] and split["seed"] == SPLIT_SEED
    assert split["heldout_share"] == SPLIT_SHARE and len(split["dev"]) == 6
    assert get_split(db, "topical-chat-demo")["defined"]

    # the loader's split is the one the script chose on: the product's own proposal on this
    # database's dev documents drops exactly what version 3 leaves out of version 2
    prop = propose(db, [by[("fakea", "rocketeval", 2)]["run"]], n_boot=0)
    v2 = {q["text"] for q in get_version(db, "summeval-demo", 2)["content"]["questions"]}
    v3 = {q["text"] for q in get_version(db, "summeval-demo", 3)["content"]["questions"]}
    assert v2 - v3 == {d["question"]["text"] for d in prop["dropped"]}

    rep = versions_report(db, "summeval-demo", n_boot=20)
    assert rep["parts"] == ["dev", "heldout", "all"]
    for version in (2, 3):
        rows = [r for r in rep["rows"] if r["version"] == version
                and r["method"] == "rocketeval"]
        assert rows, version
        for part in ("dev", "heldout"):
            assert any(r["parts"][part]["value"] is not None
                       and r["parts"][part]["n_groups"] >= 6 for r in rows), (version, part)


def test_a_second_build_imports_the_bundles_it_finds(built, tmp_path):
    """Only the missing runs are made again: the LOG of a rebuild into the same folder says
    "import" for every bundle, and no bundle changes."""
    before = {p.name: p.read_bytes() for p in built.glob("*.json")}
    env = {**os.environ, "DB": str(tmp_path / "again.db"), "OUT": str(built), "JUDGE_A": "fake",
           "JUDGE_B": "fake", "LABEL_A": "fakea", "LABEL_B": "fakeb",
           "CHECKEVAL": f"{sys.executable} -m checkeval_core", "PYTHON": sys.executable,
           "PYTHONPATH": str(ROOT), "CHECKEVAL_FAKE_LOG": str(tmp_path / "calls")}
    r = subprocess.run(["bash", str(ROOT / "scripts" / "make_demo_runs.sh"), "evidence"],
                       env=env, capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stderr[-3000:]
    last = (built / "LOG").read_text().split("# make_demo_runs.sh")[-1]
    assert last.count("\nimport ") == len(before) and "\nrun " not in last
    assert {p.name: p.read_bytes() for p in built.glob("*.json")} == before
    assert not (tmp_path / "calls").exists()  # no request reached the judge


def test_loading_twice_imports_nothing_new(demo_env, db):
    first = load_demo(db)
    counts = [db.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0]
              for t in ("run", "answer", "score", "checklist_version", "task_split_member")]
    again = load_demo(db)
    assert again["summeval-demo"]["runs"] == first["summeval-demo"]["runs"]
    assert "split" not in again["summeval-demo"] and "split" in first["summeval-demo"]
    assert [db.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0]
            for t in ("run", "answer", "score", "checklist_version", "task_split_member")
            ] == counts


def test_without_demo_runs_nothing_of_this_happens(built, db, monkeypatch):
    monkeypatch.setenv("CHECKEVAL_DEMO_RUNS", "0")
    monkeypatch.setenv("CHECKEVAL_DEMO_RUNS_DIR", str(built))
    load_demo(db)
    assert [v["version"] for v in list_versions(db, "summeval-demo")] == [1]
    assert not get_split(db, "summeval-demo")["defined"]
    assert db.execute("SELECT COUNT(*) FROM run").fetchone()[0] == 0


def test_a_bundle_the_database_cannot_take_is_named_not_fatal(demo_env, tmp_path, monkeypatch):
    """A machine whose seed questions were edited away still gets its demo; the CLI names the
    bundles it left out."""
    dbf = tmp_path / "d.db"
    monkeypatch.setenv("CHECKEVAL_DEMO_RUNS", "0")
    d = open_db(dbf)
    load_demo(d)
    d.execute("UPDATE question SET status = 'rejected' WHERE origin = 'seed' AND task_id = "
              "(SELECT id FROM task WHERE name = 'topical-chat-demo')")
    d.close()
    r = subprocess.run([sys.executable, "-m", "checkeval_core", "--db", str(dbf), "demo"],
                       capture_output=True, text=True, timeout=300,
                       env={**os.environ, "CHECKEVAL_DEMO_RUNS": "1",
                            "CHECKEVAL_DEMO_RUNS_DIR": str(demo_env)})
    assert r.returncode == 0, r.stderr
    assert "topical-chat-fakea-rocketeval.json" in r.stderr and "rejected" in r.stderr
    assert "summeval-demo: already loaded; pre-computed run(s)" in r.stdout
