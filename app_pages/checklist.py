"""Checklist review: questions; keep / reject / edit with their history; agreement; versions."""

import json

import pandas as pd
import streamlit as st

from checkeval_core.checklists import review_view as RV
from checkeval_core.checklists.editing import questions
from checkeval_core.checklists.io import export_checklist
from checkeval_core.checklists.review import decide
from checkeval_core.checklists.versions import diff_versions, freeze, list_versions
from checkeval_core.textsafe import md_escape
from studio_ui import checklist_review as UI
from studio_ui.frame import page_db
from studio_ui.widgets import current_user, task_picker

st.title("Checklist review")
if "rv_flash" in st.session_state:
    st.success(st.session_state.pop("rv_flash"))
db = page_db()
task = task_picker(db, "rv_task", "No task yet: load the demo on the Home page.")
# Login, else the configured proxy header, else a typed name (checkeval_core.identity).
annotator, why_not = current_user("rv_annotator", "reviewer")
if not annotator:
    st.caption(why_not)

with st.expander("Per-query checklists (RocketEval: one list per query, shared by its answers)"):
    req = UI.per_query_form()
    if req:
        try:
            with st.spinner("The judge is writing one checklist per query…"
                            if req["source"] == "generate" else "Importing the checklists…"):
                r = RV.per_query_checklists(db, task, **req)
        except ValueError as e:
            st.error(md_escape(str(e)))
        else:
            if not r["problems"]:
                st.session_state["rv_flash"] = r["message"]
                st.rerun()
            st.success(r["message"])  # shown with the problems below it
            for p in r["problems"][:20]:
                st.warning(md_escape(p))

qs = questions(db, task, instance=None)
if not qs:
    st.info("No questions yet: add seeds on the Dimensions page or import a checklist.")
    st.stop()
opts = RV.review_filters(qs)
if opts["warning"]:
    st.warning(opts["warning"])
c1, c2, c3, c4 = st.columns(4)
statuses = c1.multiselect("Status", RV.STATUSES, opts["statuses"], key="rv_status",
                          help="flagged: a question a person wrote that the filter would remove")
origins = c2.multiselect("Origin", opts["origins"], key="rv_origin")
dims = c3.multiselect("Dimension", opts["dimensions"], key="rv_dim")
subs = c4.multiselect("Sub-dimension", opts["sub_dimensions"], key="rv_sub")
if st.session_state.get("rv_filter_seen") != (filt := (statuses, origins, dims, subs)):
    st.session_state.update(rv_filter_seen=filt, rv_recent=[])  # a new filter: its own list
shown = RV.shown_questions(qs, opts["flagged"], statuses, origins, dims, subs,
                           st.session_state["rv_recent"])
st.caption(f"{len(shown)} of {len(qs)} questions")
UI.show_review_table(db, task, shown, opts["flagged"])  # with each question's evidence
labels = RV.question_labels(shown)
st.session_state["rv_selected"] = [i for i in st.session_state.get("rv_selected", [])
                                   if i in labels]
if st.button("Select all shown", key="rv_all"):
    st.session_state["rv_selected"] = list(labels)
selected = st.multiselect("Questions to act on", list(labels), key="rv_selected",
                          format_func=lambda i: labels.get(i, f"#{i}"), **UI.PICKER)
st.markdown(f"**{len(selected)} selected**")
# The reason and new text belong to the selection they were typed for: emptied when the
# selection changes and once a decision used them. They are set to "" rather than deleted:
# a deleted widget value leaves the browser showing (and sending back) the old text.
reason_key, text_key = "rv_reason", "rv_newtext"
sel_key = ",".join(map(str, sorted(selected)))
if st.session_state.get("rv_reason_for") != sel_key:
    st.session_state[reason_key] = st.session_state[text_key] = ""
    st.session_state["rv_reason_for"] = sel_key


def _act(decision: str, ids: list[int], who: str) -> None:
    try:  # the core refuses a reason on a keep or an edit (recorded with rejections only)
        decide(page_db(), ids, who or "", decision, st.session_state.get(reason_key, ""),
               new_text=st.session_state.get(text_key) if decision == "edit" else None)
    except ValueError as e:
        st.session_state["rv_error"] = str(e)
        return
    st.session_state[reason_key] = st.session_state[text_key] = ""
    if decision != "keep":  # a rejected / edited question stays listed, no longer picked
        st.session_state["rv_selected"] = []
    st.session_state["rv_flash"] = RV.DECISION_FLASH[decision].format(n=len(ids))
    st.session_state["rv_recent"] = [*st.session_state.get("rv_recent", []), *ids]
    st.session_state["rv_last"] = ids  # its history stays in view once the pick is emptied


st.text_input("Reason (required to reject)", key=reason_key)  # recorded with rejections only
b1, b2, b3 = st.columns(3)
b1.button("Keep selected", key="rv_keep", disabled=not selected, on_click=_act,
          args=("keep", list(selected), annotator))
b2.button("Reject selected", key="rv_reject", disabled=not selected, on_click=_act,
          args=("reject", list(selected), annotator))
st.text_input("New text (edit exactly one selected question)", key=text_key)
b3.button("Save edit", key="rv_edit", disabled=len(selected) != 1, on_click=_act,
          args=("edit", list(selected), annotator))
if "rv_error" in st.session_state:
    st.error(md_escape(st.session_state.pop("rv_error")))
UI.show_history(db, list(selected) or st.session_state.get("rv_last", []))  # appended, with why

with st.expander("Near-duplicates (lexical similarity)"):
    pairs = RV.near_duplicates(qs, threshold=0.75)
    if pairs:
        st.dataframe(pd.DataFrame(pairs), hide_index=True)
    else:
        st.caption("No pair above 0.75 similarity.")

UI.agreement_expander(db, task)

st.subheader("Versions")
note = st.text_input("Note for the new version", key="rv_note")
f1, f2 = st.columns(2)
frz = f1.button("Freeze kept questions", type="primary", key="rv_freeze")
frz_inst = f2.button("Freeze instance checklists", key="rv_freeze_inst")
freeze_kind = "global" if frz else "instance" if frz_inst else None
if freeze_kind:
    try:
        st.success(RV.freeze_message(freeze(db, task, note=note, kind=freeze_kind), freeze_kind))
    except ValueError as e:
        st.error(md_escape(str(e)))
vs = list_versions(db, task)
if vs:
    st.dataframe(RV.versions_table(vs), hide_index=True, width="stretch")
    nums = [v["version"] for v in vs]
    # keyed by the latest version: once a new version is frozen, the diff and the export
    # open on it again instead of keeping the choice made when it did not exist
    latest = nums[-1]
    d1, d2 = st.columns(2)
    va = d1.selectbox("Diff from", nums, index=max(0, len(nums) - 2), key=f"rv_da_{latest}",
                      help="the version before the latest, by default")
    vb = d2.selectbox("to", nums, index=len(nums) - 1, key=f"rv_db_{latest}",
                      help="the latest version, by default")
    line, rows_ = RV.diff_view(diff_versions(db, task, va, vb))
    st.write(line)
    if rows_:
        st.dataframe(pd.DataFrame(rows_), hide_index=True, width="stretch")
    pick = st.selectbox("Export version", nums, index=len(nums) - 1, key=f"rv_exp_{latest}",
                        help="the latest version, by default")
    st.download_button("Download version (JSON)",
                       json.dumps(export_checklist(db, task, pick), ensure_ascii=False, indent=2),
                       f"{task}-v{pick}.json", key="rv_download")
