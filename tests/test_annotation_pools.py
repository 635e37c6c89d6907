"""Pools (issue 35 §3): each item needs k answers from k different people; the next item is
one the person has not answered, that still needs answers and that nobody else holds; claims
expire or are released; a coordinator hands a person's open items on; progress per person."""

from datetime import UTC, datetime, timedelta

import pytest

from checkeval_core.annotation import jobs as J
from checkeval_core.annotation import pools as P
from checkeval_core.people import people_answers, people_stamp
from checkeval_core.team import Actor, Denied, acting_as, grant
from tests.helpers import item_button, make_runs_task

T0 = datetime.now(UTC).replace(microsecond=0) - timedelta(hours=2)  # the past, any day


def at(minutes: float) -> datetime:
    return T0 + timedelta(minutes=minutes)


@pytest.fixture
def pool(db, tmp_path):
    task = make_runs_task(db, tmp_path)
    pks = [r[0] for r in db.execute("SELECT id FROM item ORDER BY id LIMIT 3")]
    jid, created = P.create_pool(db, task, 2, item_ids=pks, coordinator="cora")
    assert created
    assert P.create_pool(db, task, 2, item_ids=pks, coordinator="cora") == (jid, False)
    return jid, pks


def answer_all(db, jid, who, item, value="yes"):
    for q in J.job_questions(db, jid, item):
        J.save_answer(db, jid, who, item, q["id"], value)


def test_next_item_claims_and_keeps_serving_the_held_item(db, pool):
    jid, (i1, i2, i3) = pool
    assert P.next_item(db, jid, "ann", now=at(0)) == i1
    assert P.next_item(db, jid, "ann", now=at(1)) == i1  # held: the same item again
    assert P.next_item(db, jid, "bob", now=at(1)) == i2  # i1 is held by ann
    answer_all(db, jid, "ann", i1)
    P.submit(db, jid, "ann", i1, now=at(2))
    # items that have answers already come first: cid finishes i1
    assert P.next_item(db, jid, "cid", now=at(3)) == i1
    assert P.next_item(db, jid, "ann", now=at(3)) == i3  # never i1 again, i2 is held
    answer_all(db, jid, "cid", i1, "no")
    P.submit(db, jid, "cid", i1, now=at(4))
    # i1 has its k = 2 answers: served to nobody any more
    assert P.next_item(db, jid, "dee", now=at(5)) is None  # i2 held by bob, i3 by ann
    with pytest.raises(ValueError, match="already done"):
        P.submit(db, jid, "cid", i1, now=at(5))


def test_expired_and_released_claims_return_to_the_pool(db, pool):
    jid, (i1, i2, _) = pool
    assert P.next_item(db, jid, "ann", now=at(0)) == i1
    assert P.next_item(db, jid, "bob", now=at(10)) == i2
    # ann's claim (30 min) has expired at 31: i1 goes to dee
    assert P.next_item(db, jid, "dee", now=at(31)) == i1
    answer_all(db, jid, "ann", i1)
    before = db.execute("SELECT status, expires_at FROM annotation_assignment ORDER BY id"
                        ).fetchall()
    with pytest.raises(ValueError, match="expired and it went to someone else"):
        P.submit(db, jid, "ann", i1, now=at(32))
    assert db.execute("SELECT status, expires_at FROM annotation_assignment ORDER BY id"
                      ).fetchall() == before
    # bob gives i2 back: the next person gets it at once
    assert P.release(db, jid, "bob", i2, now=at(33))
    assert P.next_item(db, jid, "eve", now=at(34)) == i2
    # an expired claim nobody else took may still be submitted
    answer_all(db, jid, "eve", i2)
    P.submit(db, jid, "eve", i2, now=at(90))
    assert db.execute("SELECT status FROM annotation_assignment WHERE annotator = 'eve'"
                      ).fetchone() == ("done",)


def test_the_coordinator_hands_open_items_on(db, pool, tmp_path):
    jid, (i1, i2, _) = pool
    P.next_item(db, jid, "ann", now=datetime.now(UTC))
    res = P.hand_on(db, jid, "ann", coordinator="cora")
    assert res == {"moved": 0, "released": 1, "kept": 0}
    assert P.next_item(db, jid, "bob") == i1
    # a fixed job: ann's open items move to the named people who do not have them yet
    fixed = J.create_job(db, "t", ["ann", "bob", "cid"], 2, n_items=3, coordinator="cora")
    open_ann = {r["item_pk"] for r in J.queue(db, fixed, "ann")}
    res = P.hand_on(db, fixed, "ann", ["bob", "cid"], coordinator="cora")
    assert res["moved"] == len(open_ann) and not J.queue(db, fixed, "ann")
    for it in open_ann:  # still k = 2 different people per item
        people = [r[0] for r in db.execute("SELECT annotator FROM annotation_assignment "
                                           "WHERE job_id = ? AND item_id = ?", [fixed, it])]
        assert len(people) == 2 == len(set(people))
    assert db.execute("SELECT action, actor FROM review_event WHERE action = 'hand_on' "
                      "ORDER BY id").fetchall() == [("hand_on", "cora")] * 2


