"""Versions: did an edit make the checklist better? Agreement with humans per frozen checklist
version, on the task's dev and held-out groups, and the diff of two versions beside Δ."""

import pandas as pd
import streamlit as st

from checkeval_core.analysis.version_charts import history_chart
from checkeval_core.analysis.version_readers import evidence_stamp
from checkeval_core.analysis.versions import (
    EVIDENCE_NAMES,
    MEAN,
    delta_rows,
    table_rows,
    touched_dimensions,
    version_diff,
    versions_report,
)
from checkeval_core.store import db_path, open_db
from checkeval_core.textsafe import md_escape
from studio_ui.align_ui import people_headlines
from studio_ui.escalation_ui import escalation_section
from studio_ui.frame import page_db
from studio_ui.tables import show_table
from studio_ui.versions_ui import reference_control, split_control
from studio_ui.widgets import csv_download, task_picker

st.title("Versions")
st.caption("Agreement with humans of every frozen checklist version, per judge · method · "
           "aggregation, on dev and held-out documents: choose on dev, report on held-out.")
db = page_db()
task = task_picker(db, "vs_task", with_human_scores=True)


@st.cache_data(show_spinner="Computing agreement per version…", max_entries=8)
def _report(path: str, task: str, stamp: str) -> dict:
    return versions_report(open_db(path), task, n_boot=200)


@st.cache_data(show_spinner="Comparing the two versions…", max_entries=8)
def _diff(path: str, task: str, a: int, b: int, stamp: str) -> dict:
    return version_diff(open_db(path), task, a, b, report=_report(path, task, stamp))


split_control(db, task)
reference_control(db, task)
stamp = evidence_stamp(db, task)  # one read of what the cached views depend on
rep = _report(db_path(db), task, stamp)
if rep["reason"]:
    st.info(rep["reason"])
    st.stop()
c1, c2, c3 = st.columns(3)
part = c1.radio("Read on", rep["parts"], horizontal=True, key="vs_part",  # report on held-out
                index=rep["parts"].index("heldout") if "heldout" in rep["parts"] else 0,
                format_func={"dev": "dev", "heldout": "held-out", "all": "all groups"}.get)
kinds = [k for k in rep["evidence"] if any(r["evidence"] == k for r in rep["rows"])]
evidence = c2.selectbox("Evidence", kinds, format_func=EVIDENCE_NAMES.get, key="vs_ev")
dims = sorted({r["dimension"] for r in rep["rows"] if r["evidence"] == evidence},
              key=lambda d: (d != MEAN, d))  # the mean over dimensions first
nums = [v["version"] for v in rep["versions"]]
# open on what the newest change touched (an untouched dimension shows a flat line)
touched = touched_dimensions(db, task, nums[-2], nums[-1]) if len(nums) >= 2 else []
first = next((d for d in dims if d in touched), dims[0] if dims else None)
dim = c3.selectbox("Dimension", dims, key="vs_dim",
                   index=dims.index(first) if first in dims else 0)
if touched:
    st.caption(md_escape(f"v{nums[-2]} → v{nums[-1]} changed questions of "
                         f"{', '.join(touched)}; unchanged: "
                         f"{', '.join(d for d in dims if d not in touched and d != MEAN) or '—'}"
                         "."))

st.subheader("Agreement over versions")
primary = not st.checkbox("Every aggregation of each run (default: each run's own)",
                          key="vs_all_aggs")
st.plotly_chart(history_chart(rep, part, evidence, dim, primary), width="stretch",
                key="vs_chart")
st.caption("Hollow grey points have no interval: they rest on too few groups to mean much "
           "on their own (hover for the reason). Each point is the reference run of that "
           "version × judge × method (pinned, else the one covering the most items).")
all_rows = table_rows(rep, part, primary)
rows = [r for r in all_rows if r["evidence"] == EVIDENCE_NAMES[evidence]
        and r["dimension"] == dim]
show_table(pd.DataFrame(rows).drop(columns=["evidence", "dimension"], errors="ignore"),
           {"value": st.column_config.NumberColumn(format="%.3f")}, hide_index=True,
           width="stretch")
csv_download(all_rows, f"versions-{task}-{part}.csv", key="vs_csv")
escalation_section(db, task=task, key="vs_esc")

people_headlines(db, task)

st.subheader("What changed between two versions")
if len(nums) < 2:
    st.info("One frozen version so far: freeze a revised checklist (Checklist review) and run "
            "it to compare.")
    st.stop()
c1, c2 = st.columns(2)
a = c1.selectbox("From version", nums, index=len(nums) - 2, key="vs_a")
b = c2.selectbox("To version", nums, index=len(nums) - 1, key="vs_b")
d = _diff(db_path(db), task, a, b, stamp)
st.markdown(f"**v{a} → v{b}:** {d['n_added']} question(s) added, {d['n_removed']} removed, "
            f"{d['n_edited']} edited")
dr = [r for r in delta_rows(d, part) if r["evidence"] == EVIDENCE_NAMES[evidence]
      and r["dimension"] == dim]
if dr:
    show_table(pd.DataFrame(dr).drop(columns=["evidence", "dimension"]),
               {"Δ": st.column_config.NumberColumn(format="%+.3f", width=70),
                "verdict": st.column_config.TextColumn(width="large")}, hide_index=True,
               width="stretch")
else:
    st.info(md_escape(d["reason"] or f"No {EVIDENCE_NAMES[evidence]} figure for {dim} on "
                                     f"both versions"))
q = ([{"change": "added", "dimension": x["dimension"], "question": x["text"]}
      for x in d["diff"]["added"]]
     + [{"change": "removed", "dimension": x["dimension"], "question": x["text"]}
        for x in d["diff"]["removed"]]
     + [{"change": "edited", "dimension": x["dimension"],
         "question": f"{x['before']} → {x['after']}"} for x in d["diff"]["edited"]])
st.dataframe(pd.DataFrame(q, columns=["change", "dimension", "question"]), hide_index=True,
             width="stretch", key="vs_qdiff",
             column_config={"question": st.column_config.TextColumn(width="large")})
