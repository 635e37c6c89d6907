"""Versions: did an edit make the checklist better? Agreement with humans per frozen checklist
version, on the task's dev and held-out groups, and the diff of two versions beside Δ."""

import pandas as pd
import streamlit as st

from checkeval_core.analysis.split import SplitError, clear_split, get_split, set_split
from checkeval_core.analysis.version_charts import history_chart
from checkeval_core.analysis.versions import (
    EVIDENCE_NAMES,
    delta_rows,
    evidence_stamp,
    table_rows,
    version_diff,
    versions_report,
)
from checkeval_core.store import db_path, open_db
from checkeval_core.textsafe import md_escape
from studio_ui.align_ui import people_headlines
from studio_ui.frame import page_db
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


sp = get_split(db, task)
with st.expander(f"Dev / held-out split — {'set' if sp['defined'] else 'none'}",
                 expanded=not sp["defined"]):
    if sp["defined"]:
        st.write(f"{len(sp['dev'])} dev and {len(sp['heldout'])} held-out groups ("
                 + ("named one by one" if sp["explicit"] else f"seed {sp['seed']}")
                 + f", held-out share {sp['heldout_share']:.2g})"
                 + (f"; systems: {len(sp['systems']['dev'])} dev, "
                    f"{len(sp['systems']['heldout'])} held-out" if sp["systems"] else "")
                 + (f"; {len(sp['unassigned'])} group(s) imported since are in neither part "
                    "(set the split again to place them)" if sp["unassigned"] else ""))
    else:
        st.write(f"No split: every figure reads all {sp['n_groups']} groups. Anything chosen "
                 "on the same groups it is reported on looks better than it is.")
    c1, c2, c3, c4 = st.columns([2, 1, 1, 1], vertical_alignment="bottom")
    # a split named group by group may hold any share: the slider shows the nearest step
    stored = round(float(sp["heldout_share"] or 0.5) * 20) / 20
    share = c1.slider("Held-out share", 0.1, 0.9, min(0.9, max(0.1, stored)), 0.05,
                      key="vs_share")
    seed = int(c2.number_input("Seed", 0, 10**6, max(0, int(sp["seed"] or 0)),
                                 key="vs_seed"))
    if c3.button("Set split", key="vs_set"):
        st.session_state["vs_confirm"] = "set"
    if sp["defined"] and c4.button("Clear split", key="vs_clear"):
        st.session_state["vs_confirm"] = "clear"
    action = st.session_state.get("vs_confirm")
    if action:
        with st.container(border=True):
            same = sp["defined"] and (sp["seed"], sp["heldout_share"]) == (seed, share)
            st.warning("Remove the split? Every figure then reads all groups; runs, scores "
                       "and annotations stay." if action == "clear" else
                       "Keep every group where it is and place only new ones?" if same else
                       f"Split the groups anew (seed {seed}, held-out share {share:g})? "
                       "Figures read on dev / held-out change with it.")
            k1, k2 = st.columns(2)
            if k1.button("Confirm", key="vs_confirm_yes", type="primary"):
                st.session_state.pop("vs_confirm", None)
                try:
                    # by system as stored (the CLI's --by-system changes it), else automatic
                    clear_split(db, task) if action == "clear" else set_split(
                        db, task, share, seed, sp["by_system"] if sp["defined"] else None)
                    st.rerun()
                except SplitError as e:
                    st.error(str(e))
            if k2.button("Cancel", key="vs_confirm_no"):
                st.session_state.pop("vs_confirm", None)
                st.rerun()

stamp = evidence_stamp(db, task)  # one read of what the cached views depend on
rep = _report(db_path(db), task, stamp)
if rep["reason"]:
    st.info(rep["reason"])
    st.stop()
c1, c2, c3 = st.columns(3)
part = c1.radio("Read on", rep["parts"], horizontal=True, key="vs_part",
                format_func={"dev": "dev", "heldout": "held-out", "all": "all groups"}.get)
kinds = [k for k in rep["evidence"] if any(r["evidence"] == k for r in rep["rows"])]
evidence = c2.selectbox("Evidence", kinds, format_func=EVIDENCE_NAMES.get, key="vs_ev")
dims = sorted({r["dimension"] for r in rep["rows"] if r["evidence"] == evidence})
dim = c3.selectbox("Dimension", dims, key="vs_dim")

st.subheader("Agreement over versions")
primary = not st.checkbox("Every aggregation of each run (default: each run's own)",
                          key="vs_all_aggs")
st.plotly_chart(history_chart(rep, part, evidence, dim, primary), use_container_width=True,
                key="vs_chart")
st.caption("Hollow grey points have no interval: they rest on too few groups to mean much "
           "on their own (hover for the reason). Each point is the newest completed run of "
           "that version.")
all_rows = table_rows(rep, part, primary)
rows = [r for r in all_rows if r["evidence"] == EVIDENCE_NAMES[evidence]
        and r["dimension"] == dim]
st.dataframe(pd.DataFrame(rows).drop(columns=["evidence", "dimension"], errors="ignore"),
             hide_index=True, use_container_width=True,
             column_config={"value": st.column_config.NumberColumn(format="%.3f")})
csv_download(all_rows, f"versions-{task}-{part}.csv", key="vs_csv")
people_headlines(db, task)

st.subheader("What changed between two versions")
nums = [v["version"] for v in rep["versions"]]
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
    st.dataframe(pd.DataFrame(dr).drop(columns=["evidence", "dimension"]), hide_index=True,
                 use_container_width=True,
                 column_config={"Δ": st.column_config.NumberColumn(format="%+.3f")})
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
             use_container_width=True, key="vs_qdiff",
             column_config={"question": st.column_config.TextColumn(width="large")})