def test_progress_per_person(db, pool):
    jid, (i1, i2, i3) = pool
    P.next_item(db, jid, "ann", now=at(0))
    answer_all(db, jid, "ann", i1, "yes")
    P.submit(db, jid, "ann", i1)
    P.next_item(db, jid, "bob", now=at(0))
    answer_all(db, jid, "bob", i1, "yes")
    P.submit(db, jid, "bob", i1)
    now = datetime.now(UTC)
    P.next_item(db, jid, "ann", now=now)
    prog = {r["annotator"]: r for r in P.people_progress(db, jid, now=now)}
    assert (prog["ann"]["done"], prog["ann"]["held"], prog["ann"]["left"]) == (1, 1, 1)
    assert (prog["bob"]["done"], prog["bob"]["held"], prog["bob"]["left"]) == (1, 0, 2)
    n_q = len(J.job_questions(db, jid, i1))
    assert prog["ann"]["agrees with others"] == f"{n_q}/{n_q}"
    assert prog["ann"]["median s per item"] is not None
    assert P.job_progress(db, jid) == {"items": 3, "complete": 1, "submitted": 2, "needed": 6}
    agr = P.people_agreement(db, jid)
    assert agr["overall"]["units"] == n_q and agr["overall"]["alpha"] is None
    assert "chance agreement is 1" in agr["overall"]["reason"]


def test_pools_follow_roles_and_members(db, pool, tmp_path):
    jid, (i1, _, _) = pool
    grant(db, "ann", "annotator")
    grant(db, "vic", "viewer")
    with acting_as(Actor("vic")), pytest.raises(Denied, match="vic is viewer"):
        P.next_item(db, jid, "vic")
    with acting_as(Actor("ann")), pytest.raises(Denied, match="as 'bob'"):
        P.next_item(db, jid, "bob")
    with acting_as(Actor("ann")), pytest.raises(Denied, match="ann is annotator"):
        P.hand_on(db, jid, "bob")
    with acting_as(Actor("ann")):
        assert P.next_item(db, jid, "ann") == i1
    pks = [r[0] for r in db.execute("SELECT id FROM item ORDER BY id LIMIT 2")]
    closed, _ = P.create_pool(db, "t", 1, item_ids=pks, annotators=["bob"], name="closed")
    assert P.pools_for(db, "ann") == [jid] and set(P.pools_for(db, "bob")) == {jid, closed}
    with pytest.raises(ValueError, match="not among the people"):
        P.next_item(db, closed, "ann")


def test_align_shows_people_beside_the_judge(db, tmp_path):
    from streamlit.testing.v1 import AppTest

    from tests.helpers import APP, run

    task = make_runs_task(db, tmp_path)
    rid = run(db, task, "rocketeval")
    jid = J.create_job(db, task, ["ann", "bob"], 2, n_items=9, coordinator="cora")
    for who in ("ann", "bob"):
        for k, row in enumerate(J.queue(db, jid, who)):
            for q in J.job_questions(db, jid, row["item_pk"]):
                J.save_answer(db, jid, who, row["item_pk"], q["id"],
                              "no" if who == "bob" and (k + q["id"]) % 3 == 0 else "yes")
            J.submit_item(db, jid, who, row["item_pk"])
    agr = P.people_agreement(db, jid)
    assert agr["overall"]["units"] == 9 * 5 and agr["overall"]["groups"] == 3
    at = AppTest.from_file(APP, default_timeout=180)
    at.session_state["task_name"] = task
    at.run()
    at.switch_page("app_pages/align.py").run()
    assert not at.exception, at.exception
    assert at.selectbox(key="al_run").value == rid
    line = next(m.value for m in at.markdown if "people agree with each other" in m.value
                ).replace("\\", "")  # markdown-escaped
    assert f"Job #{jid}" in line and "45 (item, question) units on 3 groups" in line
    assert "; the judge agrees with people on" in line
    table = at.dataframe(key="al_table").value
    assert {"people κ", "people κ note"} <= set(table.columns)


def test_judges_answers_stay_hidden_until_submitted_or_always(db, tmp_path):
    from tests.helpers import run

    task = make_runs_task(db, tmp_path)
    run(db, task, "rocketeval")
    pks = [r[0] for r in db.execute("SELECT id FROM item ORDER BY id LIMIT 2")]
    shown, _ = P.create_pool(db, task, 1, item_ids=pks, name="shown")
    hidden, _ = P.create_pool(db, task, 1, item_ids=pks, name="hidden", reveal_judges=False)
    for jid in (shown, hidden):
        item = P.next_item(db, jid, "ann")
        qs = J.job_questions(db, jid, item)
        answer_all(db, jid, "ann", item)
        assert J.judge_comparison(db, jid, "ann", item, qs) == ([], [])  # not submitted
        assert "until you submit" in J.blind(db, jid, "ann", item)
        P.submit(db, jid, "ann", item)
        table, runs = J.judge_comparison(db, jid, "ann", item, qs)
        if jid == shown:
            assert len(runs) == 1 and len(table) == len(qs)
        else:
            assert (table, runs) == ([], []) and "keeps the judges" in J.blind(
                db, jid, "ann", item)


