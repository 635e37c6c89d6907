"""Compare runs: run B against a baseline run A on the items both scored — the items where B
moved away from the humans first, the Yes/No decisions that flipped, and the change in
agreement with a paired bootstrap interval. Each item opens both traces side by side.

A link ``/compare?a=3&b=4`` opens on those runs. The page only renders what
``checkeval_core.analysis.compare.compare_runs`` returns.
"""

import pandas as pd
import streamlit as st

from checkeval_core.analysis.compare import CompareError, compare_runs, summary_lines, trace_link
from checkeval_core.analysis.report import scores_stamp
from checkeval_core.analysis.version_charts import PART_NAMES
from checkeval_core.analysis.version_readers import evidence_stamp
from checkeval_core.runs import list_runs
from checkeval_core.runs.labels import run_label
from checkeval_core.runs.selection import comparability, default_pair
from checkeval_core.runs.traces import deep_link_task
from checkeval_core.stats.correlation import COEFFICIENTS, LEVELS
from checkeval_core.store import db_path, open_db
from checkeval_core.task_split import get_split
from checkeval_core.textsafe import md_escape
from studio_ui.compare_ui import agreement_section, flipped_section
from studio_ui.frame import page_db
from studio_ui.widgets import csv_download, task_picker

st.title("Compare runs")
db = page_db()
qp = st.query_params
wanted = [int(qp[k]) for k in ("a", "b") if qp.get(k, "").isdigit()]
# a new link, or Back to this page's URL after another page dropped A and B from the session
if wanted and (st.session_state.get("cmp_link") != wanted or "cmp_a" not in st.session_state):
    st.session_state["cmp_link"] = wanted
    st.session_state["task_name"] = deep_link_task(db, wanted) or st.session_state.get(
        "task_name")
    st.session_state.pop("cmp_task", None)
    for k, v in zip(("cmp_a", "cmp_b"), wanted):
        st.session_state[k] = v
c_task, c_a, c_b, c_lvl, c_coef = st.columns([1.6, 3.6, 3.6, 1.1, 1.3])
with c_task:
    task = task_picker(db, "cmp_task", "No task yet: load the demo on the Home page.")
runs = [r for r in list_runs(db, task) if r["status"] == "completed"]
if len(runs) < 2:
    st.info(f"Comparing needs two completed runs of this task; it has {len(runs)}. Start "
            "another run (another judge, method or checklist version) on the Run page.")
    st.stop()
labels = {r["id"]: run_label(r) for r in runs}
ids = list(labels)
# the pair last chosen for this task, kept outside the widgets: a visit to another page drops
# the widgets' state, and Back reopens this page without its address's ?a=&b=
kept = st.session_state.get("cmp_pairs", {}).get(task) or [None, None]
for k, mine, default in zip(("cmp_a", "cmp_b"), kept, default_pair(db, runs)):
    if st.session_state.get(k) not in ids:
        st.session_state[k] = mine if mine in ids else default
run_a = c_a.selectbox("A (baseline)", ids, format_func=labels.get, key="cmp_a")
why = comparability(db, [run_a], ids)  # Streamlit cannot disable an option: B's are marked
run_b = c_b.selectbox("B (compared with A)", ids, key="cmp_b", format_func=lambda r: labels[r]
                      + (" — not comparable" if why[r] else ""),
                      help="Marked: runs sharing no item with A (" + "; ".join(
                          f"#{r}: {w}" for r, w in why.items() if w) + ")"
                      if any(why.values()) else None)
parts = ["heldout", "dev", "all"] if get_split(db, task)["defined"] else ["all"]
split = st.radio("Read on", parts, horizontal=True, key=f"cmp_split_{len(parts)}",
                 format_func=PART_NAMES.get, help="Held-out by default: a version chosen on "
                 "dev documents is judged on the documents it was not chosen on.")
level = c_lvl.selectbox("Level", LEVELS, key="cmp_level", format_func=lambda x: x.split("_")[0])
coef = c_coef.selectbox("Coefficient", COEFFICIENTS, key="cmp_coef")
st.query_params.from_dict({"a": str(run_a), "b": str(run_b)})  # only this page's parameters
st.session_state["cmp_link"] = [run_a, run_b]
st.session_state["cmp_pairs"] = {**st.session_state.get("cmp_pairs", {}), task: [run_a, run_b]}


@st.cache_data(ttl=60, show_spinner="Comparing the runs on their shared items…")
def compute(db_file: str, a: int, b: int, lvl: str, cf: str, part: str, stamp: str) -> dict:
    return compare_runs(open_db(db_file), a, b, level=lvl, coef=cf, n_boot=500, split=part)


try:
    res = compute(db_path(db), run_a, run_b, level, coef, split,
                  f"{scores_stamp(db)}|{evidence_stamp(db, task)}")
except CompareError as e:
    st.error(f"Not comparable: {md_escape(str(e))}")
    st.stop()

ag = res["agreement"]
head = summary_lines(res)
st.caption(md_escape(head[1]) + f" · paired bootstrap over groups, {ag['n_boot']} resamples")
agreement_section(ag, level, coef)
if res["scale_note"]:
    st.warning(f"Different scales: {res['scale_note']}.")

sort_by = "regression (B moved away from the humans)" if res["has_human"] else "|Δ|"
st.subheader("Items, largest regression first" if res["has_human"] else "Items, largest |Δ| first")
items = pd.DataFrame(res["items"])
items["trace"] = [trace_link(run_a, run_b, r["item_pk"], r["dimension"]) for r in res["items"]]
st.caption(f"{len(items)} (item, dimension) rows sorted by {sort_by}. Regression = |rank gap "
           "to humans| of B − that of A (percentile ranks over the shared items); select a row "
           "or click its link to open both runs' Yes/No traces.")
event = st.dataframe(
    items, hide_index=True, width="stretch", on_select="rerun", selection_mode="single-row",
    key="cmp_items",
    column_order=["item_id", "dimension", "score_a", "score_b", "delta", "human", "regression",
                  "trace", "system", "group"],
    column_config={
        "item_id": st.column_config.TextColumn("item", width=150),
        "group": st.column_config.TextColumn("group", width=160),
        "score_a": st.column_config.NumberColumn("A", format="%.3f", help=md_escape(labels[run_a])),
        "score_b": st.column_config.NumberColumn("B", format="%.3f", help=md_escape(labels[run_b])),
        "delta": st.column_config.NumberColumn("Δ B − A", format="%+.3f"),
        "human": st.column_config.NumberColumn("human", format="%.2f"),
        "regression": st.column_config.NumberColumn(
            "regression", format="%+.2f", help="> 0: B's score is further from the humans' "
                                               "ranking of this item than A's"),
        "trace": st.column_config.LinkColumn("traces", display_text="open A & B")})
picked = (event or {}).get("selection", {}).get("rows", []) if event else []
if res["items"]:  # a part of the split may hold no shared item
    row = res["items"][picked[0] if picked and picked[0] < len(res["items"]) else 0]
    st.page_link("app_pages/traces.py", icon=":material/search:",
                 label=md_escape(f"Open both traces of item {row['item_id']} "
                                 f"({row['dimension']})"),
                 query_params={"runs": f"{run_a},{run_b}", "item": str(row["item_pk"]),
                               "dim": row["dimension"]})
csv_download(items.drop(columns=["trace"]), f"compare_{run_a}_{run_b}.csv", "cmp_items_csv")

flipped_section(res)
