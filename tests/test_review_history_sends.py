"""The two analyses that send questions back to review leave a line in each question's review
history, with their reason, after the lines already there: ``checklist propose --to-review``
(dropped and new questions) and the Analysis page's *Send flagged questions* (the flags behind
each question), and the Improve page's *Send*. The Checklist review page shows those lines;
pressing twice adds none. Only ``checklists/review.py`` writes a question's status."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from checkeval_core import task_split as S
from checkeval_core.analysis.diagnostics import MIN_FLAG_GROUPS
from checkeval_core.checklists.editing import questions
from checkeval_core.checklists.review import decide, question_history
from checkeval_core.checklists.review_view import history_rows
from checkeval_core.demo import load_demo
from checkeval_core.runs import create_run, execute_run
from checkeval_core.store import db_path as path_of
from tests.conftest import APP, open_app_page
from tests.helpers import analysis_page, run_cli
from tests.helpers import build_proposal_task as build


def _lines(db, qid: int) -> list[tuple[str, str, str]]:
    return [(e["role"], e["action"], e["reason"]) for e in question_history(db, qid)]


@pytest.mark.usefixtures("few_groups_allowed")
def test_propose_to_review_appends_a_history_line_with_its_reason(db, db_path):
    rid, qid = build(db)
    S.set_split(db, "pt", 0.5, seed=0)
    # earlier lines on a question the proposal drops: they stay, the proposal's comes after
    decide(db, [qid["copy"]], "ann", "reject", "reads like the other one")
    decide(db, [qid["copy"]], "bob", "keep")
    before = _lines(db, qid["copy"])
    r = run_cli(["checklist", "propose", "--run", str(rid), "--to-review", "--bootstrap", "0"],
                db=db_path)
    assert r.returncode == 0, r.stderr
    lines = _lines(db, qid["copy"])
    assert lines[:2] == before and len(lines) == 3
    role, action, reason = lines[2]
    assert (role, action) == ("analysis", "proposal_drop")
    assert reason.startswith("proposal: drop — ") and "near-copy" in reason
    # the reason in the history is the one the question now carries
    assert db.execute("SELECT status, reason FROM question WHERE id = ?",
                      [qid["copy"]]).fetchone() == ("proposed", reason)
    for n in ("constant", "anti"):
        assert [a for _, a, _ in _lines(db, qid[n])] == ["proposal_drop"]
    assert _lines(db, qid["good"]) == []  # kept: nothing happened to it
    # the Checklist review page's rows: what, who, why, from which status
    row = history_rows(question_history(db, qid["copy"]))[-1]
    assert (row["what"], row["role"], row["reason"], row["note"]) == (
        "proposed for dropping", "analysis", reason, "was kept")
    # pressing twice queues nothing new and writes no second line
    r = run_cli(["checklist", "propose", "--run", str(rid), "--to-review", "--bootstrap", "0"],
                db=db_path)
    assert r.returncode == 0, r.stderr
    assert _lines(db, qid["copy"]) == lines


@pytest.mark.usefixtures("few_groups_allowed")
def test_a_new_question_from_a_proposal_starts_its_history(db, db_path):
    rid, qid = build(db)
    S.set_split(db, "pt", 0.5, seed=0)
    g = S.get_split(db, "pt")["dev"][0]
    db.execute("UPDATE answer SET p_yes = 0.5 - p_yes WHERE question_id = ? AND item_id IN "
               "(SELECT id FROM item WHERE group_id = ?)", [qid["good"], g])
    r = run_cli(["checklist", "propose", "--run", str(rid), "--to-review", "--bootstrap", "0",
                 "--new-questions", "1", "--judge", "fake", "--json"], db=db_path)
    assert r.returncode == 0, r.stderr
    (new,) = db.execute("SELECT id FROM question WHERE origins LIKE '%proposal%'").fetchall()
    ((role, action, reason),) = _lines(db, new[0])
    assert (role, action) == ("analysis", "proposal_new")
    assert reason.startswith("proposal: new — the kept questions order dev items #")
    assert history_rows(question_history(db, new[0]))[0]["what"] == "added by a proposal"


def test_analysis_send_to_review_writes_each_questions_flags_in_its_history(db):
    load_demo(db)
    for method in ("rocketeval", "checkeval"):
        rid = create_run(db, "summeval-demo", "fake", method, limit=16 * MIN_FLAG_GROUPS)
        execute_run(path_of(db), rid)
    at = analysis_page()
    cands = next(d.value for d in at.dataframe if "groups" in d.value.columns
                 and "answers" in d.value.columns)
    pick = [int(q) for q in cands["question_id"][:2]]
    flags = dict(zip(cands["question_id"].astype(int), cands["flags"], strict=True))
    # an earlier line on the first one stays in front of the new one
    decide(db, [pick[0]], "ann", "keep")
    at.multiselect(key="an_send_pick").set_value(pick).run()
    next(b for b in at.button if b.key == "an_send").click().run()
    next(b for b in at.button if b.key == "an_send_confirm").click().run()
    assert not at.exception, at.exception
    first = _lines(db, pick[0])
    assert [a for _, a, _ in first] == ["keep", "send_to_review"]
    for q in pick:
        role, action, reason = _lines(db, q)[-1]
        assert (role, action) == ("analysis", "send_to_review")
        assert reason.startswith("diagnostics: flagged by question diagnostics — ")
        assert flags[q] in reason and f"{MIN_FLAG_GROUPS} groups" in reason
    # undo restores the question and appends its own line; nothing earlier is rewritten
    next(b for b in at.button if b.key == "an_send_undo").click().run()
    assert {q["id"]: q["status"] for q in questions(db, "summeval-demo")}[pick[1]] == "kept"
    assert _lines(db, pick[0])[:2] == first
    assert [a for _, a, _ in _lines(db, pick[0])] == ["keep", "send_to_review",
                                                      "undo_send_to_review"]

    # the Checklist review page shows the line with its reason
    review = AppTest.from_file(APP, default_timeout=120).run()
    review.switch_page("app_pages/checklist.py").run()
    review.selectbox(key="rv_task").select("summeval-demo").run()
    review.multiselect(key="rv_status").set_value(["proposed", "kept", "filtered",
                                                   "rejected"]).run()
    review.multiselect(key="rv_selected").set_value([pick[1]]).run()
    assert not review.exception
    hist = next(e for e in review.expander if e.label.startswith("Review history (1 question"))
    table = hist.dataframe[0].value
    assert list(table["what"]) == ["sent back to review", "sending undone"]
    assert flags[pick[1]] in table["reason"].iloc[0]


@pytest.mark.usefixtures("few_groups_allowed")
def test_improve_pages_send_writes_the_same_history_line(db):
    rid, qid = build(db)
    S.set_split(db, "pt", 0.25, seed=0)
    at = open_app_page("app_pages/improve.py")
    assert at.multiselect(key="im_runs").value == [rid]
    at.button(key="im_send").click().run()
    assert _lines(db, qid["anti"]) == []  # asked, not done
    at.button(key="im_confirm_yes").click().run()
    assert not at.exception, at.exception
    ((role, action, reason),) = _lines(db, qid["anti"])
    assert (role, action) == ("analysis", "proposal_drop") and reason.startswith("proposal: drop")
    assert db.execute("SELECT reason FROM question WHERE id = ?",
                      [qid["anti"]]).fetchone()[0] == reason


def test_no_module_but_review_writes_a_question_status():
    core = Path(__file__).resolve().parent.parent / "checkeval_core"
    writes = re.compile(r"UPDATE\s+question\s+SET\s[^\";]*?\bstatus\s*=", re.I)
    found = []
    for p in sorted(core.rglob("*.py")):
        # SQL is split over string literals: join them before looking
        text = re.sub(r"\"\s*\n\s*\"", "", p.read_text(encoding="utf-8"))
        for m in writes.finditer(text):
            if "WHERE" in m.group(0).upper():  # a status set after WHERE is not a write
                continue
            found.append(str(p.relative_to(core)))
    assert sorted(set(found)) == ["checklists/review.py"]
