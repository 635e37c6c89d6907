"""AppTest of the Rankings page on a fake-judge run: leaderboard, correlation, Elo, pairwise
agreement, two answers side by side with each question's decision; the empty states."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from tests.helpers import build_ranking_task
from tests.helpers import open_rankings_page as _open  # noqa: F401

APP = str(Path(__file__).resolve().parent.parent / "app.py")


def _df(at: AppTest, column: str):
    """The first table that has ``column`` (only selectable tables carry their key)."""
    return next(d.value for d in at.dataframe if column in d.value.columns)




@pytest.mark.usefixtures("few_groups_allowed")
def test_rankings_page(db):
    build_ranking_task(db)
    at = _open()
    board = at.dataframe(key="rk_board").value
    assert list(board["system"]) == ["sys-best", "sys-mid", "sys-low"]
    assert list(board["rank"]) == [1, 2, 3]
    assert list(board["reference"]) == [1200, 1100, 1000]
    assert (board["CI low"] <= board["score"]).all() and (board["score"] <= board["CI high"]).all()
    assert any("Spearman ρ = 1.00" in m.value and "n = 3 systems" in m.value for m in at.markdown)
    assert len(at.get("plotly_chart")) == 1
    elo = _df(at, "human Elo")
    assert set(elo["system"]) == {"sys-best", "sys-mid", "sys-low"}
    labels = {m.label: m.value for m in at.metric}
    assert labels["Pairs"] == "4" and "Three-way agreement" in labels
    conf = _df(at, "judge: tie")
    assert int(conf.to_numpy().sum()) == 4
    assert len(at.dataframe(key="rk_pairs").value) == 4
    # two answers side by side, as text, with each question's Yes/No and p(Yes)
    codes = [c.value for c in at.code]
    assert codes[0].startswith("apples bananas cherries grapes") and "(sys-mid)" in codes[1]
    qs = _df(at, "p(Yes) A")
    assert list(qs["question"]) == ["Does it mention apples?", "Does it mention bananas?",
                                    "Does it mention cherries?", "Does it mention grapes?"]
    assert set(qs["A"]) <= {"yes", "no"} and qs["p(Yes) B"].notna().all()
    assert (qs["decided"] == "◆").sum() == sum(qs["A"] != qs["B"])
    # pick another query and system: the detail follows
    at.selectbox(key="rk_query").select("g3").run()
    at.selectbox(key="rk_sys_b").select("sys-low").run()
    assert not at.exception, at.exception
    codes = [c.value for c in at.code]
    assert codes[0].startswith("plums quinces") and codes[1].startswith("nothing relevant")
    assert "Does it mention plums?" in set(_df(at, "p(Yes) A")["question"])
    # a huge tie margin: the judge calls every pair a tie
    at.number_input(key="rk_tie").set_value(1.0).run()
    assert {m.label: m.value for m in at.metric}["Judge tie rate"] == "100.0%"


def test_rankings_page_empty_states(db):
    from checkeval_core.datasets import import_file

    import_file(db, None, "empty", kind="instruction", filename="x.csv",
                data=b"id,group_id,system_id,input,output\n1,g,s,q,a\n")
    at = _open()
    assert any("No completed run" in i.value for i in at.info)


def test_rankings_page_without_reference_or_votes(db):
    build_ranking_task(db, prefs=False, ratings=False)
    at = _open()
    infos = " ".join(i.value for i in at.info)
    assert "No reference ratings" in infos and "no human pairwise preferences" in infos
    assert len(at.dataframe(key="rk_board").value) == 3
    assert len(at.get("plotly_chart")) == 0


@pytest.mark.usefixtures("few_groups_allowed")
def test_rankings_page_warns_of_a_position_bias(db):
    from checkeval_core.annotation import pairwise as PW
    from checkeval_core.textsafe import md_escape
    from tests.helpers import RANKING_TASK

    build_ranking_task(db, prefs=False, ratings=False)
    # alice picks the answer shown on the left in 9 of her 10 votes, bob in 1 of 2 plus a tie
    for who, sides in (("alice", "A" * 9 + "B"), ("bob", "AB" + "t")):
        for pair, side in zip(PW.pair_sequence(db, RANKING_TASK, who), sides):
            PW.record_vote(db, RANKING_TASK, who, *PW.shown_order(who, *pair),
                           "tie" if side == "t" else side)
    at = _open()
    warnings = [w.value for w in at.warning]
    alice = md_escape("annotator alice chose the left answer in 9 of 10 non-tie votes (90%, "
                      "95% CI [60%, 98%]): their votes follow position.")
    assert alice in warnings, warnings
    assert not any("bob" in w for w in warnings)
    bias = _df(at, "left chosen")
    assert list(bias["annotator"]) == ["alice", "bob", "all annotators"]
    assert list(bias["left chosen"]) == [9, 1, 10] and list(bias["ties"]) == [0, 1, 1]
    assert list(bias["note"])[0] == "follows position"
    assert {m.label: m.value for m in at.metric}["Pairs"] == "13"


@pytest.mark.usefixtures("few_groups_allowed")
def test_rankings_opens_on_the_reference_run_with_the_one_run_label(db):
    """A small run made after the full one (the tour's 3 items) is newest; the page and its
    calibration picker still open on the full run, labelled with version and items."""
    from checkeval_core.runs import create_run, execute_run
    from checkeval_core.runs.labels import run_labels
    from checkeval_core.store import db_path

    full = build_ranking_task(db)
    small = create_run(db, "rank-demo", "fake", "rocketeval", limit=3)
    execute_run(db_path(db), small)
    at = _open()
    pick = at.selectbox(key="rk_run")
    assert pick.value == full
    want = run_labels(db, [full, small])
    assert pick.options == [want[small], want[full]]
    assert " · v1 · " in want[full] and want[full].endswith("12 items")
    assert want[small].endswith("3 items")
    cal = at.selectbox(key="rk_cal_run")
    assert cal.value == full and cal.options == [want[full]]


@pytest.mark.usefixtures("few_groups_allowed")
def test_rankings_opens_on_the_margin_its_health_box_recommends(db):
    """RocketEval's 0.1 tied 88–99 % of a narrow-scored judge's matches while the health box
    recommended the margin derived from the score spread: the page opens on that one."""
    from checkeval_core.analysis.health import DEFAULT_TIE_MARGIN, opening_tie_margin

    rid = build_ranking_task(db)
    want = opening_tie_margin(db, rid, "mean_p_yes")
    assert want != DEFAULT_TIE_MARGIN
    at = _open()
    assert at.number_input(key="rk_tie").value == pytest.approx(want)
    assert at.button(key="rk_tie_derive").disabled  # already the derived margin
    at.number_input(key="rk_tie").set_value(0.3).run()  # a person's choice stays
    at.run()
    assert at.number_input(key="rk_tie").value == pytest.approx(0.3)
