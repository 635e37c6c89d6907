"""Run: pick task, version, judges, methods, items; start runs in a worker, watch them."""

import pandas as pd
import streamlit as st

from checkeval_core.checklists.versions import list_versions
from checkeval_core.judges.saved import list_judges
from checkeval_core.runs import cancel_run
from checkeval_core.runs.defaults import recommended
from checkeval_core.runs.escalation.options import escalation_params
from checkeval_core.runs.estimate import estimate_vs_actual
from checkeval_core.runs.jobs import get_run, prepare_resume
from checkeval_core.runs.labels import run_label
from checkeval_core.runs.progress import panel
from checkeval_core.runs.registry import METHODS, all_aggregations
from checkeval_core.runs.start import start_runs
from checkeval_core.store import db_path
from checkeval_core.tasks import list_tasks
from checkeval_core.textsafe import md_escape
from studio_ui.batch_ui import batch_section
from studio_ui.engine_ui import engine_choice, launcher
from studio_ui.escalation_ui import cost_box, escalation_fields
from studio_ui.frame import page_db
from studio_ui.widgets import cost_table, say_reused, task_picker

st.title("Run")
db = page_db()
task = task_picker(db, "run_task", "No task yet: load the demo on the Home page.")
info = next(t for t in list_tasks(db) if t["name"] == task)
versions = list_versions(db, task)
if not versions:
    st.warning("This task has no frozen checklist yet: freeze one on the Checklist review page.")
    st.stop()
PICK = f"run_pick_{task}"

# No form: Enter in a field only commits its value; runs start on the Start button alone.
c1, c2 = st.columns(2)
vnum = c1.selectbox("Checklist version", [v["version"] for v in versions][::-1],
                    format_func=lambda n: next(f"v{v['version']} · {v['kind']} · "
                                               f"{v['n_questions']} questions"
                                               for v in versions if v["version"] == n),
                    key="run_version")
rec = recommended(db, task, info["kind"])
specs = [j["spec"] for j in list_judges(db)]
specs += [j for j in rec["judges"] if j not in specs]
judges = c2.multiselect("Judges", specs, default=rec["judges"], key="run_judges")
extra = c2.text_input("Another judge spec (optional)", key="run_extra")
methods = c1.multiselect("Methods", list(METHODS), default=[rec["method"]], key="run_methods",
                         format_func=lambda m: f"{m} · {METHODS[m].title}")
limit = c1.number_input("Items (first N)", 1, info["n_items"], min(3, info["n_items"]),
                        key="run_limit", help="Keep it small with the embedded judge: a "
                        "SummEval item costs ~7 s per dimension with 15 questions.")
with st.expander("Prompt layout and scoring"):
    inc_def = st.checkbox("Include the dimension's definition in each question's prompt "
                          "(RocketEval)", key="run_include_definition")
    inc_ref = st.checkbox("Include the item's reference text when it has one (RocketEval)",
                          key="run_include_reference")
    phrasing = st.number_input("Prompt wording (phrasing)", 0,
                               max(m.phrasings for m in METHODS.values()) - 1, 0,
                               key="run_phrasing",
                               help="0: the default prompt; another number asks rocketeval or "
                                    "checkeval with another wording of the instructions. Runs "
                                    "of one version, judge and method that differ only in "
                                    "wording give each question's flip rate on Analysis.")
    agg_choices = ["(method default)", *all_aggregations()]
    primary = st.selectbox("Primary aggregation", agg_choices,
                           index=agg_choices.index(rec["aggregation"])
                           if rec["aggregation"] in agg_choices else 0,
                           key="run_aggregation",
                           help="Given to the methods that compute it; the others keep their "
                                "own. Learned aggregations (supervised, linear, calibrated) "
                                "need human scores and are fitted on other documents.")
esc = escalation_fields(db, task, [*judges, extra], next(
    v["n_questions"] for v in versions if v["version"] == vnum), int(limit))
st.caption(md_escape(f"Preselected: {' + '.join(rec['judges'])} · {rec['method']} · "
                     f"{rec['aggregation']} — {rec['why']}."))
opts = {k: True for k, on in (("include_definition", inc_def),
                               ("include_reference", inc_ref)) if on}
if phrasing:
    opts["phrasing"] = int(phrasing)
cost_box(db, task, [*judges, extra], methods, vnum, int(limit), opts, esc)  # both judges
engine = engine_choice()  # None: wrong Ray options (said); [] the worker asks the judge
if st.button("Start", type="primary", key="run_start", disabled=engine is None):
    try:
        opts.update(escalation_params(**esc))
    except ValueError as e:
        st.error(md_escape(str(e)))
        st.stop()
    res = start_runs(db, task, [*judges, extra], methods, checklist=vnum, limit=int(limit),
                     params=opts, primary=None if primary == "(method default)" else primary,
                     launch=launcher(engine))
    for e in res.errors:
        st.error(md_escape(e))
    say_reused(res.reused)
    if res.started:
        st.session_state[PICK] = res.started[0]  # the panel below shows the new run at once
        st.success(f"Started run(s) {', '.join(map(str, res.started))}")


@st.fragment(run_every=2)
def runs_panel() -> None:
    """Progress, the run list and Cancel/Resume, refreshed every 2 s without the form."""
    db = page_db()  # this thread's: a fragment rerun may run on another thread than the page
    view = panel(db, task)
    if not view["runs"]:
        st.caption("No run yet for this task.")
        return
    for a in view["active"]:
        st.progress(a["fraction"], text=a["text"])
        if a["gone"]:
            st.warning(f"Run {a['run']}'s worker is gone (killed?): resume it below.")
    for line in view["recent"]:
        st.caption(line)
    st.dataframe(pd.DataFrame(view["table"]), hide_index=True, width="stretch")
    runs = {r["id"]: r for r in view["runs"]}
    if st.session_state.get(PICK) not in runs:
        st.session_state.pop(PICK, None)
    c1, c2, c3 = st.columns([1, 1, 2])
    rid = c1.selectbox("Run of this task", list(runs), key=PICK,
                       format_func=lambda r: run_label(runs[r]),
                       help="Cancel stops a run after its current item; Resume restarts a "
                            "cancelled, failed or killed one.")
    cost = estimate_vs_actual(get_run(db, int(rid)))
    if cost:  # the estimate stored when the run started, beside what it really cost
        cost_table(cost)
    can = runs[rid]["actions"]
    if c2.button("Cancel", key="run_cancel", disabled=not can["cancel"]):
        cancel_run(db, int(rid))
        st.toast(f"Run {int(rid)} will stop after the current item")
    if c3.button("Resume", key="run_resume", disabled=not can["resume"] or engine is None):
        try:  # the same core step as `checkeval run --resume`: judge errors are asked again
            r = prepare_resume(db, int(rid))
        except Exception as e:  # noqa: BLE001 - unknown run, or its worker is still alive
            st.error(md_escape(str(e)))
        else:
            if r["status"] == "completed":  # finished meanwhile (or a second click)
                st.info("That run is complete.")
                return
            launcher(engine)(db_path(db), int(rid))  # with the engine chosen above
            st.success(f"Run {int(rid)} resumed: only missing answers are asked "
                       f"({r['reasked']} with a judge error asked again)")

batch_section(db, task, [*judges, extra], methods, vnum, int(limit), opts)
st.subheader("Runs")
runs_panel()
st.page_link("app_pages/traces.py", label="Read every Yes/No decision on the Traces page")
