"""Run bundles: export a finished run, import it into another database, same scores."""

import json

import pytest

from checkeval_core.demo import load_demo
from checkeval_core.runs import create_run, execute_run
from checkeval_core.runs.bundle import export_bundle, import_bundle
from checkeval_core.runs.score_read import run_scores
from checkeval_core.store import NotFound, db_path, open_db
from tests.helpers import load_demo_copy, run_cli


def test_bundle_round_trip(db, tmp_path):
    load_demo_copy(db)
    rid = create_run(db, "summeval-demo", "fake", "seal", limit=2)
    execute_run(db_path(db), rid)
    b = json.loads(json.dumps(export_bundle(db, rid)))
    other = open_db(tmp_path / "other.db")
    load_demo_copy(other)
    new = import_bundle(other, b, name="x.json")
    assert import_bundle(other, b, name="x.json") == new  # imported once
    key = ("item_id", "dimension", "aggregation", "value")
    assert sorted(tuple(r[k] for k in key) for r in run_scores(db, rid, "all")) == \
        sorted(tuple(r[k] for k in key) for r in run_scores(other, new, "all"))
    b["checklist_hash"] = "0" * 64
    del b["checklist"]  # (a bundle carrying its checklist: see the tests below)
    with pytest.raises(NotFound, match="no checklist version"):
        import_bundle(other, b)


def test_bundle_cli(tmp_path):
    a, b = tmp_path / "a.db", tmp_path / "b.db"
    for d in (a, b):
        run_cli(["--db", str(d), "demo"],
                check=True)
    run_cli(["--db", str(a), "run", "--task",
             "topical-chat-demo", "--judge", "fake", "--method", "rocketeval", "--limit",
             "2", "--quiet"], check=True)
    out = tmp_path / "r.json"
    r = run_cli(["--db", str(a), "bundle",
                 "export", "--run", "1", "--out", str(out)])
    assert r.returncode == 0 and "216 answers" in r.stdout, r.stderr
    r = run_cli(["--db", str(b), "bundle",
                 "import", str(out)])
    assert r.returncode == 0 and "imported" in r.stdout, r.stderr


# --- integrity (issue 13, item 9) -----------------------------------------------------------

from pathlib import Path  # noqa: E402

from checkeval_core.runs.bundle import BundleError, import_bundle_info  # noqa: E402

# a fake-judge RocketEval run on version 1 (16 summaries × 122 questions = 1,952 answers), so
# these tests do not depend on which runs data/demo_runs ships
FIXTURES = Path(__file__).resolve().parent / "fixtures" / "demo_runs"
DEMO_BUNDLE = FIXTURES / "summeval-fake-rocketeval.json"


def demo_bundle() -> dict:
    return json.loads(DEMO_BUNDLE.read_text(encoding="utf-8"))


def counts(d) -> tuple[int, int, int]:
    return tuple(d.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0]
                 for t in ("run", "answer", "score"))


def cli(db_path, *args):
    return run_cli(list(args), db=db_path)


@pytest.mark.parametrize("bad", [7.5, -3, float("nan"), "abc", True])
def test_bad_p_yes_on_last_row_writes_nothing(db, bad):
    load_demo_copy(db)
    b = demo_bundle()
    assert len(b["answers"]) == 1952
    b["answers"][-1]["p_yes"] = bad
    with pytest.raises(BundleError, match=r"answers\[1951\]\.p_yes"):
        import_bundle(db, b, name="demo.json")
    assert counts(db) == (0, 0, 0)
    b["answers"][-1]["p_yes"] = None  # null is allowed
    rid = import_bundle(db, b, name="demo.json")
    assert counts(db)[:2] == (1, 1952) and counts(db)[2] > 0
    assert db.execute("SELECT p_yes FROM answer WHERE run_id = ? ORDER BY id DESC LIMIT 1",
                      [rid]).fetchone()[0] is None


def test_cli_bad_row_exit_2_names_file_row_field(demo_db_path, tmp_path):
    db_path = demo_db_path
    b = demo_bundle()
    b["answers"][1951]["p_yes"] = 7.5
    f = tmp_path / "broken.json"
    f.write_text(json.dumps(b))
    r = cli(db_path, "bundle", "import", str(f))
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert "broken.json" in r.stderr and "answers[1951].p_yes" in r.stderr
    assert counts(open_db(db_path)) == (0, 0, 0)  # old code: a run with 1,952 answers


def test_dedup_by_content_not_name(demo_db_path, tmp_path):
    db_path = demo_db_path
    b = demo_bundle()
    (tmp_path / "one").mkdir()
    (tmp_path / "two").mkdir()
    f1, f2 = tmp_path / "one" / "run.json", tmp_path / "two" / "run.json"
    f1.write_text(json.dumps(b))
    r = cli(db_path, "bundle", "import", str(f1))
    assert r.returncode == 0 and "imported" in r.stdout, r.stderr
    # the same content under another name: imported once, and it says so
    copy = tmp_path / "copy.json"
    copy.write_text(json.dumps(b, indent=1))
    r = cli(db_path, "bundle", "import", str(copy))
    assert r.returncode == 0 and "already imported as run 1" in r.stdout, r.stderr
    assert counts(open_db(db_path))[0] == 1
    # a different bundle with the same file name: imported (old code: nothing, exit 0)
    b["answers"] = b["answers"][:100]
    f2.write_text(json.dumps(b))
    r = cli(db_path, "bundle", "import", str(f2))
    assert r.returncode == 0 and "run 2 imported" in r.stdout, r.stderr
    assert open_db(db_path).execute("SELECT COUNT(*) FROM answer WHERE run_id = 2"
                                    ).fetchone()[0] == 100