def test_annotate_and_jobs_pages_run_a_pool(db, tmp_path):
    from streamlit.testing.v1 import AppTest

    from tests.helpers import APP

    task = make_runs_task(db, tmp_path)
    # the coordinator creates a pool on the Annotation jobs page
    at = AppTest.from_file(APP, default_timeout=180)
    at.session_state["task_name"] = task
    at.run()
    at.switch_page("app_pages/annotation_jobs.py").run()
    at.number_input(key="aj_n").set_value(2)
    at.number_input(key="aj_overlap").set_value(2)
    at.toggle(key="aj_pool").set_value(True)
    at.text_input(key="aj_creator").input("cora")
    next(b for b in at.button if b.label == "Create job").click().run()
    assert not at.exception, at.exception
    jid = db.execute("SELECT id FROM annotation_job WHERE mode = 'pool'").fetchone()[0]
    assert any(f"annotate?job={jid}" in m.value for m in at.markdown)  # the job's link
    # an annotator follows the link: their next item is open, claimed for them
    at = AppTest.from_file(APP, default_timeout=180)
    at.query_params["job"] = str(jid)
    at.run()
    at.switch_page("app_pages/annotate.py").run()
    at.text_input(key="ann_name").input("ann").run()
    assert not at.exception, at.exception
    assert at.selectbox(key="ann_job").value == jid
    first = db.execute("SELECT item_id FROM annotation_assignment WHERE annotator = 'ann'"
                       ).fetchone()[0]
    for r in at.radio:
        r.set_value("yes")
    at.run()
    item_button(at, "ann_submit").click().run()
    assert not at.exception, at.exception
    # submitted: on to the pool's other item, progress "1 done · 1 held"
    held = db.execute("SELECT item_id, status FROM annotation_assignment WHERE annotator = "
                      "'ann' ORDER BY id").fetchall()
    assert held[0] == (first, "done") and held[1][1] == "todo" and held[1][0] != first
    assert "ann: 1 done · 1 held · 0 left" in at.get("progress")[0].proto.text
    at.button(key="ann_release").click().run()  # give it back
    assert P.next_item(db, jid, "bob") in (first, held[1][0])


def test_the_jobs_page_hands_a_persons_items_on(db, tmp_path):
    from streamlit.testing.v1 import AppTest

    from tests.helpers import APP

    task = make_runs_task(db, tmp_path)
    jid = J.create_job(db, task, ["ann", "bob", "cid"], 1, n_items=6, coordinator="cora")
    mine = {r["item_pk"] for r in J.queue(db, jid, "ann")}
    at = AppTest.from_file(APP, default_timeout=180)
    at.session_state["task_name"] = task
    at.run()
    at.switch_page("app_pages/annotation_jobs.py").run()
    at.selectbox(key="aj_from").select("ann")
    at.text_input(key="aj_to").input("cid")
    at.text_input(key="aj_hand_coord").input("cora")
    at.button(key="aj_hand").click().run()
    assert not at.exception, at.exception
    assert any(f"Moved {len(mine)}, released 0, kept 0" in s.value for s in at.success)
    assert not J.queue(db, jid, "ann")
    assert mine <= {r["item_pk"] for r in J.queue(db, jid, "cid")}


def test_people_count_a_pool_answer_once_its_item_is_submitted(db, pool):
    """One record of people's answers: an answer saved on a pool claim that expired and went
    to someone else (or on an open claim) stays stored but is not counted; the submitted
    ones are — so a pool item never has more than k answers in any view."""
    jid, (i1, _, _) = pool
    task = db.execute("SELECT t.name FROM task t JOIN annotation_job j ON j.task_id = t.id "
                      "WHERE j.id = ?", [jid]).fetchone()[0]
    assert P.next_item(db, jid, "ann", now=at(0)) == i1
    assert P.next_item(db, jid, "dee", now=at(31)) == i1  # ann's claim expired
    answer_all(db, jid, "ann", i1, "no")  # saved too late: never submitted
    answer_all(db, jid, "dee", i1, "yes")
    assert people_answers(db, task, [i1]) == {}  # nothing submitted yet
    stamp = people_stamp(db, task)
    P.submit(db, jid, "dee", i1, now=at(32))
    assert people_stamp(db, task) != stamp  # a page's cache sees the submission
    assert P.next_item(db, jid, "eve", now=at(33)) == i1
    answer_all(db, jid, "eve", i1, "yes")
    P.submit(db, jid, "eve", i1, now=at(34))
    got = people_answers(db, task, [i1])
    assert got and all(p.answers == {"dee": "yes", "eve": "yes"} for p in got.values())
    # ann's answers are still stored under her name
    assert db.execute("SELECT COUNT(*) FROM annotation WHERE annotator = 'ann' AND "
                      "value = 'no'").fetchone()[0] == len(got)
