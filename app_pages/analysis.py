"""Analysis: correlation with humans, agreement across judges, stability and question
diagnostics — each figure with the items, groups and systems it rests on, and its interval or
the reason it has none. Runs are compared on the items they share. The page renders what
``checkeval_core.analysis.analysis_view`` returns (a new selection's point values first, their
intervals replacing them when computed); sending questions back to review shows the
evidence, asks first and can be undone.
"""

import streamlit as st

from checkeval_core.analysis.analysis_view import analysis_page, evidence_page, first_chart
from checkeval_core.analysis.diagnostics import items_behind
from checkeval_core.analysis.ensemble import ENSEMBLE_MODES
from checkeval_core.analysis.external import list_metrics
from checkeval_core.analysis.report import scores_stamp
from checkeval_core.people import people_stamp
from checkeval_core.runs import list_runs
from checkeval_core.runs.labels import run_label
from checkeval_core.runs.score_read import aggregations
from checkeval_core.runs.selection import default_runs
from checkeval_core.stats.correlation import COEFFICIENTS, LEVELS
from checkeval_core.store import db_path
from checkeval_core.textsafe import md_escape
from studio_ui.analysis_ui import (
    agreement_section,
    cached_judge_agreement,
    cached_page_data,
    correlation_chart,
    diagnostics_section,
    downloads,
    humans_section,
    judge_agreement_section,
    metric_import,
    stability_section,
    table,
)
from studio_ui.calibrate_ui import calibrated_section
from studio_ui.escalation_ui import escalation_section
from studio_ui.frame import page_db
from studio_ui.health import health_box
from studio_ui.widgets import run_multiselect, task_picker

#: Selections that name runs or dimensions of one task: forgotten when the task changes.
TASK_STATE = ("an_metrics", "an_agg", "an_pick_run", "an_pick_dim", "an_last_pick",
              "an_ensemble", "an_send_pick", "an_send_pending", "an_send_done")


st.title("Analysis")
db = page_db()
task = task_picker(db, "an_task", "No task yet: load the demo on the Home page.",
                   with_human_scores=True)
switched = st.session_state.get("an_task_seen") != task
if switched:
    for k in TASK_STATE if "an_task_seen" in st.session_state else ():
        st.session_state.pop(k, None)
    st.session_state["an_task_seen"] = task
runs = [r for r in list_runs(db, task) if r["status"] == "completed"]
labels = {r["id"]: run_label(r) for r in runs}
metric_import(db, task)
metrics = [m["name"] for m in list_metrics(db, task)]
if not runs and not metrics:
    st.info("No completed run for this task yet: start one on the Run page.")
    st.stop()
c1, c2, c3, c4 = st.columns([3, 2, 1, 1])
# the previous task's runs are replaced (not just forgotten) on a task switch
chosen = run_multiselect(db, c1, "Runs", runs, "an_runs", default_runs(db, runs),
                         reset=switched)
chosen_metrics = c2.multiselect("External metrics", metrics, key="an_metrics")
level = c3.selectbox("Level", LEVELS, key="an_level", format_func=lambda x: x.replace("_", " "))
coef = c4.selectbox("Coefficient", COEFFICIENTS, key="an_coef")
a1, a2 = st.columns([2, 3])
agg = a1.selectbox("Aggregation (default: each run's own)",
                   ["(run default)", *sorted({a for r in chosen for a in aggregations(db, r)})],
                   key="an_agg")
shared = a2.checkbox("Compare the runs on the items they all share", True, key="an_shared",
                     help="A correlation over 3 summaries is not the same quantity as one over "
                          "16: unticked, each run is computed on its own items.")
use_ensemble = len(chosen) >= 2 and st.checkbox("Add the ensemble of the selected runs",
                                                key="an_ensemble")
ens_mode = st.radio("Ensemble", ENSEMBLE_MODES, horizontal=True, key="an_ensemble_mode",
                    format_func={"mean": "mean of standardised scores",
                                 "stack": "learned on all runs' answers (other documents)",
                                 "stack_len": "learned, plus output length"}.get) \
    if use_ensemble else "mean"
