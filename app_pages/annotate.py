"""Annotate: one item at a time, answer its checklist Yes / No / Unsure (saved as you go);
the judges' answers stay hidden until you submit the item (blind), then appear beside yours."""

import pandas as pd
import streamlit as st

from checkeval_core.annotation import jobs as J
from checkeval_core.tasks import items
from checkeval_core.textsafe import md_escape
from studio_ui.frame import page_db
from studio_ui.tables import order, table_config
from studio_ui.widgets import current_user

st.title("Annotate")
db = page_db()

# Who is annotating: Streamlit login if configured, else the one trusted proxy header named in
# CHECKEVAL_TRUSTED_USER_HEADER, else a typed name (checkeval_core.identity).
who, why_not = current_user("ann_name", "annotator")
if not who:
    st.info(why_not or "Enter your name to see your queue.")
    st.stop()
mine = J.jobs_for(db, who)
if not mine:
    st.info(f"No annotation job assigns items to {md_escape(who)}. A coordinator creates "
            "jobs on the Annotation jobs page.")
    st.stop()
job = st.selectbox("Job", [j["id"] for j in mine], key="ann_job",
                   format_func=lambda i: next(f"#{j['id']} {j['name']}" for j in mine
                                              if j["id"] == i))
q = J.queue(db, job, who)
pos_key = f"ann_pos|{job}|{who}"
if pos_key not in st.session_state:
    st.session_state[pos_key] = next((i for i, x in enumerate(q) if x["status"] == "todo"), 0)
pos = min(st.session_state[pos_key], len(q) - 1)
share, where, counts = J.progress_label(q, pos)
st.subheader(where)
st.progress(share, text=f"{md_escape(who)}: {counts}")
c1, c2, c3 = st.columns([1, 1, 4])
if c1.button("← Previous", key="ann_prev", disabled=pos == 0):
    st.session_state[pos_key] = pos - 1
    st.rerun()
if c2.button("Next →", key="ann_next", disabled=pos >= len(q) - 1):
    st.session_state[pos_key] = pos + 1
    st.rerun()
entry = q[pos]


def beside_judges(item_pk: int, item_id: str, here: bool) -> None:
    """Your answers to a submitted item beside each completed judge run's."""
    st.subheader("Your answers beside the judges'" + ("" if here else
                                                      f" on the item you submitted ({item_id})"))
    table, runs = J.judge_comparison(db, job, who, item_pk, J.job_questions(db, job, item_pk))
    if runs:
        # yours, each judge's and the ⚠️ first, narrow; the question last
        st.dataframe(pd.DataFrame(table), hide_index=True, width="stretch",
                     column_order=order(["you", *runs, "disagree"], ["question"]),
                     column_config=table_config(
                         decisions={"you": "Your answer", "disagree": "⚠️ when a judge said "
                                    "the other of yes/no", **{r: f"Run {r}" for r in runs}},
                         long={"question": "The checklist question"}, long_width="medium"))
    else:
        st.caption("No completed judge run on this checklist version yet.")


if not any(x["status"] == "todo" for x in q):
    st.success(f"All done: every item of job #{job} is submitted or skipped. Thank you! You "
               "can still open any item with Previous / Next.")
last = st.session_state.get(f"ann_last|{job}|{who}")
if last and last[0] != entry["item_pk"]:  # just submitted: shown before the next item
    with st.container(border=True):
        beside_judges(last[0], last[1], here=False)
        st.caption("The next item to annotate is below.")
c3.markdown(f"{md_escape(entry['item_id'])} · status: `{entry['status']}`")
item = items(db, next(j for j in mine if j["id"] == job)["task"],
             item_ids=[entry["item_id"]])[0]
# only this item's checklist: on a per-query checklist, its query's questions
questions = J.job_questions(db, job, item["id"])
notes = J.dimension_notes(db, job)
saved = J.answers_of(db, job, who, item["id"])

left, right = st.columns([2, 3])
with left:
    for field in ("source", "context", "fact", "output"):
        if item[field]:
            st.markdown(f"**{field}**")
            st.text(item[field])
OPTIONS = ["yes", "no", "unsure"]


def _save(job_id: int, annotator: str, item_pk: int, qid: int, key: str) -> None:
    v = st.session_state.get(key)
    if v in OPTIONS:
        J.save_answer(page_db(), job_id, annotator, item_pk, qid, v)


with right:
    st.caption("Tab moves between questions; arrow keys choose Yes / No / Unsure. Every answer "
               "is saved the moment you choose it.")
    current = None
    for qq in questions:
        head = (qq["dimension"], qq["sub_dimension"])
        if head != current:
            st.markdown(f"**{md_escape(qq['dimension'])}** · {md_escape(qq['sub_dimension'])}")
            note = notes.get(qq["dimension"], {})
            if note.get("definition"):
                st.caption(f"{md_escape(qq['dimension'])}: {md_escape(note['definition'])}")
            if note.get("subs", {}).get(qq["sub_dimension"]):
                st.caption(md_escape(note["subs"][qq["sub_dimension"]]))
            current = head
        # Keyed by (job, item, question, annotator): the next person on a shared browser gets
        # fresh widgets (nothing of the previous annotator pre-selected, every click saved).
        key = f"ann|{job}|{item['id']}|{qq['id']}|{who}"
        st.radio(qq["text"], OPTIONS, index=OPTIONS.index(saved[qq["id"]])
                 if qq["id"] in saved else None, horizontal=True, key=key,
                 on_change=_save, args=(job, who, item["id"], qq["id"], key))
    mine_now = J.answers_of(db, job, who, item["id"])
    answered = sum(qq["id"] in mine_now for qq in questions)
    st.caption(f"{answered} of {len(questions)} answered")
    b1, b2 = st.columns(2)
    if b1.button("Submit item", type="primary", key="ann_submit",
                 disabled=answered < len(questions)):
        try:
            J.submit_item(db, job, who, item["id"])
            # on to the next item still to do; the submitted one's judge answers are shown
            st.session_state[f"ann_last|{job}|{who}"] = (item["id"], item["item_id"])
            st.session_state[pos_key] = J.next_position(J.queue(db, job, who), pos)
            st.rerun()
        except ValueError as e:
            st.error(str(e))
    reason = b2.text_input("Skip reason", key=f"ann_skip_reason|{job}|{item['id']}|{who}")
    if b2.button("Skip item", key="ann_skip"):
        try:
            J.set_status(db, job, who, item["id"], "skipped", reason)
            st.session_state[pos_key] = J.next_position(J.queue(db, job, who), pos)
            st.rerun()
        except ValueError as e:
            st.error(str(e))

if entry["status"] == "done":
    beside_judges(item["id"], item["item_id"], here=True)
else:
    st.caption("Judges' answers are hidden until you submit this item (blind annotation).")
