"""Every pairwise vote has a stable id: exporting the app's votes and importing the file into
the same database stores nothing twice; one annotator's second vote on a pair (in either order)
is a second vote only with its own id; the migration gives old rows their ids."""

from __future__ import annotations

import json
import sqlite3

import pytest
from typer.testing import CliRunner

from checkeval_core import migrations
from checkeval_core.analysis import rankings as R
from checkeval_core.annotation import pairwise as PW
from checkeval_core.annotation.preferences import (
    PreferenceError,
    derived_vote_id,
    import_preferences,
    preferences,
)
from checkeval_core.cli import app
from checkeval_core.store import open_db
from tests.helpers import RANKING_TASK as TASK
from tests.helpers import bench_source, build_ranking_task, small_task

# MT-Bench human pairs: the full file beside the repository, else the bundled fixture
SHARED_MTB = bench_source() / "pairwise" / "mtbench_human.jsonl"


def _vote_all(db, who: str, n: int) -> None:
    q = PW.pair_queue(db, TASK, who, n_pairs=n)
    while q["next"]:
        nxt = q["next"]
        PW.record_vote(db, TASK, who, nxt["a"]["id"], nxt["b"]["id"],
                       ("A", "B", "tie")[nxt["position"] % 3])
        q = PW.pair_queue(db, TASK, who, n_pairs=n)


def _cli(db_path, *args):
    res = CliRunner().invoke(app, ["--db", str(db_path), *args])
    assert res.exception is None or isinstance(res.exception, SystemExit), res.exception
    return res


def _n_pairs(db_path, rid) -> int:
    res = _cli(db_path, "analyze", "--run", str(rid), "--pairs", "--json")
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)["n_preferences"]


@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
def test_export_then_import_into_the_same_database_keeps_16_votes(db, db_path, tmp_path, fmt):
    rid = build_ranking_task(db, prefs=False, ratings=False)
    _vote_all(db, "alice", 8)
    _vote_all(db, "bob", 8)
    assert _n_pairs(db_path, rid) == 16
    out = tmp_path / f"votes.{fmt}"
    res = _cli(db_path, "preferences", "export", "--task", TASK, "--out", str(out),
               "--format", fmt)
    assert res.exit_code == 0, res.output
    res = _cli(db_path, "preferences", "import", str(out), "--task", TASK)
    assert "16 of them already stored (same vote ids), 0 new" in res.stdout
    for _ in range(2):  # and a second time
        res = _cli(db_path, "preferences", "import", str(out), "--task", TASK, "--json")
        assert res.exit_code == 0, res.output
        summary = json.loads(res.stdout)
        assert summary["n_preferences"] == 16 and summary["n_new"] == 0
        assert summary["n_already_stored"] == 16
        assert _n_pairs(db_path, rid) == 16
    assert db.execute("SELECT COUNT(*) FROM preference").fetchone()[0] == 16
    assert {p["source"] for p in preferences(db, TASK)} == {PW.APP_SOURCE}


def test_an_export_without_vote_ids_is_recognised_by_its_source_column(db, db_path, tmp_path):
    """A file exported before votes had ids names each vote's source, annotator and pair."""
    rid = build_ranking_task(db, prefs=False, ratings=False)
    _vote_all(db, "alice", 4)
    rows_ = PW.export_votes(db, TASK)
    assert all(r["vote_id"] for r in rows_)
    old = "group_id,item_a,item_b,winner,annotator,source\n" + "".join(
        f"{r['group_id']},{r['item_b']},{r['item_a']},"  # listed in the other order
        f"{ {'a': 'b', 'b': 'a', 'tie': 'tie'}[r['winner']] },{r['annotator']},{r['source']}\n"
        for r in rows_)
    res = import_preferences(db, TASK, data=old.encode(), filename="old-export.csv")
    assert res["n_new"] == 0 and res["n_already_stored"] == 4
    assert _n_pairs(db_path, rid) == 4


def test_an_app_vote_id_is_the_pair_in_canonical_order(db):
    pk = small_task(db)
    v = PW.record_vote(db, "duel", "alice", pk[("q0", "s2")], pk[("q0", "s1")], "A")
    vid = db.execute("SELECT vote_id FROM preference").fetchone()[0]
    assert vid == derived_vote_id("app", "alice", "q0:s1", "q0:s2") \
        == derived_vote_id("app", "alice", "q0:s2", "q0:s1")
    # voting again changes the choice, not the id, and adds no row
    PW.record_vote(db, "duel", "alice", pk[("q0", "s2")], pk[("q0", "s1")], "B")
    assert db.execute("SELECT COUNT(*), vote_id FROM preference").fetchone() == (1, vid)
    assert v["preferred"] == "s2"