def _mutations():
    def set_(path, value):
        def f(b):
            obj = b
            for k in path[:-1]:
                obj = obj[k]
            obj[path[-1]] = value
            return b
        return f

    def drop(path):
        def f(b):
            obj = b
            for k in path[:-1]:
                obj = obj[k]
            del obj[path[-1]]
            return b
        return f

    return {
        "verdict": (set_(["answers", 5, "verdict"], "maybe"), "answers[5].verdict"),
        "item_id_type": (set_(["answers", 7, "item_id"], 12), "answers[7].item_id"),
        "unknown_item": (set_(["answers", 8, "item_id"], "nope"), "answers[8].item_id"),
        "unknown_question": (set_(["answers", 9, "question"], "Is it?"), "answers[9].question"),
        "no_answers": (drop(["answers"]), "bundle.answers"),
        "answers_not_list": (set_(["answers"], {"a": 1}), "bundle.answers"),
        "answer_not_object": (set_(["answers", 3], [1, 2]), "answers[3]"),
        "missing_verdict": (drop(["answers", 4, "verdict"]), "answers[4]: missing field"),
        "value_inf": (set_(["answers", 2, "value"], float("inf")), "answers[2].value"),
        "method": (set_(["method"], "magic"), "bundle.method"),
        "no_task": (drop(["task"]), "missing field 'task'"),
        "params_type": (set_(["params"], "x"), "bundle.params"),
        "tokens": (set_(["tokens_in"], -5), "bundle.tokens_in"),
        "format": (set_(["format"], "other"), "not a run bundle"),
        "top_list": (lambda b: [b], "not a run bundle"),
    }


@pytest.mark.parametrize("case", list(_mutations()))
def test_malformed_variants_exit_2_nothing_written(demo_db_path, tmp_path, case):
    fn, needle = _mutations()[case]
    db_path = demo_db_path
    f = tmp_path / f"{case}.json"
    f.write_text(json.dumps(fn(demo_bundle())))
    r = cli(db_path, "bundle", "import", str(f))
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert "Traceback" not in r.stderr and f.name in r.stderr and needle in r.stderr, r.stderr
    assert counts(open_db(db_path)) == (0, 0, 0)


@pytest.mark.parametrize("name, data", [
    ("notjson.json", b'{"format": "checkeval-studio/run-v1", "answers": [\n  {"a": 1},,\n'),
    ("deep.json", b"[" * 200_000 + b"]" * 200_000),
    ("deepobj.json", b'{"a":' * 100_000 + b"1" + b"}" * 100_000),
    ("binary.json", b"\xff\xfe\x00garbage"),
    ("empty.json", b""),
])
def test_unreadable_files_exit_2(demo_db_path, tmp_path, name, data):
    db_path = demo_db_path
    f = tmp_path / name
    f.write_bytes(data)
    r = cli(db_path, "bundle", "import", str(f))
    assert r.returncode == 2 and "Traceback" not in r.stderr and name in r.stderr, r.stderr
    assert counts(open_db(db_path)) == (0, 0, 0)


def test_demo_repairs_a_run_left_without_scores(db_path, monkeypatch):
    """A demo killed between writing its run and its scores (the old, non-atomic import)
    left a "completed" run without ``score`` rows; ``checkeval demo`` repairs it."""
    monkeypatch.setenv("CHECKEVAL_DEMO_RUNS", "1")
    monkeypatch.setenv("CHECKEVAL_DEMO_RUNS_DIR", str(FIXTURES))
    d = open_db(db_path)
    load_demo(d)
    rid, params = d.execute("SELECT id, params FROM run").fetchone()
    n_scores = d.execute("SELECT COUNT(*) FROM score").fetchone()[0]
    assert n_scores > 0
    # what the old import left after a kill: answers, no scores, params keyed by name only
    p = json.loads(params)
    p.pop("bundle_hash", None)
    d.execute("UPDATE run SET params = ? WHERE id = ?", [json.dumps(p), rid])
    d.execute("DELETE FROM score WHERE run_id = ?", [rid])
    r = run_cli(["--db", str(db_path), "demo"],
                env={"CHECKEVAL_DEMO_RUNS": "1"})
    assert r.returncode == 0, r.stderr
    assert counts(d) == (1, 1952, n_scores)  # repaired in place, not imported twice
    assert import_bundle_info(d, demo_bundle(), name="x.json") == {
        "run": rid, "created": False, "repaired": False}


