"""Annotation jobs (coordinator): create a job (checklist version, item sample, annotators,
overlap), watch each annotator's progress and agreement, settle disagreements."""

import pandas as pd
import streamlit as st

from checkeval_core.annotation import jobs as J
from checkeval_core.annotation.agreement_report import agreement_view
from checkeval_core.annotation.files import export_annotations
from checkeval_core.checklists.versions import list_versions
from checkeval_core.tasks import list_tasks
from checkeval_core.textsafe import md_escape
from studio_ui.frame import page_db
from studio_ui.jobs_ui import create_form, people_agreement, people_section
from studio_ui.tables import show_table, table_config
from studio_ui.widgets import csv_download, current_user, task_picker

st.title("Annotation jobs")
db = page_db()
tasks = list_tasks(db)
if not tasks:
    st.info("No task yet: load the demo on the Home page.")
    st.stop()
task = task_picker(db, "aj_task")
info = next(t for t in tasks if t["name"] == task)
versions = list_versions(db, task)

with st.expander("Create a job", expanded=not J.list_jobs(db, task)):
    if not versions:
        st.warning("Freeze a checklist version first (Checklist review page).")
    else:
        create_form(db, task, info, versions)

jobs = J.list_jobs(db, task)
if not jobs:
    st.stop()
job = st.selectbox("Job", [j["id"] for j in jobs], key="aj_job",
                   format_func=lambda i: next(f"#{j['id']} {j['name']}" for j in jobs
                                              if j["id"] == i))
meta = next(j for j in jobs if j["id"] == job)
how = (f"pool, claims hold {meta.get('claim_minutes'):g} min" if meta.get("mode") == "pool"
       else "fixed assignment")
st.caption(f"Checklist v{meta['version']} · {meta['params'].get('n_items')} items · "
           f"{meta['params'].get('overlap')} annotators per item · "
           f"{meta['params'].get('strategy')} sample · "
           f"{how} · created by "
           f"{md_escape(meta.get('coordinator') or '(not recorded)')}")
st.subheader("Progress")
people_section(db, job, meta)
prog = pd.DataFrame(J.progress(db, job))
d1, d2 = st.columns(2)
with d1:
    csv_download(prog, f"job{job}-progress.csv", "aj_dl_progress", "Progress (CSV)")
with d2:
    csv_download(export_annotations(db, task), f"{task}-human-answers.csv", "aj_dl_answers",
                 "All human answers of this task (CSV)")

st.subheader("Agreement")
people_agreement(db, job)
st.markdown("**Every job of this task**")
view = agreement_view(db, task)
st.write(view["summary"])
if view["judges"]:
    st.markdown("**Annotators (majority answer) vs each completed judge run**")
    show_table(pd.DataFrame(view["judges"]), table_config(
        keys={"judge": "", "method": "The run's method"},
        counts={"run": "Run id", "units": "(item, question) units compared",
                "groups": "Groups (documents / contexts / queries) of those units"},
        decisions={"Cohen κ": "undefined: see the note",
                   "Krippendorff α": "undefined: see the note"},
        long={"κ 95% CI": "Percentile interval of κ, groups resampled — or why none",
              "note": "Why a value is undefined"}),
        hide_index=True, width="stretch")
if view["per_question"]:
    st.markdown("**Per question** (units answered Yes/No by two or more annotators)")
    show_table(pd.DataFrame(view["per_question"]), table_config(
        counts={"units": "Items answered by two or more annotators",
                "groups": "Groups (documents / contexts / queries) of those items"},
        decisions={"agreement": "Units where all annotators agreed",
                   "95% CI": "Percentile interval of κ, groups resampled"},
        scores={"Fleiss κ": "Fleiss κ among the annotators"},
        long={"question": "The checklist question",
              "note": "Why κ is undefined or has no interval"}, widths={"note": "medium"}),
        hide_index=True, width="stretch")
st.markdown("**Human checklist scores vs the benchmark's Likert scores** (CheckEval Table 5)")
if view["likert"]:
    st.dataframe(pd.DataFrame(view["likert"]), hide_index=True, width="stretch",
                 column_config=table_config(
                     counts={"items": "Annotated items with a human Likert score"},
                     long={"note": "Why a correlation is undefined"}))
else:
    st.caption(view["likert_note"])

st.subheader("Disagreements to settle")
dis = J.disagreements(db, job)
if not dis:
    st.caption("No (item, question) where annotators gave both Yes and No.")
else:
    show_table(pd.DataFrame(dis), None, {"settled": "not settled yet"}, hide_index=True,
               width="stretch")
    csv_download(dis, f"job{job}-disagreements.csv", "aj_dl_dis", "Disagreements (CSV)")
    labels = {(d["item_pk"], d["question_id"]): f"{d['item_id']} · {d['question']}" for d in dis}
    pick = st.selectbox("Settle", list(labels), format_func=labels.get, key="aj_pick")
    c1, c2, c3 = st.columns(3)
    value = c1.radio("Settled answer", ["yes", "no"], horizontal=True, key="aj_value",
                     index=None)  # no answer preselected: the coordinator chooses one
    with c2:  # login, else the configured proxy header, else a typed name
        coord, why_not = current_user("aj_coord", "coordinator")
    note = c3.text_input("Note", key="aj_note")
    if st.button("Save settled answer", key="aj_settle"):
        try:
            if not coord:
                raise ValueError(why_not)
            if value is None:
                raise ValueError("Choose the settled answer (yes or no) first.")
            J.adjudicate(db, job, pick[0], pick[1], value, coord, note)
            st.success("Saved")
        except ValueError as e:
            st.error(md_escape(str(e)))
