"""Home: what the app does, the bundled demo, and where to start."""

import os

import streamlit as st

from checkeval_core.demo import DEMO_TASKS, demo_loaded, load_demo
from checkeval_core.store import open_db
from checkeval_core.tasks import list_tasks

st.title("CheckEval Studio")
st.write(
    "Build, run and audit checklist-based LLM-as-a-judge evaluations. Define what *good* means "
    "as dimensions and Yes/No questions, let an LLM expand and filter them, run judges (an "
    "embedded CPU model by default, or any OpenAI-compatible server), and read correlation with "
    "human scores beside every single Yes/No decision."
)
c1, c2, c3 = st.columns(3)
c1.markdown("**CheckEval** — human seed questions per sub-dimension, LLM diversification, "
            "elaboration and filtering; score = share of Yes.")
c2.markdown("**RocketEval** — one independent Yes/No judgment per question, normalised "
            "p(Yes); optional supervised predictor fitted to human labels.")
c3.markdown("**SEAL** — split outputs into semantic units (sentences, pairs, facts) and "
            "verify each unit against weighted sub-dimensions.")

db = open_db()
st.subheader("Demo")
st.caption("SummEval (12 documents × 16 systems) and Topical-Chat (12 contexts × 6 responses) "
           "subsets with human scores, plus the CheckEval authors' published checklists. "
           "No internet and no API key needed.")
if demo_loaded(db):
    st.success("The demo tasks are loaded: " + ", ".join(t[0] for t in DEMO_TASKS))
else:
    if st.button("Load the demo tasks", type="primary", key="load_demo"):
        with st.spinner("Importing the demo…"):
            load_demo(db)
        st.rerun()

tasks = list_tasks(db)
st.subheader("Tasks")
if tasks:
    st.dataframe([{**t, "dimensions": ", ".join(t["dimensions"])} for t in tasks],
                 hide_index=True, width="stretch")
else:
    st.info("No task yet: load the demo above or import a dataset on the Data page.")

st.subheader("Where to start")
st.page_link("pages/data.py", label="Data — import a dataset, browse items and human scores")
st.page_link("pages/judges.py", label="Judges — the embedded judge, OpenAI or any "
             "OpenAI-compatible server")


st.page_link("pages/dimensions.py", label="Dimensions — dimensions, sub-dimensions, seed "
             "questions; generate and filter with a judge")
st.page_link("pages/checklist.py", label="Checklist review — keep / reject / edit, freeze "
             "versions")
st.page_link("pages/run.py", label="Run — CheckEval, RocketEval, SEAL, G-Eval with one or "
             "more judges, as background jobs")
st.page_link("pages/traces.py", label="Traces — every Yes/No decision behind a score")
st.page_link("pages/analysis.py", label="Analysis — correlation with humans, agreement, "
             "stability, question diagnostics")
st.page_link("pages/annotate.py", label="Annotate — answer checklists yourself (blind to the "
             "judges)")
st.page_link("pages/annotation_jobs.py", label="Annotation jobs — assign items to annotators, "
             "agreement, adjudication")
st.caption(f"Database: `{os.environ.get('CHECKEVAL_DB') or 'default location'}`")
