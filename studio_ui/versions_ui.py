"""The Versions page's controls that change what its figures read: the task's dev / held-out
split (set or cleared only after a confirmation) and the reference run of each checklist
version × judge × method (pinned or unpinned)."""

from __future__ import annotations

import sqlite_utils
import streamlit as st

from checkeval_core.runs.labels import run_labels
from checkeval_core.runs.selection import pin_reference, reference_runs, unpin_reference
from checkeval_core.task_split import SplitError, clear_split, get_split, set_split
from checkeval_core.textsafe import md_escape


def split_control(db: sqlite_utils.Database, task: str) -> None:
    """The split expander: what the split is, and Set / Clear after a confirmation."""
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
                        st.error(md_escape(str(e)))
                if k2.button("Cancel", key="vs_confirm_no"):
                    st.session_state.pop("vs_confirm", None)
                    st.rerun()


def reference_control(db: sqlite_utils.Database, task: str) -> None:
    """Which run stands for each version × judge × method, and Pin / Unpin (no confirmation:
    a pin moves no data and is undone by Unpin)."""
    refs = [r for r in reference_runs(db, task) if r["version"] is not None]
    if not refs:
        return
    labels = run_labels(db, [r["run"] for r in refs] + [o for r in refs for o in r["others"]])
    pinned = {r["run"] for r in refs if r["pinned"]}
    with st.expander(f"Reference runs — {len(pinned)} pinned"):
        st.caption("Per checklist version × judge × method every figure here (and Compare runs, "
                   "Improve checklist) reads one run: the one pinned, else the one covering the "
                   "most items — a small run never replaces a full one.")
        st.dataframe([{"version": f"v{r['version']}", "judge · method":
                       f"{r['judge']} · {r['method']}", "reference run": labels[r["run"]],
                       "why": r["why"], "other runs": ", ".join(labels[o] for o in r["others"])}
                      for r in refs], hide_index=True, width="stretch", key="vs_refs")
        c1, c2, c3 = st.columns([3, 1, 1], vertical_alignment="bottom")
        ids = sorted(labels, reverse=True)
        pick = c1.selectbox("Run", ids, format_func=labels.get, key="vs_pin_run")
        if c2.button("Pin as reference", key="vs_pin", disabled=pick in pinned):
            res = pin_reference(db, int(pick))
            st.session_state["vs_pin_msg"] = f"{labels[pick]} is the reference" + (
                f" instead of {labels.get(res['replaced'], res['replaced'])}"
                if res["replaced"] else "")
            st.rerun()
        if c3.button("Unpin", key="vs_unpin", disabled=pick not in pinned):
            unpin_reference(db, int(pick))
            st.session_state["vs_pin_msg"] = f"{labels[pick]} unpinned"
            st.rerun()
        if st.session_state.get("vs_pin_msg"):
            st.success(md_escape(st.session_state.pop("vs_pin_msg")))
