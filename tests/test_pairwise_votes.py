"""Pairwise votes given in the app: which pairs an annotator sees, in which order, how a vote
is stored (canonical order, shown order kept, upsert per annotator and pair), and that the
ranking analysis counts app votes beside imported ones."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from checkeval_core.analysis import rankings as R
from checkeval_core.annotation import pairwise as PW
from checkeval_core.annotation.preferences import human_data_stamp, import_preferences
from checkeval_core.store import NotFound
from tests.helpers import DUEL_SYSTEMS as SYSTEMS
from tests.helpers import PREFS_CSV, build_ranking_task, run_cli, small_task
from tests.helpers import RANKING_TASK as TASK


def test_sequence_covers_every_pair_once_balanced_and_deterministic(db):
    pk = small_task(db)
    system = {v: k[1] for k, v in pk.items()}
    group = {v: k[0] for k, v in pk.items()}
    seq = PW.pair_sequence(db, "duel", "alice", seed=0)
    assert len(seq) == len(set(seq)) == 3 * 6  # C(4, 2) pairs per query
    assert all(a < b and group[a] == group[b] and system[a] != system[b] for a, b in seq)
    assert seq == PW.pair_sequence(db, "duel", "alice", seed=0)
    assert seq != PW.pair_sequence(db, "duel", "alice", seed=1)
    assert seq != PW.pair_sequence(db, "duel", "bob", seed=0)
    # queries take turns, and every prefix spreads over the systems: no system is shown more
    # than twice as often as another (a shuffled order reaches gaps of 4 and more)
    assert len({group[a] for a, _ in seq[:3]}) == 3
    for seed in range(10):
        s = PW.pair_sequence(db, "duel", "carol", seed=seed)
        for n in range(1, len(s) + 1):
            shown = Counter({x: 0 for x in SYSTEMS})
            shown.update(x for a, b in s[:n] for x in (system[a], system[b]))
            assert max(shown.values()) - min(shown.values()) <= 2, (seed, n, shown)


def test_tasks_with_pairs(db):
    small_task(db)
    from checkeval_core.datasets import import_file

    import_file(db, None, "solo", kind="instruction", filename="s.jsonl",
                data=b'{"id": "x", "group_id": "g", "system_id": "only", "output": "o"}')
    assert PW.pairwise_tasks(db) == ["duel"]


def test_shown_order_is_seeded_per_annotator_and_pair():
    orders = {PW.shown_order(f"ann{i}", 3, 7) for i in range(20)}
    assert orders == {(3, 7), (7, 3)}  # randomised across annotators
    assert PW.shown_order("ann1", 3, 7) == PW.shown_order("ann1", 7, 3)  # per pair, not order


@pytest.mark.parametrize("shown_first_low", [True, False])
def test_vote_undoes_the_shown_order(db, shown_first_low):
    pk = small_task(db)
    lo, hi = sorted((pk[("q0", "s1")], pk[("q0", "s2")]))
    a, b = (lo, hi) if shown_first_low else (hi, lo)
    v = PW.record_vote(db, "duel", "alice", a, b, "A")  # the answer shown first wins
    stored = db.execute("SELECT item_a, item_b, winner, shown_first, source, annotator FROM "
                        "preference").fetchall()
    assert stored == [(lo, hi, "a" if shown_first_low else "b", a, PW.APP_SOURCE, "alice")]
    winner_system = "s1" if a == pk[("q0", "s1")] else "s2"
    assert v["preferred"] == winner_system and v["choice"] == "A"
    assert v["system_a_shown"] == winner_system
    assert PW.pair_queue(db, "duel", "alice")["choices"] == {"A": 1, "B": 0, "tie": 0}
    v = PW.record_vote(db, "duel", "alice", a, b, "B")  # changing the vote replaces it
    assert v["choice"] == "B" and v["preferred"] != winner_system
    assert db.execute("SELECT COUNT(*) FROM preference").fetchone()[0] == 1


def test_same_vote_twice_is_idempotent_and_changes_move_the_stamp(db):
    pk = small_task(db)
    a, b = pk[("q1", "s3")], pk[("q1", "s4")]
    first = PW.record_vote(db, "duel", "alice", a, b, "tie")
    stamp = human_data_stamp(db)
    again = PW.record_vote(db, "duel", "alice", a, b, "tie")
    assert again == first and human_data_stamp(db) == stamp
    assert db.execute("SELECT COUNT(*) FROM preference").fetchone()[0] == 1
    PW.record_vote(db, "duel", "alice", a, b, "A")
    assert human_data_stamp(db) != stamp  # the Rankings page's cache sees a changed vote
    PW.record_vote(db, "duel", "bob", b, a, "A")  # another annotator: a row of their own
    assert db.execute("SELECT COUNT(*) FROM preference").fetchone()[0] == 2
    # the vote a change replaced stays on record (it was overwritten without a trace)
    hist = [json.loads(d) for (d,) in db.execute(
        "SELECT detail FROM review_event WHERE action = 'change_vote' AND actor = 'alice'")]
    assert [(h["was"], h["now"]) for h in hist] == [("tie", "a" if a < b else "b")]


def test_bad_votes_change_nothing(db):
    pk = small_task(db)
    a, b, other = pk[("q0", "s1")], pk[("q0", "s2")], pk[("q1", "s2")]
    with pytest.raises(ValueError, match="same query"):
        PW.record_vote(db, "duel", "alice", a, other, "A")
    with pytest.raises(ValueError, match="choice"):
        PW.record_vote(db, "duel", "alice", a, b, "C")
    with pytest.raises(ValueError, match="name"):
        PW.record_vote(db, "duel", "  ", a, b, "A")
    with pytest.raises(NotFound):
        PW.record_vote(db, "duel", "alice", a, 999_999, "A")
    assert db.execute("SELECT COUNT(*) FROM preference").fetchone()[0] == 0


def test_queue_skips_voted_pairs_and_hides_systems(db):
    small_task(db)
    q = PW.pair_queue(db, "duel", "alice", n_pairs=4)
    assert (q["n_pairs"], q["n_voted"], q["n_candidates"]) == (4, 0, 18)
    assert (q["n_queries"], q["n_systems"]) == (3, 4)
    nxt = q["next"]
    assert nxt["position"] == 1
    assert "system_id" not in nxt["a"] and "item_id" not in nxt["a"]  # blind
    assert (nxt["a"]["id"], nxt["b"]["id"]) == PW.shown_order(
        "alice", *PW.pair_sequence(db, "duel", "alice")[0])
    PW.record_vote(db, "duel", "alice", nxt["a"]["id"], nxt["b"]["id"], "B")
    q2 = PW.pair_queue(db, "duel", "alice", n_pairs=4)
    assert q2["n_voted"] == 1 and q2["next"]["position"] == 2
    assert PW.pair_queue(db, "duel", "bob", n_pairs=4)["n_voted"] == 0
    for _ in range(3):
        n = PW.pair_queue(db, "duel", "alice", n_pairs=4)["next"]
        PW.record_vote(db, "duel", "alice", n["a"]["id"], n["b"]["id"], "tie")
    done = PW.pair_queue(db, "duel", "alice", n_pairs=4)
    assert done["next"] is None and done["choices"] == {"A": 0, "B": 1, "tie": 3}
    assert PW.pair_queue(db, "duel", "alice", n_pairs=5)["next"]["position"] == 5


def _pks(db):
    return {r[0]: r[1] for r in db.execute("SELECT item_id, id FROM item")}


def test_app_vote_enters_human_elo_and_pair_accuracy(db):
    rid = build_ranking_task(db, prefs=False)
    before_pairs = R.pairs_report(db, rid)
    before = R.rankings_report(db, rid, n_boot=50)
    assert before_pairs["n_preferences"] == 0 and before["human_elo"]["n_matches"] == 0
    pk = _pks(db)
    # a person prefers the low system's answer: the judge (which scores sys-best higher)
    # now disagrees with the human evidence on that pair
    PW.record_vote(db, TASK, "alice", pk["g1:sys-best"], pk["g1:sys-low"], "B")
    pairs = R.pairs_report(db, rid)
    assert pairs["n_preferences"] == 1 and len(pairs["pairs"]) == 1
    p = pairs["pairs"][0]
    assert (p["source"], p["annotator"], p["judge"]) == (PW.APP_SOURCE, "alice", "a")
    assert p["gold"] == "b" and pairs["accuracy"] == 0.0
    human = R.rankings_report(db, rid, n_boot=50)["human_elo"]
    assert human["n_matches"] == 1
    elo = {s["system"]: s["rating"] for s in human["systems"]}
    assert elo["sys-low"] > elo["sys-best"]


def test_app_votes_count_beside_imported_ones(db):
    rid = build_ranking_task(db, prefs=False)
    import_preferences(db, TASK, data=PREFS_CSV.encode(), filename="prefs.csv")
    base = R.pairs_report(db, rid)
    base_elo = R.rankings_report(db, rid, n_boot=50)["human_elo"]
    pk = _pks(db)
    # the same pair as an imported vote, voted the other way in the app: both rows count
    PW.record_vote(db, TASK, "bob", pk["g1:sys-low"], pk["g1:sys-best"], "A")
    now = R.pairs_report(db, rid)
    assert now["n_preferences"] == base["n_preferences"] + 1
    assert {p["source"] for p in now["pairs"]} == {"prefs.csv", PW.APP_SOURCE}
    assert now["accuracy"] < base["accuracy"]
    elo = R.rankings_report(db, rid, n_boot=50)["human_elo"]
    assert elo["n_matches"] == base_elo["n_matches"] + 1
    gap = {h["system"]: h["rating"] for h in elo["systems"]}
    gap0 = {h["system"]: h["rating"] for h in base_elo["systems"]}
    assert gap["sys-best"] - gap["sys-low"] < gap0["sys-best"] - gap0["sys-low"]


def test_export_cli_round_trips_app_votes(db, db_path, tmp_path):
    import csv

    from checkeval_core.store import open_db

    pk = small_task(db)
    PW.record_vote(db, "duel", "alice", pk[("q0", "s2")], pk[("q0", "s1")], "A")  # s2 wins
    PW.record_vote(db, "duel", "=bob", pk[("q1", "s3")], pk[("q1", "s4")], "tie")
    import_preferences(db, "duel", data=b"group_id,item_a,item_b,winner\nq2,s1,s2,b\n",
                       filename="imported.csv")
    out = tmp_path / "votes.csv"
    r = run_cli(["--db", str(db_path),
                 "preferences", "export", "--task", "duel", "--out", str(out),
                 "--source", "app"])
    assert r.returncode == 0, r.stderr
    assert "wrote 2 votes" in r.stdout
    got = list(csv.DictReader(out.open()))
    assert [(g["item_a"], g["item_b"], g["winner"], g["annotator"], g["shown_first"])
            for g in got] == [("q0:s1", "q0:s2", "b", "alice", "q0:s2"),
                              ("q1:s3", "q1:s4", "tie", "'=bob", "q1:s3")]  # formula-safe
    assert len(PW.export_votes(db, "duel")) == 3  # without --source: imported ones too
    # the file imports into another database with the same items: same winners
    other = open_db(tmp_path / "other.db")
    small_task(other)
    res = import_preferences(other, "duel", path=out)
    assert res["n_preferences"] == 2 and res["winners"] == {"a": 0, "b": 1, "tie": 1}
