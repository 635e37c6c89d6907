"""Checklist review: every question with its origin, parent and the filter's verdict; keep,
reject or edit (with your name); agreement between reviewers; freeze, versions and diff."""

import json

import pandas as pd
import streamlit as st

from checkeval_core.checklists.filtering import similar_pairs
from checkeval_core.checklists.io import export_checklist
from checkeval_core.checklists.model import questions
from checkeval_core.checklists.review import decide, review_agreement
from checkeval_core.checklists.versions import diff_versions, freeze, list_versions
from checkeval_core.store import open_db
from studio_ui.widgets import task_picker

st.title("Checklist review")
if "rv_flash" in st.session_state:
    st.success(st.session_state.pop("rv_flash"))
db = open_db()
task = task_picker(db, "rv_task", "No task yet: load the demo on the Home page.")
annotator = st.text_input("Your name (recorded with each decision)",
                          st.session_state.get("annotator", ""), key="rv_annotator")
st.session_state["annotator"] = annotator

qs = questions(db, task, instance=None)
if not qs:
    st.info("No questions yet: add seeds on the Dimensions page or import a checklist.")
    st.stop()
c1, c2, c3, c4 = st.columns(4)
statuses = c1.multiselect("Status", ["proposed", "kept", "filtered", "rejected"],
                          ["proposed", "filtered"] if any(q["status"] in ("proposed", "filtered")
                                                          for q in qs) else ["kept"],
                          key="rv_status")
origins = c2.multiselect("Origin", sorted({q["origin"] for q in qs}), key="rv_origin")
dims = c3.multiselect("Dimension", sorted({q["dimension"] or "" for q in qs}), key="rv_dim")
subs = c4.multiselect("Sub-dimension", sorted({q["sub_dimension"] or "" for q in qs}),
                      key="rv_sub")
shown = [q for q in qs if (not statuses or q["status"] in statuses)
         and (not origins or q["origin"] in origins) and (not dims or q["dimension"] in dims)
         and (not subs or q["sub_dimension"] in subs)]
table = pd.DataFrame([{
    "id": q["id"], "status": q["status"], "dimension": q["dimension"],
    "sub-dimension": q["sub_dimension"], "question": q["text"], "origin": ", ".join(q["origins"]),
    "parent": q["parent_id"], "flags": ", ".join(q["flags"]), "filter": q["filter_verdict"],
    "criterion": q["filter_criterion"], "filter reason": q["filter_reason"],
    "reason": q["reason"], "item": q["item_id"]} for q in shown])
st.caption(f"{len(shown)} of {len(qs)} questions")
st.dataframe(table, hide_index=True, width="stretch")
labels = {q["id"]: f"#{q['id']} [{q['status']}] {q['text']}" for q in shown}
st.session_state["rv_selected"] = [i for i in st.session_state.get("rv_selected", [])
                                   if i in labels]
if st.button("Select all shown", key="rv_all"):
    st.session_state["rv_selected"] = list(labels)
selected = st.multiselect("Questions to act on", list(labels),
                          format_func=lambda i: labels.get(i, f"#{i}"), key="rv_selected")
st.markdown(f"**{len(selected)} selected**")
reason = st.text_input("Reason (required to reject)", key="rv_reason")
b1, b2, b3 = st.columns(3)
try:
    if b1.button("Keep selected", key="rv_keep", disabled=not selected):
        decide(db, selected, annotator, "keep", reason)
        st.session_state["rv_flash"] = f"Kept {len(selected)} question(s)"
        st.rerun()
    if b2.button("Reject selected", key="rv_reject", disabled=not selected):
        decide(db, selected, annotator, "reject", reason)
        st.session_state["rv_flash"] = f"Rejected {len(selected)} question(s)"
        st.rerun()
    new_text = st.text_input("New text (edit exactly one selected question)", key="rv_newtext")
    if b3.button("Save edit", key="rv_edit", disabled=len(selected) != 1):
        decide(db, selected, annotator, "edit", reason, new_text=new_text)
        st.session_state["rv_flash"] = "Saved the edit as a new question"
        st.rerun()
except ValueError as e:
    st.error(str(e))

with st.expander("Near-duplicates (lexical similarity)"):
    pool = [q for q in qs if q["status"] in ("proposed", "kept") and q["item_id"] is None]
    pairs = similar_pairs([q["text"] for q in pool], threshold=0.75)[:50]
    if pairs:
        st.dataframe(pd.DataFrame([{"a": pool[i]["id"], "question a": pool[i]["text"],
                                    "b": pool[j]["id"], "question b": pool[j]["text"],
                                    "similarity": s} for i, j, s in pairs]), hide_index=True)
    else:
        st.caption("No pair above 0.75 similarity.")

with st.expander("Agreement between reviewers"):
    ag = review_agreement(db, task)
    if ag["n_questions"]:
        st.write(f"{len(ag['annotators'])} reviewers, {ag['n_questions']} questions reviewed by "
                 f"two or more: Fleiss κ = {ag['fleiss_kappa']:.3f} ({ag['fleiss_units']} "
                 f"questions), Krippendorff α = {ag['krippendorff_alpha']:.3f} (NaN = no "
                 "variation to measure)")
        st.dataframe(pd.DataFrame(ag["per_question"]), hide_index=True)
    else:
        st.caption("Agreement appears once two reviewers have decided on the same questions.")

st.subheader("Versions")
note = st.text_input("Note for the new version", key="rv_note")
f1, f2 = st.columns(2)
if f1.button("Freeze kept questions", type="primary", key="rv_freeze"):
    try:
        v = freeze(db, task, note=note)
        st.success(f"Version {v['version']}: {v['n_questions']} questions, hash "
                   f"{v['hash'][:12]}" + ("" if v["new"] else " (identical to an existing one)"))
    except ValueError as e:
        st.error(str(e))
if f2.button("Freeze instance checklists", key="rv_freeze_inst"):
    try:
        v = freeze(db, task, note=note, kind="instance")
        st.success(f"Instance version {v['version']}: {v['n_questions']} questions")
    except ValueError as e:
        st.error(str(e))
vs = list_versions(db, task)
if vs:
    st.dataframe(pd.DataFrame(vs).drop(columns=["id"]), hide_index=True, width="stretch")
    nums = [v["version"] for v in vs]
    d1, d2 = st.columns(2)
    va = d1.selectbox("Diff from", nums, index=0, key="rv_da")
    vb = d2.selectbox("to", nums, index=len(nums) - 1, key="rv_db")
    d = diff_versions(db, task, va, vb)
    st.write(f"{len(d['added'])} added, {len(d['removed'])} removed, {len(d['edited'])} edited")
    rows_ = ([{"change": "added", "dimension": q["dimension"], "question": q["text"]}
              for q in d["added"]] +
             [{"change": "removed", "dimension": q["dimension"], "question": q["text"]}
              for q in d["removed"]] +
             [{"change": "edited", "dimension": e["dimension"],
               "question": f"{e['before']} → {e['after']}"} for e in d["edited"]])
    if rows_:
        st.dataframe(pd.DataFrame(rows_), hide_index=True, width="stretch")
    pick = st.selectbox("Export version", nums, index=len(nums) - 1, key="rv_exp")
    st.download_button("Download version (JSON)",
                       json.dumps(export_checklist(db, task, pick), ensure_ascii=False, indent=2),
                       f"{task}-v{pick}.json", key="rv_download")
