"""The coverage–agreement section of an escalating run (Analysis and Versions pages)."""

from __future__ import annotations

import sqlite_utils
import streamlit as st

from checkeval_core.analysis.escalation_view import (
    curve_page,
    escalating_runs,
    task_escalating_runs,
)
from checkeval_core.people import people_stamp
from checkeval_core.runs.escalation.estimate import (
    estimate_calls,
    expected_coverage,
    start_cost_line,
)
from checkeval_core.runs.jobs import get_run
from checkeval_core.store import db_path, open_db
from checkeval_core.textsafe import md_escape


@st.cache_data(ttl=60, show_spinner="Computing the coverage–agreement curve…", max_entries=8)
def _page(path: str, run_id: int, n_answers: int, people: str) -> dict:
    return curve_page(open_db(path), run_id)


def escalation_section(db: sqlite_utils.Database, run_ids: list[int] | None = None,
                       task: str | None = None, key: str = "esc") -> None:
    """Nothing when no run escalates; else the curve of the chosen escalating run."""
    ids = escalating_runs(db, [int(r) for r in run_ids]) if run_ids is not None else \
        task_escalating_runs(db, task or "")
    if not ids:
        return
    st.subheader("Escalation: coverage vs agreement")
    rid = st.selectbox("Escalating run", ids, key=f"{key}_run",
                       format_func=lambda r: f"#{r}") if len(ids) > 1 else ids[0]
    run = get_run(db, int(rid))  # the cache key: its answers and people's answers on its task
    page = _page(str(db_path(db)), int(rid), int(run["n_answers"]), people_stamp(db, run["task"]))
    if page["summary"]:
        st.text(page["summary"])
    if page["note"]:
        st.warning(page["note"])
    if page["figure"] is not None:
        st.plotly_chart(page["figure"], width="stretch", key=f"{key}_chart")
        st.caption(page["caption"])
    if page["reason"]:
        st.info(page["reason"] + (f"\n\n{page['how_to']}" if page.get("how_to") else ""))


def escalation_fields(db: sqlite_utils.Database, task: str, judges: list[str],
                      n_questions: int, n_items: int) -> dict:
    """The Run page's *Escalate* fields: the keyword arguments of
    :func:`checkeval_core.runs.escalation.options.escalation_params` (empty second judge: none), and the
    expected calls of each judge under them."""
    with st.expander("Escalate what the judge is unsure of to a second judge"):
        b = st.text_input("Second judge spec (escalate to)", key="run_escalate_to",
                          placeholder="e.g. embedded:quality",
                          help="Each judge above answers every question; answers whose "
                               "confidence |p(Yes) − 0.5| (or a pair's score gap) is below the "
                               "threshold are asked of this judge.")
        how = st.radio("Threshold", ["target", "margin"], horizontal=True, key="run_esc_how",
                       format_func={"target": "fitted on dev groups for a target agreement",
                                    "margin": "a fixed confidence margin"}.get)
        c1, c2 = st.columns(2)
        target = c1.number_input("Target agreement with people", 0.5, 0.99, 0.8, 0.05,
                                 key="run_esc_target", disabled=how != "target")
        delta = c2.number_input("δ (guarantee holds with probability 1 − δ)", 0.01, 0.5, 0.1,
                                0.01, key="run_esc_delta", disabled=how != "target")
        margin = c1.number_input("Margin", 0.0, 1.0, 0.2, 0.05, key="run_esc_margin",
                                 disabled=how != "margin")
        abstain = c2.checkbox("'Not decidable' where even the second judge is unsure",
                              key="run_esc_abstain")
        calibrate = c2.checkbox(
            "Calibrate each judge's p(Yes) on dev labels (confidence and scores)",
            key="run_esc_calibrate",
            help="Fits each judge's p(Yes) to people's labels on the dev answers it gave "
                 "(Platt scaling): the first judge's confidence is then the chance people "
                 "agree with its answer, and an item scored from both judges' answers reads "
                 "one scale; needs a dev / held-out split and answer labels (not pairwise "
                 "votes).")
        by = c1.radio("Escalate by", ["answer", "item"], horizontal=True, key="run_esc_by",
                      format_func={"answer": "answer (each unsure question)",
                                   "item": "item (all its questions when its score is "
                                           "unsure)"}.get,
                      help="By item, the second judge reads each escalated item once and no "
                           "other item: an item goes whole when the mean confidence of its "
                           "answers is below the threshold.")
        if b.strip():
            judge_a = next((j for j in judges if j), "")
            cov, why = expected_coverage(db, task, judge_a, margin if how == "margin"
                                         else None, calibrate, by)
            est = estimate_calls(n_questions * n_items, cov)
            st.caption(md_escape(f"Expected: {est['a_calls']} answers by "
                                 f"{judge_a or 'the first judge'}, "
                                 f"{'at most ' if est['b_calls_upper_bound'] else 'about '}"
                                 f"{est['b_calls']} asked again of {b.strip()} ({why})."))
    if not b.strip():  # no second judge: the other fields are not asked
        return {"escalate_to": ""}
    return {"escalate_to": b, "target_agreement": target if how == "target" else None,
            "margin": margin if how == "margin" else None, "delta": delta, "abstain": abstain,
            "calibrate_judges": calibrate, "escalate_by": by}


def cost_box(db: sqlite_utils.Database, task: str, judges: list[str], methods: list[str],
             version: int, limit: int, params: dict, esc: dict) -> None:
    """The Run page's cost before *Start*: every judge's runs and, when *Escalate* names a
    second judge, its expected share summed in (calls, tokens, time, money)."""
    line, notes = start_cost_line(db, task, judges, methods, version, limit, params, esc)
    st.info(line, icon=":material/payments:")
    if notes:
        st.caption(md_escape(" · ".join(notes)))
