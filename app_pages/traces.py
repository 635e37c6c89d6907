"""Traces: one item's texts and every question with each run's Yes/No answer and p(Yes),
grouped by dimension and sub-dimension, with the scores; SEAL units with their verdicts.

Full width, one narrow verdict column per run next to the question, so every run's decisions
are in view without scrolling sideways. A link ``/traces?runs=3,4&item=17&dim=coherence``
opens on the runs' task, those runs, that item and that dimension.
"""

import streamlit as st

from checkeval_core.runs import list_runs
from checkeval_core.runs.traces import (
    SHOW_FILTERS,
    decision_rows,
    deep_link_task,
    first_run_with_answers,
    item_listing,
    item_trace,
    run_column,
    run_dimensions,
    run_label,
)
from checkeval_core.textsafe import md_escape
from studio_ui.frame import page_db
from studio_ui.traces_ui import decisions_table, listing_table, scores_and_texts, units_table
from studio_ui.widgets import task_picker

STATE = ("tr_runs", "tr_dim", "tr_item", "tr_dec", "tr_qdim")
ALL_DIMS = "all dimensions"

st.title("Traces")
db = page_db()
qp = st.query_params
wanted = [int(x) for x in qp.get("runs", "").split(",") if x.strip().isdigit()]
link = (qp.get("runs", ""), qp.get("item", ""), qp.get("dim", ""))
if wanted and st.session_state.get("tr_link") != link:
    # a new deep link: open on its runs' task and forget the previous selection
    st.session_state["tr_link"] = link
    linked_task = deep_link_task(db, wanted)
    if linked_task:
        st.session_state["task_name"] = linked_task
        st.session_state.pop("tr_task", None)
    for k in STATE:
        st.session_state.pop(k, None)
    if qp.get("show") == "people":  # Align's link: the questions where people disagree first
        st.session_state["tr_filter"] = SHOW_FILTERS[2]
c_task, c_runs, c_dim, c_item = st.columns([2, 5, 2, 3])  # a run label fits its chip
with c_task:
    task = task_picker(db, "tr_task", "No task yet: load the demo on the Home page.")
if st.session_state.get("tr_task_seen") != task:
    if "tr_task_seen" in st.session_state:
        for k in STATE:
            st.session_state.pop(k, None)
    st.session_state["tr_task_seen"] = task
runs = [r for r in list_runs(db, task) if r["status"] in ("completed", "running", "cancelled",
                                                           "failed")]
if not runs:
    st.info("No run for this task yet: start one on the Run page.")
    st.stop()
labels = {r["id"]: run_label(r) for r in runs}
if "tr_runs" not in st.session_state:
    # set once, not passed as the widget's default: a default that follows the link would
    # bring back a run the person has just removed with its chip's ×
    st.session_state["tr_runs"] = [r for r in wanted if r in labels] or [runs[0]["id"]]
else:
    st.session_state["tr_runs"] = [r for r in st.session_state["tr_runs"] if r in labels]
chosen = c_runs.multiselect("Runs (side by side)", list(labels), format_func=labels.get,
                            key="tr_runs", wrap=True)  # in a column a chip row scrolls away
if not chosen:
    st.info("Select at least one run to see its Yes/No decisions.")
    st.stop()

# the items come from the first selected run that has answers (one still starting has none)
lead = first_run_with_answers(db, chosen)
if lead is None:
    st.info("No selected run has answers yet: " + md_escape(", ".join(labels[r] for r in chosen))
            + ". A running run's answers appear here as they are stored; refresh to see them.")
    st.stop()
waiting = [labels[r] for r in chosen if r != lead and first_run_with_answers(db, [r]) is None]
if waiting:
    st.caption("No answers yet from " + md_escape(", ".join(waiting)) + "; items listed from "
               f"{md_escape(labels[lead])}.")
dims = run_dimensions(db, lead)
want_dim = qp.get("dim")
gap_dim = c_dim.selectbox("Items ordered by score difference on", dims or ["(no scores yet)"],
                          help="Items are listed by their score difference |judge − human| on "
                               "this dimension, both scaled to 0–1 (largest first).",
                          index=dims.index(want_dim) if want_dim in dims else 0, key="tr_dim")
listing = item_listing(db, lead, gap_dim if dims else None)
if not listing:
    st.info(f"Run {md_escape(labels[lead])} has no answers yet.")
    st.stop()
pks = [r["item_pk"] for r in listing]
by_pk = {r["item_pk"]: r for r in listing}
want_item = qp.get("item")
start = pks.index(int(want_item)) if want_item and want_item.isdigit() and \
    int(want_item) in pks else 0
pk = c_item.selectbox("Item", pks, index=start, format_func=lambda k: str(by_pk[k]["item_id"]) + (
    f" · diff {by_pk[k]['gap']:.2f}" if by_pk[k].get("gap") is not None else ""),
    key="tr_item")
st.query_params.from_dict({"runs": ",".join(map(str, chosen)), "item": str(pk),
                           **({"dim": gap_dim} if dims else {})})
st.session_state["tr_link"] = (st.query_params.get("runs", ""), st.query_params.get("item", ""),
                               st.query_params.get("dim", ""))
st.caption("Columns: " + " · ".join(
    f"**{run_column(r)}** = {md_escape(labels[r].split(' · ', 1)[-1])}" for r in chosen))

trace = item_trace(db, pk, chosen)
scores_and_texts(trace, chosen, labels)

h_left, h_mid, h_right = st.columns([2, 1, 3], vertical_alignment="bottom")
only = h_right.radio("Show", SHOW_FILTERS, horizontal=True, key="tr_filter",
                     label_visibility="collapsed")
q_dims = sorted({a["dimension"] for a in trace["answers"]})
if "tr_qdim" not in st.session_state:  # a link's dim= opens on that dimension's questions
    st.session_state["tr_qdim"] = want_dim if want_dim in q_dims else ALL_DIMS
q_dim = h_mid.selectbox("Questions of", [ALL_DIMS, *q_dims], key="tr_qdim")
rows = decision_rows(trace, only, None if q_dim in (None, ALL_DIMS) else q_dim, db=db)
h_left.markdown(f"**Yes/No decisions** ({len(rows)} shown)")
st.caption("✓ yes / ✗ no with p(Yes), one column per run; select a row for the full question "
           "and each judge's raw answer.")
decisions_table(rows, chosen, labels)
units_table(trace)
listing_table(listing, labels[lead], gap_dim)
