"""AppTest of the Dimensions and Checklist review pages."""

from checkeval_core.checklists.editing import questions
from tests.conftest import open_app_page as open_page
from tests.helpers import load_demo_copy


def test_dimensions_edit_seed_generate_filter(db):
    load_demo_copy(db)
    at = open_page("app_pages/dimensions.py")
    assert at.selectbox(key="dim_pick").value == "coherence"
    seed = next(t for t in at.text_input if t.key and t.key.startswith("seed_"))
    qid = int(seed.key.split("_")[1])
    seed.input("Does the summary stay on the main topic?").run()
    sub_key = next(b.key for b in at.button if b.key and b.key.startswith("seedsave_"))
    at.button(key=sub_key).click().run()
    assert not at.exception
    texts = {q["id"]: q["text"] for q in questions(db, "summeval-demo")}
    assert texts[qid] == "Does the summary stay on the main topic?"
    at.text_input(key="gen_judge").input("fake").run()
    at.button(key="gen_run").click().run()
    assert not at.exception
    assert any("questions proposed" in s.value for s in at.success)
    assert any(q["origin"] == "diversification" for q in questions(db, "summeval-demo"))
    at.button(key="filter_run").click().run()
    assert any("filtered out" in s.value for s in at.success)


def test_review_reject_and_freeze(db):
    load_demo_copy(db)
    at = open_page("app_pages/checklist.py")
    at.text_input(key="rv_annotator").input("alice").run()
    first = at.multiselect(key="rv_selected").options[0]
    qid = int(first.split("]")[0].split("#")[1].split()[0])
    at.multiselect(key="rv_selected").select(qid).run()
    at.button(key="rv_reject").click().run()
    assert any("reason" in e.value for e in at.error)  # a rejection needs a reason
    at.text_input(key="rv_reason").input("too vague").run()
    at.button(key="rv_reject").click().run()
    assert not at.exception
    status = {q["id"]: q["status"] for q in questions(db, "summeval-demo")}
    assert status[qid] == "rejected"
    at.button(key="rv_freeze").click().run()
    assert any("Version 2: 121 questions" in s.value for s in at.success)


def test_generate_twice_says_cache_and_generate_again_asks_anew(db):
    load_demo_copy(db)
    at = open_page("app_pages/dimensions.py")
    assert at.text_input(key="gen_judge").value in ("embedded", "embedded:quality")
    at.text_input(key="gen_judge").input("fake").run()
    at.button(key="gen_run").click().run()
    assert not any("from the cache" in i.value for i in at.info)
    n1 = len(questions(db, "summeval-demo"))
    at.button(key="gen_run").click().run()  # the same request again: served by the cache
    assert any("came from the cache" in i.value and "Generate again" in i.value for i in at.info)
    assert len(questions(db, "summeval-demo")) == n1
    at.button(key="gen_again").click().run()
    assert not at.exception
    assert not any("from the cache" in i.value for i in at.info)


def test_a_decided_question_stays_in_the_list_until_the_filter_changes(db):
    """Rejecting (or keeping) a question under a status filter made it vanish from the table
    and the picker under the click; it stays, with its new status, until the filter changes."""
    load_demo_copy(db)
    at = open_page("app_pages/checklist.py")
    at.text_input(key="rv_annotator").input("alice").run()
    first = at.multiselect(key="rv_selected").options[0]
    qid = int(first.split("]")[0].split("#")[1].split()[0])
    assert "[rejected]" not in first
    at.multiselect(key="rv_selected").select(qid).run()
    at.text_input(key="rv_reason").input("too vague").run()
    at.button(key="rv_reject").click().run()
    assert not at.exception, at.exception
    assert f"#{qid} [rejected]" in " ".join(at.multiselect(key="rv_selected").options)
    assert qid in set(at.dataframe[0].value["id"]) or any(
        qid in set(d.value["id"]) for d in at.dataframe if "id" in d.value.columns)
    at.multiselect(key="rv_dim").set_value(["coherence"]).run()  # a new filter: its own list
    statuses = at.multiselect(key="rv_status").value
    if "rejected" not in statuses:
        assert not any(o.startswith(f"#{qid} ") for o in at.multiselect(key="rv_selected").options)


def test_emptying_a_seed_asks_before_it_deletes(db):
    """An emptied seed text deletes its question on *Save seed questions*: that asks first,
    Cancel keeps every seed as it was, *Save and delete* deletes that one and saves the rest
    (here a new seed of the same sub-dimension)."""
    load_demo_copy(db)
    at = open_page("app_pages/dimensions.py")
    gone = int(next(t for t in at.text_input if t.key and t.key.startswith("seed_")
                    ).key.split("_")[1])  # the first sub-dimension's first seed
    sub_key = next(b.key for b in at.button if b.key and b.key.startswith("seedsave_"))
    sub = sub_key.split("_")[1]
    before = len(questions(db, "summeval-demo"))
    at.text_input(key=f"seed_{gone}").input("").run()
    at.text_input(key=f"newseed_{sub}").input("Does the summary keep to the article's order?"
                                              ).run()
    at.button(key=sub_key).click().run()
    assert any(f"Delete seed question(s) #{gone}" in w.value for w in at.warning)
    assert len(questions(db, "summeval-demo")) == before  # asked, nothing changed yet
    at.button(key=f"seeddel_{sub}_cancel").click().run()
    assert not at.warning and len(questions(db, "summeval-demo")) == before
    at.button(key=sub_key).click().run()
    at.button(key=f"seeddel_{sub}_confirm").click().run()
    assert not at.exception
    texts = {q["id"]: q["text"] for q in questions(db, "summeval-demo")}
    assert gone not in texts and len(texts) == before  # one deleted, one added
    assert "Does the summary keep to the article's order?" in texts.values()