def test_one_annotators_two_votes_on_a_pair_need_two_ids(db):
    small_task(db)
    both_orders = ("item_a,item_b,winner,annotator\n"
                   "q0:s1,q0:s2,a,ann\n"
                   "q0:s2,q0:s1,a,ann\n")  # the same pair shown the other way round
    with pytest.raises(PreferenceError, match=r"line 3: the same pair and annotator as "
                                              r"votes.csv, line 2 \(in either order"):
        import_preferences(db, "duel", data=both_orders.encode(), filename="votes.csv")
    assert db.execute("SELECT COUNT(*) FROM preference").fetchone()[0] == 0
    asked_twice = ("vote_id,item_a,item_b,winner,annotator\n"
                   "r1,q0:s1,q0:s2,a,ann\n"
                   "r2,q0:s2,q0:s1,a,ann\n")
    res = import_preferences(db, "duel", data=asked_twice.encode(), filename="votes.csv")
    assert res["n_new"] == 2
    assert sorted(p["vote_id"] for p in preferences(db, "duel")) == ["r1", "r2"]
    # the same ids again: nothing new; an id reused for another vote is refused
    assert import_preferences(db, "duel", data=asked_twice.encode(),
                              filename="again.csv")["n_new"] == 0
    with pytest.raises(PreferenceError, match=r"field 'vote_id': 'r1' is already the id of "
                                              r"another vote"):
        import_preferences(db, "duel", data=b"vote_id,item_a,item_b,winner,annotator\n"
                                            b"r1,q1:s1,q1:s2,a,ann\n", filename="x.csv")


def test_repeated_votes_count_as_one_persons_two_votes(db):
    rid = build_ranking_task(db, prefs=False, ratings=False)
    pk = {r[0]: r[1] for r in db.execute("SELECT item_id, id FROM item")}
    PW.record_vote(db, TASK, "alice", pk["g1:sys-best"], pk["g1:sys-low"], "A")
    import_preferences(db, TASK, filename="second.csv", data=(
        b"vote_id,item_a,item_b,winner,annotator\n"
        b"again-1,g1:sys-low,g1:sys-best,b,alice\n"))
    rep = R.pairs_report(db, rid)
    assert rep["n_preferences"] == 2
    rv = rep["repeated_votes"]
    assert rv["n_pairs"] == 1 and rv["n_votes"] == 2 and rv["annotators"] == ["alice"]
    assert "one person's 2 votes" in rv["note"]
    from checkeval_core.store import db_path

    res = _cli(db_path(db), "analyze", "--run", str(rid), "--pairs")
    assert res.exit_code == 0, res.output
    assert "repeated votes: 1 pair carries one person's 2 votes (alice" in res.stdout


def test_migration_gives_old_votes_ids_and_drops_the_pair_constraint(tmp_path, monkeypatch):
    path = tmp_path / "old.db"
    with monkeypatch.context() as m:
        names = [n for n in migrations.migration_names() if n < "m0013"]
        m.setattr(migrations, "migration_names", lambda: names)
        db = open_db(path)
        small_task(db)
        db.execute("INSERT INTO preference (task_id, group_id, item_a, item_b, winner, source, "
                   "annotator, created_at) SELECT 1, 'q0', a.id, b.id, 'a', 'f.csv', 'ann', 'x' "
                   "FROM item a, item b WHERE a.item_id = 'q0:s1' AND b.item_id = 'q0:s2'")
        db.execute("INSERT INTO preference (task_id, group_id, item_a, item_b, winner, source, "
                   "annotator, created_at) SELECT 1, 'q0', b.id, a.id, 'b', 'f.csv', 'ann', 'x' "
                   "FROM item a, item b WHERE a.item_id = 'q0:s1' AND b.item_id = 'q0:s2'")
        before = db.execute("SELECT id, item_a, item_b, winner FROM preference").fetchall()
        db.conn.close()
    db = open_db(path)
    assert db.execute("SELECT id, item_a, item_b, winner FROM preference").fetchall() == before
    ids = [r[0] for r in db.execute("SELECT vote_id FROM preference ORDER BY id")]
    first = derived_vote_id("f.csv", "ann", "q0:s1", "q0:s2")
    assert ids == [first, first + "-2"]
    schema = db.execute("SELECT sql FROM sqlite_master WHERE name = 'preference'").fetchone()[0]
    assert "UNIQUE" not in schema
    with pytest.raises(sqlite3.IntegrityError):
        db.execute("UPDATE preference SET vote_id = ? WHERE id = ?", [ids[0], before[1][0]])


def test_the_rankings_page_says_a_person_voted_twice(db):
    from checkeval_core.analysis.rankings_view import rankings_page

    rid = build_ranking_task(db, prefs=False, ratings=False)
    pk = {r[0]: r[1] for r in db.execute("SELECT item_id, id FROM item")}
    PW.record_vote(db, TASK, "alice", pk["g1:sys-best"], pk["g1:sys-low"], "A")
    line = rankings_page(db, rid, None, 0.1, None, n_boot=20)["pairwise"]["support_line"]
    assert "one person" not in line
    import_preferences(db, TASK, filename="second.csv", data=(
        b"vote_id,item_a,item_b,winner,annotator\n"
        b"again-1,g1:sys-low,g1:sys-best,b,alice\n"))
    line = rankings_page(db, rid, None, 0.1, None, n_boot=20)["pairwise"]["support_line"]
    assert "1 pair carries one person's 2 votes (alice, asked 2 times)" in line


def test_anonymous_votes_on_one_pair_are_kept_and_a_reimport_adds_nothing(db):
    first = import_preferences(db, "mtb", path=SHARED_MTB)
    n = db.execute("SELECT COUNT(*) FROM preference").fetchone()[0]
    assert n == first["n_preferences"] == first["n_new"]
    again = import_preferences(db, "mtb", path=SHARED_MTB)
    assert again["n_new"] == 0 and again["n_already_stored"] == n
    assert db.execute("SELECT COUNT(*) FROM preference").fetchone()[0] == n
