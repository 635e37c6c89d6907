"""Position bias of pairwise votes: how often the answer shown on the left (A) won, per
annotator and overall, with a Wilson 95 % interval and a warning when it excludes 0.5;
undefined values say why. Expected intervals are computed by hand from the Wilson formula
(z = 1.959964):

    centre = (k + z²/2) / (n + z²),  half = z · sqrt(k(n−k)/n + z²/4) / (n + z²)

    k/n = 9/10  → [0.5958, 0.9821]   6/10 → [0.3127, 0.8318]
          15/20 → [0.5313, 0.8881]   1/10 → [0.0179, 0.4042]
"""

from __future__ import annotations

import json

import pytest

from checkeval_core.analysis import rankings as R
from checkeval_core.analysis.rankings_view import position_bias_view
from checkeval_core.annotation import pairwise as PW
from checkeval_core.annotation import position_bias as PB
from checkeval_core.annotation.preferences import import_preferences
from tests.helpers import PREFS_CSV, build_ranking_task, run_cli
from tests.helpers import RANKING_TASK as TASK


def _vote(annotator: str, side: str, n: int, low_first: bool) -> dict:
    """A stored vote on items (2n, 2n+1) where the annotator clicked ``side`` (A = left,
    B = right, tie); ``low_first``: the smaller item (``item_a``) was shown as A."""
    a, b = 2 * n, 2 * n + 1
    first = a if low_first else b
    if side == "tie":
        winner = "tie"
    else:
        chosen = first if side == "A" else (b if first == a else a)
        winner = "a" if chosen == a else "b"
    return {"annotator": annotator, "winner": winner, "item_a": a, "item_b": b,
            "shown_first": first}


def _votes(annotator: str, left: int, right: int, ties: int = 0, start: int = 0) -> list[dict]:
    sides = ["A"] * left + ["B"] * right + ["tie"] * ties
    # alternate which stored item was shown first, so both canonical orders are exercised
    return [_vote(annotator, s, start + i, i % 2 == 0) for i, s in enumerate(sides)]


def test_vote_helper_undoes_the_canonical_order():
    assert _vote("x", "A", 0, True)["winner"] == "a"
    assert _vote("x", "A", 0, False)["winner"] == "b"
    assert _vote("x", "B", 0, False)["winner"] == "a"


def test_per_annotator_and_overall_against_hand_computed_values():
    votes = (_votes("alice", 9, 1, ties=2) + _votes("bob", 6, 4, start=100)
             + _votes("carol", 0, 0, ties=3, start=200)
             + [{"annotator": "dave", "winner": "a", "item_a": 1, "item_b": 2,
                 "shown_first": None},
                {"annotator": "dave", "winner": "tie", "item_a": 3, "item_b": 4}])
    out = PB.position_bias(votes)
    by = {s["annotator"]: s for s in out["annotators"]}
    assert list(by) == ["alice", "bob", "carol", "dave"]

    a = by["alice"]
    assert (a["n_votes"], a["n_ordered"], a["n_ties"], a["n_decisive"], a["n_left"]) == \
        (12, 12, 2, 10, 9)
    assert a["share"] == 0.9 and a["ci"] == pytest.approx([0.5958, 0.9821], abs=1e-4)
    assert a["follows_position"] and a["reason"] is None
    assert a["warning"] == ("annotator alice chose the left answer in 9 of 10 non-tie votes "
                            "(90%, 95% CI [60%, 98%]): their votes follow position.")

    b = by["bob"]
    assert (b["n_decisive"], b["n_left"], b["share"]) == (10, 6, 0.6)
    assert b["ci"] == pytest.approx([0.3127, 0.8318], abs=1e-4)
    assert not b["follows_position"] and b["warning"] is None and b["reason"] is None

    c = by["carol"]  # only ties: no share, and it says why
    assert (c["n_ordered"], c["n_ties"], c["n_decisive"]) == (3, 3, 0)
    assert c["share"] is None and c["ci"] == [None, None] and c["reason"] == PB.ONLY_TIES

    d = by["dave"]  # imported votes: no recorded order
    assert (d["n_votes"], d["n_ordered"]) == (2, 0)
    assert d["share"] is None and d["reason"] == PB.NO_ORDER and d["warning"] is None

    o = out["overall"]
    assert o["annotator"] is None
    assert (o["n_votes"], o["n_ordered"], o["n_ties"], o["n_decisive"], o["n_left"]) == \
        (27, 25, 5, 20, 15)
    assert o["share"] == 0.75 and o["ci"] == pytest.approx([0.5313, 0.8881], abs=1e-4)
    assert o["warning"] == ("all annotators together chose the left answer in 15 of 20 non-tie "
                            "votes (75%, 95% CI [53%, 89%]): the votes follow position.")
    assert out["warnings"] == [a["warning"], o["warning"]]


