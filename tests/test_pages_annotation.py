"""AppTest of the Annotate (blind until submit) and Annotation jobs pages."""

import json
from pathlib import Path

from streamlit.testing.v1 import AppTest

from checkeval_core.annotation import jobs as J
from checkeval_core.checklists.io import import_checklist
from checkeval_core.checklists.versions import freeze
from checkeval_core.datasets import import_file
from checkeval_core.runs import create_run, execute_run
from checkeval_core.store import db_path
from checkeval_core.textsafe import md_escape, md_inert
from tests.helpers import item_button, submit_answered

APP = str(Path(__file__).resolve().parent.parent / "app.py")
QUESTIONS = ["Is the reply polite?", "Does the reply answer the question?",
             "Is the reply short?"]


def small_task(db, tmp_path):
    p = tmp_path / "d.jsonl"
    p.write_text("".join(json.dumps({"id": f"r{i}", "group_id": "g", "context": "Hi, how are "
                                     "you?", "output": f"Fine, thanks number {i}.",
                                     "scores": {"quality": i % 3 + 1}}) + "\n"
                         for i in range(4)))
    import_file(db, p, "chat", kind="dialogue")
    c = tmp_path / "c.json"
    c.write_text(json.dumps({"quality": {"definition": "good reply", "sub_dimensions": {
        "Basics": {"seed": QUESTIONS}}}}))
    import_checklist(db, "chat", c)
    freeze(db, "chat")


def test_annotate_blind_until_submit(db, tmp_path):
    small_task(db, tmp_path)
    execute_run(db_path(db), create_run(db, "chat", "fake", "rocketeval"))
    jid = J.create_job(db, "chat", ["alice"], 1, n_items=2)
    at = AppTest.from_file(APP, default_timeout=120).run()
    at.switch_page("app_pages/annotate.py").run()
    at.text_input(key="ann_name").input("alice").run()
    assert not at.exception
    assert len(at.radio) == 3
    assert any("hidden until you submit" in c.value for c in at.caption)
    assert len(at.dataframe) == 0  # no judge answers on the page before submitting
    for r in at.radio:
        r.set_value("yes")
    at.run()
    item = J.queue(db, jid, "alice")[0]["item_pk"]
    assert set(J.answers_of(db, jid, "alice", item).values()) == {"yes"}  # saved as given
    pressed = item_button(at, "ann_submit")
    pressed.click().run()
    assert not at.exception
    # the next item's Submit is another button: a second click queued on this one while the
    # page moved on cannot submit it
    assert item_button(at, "ann_submit").key != pressed.key and str(item) in pressed.key
    table = at.dataframe[0].value
    assert list(table["you"]) == ["yes"] * 3
    assert any(c.startswith("#1 fake") for c in table.columns)


def test_jobs_page_create_and_settle(db, tmp_path):
    small_task(db, tmp_path)
    at = AppTest.from_file(APP, default_timeout=120).run()
    at.switch_page("app_pages/annotation_jobs.py").run()
    at.selectbox(key="aj_task").select("chat").run()
    at.text_input(key="aj_annotators").input("a, b")
    at.number_input(key="aj_n").set_value(4)
    at.text_input(key="aj_creator").input("coord")  # the job records who created it
    at.button[0].click().run()
    assert not at.exception
    assert any("Job #1 created" in s.value for s in at.success)
    prog = at.dataframe[0].value
    assert dict(zip(prog["annotator"], prog["assigned"])) == {"a": 4, "b": 4}
    item = J.queue(db, 1, "a")[0]["item_pk"]
    qid = J.job_questions(db, 1, item)[0]["id"]
    J.save_answer(db, 1, "a", item, qid, "yes")
    J.save_answer(db, 1, "b", item, qid, "no")
    submit_answered(db, 1)
    at.run()
    at.text_input(key="aj_coord").input("coord").run()
    # not settled yet: a dash with why, never "None"; no answer preselected
    dis = next(d.value for d in at.dataframe if "settled" in d.value.columns)
    assert list(dis["settled"]) == ["—"]
    assert at.radio(key="aj_value").value is None
    at.button(key="aj_settle").click().run()
    assert any("Choose the settled answer" in e.value for e in at.error)
    assert J.disagreements(db, 1)[0]["settled"] is None
    at.radio(key="aj_value").set_value("yes").run()
    at.button(key="aj_settle").click().run()
    assert any(s.value == "Saved" for s in at.success)
    assert J.disagreements(db, 1)[0]["settled"] == "yes"


def test_a_submitted_item_is_read_only(db, tmp_path):
    """Security audit D2 and D8: Previous back to a submitted item shows its answers beside
    the judges' but the radios are disabled (a change sent anyway is refused by the core:
    tests/test_annotation_jobs.py), and the stored answer stays. Question texts and item ids
    are shown as text (Markdown escaped)."""
    p = tmp_path / "d.jsonl"
    p.write_text("".join(json.dumps({"id": f"r_{i}*", "output": f"Fine {i}.",
                                     "context": "Hi?"}) + "\n" for i in range(2)))
    import_file(db, p, "chat", kind="dialogue")
    linky = "Is it safe? ![x](https://evil.example/p.png) [click](https://evil.example)"
    c = tmp_path / "c.json"
    c.write_text(json.dumps({"quality": {"definition": "good", "sub_dimensions": {
        "Basics": {"seed": [linky, QUESTIONS[0]]}}}}))
    import_checklist(db, "chat", c)
    freeze(db, "chat")
    execute_run(db_path(db), create_run(db, "chat", "fake", "rocketeval"))
    jid = J.create_job(db, "chat", ["alice"], 1, n_items=2)
    first = J.queue(db, jid, "alice")[0]
    at = AppTest.from_file(APP, default_timeout=120).run()
    at.switch_page("app_pages/annotate.py").run()
    at.text_input(key="ann_name").input("alice").run()
    # the question is shown escaped (a link or image stays text); the radio's hidden label,
    # what a screen reader says, is its plain text (an escaped label read "built\\-in")
    assert md_escape(linky) in [m.value for m in at.markdown]
    assert linky not in [m.value for m in at.markdown]
    # the radio's hidden label: the text as typed but for what would load or link
    # (tests/test_browser_user_text.py checks the browser)
    assert md_inert(linky) in [r.label for r in at.radio]
    assert md_inert("Is the built-in reply ok?") == "Is the built-in reply ok?"
    assert all(r.proto.label_visibility.value == r.proto.label_visibility.COLLAPSED
               for r in at.radio)
    assert not any(r.disabled for r in at.radio)
    for r in at.radio:
        r.set_value("yes")
    at.run()
    item_button(at, "ann_submit").click().run()
    assert not at.exception
    # the judges' answers of the item just submitted, its id escaped in the heading
    assert any(md_escape(first["item_id"]) in s.value for s in at.subheader)
    at.button(key="ann_prev").click().run()
    assert any(f"Item {md_escape(first['item_id'])}" in c.value for c in at.caption)
    assert len(at.dataframe) == 1  # the comparison stays after submitting
    assert len(at.radio) == 2 and all(r.disabled for r in at.radio)
    assert item_button(at, "ann_skip").disabled and item_button(at, "ann_submit").disabled
    assert [r.value for r in at.radio] == ["yes", "yes"]  # shown as stored, not changeable
    assert any("its answers are final" in c.value for c in at.caption)
    at.button(key="ann_next").click().run()
    at.button(key="ann_prev").click().run()
    assert not at.exception and all(r.disabled for r in at.radio)
    assert set(J.answers_of(db, jid, "alice", first["item_pk"]).values()) == {"yes"}
