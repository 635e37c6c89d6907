"""Importing human pairwise preferences and reference ratings (issue 14): both shapes, the
shared benchmark files, and bad input refused with file / line / field, changing nothing."""

from __future__ import annotations

import json

import pytest

from checkeval_core.annotation.preferences import (
    PreferenceError,
    group_id_for_input,
    import_preferences,
    import_ratings,
    preferences,
    rating_sources,
    ratings,
)
from checkeval_core.datasets import import_file
from tests.helpers import bench_source

# the benchmarks beside the repository when a checkout has them, else the small fixtures
SHARED = bench_source()


def _items(db, task="t"):
    recs = [{"id": f"{g}:{s}", "group_id": g, "system_id": s, "input": f"query {g}",
             "output": f"answer of {s} to {g}"} for g in ("q1", "q2") for s in ("m1", "m2", "m3")]
    import_file(db, None, task, kind="instruction", filename="items.jsonl",
                data="\n".join(json.dumps(r) for r in recs).encode())


def _count(db, table):
    return db.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]


def test_item_id_preferences_all_winner_spellings(db):
    _items(db)
    csv = ("group_id,item_a,item_b,winner,annotator\n"
           "q1,q1:m1,q1:m2,a,ann1\n"
           "q1,m2,m3,2,ann1\n"          # system ids within the group; 2 = b
           ",q2:m1,q2:m3,0,ann2\n"      # no group: item ids; 0 = tie
           "q2,q2:m2,q2:m3,model_a,\n")
    res = import_preferences(db, "t", data=csv.encode(), filename="votes.csv")
    assert res["shape"] == "item_ids" and res["n_preferences"] == 4
    assert res["winners"] == {"a": 2, "b": 1, "tie": 1} and res["n_groups"] == 2
    got = {(p["item_a"], p["item_b"]): (p["winner"], p["annotator"], p["group_id"])
           for p in preferences(db, "t")}
    assert got[("q1:m2", "q1:m3")] == ("b", "ann1", "q1")
    assert got[("q2:m1", "q2:m3")] == ("tie", "ann2", "q2")
    # re-importing the same file replaces its rows instead of duplicating them
    import_preferences(db, "t", data=csv.replace("q1:m1,q1:m2,a", "q1:m1,q1:m2,b").encode(),
                       filename="votes.csv")
    assert _count(db, "preference") == 4
    assert {p["winner"] for p in preferences(db, "t") if p["item_a"] == "q1:m1"} == {"b"}


def test_bad_preference_lines_named_and_nothing_written(db):
    _items(db)
    bad = ("group_id,item_a,item_b,winner\n"
           "q1,q1:m1,q1:m2,a\n"
           "q1,q1:m1,nope,a\n"          # line 3: unknown item
           "q1,q1:m1,q1:m3,maybe\n"     # line 4: bad winner
           ",q1:m1,q2:m2,a\n"           # line 5: two different queries
           "q1,q1:m1,q1:m1,b\n")        # line 6: same item twice
    with pytest.raises(PreferenceError) as e:
        import_preferences(db, "t", data=bad.encode(), filename="votes.csv")
    msg = str(e.value)
    assert "votes.csv, line 3, field 'item_b': task 't' has no item 'nope'" in msg
    assert "votes.csv, line 4, field 'winner'" in msg and "'maybe'" in msg
    assert "votes.csv, line 5, field 'item_b'" in msg and "same query" in msg
    assert "line 6" in msg
    assert _count(db, "preference") == 0
    with pytest.raises(PreferenceError, match="unknown shape"):
        import_preferences(db, "t", data=b"a,b\n1,2\n", filename="x.csv")
    with pytest.raises(PreferenceError, match="line 2.*not valid JSON"):
        import_preferences(db, "t", data=b'{"item_a": "q1:m1"}\n{oops\n', filename="x.jsonl")


