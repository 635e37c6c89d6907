"""Annotate: one item at a time, answer its checklist Yes / No / Unsure (saved as you go);
the judges' answers stay hidden until you submit the item (blind), then appear beside yours
(unless the job keeps them hidden). A fixed job is a list of items; a pool gives you the next
item that still needs answers (``?job=ID`` opens a job straight away)."""

import streamlit as st

from checkeval_core.annotation import jobs as J
from checkeval_core.annotation import pools as P
from checkeval_core.tasks import get_task, items
from checkeval_core.textsafe import md_escape
from studio_ui.annotate_ui import (
    OPTIONS,
    beside_judges,
    item_panel,
    pool_item,
    questions_panel,
)
from studio_ui.frame import page_db
from studio_ui.widgets import current_user

st.title("Annotate")
db = page_db()

# Who is annotating: Streamlit login if configured, else the one trusted proxy header named in
# CHECKEVAL_TRUSTED_USER_HEADER, else a typed name (checkeval_core.identity).
who, why_not = current_user("ann_name", "annotator")
if not who:
    st.info(why_not or "Enter your name to see your queue.")
    st.stop()
pools = set(P.pools_for(db, who))
mine = [j for j in J.list_jobs(db) if j["id"] in pools] + J.jobs_for(db, who)
mine = list({j["id"]: j for j in mine}.values())
if not mine:
    st.info(f"No annotation job assigns items to {md_escape(who)}. A coordinator creates "
            "jobs on the Annotation jobs page.")
    st.stop()
linked = st.query_params.get("job", "")
if linked and st.session_state.get("ann_linked") != linked:  # the job's link, once
    st.session_state["ann_linked"] = linked
    if linked.isdigit() and int(linked) in {j["id"] for j in mine}:
        st.session_state["ann_job"] = int(linked)
    else:
        st.warning(f"Job {md_escape(linked)} has nothing for {md_escape(who)}.")
job = st.selectbox("Job", [j["id"] for j in mine], key="ann_job",
                   format_func=lambda i: next(f"#{j['id']} {j['name']}" + (
                       " (pool)" if j.get("mode") == "pool" else "") for j in mine
                       if j["id"] == i))
meta = next(j for j in mine if j["id"] == job)
pool = meta.get("mode") == "pool"
last = st.session_state.get(f"ann_last|{job}|{who}")
if pool:  # the held item, else the next one that still needs answers (claimed now)
    item_pk = pool_item(db, job, who, last)
    entry = {"item_pk": item_pk, "status": "todo"}
else:
    q = J.queue(db, job, who)
    pos_key = f"ann_pos|{job}|{who}"
    if pos_key not in st.session_state:
        st.session_state[pos_key] = next((i for i, x in enumerate(q) if x["status"] == "todo"),
                                         0)
    pos = min(st.session_state[pos_key], len(q) - 1)
    share, where, counts = J.progress_label(q, pos)
    st.subheader(where)
    st.progress(share, text=f"{md_escape(who)}: {counts}")
    c1, c2, _ = st.columns([1, 1, 4])
    if c1.button("← Previous", key="ann_prev", disabled=pos == 0):
        st.session_state[pos_key] = pos - 1
        st.rerun()
    if c2.button("Next →", key="ann_next", disabled=pos >= len(q) - 1):
        st.session_state[pos_key] = pos + 1
        st.rerun()
    entry = q[pos]
    if not any(x["status"] == "todo" for x in q):
        st.success(f"All done: every item of job #{job} is submitted or skipped. Thank you! "
                   "You can still open any item with Previous / Next.")

if last and last[0] != entry["item_pk"]:  # just submitted: shown before the next item
    with st.container(border=True):
        beside_judges(db, job, who, last[0], last[1], here=False)
        st.caption("The next item to annotate is below.")
item = items(db, meta["task"], pks=[entry["item_pk"]])[0]
st.caption(f"Item {md_escape(item['item_id'])} · status: {entry['status']}")
# only this item's checklist: on a per-query checklist, its query's questions
questions = J.job_questions(db, job, item["id"])
saved = J.answers_of(db, job, who, item["id"])


def _save(job_id: int, annotator: str, item_pk: int, qid: int, key: str) -> None:
    v = st.session_state.get(key)
    try:
        if v in OPTIONS:
            J.save_answer(page_db(), job_id, annotator, item_pk, qid, v)
    except ValueError as e:  # a submitted item, or one no longer given to this person
        st.error(md_escape(str(e)))


def _key(qid: int) -> str:
    # Keyed by (job, item, question, annotator): the next person on a shared browser gets
    # fresh widgets (nothing of the previous annotator pre-selected, every click saved).
    return f"ann|{job}|{item['id']}|{qid}|{who}"


left, right = st.columns([1, 1])
with left:
    item_panel(item, get_task(db, meta["task"])["kind"])
with right:
    done = entry["status"] == "done"  # submitted: its answers are final, shown read-only
    if not done:
        st.caption("Tab moves between questions; arrow keys choose Yes / No / Unsure. Every "
                   "answer is saved the moment you choose it.")
    questions_panel(questions, J.dimension_notes(db, job), saved, _key, _save,
                    lambda qid: (job, who, item["id"], qid, _key(qid)), read_only=done)
    answered = sum(qq["id"] in J.answers_of(db, job, who, item["id"]) for qq in questions)
    st.caption(f"{answered} of {len(questions)} answered")
    b1, b2, b3 = st.columns(3)
    # keyed by the item: a second click queued while the page moved on is not a click on the
    # next item's Submit (which a fully answered next item would take)
    if b1.button("Submit item", type="primary", key=f"ann_submit|{job}|{item['id']}|{who}",
                 disabled=answered < len(questions) or entry["status"] != "todo"):
        try:
            if pool:
                P.submit(db, job, who, item["id"])
            else:
                J.submit_item(db, job, who, item["id"])
                st.session_state[pos_key] = J.next_position(J.queue(db, job, who), pos)
            # on to the next item still to do; the submitted one's judge answers are shown
            st.session_state[f"ann_last|{job}|{who}"] = (item["id"], item["item_id"])
            st.rerun()
        except ValueError as e:
            st.error(md_escape(str(e)))
    reason = b2.text_input("Skip reason", key=f"ann_skip_reason|{job}|{item['id']}|{who}")
    if b2.button("Skip item", key=f"ann_skip|{job}|{item['id']}|{who}", disabled=done):
        try:
            J.set_status(db, job, who, item["id"], "skipped", reason)
            if not pool:
                st.session_state[pos_key] = J.next_position(J.queue(db, job, who), pos)
            st.rerun()
        except ValueError as e:
            st.error(md_escape(str(e)))
    if pool and b3.button("Give back", key="ann_release",
                          help="Return this item to the pool for someone else"):
        P.release(db, job, who, item["id"])
        st.session_state[f"ann_paused|{job}|{who}"] = True
        st.rerun()

if done:
    beside_judges(db, job, who, item["id"], item["item_id"], here=True)
else:
    st.caption("Judges' answers are hidden until you submit this item (blind annotation).")
