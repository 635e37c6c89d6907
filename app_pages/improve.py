"""Improve checklist: a revised checklist proposed from the stored answers of chosen runs,
chosen on the task's dev groups and shown with its agreement before → after on dev and on
held-out groups; sent to the review queue only on confirmation."""

import pandas as pd
import streamlit as st

from checkeval_core.analysis.proposal import display_rows, proposal_runs, propose
from checkeval_core.analysis.proposal.evidence import ProposalError
from checkeval_core.analysis.proposal.new_questions import MAX_NEW
from checkeval_core.analysis.version_readers import evidence_stamp
from checkeval_core.checklists.augment import generation_judge
from checkeval_core.checklists.review import to_review
from checkeval_core.runs.labels import run_label
from checkeval_core.runs.selection import default_reference
from checkeval_core.stats.bootstrap import minimum
from checkeval_core.store import db_path, open_db
from checkeval_core.team import acting_name
from checkeval_core.textsafe import md_escape
from studio_ui.frame import page_db
from studio_ui.widgets import task_picker

st.title("Improve checklist")
st.caption("Drop the questions that carry no signal on the dev groups (never vary, mostly "
           "invalid, near-copies, lower dev agreement), then see what that does on held-out "
           "groups — from the answers already stored, no new judge call.")
db = page_db()
task = task_picker(db, "im_task", with_human_scores=True)
runs = proposal_runs(db, task)
if not runs:
    st.info("No completed checkeval or rocketeval run of a frozen checklist version of this "
            "task yet: freeze a version (Checklist review) and run it (Run page).")
    st.stop()
labels = {r["run"]: run_label(r) for r in runs}
# opens on the reference run of the newest version (a small run never replaces a full one);
# set in the state, not as the default, so a task switch replaces the chips on screen too
if st.session_state.get("im_task_seen") != task or "im_runs" not in st.session_state:
    st.session_state["im_runs"] = [default_reference(db, task, list(labels))]
    st.session_state["im_task_seen"] = task
elif any(r not in labels for r in st.session_state["im_runs"]):
    st.session_state["im_runs"] = [r for r in st.session_state["im_runs"] if r in labels]
chosen = st.multiselect("Runs (one checklist version; several runs are averaged)",
                        list(labels), format_func=labels.get, key="im_runs")
c1, c2, c3 = st.columns([1, 1, 2])
weights = c1.checkbox("Fit weights", key="im_weights",
                      help="non-negative ridge weights of the kept questions, on dev items")
n_new = int(c2.number_input("New questions", 0, MAX_NEW, 0, key="im_new",
                            help="costed first; written only when you press the button"))
judge = c3.text_input("Judge that writes them", generation_judge(), key="im_judge",
                      help="The embedded model writes offline; a stronger judge writes better "
                           "questions")
if not chosen:
    st.info("Choose at least one run.")
    st.stop()


@st.cache_data(show_spinner="Choosing questions on dev groups…", max_entries=8)
def _proposal(path: str, runs: tuple, weights: bool, n_new: int, stamp: str) -> dict:
    return propose(open_db(path), list(runs), weights=weights, new_questions=n_new)


key = (tuple(chosen), weights, n_new)
try:
    prop = _proposal(db_path(db), key[0], weights, n_new, evidence_stamp(db, task))
    written = st.session_state.get("im_written")
    if written and written[0] == key:
        prop = written[1]
except (ProposalError, ValueError) as e:
    st.error(md_escape(str(e)))
    st.stop()

view = display_rows(prop)
st.subheader("Agreement before → after")
st.caption(md_escape(f"{prop['dev']['statistic']} · {prop['setting']} · "
                     f"{len(prop['kept'])} kept, {len(prop['dropped'])} dropped. Dev is where "
                     "the questions were chosen (optimistic); held-out is the honest figure."))
st.dataframe(pd.DataFrame(view["figures"]), hide_index=True, width="stretch",
             key="im_figures")
for note in prop["notes"]:
    st.caption(md_escape(note))
st.caption(md_escape(view["rerun"]))

st.subheader("Dropped questions")
if view["dropped"]:
    st.dataframe(pd.DataFrame(view["dropped"]), hide_index=True, width="stretch",
                 key="im_dropped", column_config={
                     "question": st.column_config.TextColumn(width="medium"),
                     "reason": st.column_config.TextColumn(width="large")})
elif view["nothing_dropped"]:
    st.info(view["nothing_dropped"])
with st.expander(f"Kept questions ({len(view['kept'])})"):
    st.dataframe(pd.DataFrame(view["kept"]), hide_index=True, width="stretch")
    if prop["weights"] is None:
        st.caption(md_escape(prop["weights_reason"]))

if view["cost"]:
    st.subheader("New questions")
    st.write(md_escape(view["cost"]))
    if st.button(f"Write {prop['new_questions']['n']} new question(s) with this judge",
                 key="im_write", disabled=not prop["new_questions"]["n"]):
        try:
            with st.spinner("Asking the judge…"):
                done = propose(db, list(chosen), weights=weights, new_questions=n_new,
                               judge=judge.strip() or generation_judge())
            st.session_state["im_written"] = (key, done)
            st.rerun()
        except (ProposalError, ValueError) as e:
            st.error(md_escape(str(e)))
    if view["new"]:
        st.dataframe(pd.DataFrame(view["new"]), hide_index=True, width="stretch",
                     key="im_new_table")

st.subheader("Review")
st.write("Nothing changes until you confirm: dropped questions go back to *proposed* with "
         "their evidence as the reason, new ones arrive as *proposed*. Keep or reject them on "
         "Checklist review, then freeze a version; what its run asks the judge is said "
         "under the agreement table.")
# the same minimum as the Analysis page's "Send flagged": a drop chosen on fewer dev
# documents describes those documents, not the question
few = prop["dev"]["n_groups"] < minimum()
if few:
    st.warning(f"Not sent: the proposal rests on {prop['dev']['n_groups']} dev group(s) "
               f"(documents / contexts / queries); sending to review needs ≥ "
               f"{minimum()}, as for flagged questions on Analysis. Run the checklist "
               "on more items first.")
if st.button("Send to the review queue", key="im_send", type="primary",
             disabled=few or not (prop["dropped"] or view["new"])):
    st.session_state["im_confirm"] = True
if st.session_state.get("im_confirm") and not few:
    with st.container(border=True):
        st.warning(f"Queue {len(prop['dropped'])} question(s) for dropping and "
                   f"{sum(not q['problem'] for q in view['new'])} new question(s)?")
        k1, k2 = st.columns(2)
        if k1.button("Confirm", key="im_confirm_yes", type="primary"):
            st.session_state.pop("im_confirm", None)
            res = to_review(db, prop, actor=acting_name())  # recorded as its author
            st.session_state["im_done"] = (f"Queued {res['queued']} question(s) for dropping "
                                           f"and {len(res['added'])} new question(s): review "
                                           "them on Checklist review.")
            st.rerun()
        if k2.button("Cancel", key="im_confirm_no"):
            st.session_state.pop("im_confirm", None)
            st.rerun()
if st.session_state.get("im_done"):
    st.success(st.session_state["im_done"])
    st.page_link("app_pages/checklist.py", label="Checklist review: keep or reject them")
st.page_link("app_pages/versions.py", label="Versions: agreement of each frozen version")