def test_right_bias_unnamed_annotator_and_undefined_cases():
    r = PB.position_bias(_votes("", 1, 9))
    s = r["annotators"][0]
    assert s["ci"] == pytest.approx([0.0179, 0.4042], abs=1e-4) and s["follows_position"]
    assert s["warning"].startswith("annotator (no name) chose the left answer in 1 of 10")
    assert s["warning"].endswith("(they favour the right answer).")

    empty = PB.position_bias([])
    assert empty["annotators"] == [] and empty["warnings"] == []
    assert empty["overall"]["reason"] == PB.NO_VOTES and empty["overall"]["share"] is None

    # an order naming neither item is not a recorded order
    odd = PB.position_bias([{"annotator": "x", "winner": "a", "item_a": 1, "item_b": 2,
                             "shown_first": 7}])
    assert odd["overall"]["n_ordered"] == 0 and odd["overall"]["reason"] == PB.NO_ORDER


def test_view_rows_caption_and_reasons():
    two = position_bias_view(PB.position_bias(_votes("alice", 9, 1, ties=2)
                                              + _votes("bob", 6, 4, start=100)))
    assert [r["annotator"] for r in two["rows"]] == ["alice", "bob", "all annotators"]
    assert two["rows"][0]["note"] == "follows position" and two["rows"][1]["note"] == ""
    assert two["rows"][0]["votes with order"] == 12 and two["rows"][0]["left chosen"] == 9
    assert len(two["warnings"]) == 2 and "Wilson" in two["caption"]
    # one annotator: no overall row repeating theirs, one warning
    one = position_bias_view(PB.position_bias(_votes("alice", 9, 1)))
    assert [r["annotator"] for r in one["rows"]] == ["alice"] and len(one["warnings"]) == 1
    ties = position_bias_view(PB.position_bias(_votes("carol", 0, 0, ties=3)))
    assert ties["rows"][0]["left share"] is None and ties["rows"][0]["note"] == PB.ONLY_TIES
    imported = position_bias_view(PB.position_bias(
        [{"annotator": "", "winner": "a", "item_a": 1, "item_b": 2, "shown_first": None}]))
    assert imported["rows"] == [] and "no votes with a recorded order" in imported["caption"]
    assert position_bias_view(PB.position_bias([]))["caption"] is None


def _left_votes(db, annotator: str, n_left: int, n_right: int) -> None:
    """``annotator`` votes in the app on their first pairs: the left answer ``n_left`` times,
    then the right one ``n_right`` times."""
    seq = PW.pair_sequence(db, TASK, annotator)[:n_left + n_right]
    for i, pair in enumerate(seq):
        shown_a, shown_b = PW.shown_order(annotator, *pair)
        PW.record_vote(db, TASK, annotator, shown_a, shown_b, "A" if i < n_left else "B")


@pytest.mark.usefixtures("few_groups_allowed")
def test_pairs_report_and_cli_carry_position_bias(db, db_path):
    rid = build_ranking_task(db, prefs=False)
    import_preferences(db, TASK, data=PREFS_CSV.encode(), filename="prefs.csv")  # no order
    _left_votes(db, "alice", 9, 1)
    pb = R.pairs_report(db, rid)["position_bias"]
    o = pb["overall"]
    assert (o["n_votes"], o["n_ordered"], o["n_decisive"], o["n_left"]) == (14, 10, 10, 9)
    assert o["ci"] == pytest.approx([0.5958, 0.9821], abs=1e-4)
    by = {s["annotator"]: s for s in pb["annotators"]}
    assert by[""]["reason"] == PB.NO_ORDER and by["alice"]["follows_position"]

    r = run_cli(["analyze", "--run", str(rid), "--pairs", "--json"], db=db_path)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert {"accuracy", "tie_rate", "three_way", "n_pairs", "confusion", "pairs"} <= set(out)
    assert out["position_bias"]["overall"]["n_left"] == 9
    assert out["position_bias"]["warnings"] == pb["warnings"]
    r = run_cli(["analyze", "--run", str(rid), "--pairs"], db=db_path)
    assert "position bias: left answer chosen in 9 of 10 non-tie votes (90%" in r.stdout
    assert "position bias: annotator alice chose the left answer in 9 of 10" in r.stdout