if not chosen and not chosen_metrics:
    st.info("Select at least one run (or an external metric) above.")
    st.stop()

agg = None if agg == "(run default)" else agg
args = (task, tuple(chosen), tuple(chosen_metrics), agg, use_ensemble, ens_mode, 100, shared,
        f"{scores_stamp(db)}|{people_stamp(db, task)}")  # diagnostics read people's answers
health_slot = st.empty()  # above every chart it undermines; filled once the first is drawn
st.subheader("Correlation with human scores")
chart_slot, first_slot = st.empty(), st.empty()  # the full chart; the points drawn first
if st.session_state.get("an_drawn") != args:  # a new selection: its point values at once
    correlation_chart(first_slot, first_chart(db, task, chosen, chosen_metrics, agg, level,
                                              coef, use_ensemble, shared))
report = cached_page_data(db_path(db), *args)  # the intervals and the rest: they replace it
st.session_state["an_drawn"] = args
view = analysis_page(db, task, chosen, chosen_metrics, agg, level, coef, report=report,
                     judges=cached_judge_agreement(db_path(db), task, scores_stamp(db)))
cols, per_run, dims = view["columns"], view["report"]["runs"], view["dimensions"]
with health_slot.container():
    health_box(db, chosen, "analysis", agg, labels=labels)
event = correlation_chart(chart_slot, view, key="an_bars")
first_slot.empty()  # cleared, not replaced: a replaced container kept the first chart below
table(view["table"], cols["correlation"], notes=True)  # notes in full under it
downloads(view, task)
for line in view["ensemble_notes"]:
    st.caption(line)
# Click-through: a bar -> the items behind it (the selectors follow the click) -> traces
pts = (event or {}).get("selection", {}).get("points", []) if event else []
picked = pts[0].get("customdata") if pts else None
run_keys = [k for k in per_run if k.isdigit()]
if picked and list(picked[:2]) != st.session_state.get("an_last_pick"):
    st.session_state["an_last_pick"] = list(picked[:2])
    if str(picked[0]) in run_keys:
        st.session_state["an_pick_run"] = str(picked[0])
    if picked[1] in dims:
        st.session_state["an_pick_dim"] = picked[1]
for k, ok in (("an_pick_run", run_keys), ("an_pick_dim", dims)):
    if st.session_state.get(k) not in ok:
        st.session_state.pop(k, None)
if run_keys and dims:
    p1, p2 = st.columns(2)
    pick_run = p1.selectbox("Items behind a bar — run", run_keys, key="an_pick_run",
                            format_func=lambda k: per_run[k]["label"])
    pick_dim = p2.selectbox("dimension", dims, key="an_pick_dim")
    part = items_behind(db, int(pick_run), pick_dim, agg,
                        only=report["coverage"].get("shared_item_pks"))
    st.markdown(f"**{md_escape(per_run[pick_run]['label'] + ' · ' + pick_dim)}: {len(part)} "
                "items** (largest rank disagreement with humans first)")
    table(part, cols["items"])
    if len(part):
        st.page_link("app_pages/traces.py",
                     label=f"Open the Yes/No trace of {md_escape(part.iloc[0]['item_id'])}",
                     query_params={"runs": pick_run, "item": str(int(part.iloc[0]["item_pk"])),
                                   "dim": pick_dim})

calibrated_section(db, [int(k) for k in run_keys], labels, agg, "an_cal")
st.subheader("Agreement across judges")
judge_agreement_section(view["judge_agreement"], cols)
st.markdown("**Among the selected runs**")
agreement_section(view["agreement"], cols)
ev = evidence_page(db, task, list(chosen))
humans_section(ev, cols)
stability_section(view, cols)
if chosen:
    diagnostics_section(db, ev, cols)
escalation_section(db, list(chosen), key="an_esc")