def test_bundle_file_over_the_import_size_limit_is_refused_before_reading(tmp_path, monkeypatch):
    from checkeval_core import safeio
    from checkeval_core.runs.bundle import BundleError, read_bundle_file

    monkeypatch.setitem(safeio.LIMITS, "import_bytes", 100)
    p = tmp_path / "big.json"
    p.write_text('{"answers": [' + ",".join(["1"] * 200) + "]}")
    with pytest.raises(BundleError, match="big.json: .*limit"):
        read_bundle_file(p)


# --- a bundle carries its checklist version ---------------------------------------------------

from checkeval_core.checklists.versions import freeze as freeze_version  # noqa: E402
from checkeval_core.checklists.versions import list_versions  # noqa: E402


def _seed_run_bundle(db) -> dict:
    """A fake run on the seed questions (version 2) of a database with the demo."""
    load_demo(db)
    v = freeze_version(db, "summeval-demo", note="seeds", origins=["seed"])
    rid = create_run(db, "summeval-demo", "fake", "rocketeval", checklist=v["version"], limit=2)
    execute_run(db_path(db), rid)
    return json.loads(json.dumps(export_bundle(db, rid)))


def test_bundle_carries_its_version_and_freezes_it_on_import(db, tmp_path):
    b = _seed_run_bundle(db)
    c = b["checklist"]
    assert c["version"] == 2 and c["kind"] == "global" and c["note"] == "seeds"
    assert len(c["questions"]) == 15 and all(len(q) == 3 for q in c["questions"])
    other = open_db(tmp_path / "other.db")
    load_demo(other)
    assert [v["version"] for v in list_versions(other, "summeval-demo")] == [1]
    info = import_bundle_info(other, b, name="seed.json")
    vs = list_versions(other, "summeval-demo")
    assert [(v["version"], v["n_questions"], v["note"]) for v in vs] == [
        (1, 122, "CheckEval authors' published checklist (seed + diversification + "
                 "elaboration)"), (2, 15, "seeds")]
    assert vs[1]["hash"] == b["checklist_hash"]
    assert other.execute("SELECT checklist_version_id FROM run WHERE id = ?",
                         [info["run"]]).fetchone()[0] == vs[1]["id"]
    assert import_bundle_info(other, b)["created"] is False  # once
    assert len(list_versions(other, "summeval-demo")) == 2


def test_bundle_version_with_a_missing_question_is_refused_naming_it(db, tmp_path):
    b = _seed_run_bundle(db)
    other = open_db(tmp_path / "other.db")
    load_demo(other)
    text = b["checklist"]["questions"][4][2]
    other.execute("UPDATE question SET status = 'rejected' WHERE text = ?", [text])
    before = counts(other), len(list_versions(other, "summeval-demo"))
    with pytest.raises(NotFound, match=r"1 of the bundle's 15 .*there, but rejected"):
        import_bundle(other, b)
    assert (counts(other), len(list_versions(other, "summeval-demo"))) == before


def test_bundle_version_whose_hash_differs_is_refused_and_a_bad_row_writes_no_version(
        db, tmp_path):
    b = _seed_run_bundle(db)
    other = open_db(tmp_path / "other.db")
    load_demo(other)
    wrong = json.loads(json.dumps(b))
    wrong["checklist"]["questions"] = wrong["checklist"]["questions"][:-1]
    with pytest.raises(BundleError, match="bundle.checklist: .*hash"):
        import_bundle(other, wrong)
    late = json.loads(json.dumps(b))
    late["answers"][-1]["item_id"] = "nope"
    with pytest.raises(BundleError, match=r"answers\[\d+\]\.item_id"):
        import_bundle(other, late)
    assert len(list_versions(other, "summeval-demo")) == 1 and counts(other) == (0, 0, 0)
    bad = json.loads(json.dumps(b))
    bad["checklist"]["questions"][2] = ["coherence", None]
    with pytest.raises(BundleError, match=r"bundle\.checklist\.questions\[2\]"):
        import_bundle(other, bad)
    old = json.loads(json.dumps(b))
    del old["checklist"]  # an older bundle: the version must exist, as before
    with pytest.raises(NotFound, match="no checklist version"):
        import_bundle(other, old)


def test_a_likert_bundle_keeps_its_weighted_score_in_p_yes(db):
    """G-Eval's probability-weighted 1–5 score travels in the p_yes column: a bundle of a
    Likert run imports (a Yes/No run's p(Yes) outside [0, 1] is still refused above)."""
    load_demo_copy(db)
    b = json.loads((Path(__file__).resolve().parent.parent / "data" / "demo_runs"
                    / "summeval-embedded-geval.json").read_text(encoding="utf-8"))
    assert b["method"] == "geval" and max(a["p_yes"] for a in b["answers"]) > 1
    rid = import_bundle(db, b, name="geval.json")
    got = db.execute("SELECT COUNT(*), MAX(p_yes) FROM answer WHERE run_id = ?", [rid]).fetchone()
    assert got[0] == len(b["answers"]) and got[1] > 1
    b["answers"][0]["p_yes"] = float("inf")
    with pytest.raises(BundleError, match=r"answers\[0\]\.p_yes"):
        import_bundle(db, b, name="geval-broken.json")