def test_self_contained_pairs_create_items(db):
    rows = [{"pair_id": "p1", "input": "Q one", "output_1": "ans A", "output_2": "ans B",
             "label": 1, "model_1": "alpha", "model_2": "beta"},
            {"pair_id": "p2", "input": "Q one", "output_1": "ans B", "output_2": "ans C",
             "label": 2, "model_1": "beta", "model_2": "gamma"},
            {"pair_id": "p3", "input": "Q two", "output_1": "x", "output_2": "y", "label": "tie",
             "model_1": "alpha", "model_2": "gamma"}]
    data = "\n".join(json.dumps(r) for r in rows).encode()
    res = import_preferences(db, "pairs", data=data, filename="pairs.jsonl")
    assert res["shape"] == "pairs" and res["n_preferences"] == 3 and res["n_groups"] == 2
    assert res["n_items_created"] == 5  # beta's answer to "Q one" is shared by p1 and p2
    kind = db.execute("SELECT kind FROM task WHERE name = 'pairs'").fetchone()[0]
    assert kind == "instruction"
    g1 = group_id_for_input("Q one")
    items = {r[0]: r[1:] for r in db.execute("SELECT item_id, group_id, system_id, source, "
                                             "output FROM item")}
    assert items[f"{g1}:beta"] == (g1, "beta", "Q one", "ans B")
    prefs = {p["item_a"]: p["winner"] for p in preferences(db, "pairs")}
    assert prefs[f"{g1}:alpha"] == "a" and prefs[f"{g1}:beta"] == "b"
    # idempotent re-import; a different answer for the same system is refused with its line
    assert import_preferences(db, "pairs", data=data, filename="pairs.jsonl")[
        "n_items_created"] == 0
    bad = json.dumps({**rows[0], "output_1": "another answer"}).encode()
    with pytest.raises(PreferenceError, match="pairs2.jsonl, line 1, field 'output_1'"):
        import_preferences(db, "pairs", data=bad, filename="pairs2.jsonl")
    _items(db, "summ")
    db.execute("UPDATE task SET kind = 'summarization' WHERE name = 'summ'")
    with pytest.raises(PreferenceError, match="kind 'summarization'"):
        import_preferences(db, "summ", data=data, filename="pairs.jsonl")


def test_shared_mtbench_pairs(db):
    path = SHARED / "pairwise/mtbench_human.jsonl"
    pairs = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    res = import_preferences(db, "mtb", path=path)
    n, queries = len(pairs), len({p["input"] for p in pairs})
    assert res["n_preferences"] == n and res["n_groups"] == queries
    if n == 200:  # the full MT-Bench human judgments: 200 votes on 75 questions
        assert queries == 75
    assert res["winners"]["tie"] == 0 and res["winners"]["a"] + res["winners"]["b"] == n
    n_items = _count(db, "item")
    assert n_items == res["n_items_created"] <= 2 * n  # an answer in two pairs is one item
    if queries < n:
        assert n_items < 2 * n


def test_ratings_csv_and_models_json(db):
    _items(db)
    res = import_ratings(db, "t", data=b"system_id,rating,lower,upper\nm1,1200,1190,1210\n"
                                       b"m2,1100,,\nzz,900,,\n", filename="ref.csv")
    assert res["source"] == "ref.csv" and res["matched"] == ["m1", "m2"]
    assert res["unmatched"] == ["zz"]
    r = {x["system_id"]: x for x in ratings(db, "t", "ref.csv")}
    assert r["m1"]["lower"] == 1190 and r["m2"]["upper"] is None
    res = import_ratings(db, "t", path=SHARED / "alpacaeval/models.json")
    assert res["source"] == "arena_elo" and res["n_ratings"] == 22
    assert rating_sources(db, "t") == ["arena_elo", "ref.csv"]
    gpt = next(x for x in ratings(db, "t") if x["system_id"] == "gpt-4-turbo-2024-04-09")
    assert (gpt["rating"], gpt["lower"], gpt["upper"]) == (1246.1, 1241.11, 1254.25)
    lc = import_ratings(db, "t", path=SHARED / "alpacaeval/models.json",
                        rating_field="alpacaeval2_lc_winrate")
    assert lc["source"] == "alpacaeval2_lc_winrate" and lc["n_ratings"] == 22
    # re-import replaces the source's rows
    import_ratings(db, "t", data=b"system_id,rating\nm1,5\n", filename="ref.csv")
    assert [x["system_id"] for x in ratings(db, "t", "ref.csv")] == ["m1"]
    assert import_ratings(db, "t", data=b'{"m1": 3, "m2": 4}', filename="d.json")[
        "n_ratings"] == 2


def test_bad_ratings_refused_atomically(db):
    _items(db)
    bad = b"system_id,rating,lower,upper\nm1,1200,,\nm2,high,,\nm1,1000,,\nm3,10,20,30\n"
    with pytest.raises(PreferenceError) as e:
        import_ratings(db, "t", data=bad, filename="ref.csv")
    msg = str(e.value)
    assert "ref.csv, line 3, field 'rating': 'high' is not a number" in msg
    assert "ref.csv, line 4, field 'system_id': 'm1' already rated on ref.csv, line 2" in msg
    assert "ref.csv, line 5" in msg and "does not contain the rating" in msg
    assert _count(db, "system_rating") == 0
    with pytest.raises(PreferenceError, match="no 'rating' column"):
        import_ratings(db, "t", data=b"system_id,score\nm1,3\n", filename="r.csv")


def test_size_limit(db, monkeypatch):
    from checkeval_core import safeio

    _items(db)
    monkeypatch.setitem(safeio.LIMITS, "import_bytes", 50)
    with pytest.raises(PreferenceError, match="allowed for one import"):
        import_ratings(db, "t", data=b"system_id,rating\n" + b"m1,1\n" * 20, filename="r.csv")
    assert _count(db, "system_rating") == 0
