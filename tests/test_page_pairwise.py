"""AppTest of the Pairwise votes page: blind pair, vote stored in the preference table with the
annotator, systems revealed after the vote, a repeated click changes nothing."""

from pathlib import Path

from streamlit.testing.v1 import AppTest

from checkeval_core.annotation import pairwise as PW
from tests.helpers import DUEL_SYSTEMS as SYSTEMS
from tests.helpers import small_task

APP = str(Path(__file__).resolve().parent.parent / "app.py")


def _page():
    at = AppTest.from_file(APP, default_timeout=120).run()
    at.switch_page("app_pages/compare_answers.py").run()
    assert not at.exception, at.exception
    return at


def _shown(at) -> str:
    return " ".join(str(t.value) for t in at.text) + " ".join(m.value for m in at.markdown)


def test_page_without_name_or_tasks(db):
    at = _page()
    assert any("name" in i.value for i in at.info)
    at.text_input(key="pw_name").input("alice").run()
    assert not at.exception
    assert any("No task has two systems' answers" in i.value for i in at.info)


def test_vote_is_blind_stored_and_revealed(db):
    small_task(db)
    at = _page()
    at.text_input(key="pw_name").input("alice").run()
    assert not at.exception
    nxt = PW.pair_queue(db, "duel", "alice")["next"]
    a, b = nxt["a"]["id"], nxt["b"]["id"]
    # both answers on the page, no system named before the vote
    assert nxt["a"]["output"] in _shown(at) and nxt["b"]["output"] in _shown(at)
    assert not any(s in m.value for s in SYSTEMS for m in [*at.markdown, *at.success])
    assert "Pair 1 of 18" in " ".join(h.value for h in at.subheader)
    at.button(key=f"pw|B|{a}|{b}|alice").click().run()
    assert not at.exception
    rows = db.execute("SELECT item_a, item_b, winner, shown_first, source, annotator FROM "
                      "preference").fetchall()
    lo, hi = sorted((a, b))
    assert rows == [(lo, hi, "a" if b == lo else "b", a, PW.APP_SOURCE, "alice")]
    voted = PW.vote_detail(db, "duel", "alice", a, b)
    msg = " ".join(s.value for s in at.success)
    assert f"B was {voted['system_b_shown']}" in msg and "you chose B" in msg
    assert "1 of 18 pairs voted" in at.get("progress")[0].proto.text
    assert any("Your votes on this task (1): A 0, B 1, tie 0" in c.value for c in at.caption)
    assert "Pair 2 of 18" in " ".join(h.value for h in at.subheader)
    # the next person on this browser does not see alice's vote
    at.button(key="pw_name_change").click().run()
    assert at.text_input(key="pw_name").value == ""
    at.text_input(key="pw_name").input("bob").run()
    assert not at.success and "0 of 18 pairs voted" in at.get("progress")[0].proto.text
    # a second click of the same choice on the same pair (as a delayed double click would
    # send) stores nothing new
    PW.record_vote(db, "duel", "alice", a, b, "B")
    assert db.execute("SELECT COUNT(*) FROM preference").fetchone()[0] == 1


def test_all_voted_says_so(db):
    small_task(db, n_queries=1)
    for a, b in PW.pair_sequence(db, "duel", "bob"):
        PW.record_vote(db, "duel", "bob", a, b, "tie")
    at = _page()
    at.text_input(key="pw_name").input("bob").run()
    assert not at.exception
    assert any("Every pair assigned to you has your vote" in i.value for i in at.info)
    assert "6 of 6 pairs voted" in at.get("progress")[0].proto.text


def test_a_given_name_leaves_no_field_for_the_vote_keys(db):
    """Esc does not leave a Streamlit text field, so A / B / T pressed after the name went
    into it: once given, the name is text with a *Change name* button, not a field."""
    small_task(db)
    at = _page()
    at.text_input(key="pw_name").input("alice").run()
    assert not at.exception, at.exception
    assert not [t for t in at.text_input if t.key == "pw_name"]
    assert any("Annotator: **alice**" in m.value for m in at.markdown)
    assert "0 of 18 pairs voted" in at.get("progress")[0].proto.text
