"""Home: what the app does, the bundled demo, and where to start."""

import streamlit as st

from checkeval_core.demo import demo_loaded, demo_task_names, load_demo
from checkeval_core.tasks import list_tasks
from studio_ui.access import may, mode_line, page_allowed, who
from studio_ui.frame import page_db

st.title("CheckEval Studio")
actor, role = who()
st.caption(mode_line(actor, role))
if actor is not None and not actor.name and actor.source == "login":
    st.button("Log in", key="home_login", on_click=st.login)
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

known = actor is None or role is not None  # no login, or a person with a role
if known:  # unknown and logged-out visitors get nothing: not even the tasks' names
    db = page_db()
    st.subheader("Demo")
    st.caption("SummEval (12 documents × 16 systems) and Topical-Chat (12 contexts × 6 "
               "responses) subsets with human scores and the CheckEval authors' published "
               "checklists; AlpacaEval (8 queries × 12 LLMs) with per-query checklists and "
               "Chatbot Arena Elo. No internet and no API key needed.")
    if demo_loaded(db):
        st.success("The demo tasks are loaded: " + ", ".join(demo_task_names()))
    elif may("data.import") and st.button("Load the demo tasks", type="primary",
                                          key="load_demo"):
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
st.caption("The path a newcomer follows, in order (the demo tasks already have a frozen "
           "checklist and pre-computed runs, so steps 4–6 show real content at once).")
for n, (page, label) in enumerate([
        ("app_pages/data.py", "Data — import a dataset (or pick a demo task); browse items and "
                          "their human scores"),
        ("app_pages/dimensions.py", "Dimensions — define dimensions and seed Yes/No questions; "
                                "generate and filter more with a judge"),
        ("app_pages/checklist.py", "Checklist review — keep, reject or edit the proposals; freeze a "
                               "version"),
        ("app_pages/run.py", "Run — pick judges and a method; runs work in the background"),
        ("app_pages/traces.py", "Traces — every Yes/No decision behind a score, judges side by "
                            "side"),
        ("app_pages/analysis.py", "Analysis — correlation with human scores, agreement, question "
                              "diagnostics"),
        ("app_pages/rankings.py", "Rankings — rank LLMs on instructions against human preferences "
                              "(RocketEval's setting)"),
        ("app_pages/versions.py", "Versions — did an edit make the checklist better? Agreement of "
                              "each frozen version on dev and held-out groups"),
        ("app_pages/compare.py", "Compare runs — run B against a baseline run A: the items that "
                             "moved and the Yes/No decisions that flipped"),
        ("app_pages/improve.py", "Improve checklist — drop the questions that carry no signal, "
                             "write new ones, and see the effect on held-out groups"),
        ("app_pages/align.py", "Align — which questions the judge answers as people do: people "
                           "answer a sample, each question gets its agreement with them"),
], 1):
    if page_allowed(page[len("app_pages/"):-3]):
        st.page_link(page, label=f"{n}. {label}")
st.caption("Also: **Judges** (the embedded judge, OpenAI or any OpenAI-compatible server) — "
           "and for human annotation, **Annotation jobs** (a coordinator assigns items) then "
           "**Annotate** (each annotator answers the checklist, blind to the judges).")
for page, label in (("judges", "Judges"), ("annotation_jobs", "Annotation jobs"),
                    ("annotate", "Annotate")):
    if page_allowed(page):
        st.page_link(f"app_pages/{page}.py", label=label)
