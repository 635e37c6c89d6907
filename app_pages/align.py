"""Align: per-question agreement of a judge run with people, on a sample they answered —
agreement and κ with intervals, confusion, disagreeing items (→ Traces), yes-rate, system
pairs separated and each question's leave-one-out effect on the version's agreement with
people's totals. The page renders ``checkeval_core.analysis.align``."""

import streamlit as st

from checkeval_core.analysis.align import align_rows, loo_caption, question_agreement
from checkeval_core.people import people_stamp
from checkeval_core.runs import list_runs
from checkeval_core.runs.labels import run_label
from checkeval_core.runs.registry import per_question_methods
from checkeval_core.runs.selection import default_runs
from checkeval_core.store import db_path, open_db
from checkeval_core.textsafe import md_escape
from studio_ui.align_ui import (
    disagreements,
    people_beside_judge,
    question_table,
    reword_form,
    sample_form,
)
from studio_ui.frame import page_db
from studio_ui.widgets import task_picker

st.title("Align")
st.caption("Which questions does the judge answer as people do? People answer a sample of a "
           "run's items; every question gets its agreement with them, and what it adds.")
db = page_db()
task = task_picker(db, "al_task", "No task yet: load the demo on the Home page.")
runs = [r for r in list_runs(db, task) if r["status"] == "completed"
        and r["checklist_version"] is not None and r["method"] in per_question_methods()]
if not runs:
    st.info("No completed run with one Yes/No answer per question (a frozen checklist version) "
            "for this task yet: start one on the Run page.")
    st.stop()
labels = {r["id"]: run_label(r) for r in runs}
c1, c2 = st.columns([3, 2])
first = default_runs(db, runs, 1)
run_id = c1.selectbox("Run (version × judge)", list(labels), format_func=labels.get,
                      index=list(labels).index(first[0]) if first else 0, key="al_run")
split = c2.radio("Groups", ["dev", "heldout", "all"], horizontal=True, key="al_split")


@st.cache_data(ttl=30, show_spinner="Comparing the judge with people per question…")
def _compute(path: str, run: int, part: str, stamp: str) -> dict:  # stamp: people's answers
    return question_agreement(open_db(path), run, part)


res = _compute(db_path(db), int(run_id), split, people_stamp(db, task))
st.markdown(f"**Agreement with people:** {md_escape(res['headline']['text'])}")
human = res["human_answers"]
if human["how_to_start"]:
    st.info(human["how_to_start"])
else:
    st.caption(f"{human['n_answers']} answers by people to {human['n_decisions']} "
               f"question × item decisions on {human['n_items']} items, from "
               f"{len(human['jobs'])} job(s) on this version.")
sample_form(db, int(run_id), expanded=bool(human["how_to_start"]))
st.subheader("Per question")
st.caption(f"{res['split']['which']} groups ({res['split']['n_groups']}). "
           + loo_caption(res))
rows = people_beside_judge(db, res, align_rows(res))
event = question_table(rows)
picked = event.selection.rows if event is not None else []
disagreements(res, int(run_id), picked[0] if picked else None,
              rows[picked[0]]["why"] if picked else "")
reword_form(db, res, int(run_id), picked[0] if picked else None)  # from its disagreements
