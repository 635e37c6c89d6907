"""Run: pick task, checklist version, judges, methods and items; start background runs and
watch their progress (the page can be refreshed or closed: runs go on in a worker)."""

import time

import pandas as pd
import streamlit as st

from checkeval_core.checklists.versions import list_versions
from checkeval_core.judges.registry import spec_problems
from checkeval_core.judges.saved import list_judges
from checkeval_core.runs import cancel_run, get_run, list_runs, start_background
from checkeval_core.runs.dedupe import create_run_once
from checkeval_core.runs.defaults import recommended
from checkeval_core.runs.jobs import prepare_resume
from checkeval_core.runs.methods import METHODS
from checkeval_core.runs.options import AGGREGATIONS
from checkeval_core.runs.progress import run_eta, run_table
from checkeval_core.store import db_path, open_db
from checkeval_core.tasks import list_tasks
from studio_ui.widgets import task_picker

st.title("Run")
db = open_db()
task = task_picker(db, "run_task", "No task yet: load the demo on the Home page.")
info = next(t for t in list_tasks(db) if t["name"] == task)
versions = list_versions(db, task)
if not versions:
    st.warning("This task has no frozen checklist yet: freeze one on the Checklist review page.")
    st.stop()

with st.form("new_run"):
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
    methods = c1.multiselect("Methods", list(METHODS), default=[rec["method"]],
                             key="run_methods")
    limit = c1.number_input("Items (first N)", 1, info["n_items"], min(3, info["n_items"]),
                            key="run_limit", help="Keep it small with the embedded judge: a "
                            "SummEval item costs ~7 s per dimension with 15 questions.")
    with st.expander("Prompt layout and scoring (RocketEval method)"):
        inc_def = st.checkbox("Include the dimension's definition in each question's prompt",
                              key="run_include_definition")
        inc_ref = st.checkbox("Include the item's reference text (when it has one)",
                              key="run_include_reference")
        agg_choices = ["(method default)", *AGGREGATIONS["rocketeval"]]
        primary = st.selectbox("Primary aggregation", agg_choices,
                               index=agg_choices.index(rec["aggregation"]),
                               key="run_aggregation",
                               help="Learned aggregations (supervised, linear, calibrated) "
                                    "need human scores and are fitted on other documents.")
    st.caption(f"Preselected: {' + '.join(rec['judges'])} · {rec['method']} · "
               f"{rec['aggregation']} — "
               f"{rec['why']}.")
    submitted = st.form_submit_button("Start", type="primary")
if submitted:
    chosen = judges + ([extra.strip()] if extra.strip() else [])
    bad = spec_problems(chosen)
    if bad:  # nothing starts when one judge spec is wrong (not the others without it)
        for b in bad:
            st.error(b)
        st.stop()
    started = []
    for spec in chosen:
        for m in methods:
            try:
                opts = {k: True for k, on in (("include_definition", inc_def),
                                               ("include_reference", inc_ref)) if on}
                if primary != "(method default)" and primary in AGGREGATIONS[m]:
                    opts["aggregation"] = primary
                # Enter in a field and a click on Start both submit the form: an identical
                # run still pending/running is reused, never started twice.
                rid, created = create_run_once(db, task, spec, m, checklist=vnum,
                                               limit=int(limit), params=opts)
            except Exception as e:  # noqa: BLE001 - shown to the user, nothing started
                st.error(f"{spec} / {m}: {e}")
                continue
            if not created:
                st.info(f"Run {rid} ({spec} / {m}) with the same settings is already "
                        "pending or running: not started again.")
                continue
            start_background(db_path(db), rid)
            started.append(rid)
    if started:
        st.session_state["run_watch"] = started
        st.success(f"Started run(s) {', '.join(map(str, started))}")


@st.fragment(run_every=2)
def progress_panel() -> None:
    rs = list_runs(open_db(), task)
    if not rs:
        st.caption("No run yet for this task.")
        return
    active = [r for r in rs if r["status"] in ("pending", "running")]
    for r in active:
        run = get_run(open_db(), r["id"])
        frac = r["progress_done"] / max(1, r["progress_total"])
        left = run_eta(r)
        eta = "" if left is None else (f" · about {left:.0f} s left" if left > 0 else
                                       " · finishing the current item")
        st.progress(frac, text=f"Run {r['id']} · {r['judge_spec']} · {r['method']} · "
                               f"{r['progress_done']}/{r['progress_total']} items · "
                               f"{run['n_answers']} answers · {r['tokens_in']} tokens in · "
                               f"{r['n_errors']} errors{eta}")
        if not run["alive"] and r["status"] == "running":
            st.warning(f"Run {r['id']}'s worker is gone (killed?): resume it below.")
    for r in rs[:5]:
        if r["status"] not in ("pending", "running"):
            st.caption(f"Run {r['id']} · {r['judge_spec']} · {r['method']} — {r['status']}"
                       + (f": {r['error']}" if r["error"] else ""))
    st.dataframe(pd.DataFrame(run_table(rs)), hide_index=True, width="stretch")
    if not active and st.session_state.get("run_watch"):
        st.session_state.pop("run_watch")


st.subheader("Runs")
progress_panel()
c1, c2, c3 = st.columns([1, 1, 2])
this_task = [r["id"] for r in list_runs(db, task)]
if not this_task:
    st.stop()
rid = c1.selectbox("Run of this task", this_task, key=f"run_pick_{task}",
                   help="Cancel stops a run after its current item; Resume restarts a "
                        "cancelled, failed or killed one.")
if c2.button("Cancel", key="run_cancel"):
    cancel_run(db, int(rid))
    st.toast(f"Run {int(rid)} will stop after the current item")
if c3.button("Resume", key="run_resume"):
    try:  # the same core step as `checkeval run --resume`: judge errors are asked again
        r = prepare_resume(db, int(rid))
    except Exception as e:  # noqa: BLE001 - unknown run, or its worker is still alive
        st.error(str(e))
    else:
        if r["status"] == "completed":
            st.info("That run is complete.")
        else:
            start_background(db_path(db), int(rid))
            time.sleep(0.2)
            st.success(f"Run {int(rid)} resumed: only missing answers are asked "
                       f"({r['reasked']} with a judge error asked again)")
st.page_link("app_pages/traces.py", label="Read every Yes/No decision on the Traces page")
